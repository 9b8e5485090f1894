"""``python -m pylogctl.cli.gen_docs [--check] [ROOT]``: regenerate the shell completions and
man pages (the generator is :mod:`pylogctl.cli.docs`)."""

import sys

from .docs.generate import main

if __name__ == "__main__":
    sys.exit(main())
