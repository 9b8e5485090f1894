"""Shell completions and man pages, generated from the live click command tree.

``python -m pylogctl.cli.gen_docs [--check] [ROOT]`` writes ``completions/pylogctl.bash``,
``completions/_pylogctl`` (zsh), ``completions/pylogctl.fish`` and ``man/pylogctl*.1`` under
ROOT (default: the current directory). The scripts are static, so TAB never starts Python,
and nothing is listed by hand: a command added to the app appears here on the next run, and
``tests/cli/test_gen_docs.py`` (``--check``) fails until the files are regenerated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

import typer

from .command_tree import PROG, REGENERATE, read_tree, walk
from .completion_scripts import bash, fish, zsh
from .man_pages import man_page

BASH, ZSH, FISH = "completions/pylogctl.bash", "completions/_pylogctl", "completions/pylogctl.fish"


def generate(app: Optional[typer.Typer] = None,
             exit_help: Optional[str] = None) -> dict[str, str]:
    """Every generated file, by path relative to the project root."""
    root, exit_help = read_tree(app, exit_help)
    files = {BASH: bash(root), ZSH: zsh(root), FISH: fish(root)}
    for c in walk(root):
        files[f"man/{c.page}.1"] = man_page(c, root, exit_help)
    return files


def _leftovers(base: Path, files: dict[str, str]) -> list[Path]:
    """Man pages of commands that no longer exist."""
    return sorted(p for p in (base / "man").glob(f"{PROG}*.1")
                  if p.relative_to(base).as_posix() not in files)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing files that are stale")
    parser.add_argument("root", nargs="?", default=".", type=Path,
                        help="project root holding completions/ and man/ (default: .)")
    ns = parser.parse_args(argv)
    base: Path = ns.root
    if not (base / "pyproject.toml").is_file():
        parser.error(f"{base} is not the project root (no pyproject.toml)")
    files = generate()
    stale = [rel for rel, text in files.items()
             if not (base / rel).is_file() or (base / rel).read_text(encoding="utf-8") != text]
    extra = _leftovers(base, files)
    if ns.check:
        if not stale and not extra:
            return 0
        print("Stale generated files (completions and man pages follow the CLI):", file=sys.stderr)
        for rel in stale:
            print(f"  {rel}", file=sys.stderr)
        for p in extra:
            print(f"  {p.relative_to(base).as_posix()} (no such command any more)", file=sys.stderr)
        print(f"Regenerate them with: {REGENERATE}", file=sys.stderr)
        return 1
    for rel in stale:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(files[rel], encoding="utf-8", newline="\n")
        print(f"wrote {rel}")
    for p in extra:
        p.unlink()
        print(f"removed {p.relative_to(base).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
