"""Only the optional C accelerator lives here; all other metadata is in pyproject.toml.

``optional=True``: if the extension cannot be compiled (no compiler, no Python headers), the
install still succeeds and pylogctl runs its pure-Python decoder.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("pylogctl.format._speedups", ["pylogctl/format/_speedups.c",
                              "pylogctl/format/_batch_lines.c",
                              "pylogctl/format/_crc32c.c"],
                             # #included: listed so a change rebuilds it
                             depends=["pylogctl/format/_recover_scan.c",
                                      "pylogctl/format/_record_summary.c",
                                      "pylogctl/format/_kafka_wire.h"],
                             optional=True),
                   Extension("pylogctl.storage._cleaner_scan",
                             ["pylogctl/storage/_cleaner_scan.c", "pylogctl/format/_crc32c.c"],
                             depends=["pylogctl/format/_kafka_wire.h"],
                             optional=True),
                   Extension("pylogctl.groups._offsets_scan",
                             ["pylogctl/groups/_offsets_scan.c", "pylogctl/format/_crc32c.c"],
                             depends=["pylogctl/format/_kafka_wire.h"],
                             optional=True)])
