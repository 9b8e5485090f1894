"""Man pages (roff, man(7) macros), one per command: the same text as --help, escaped so that
groff and mandoc render it without warnings and options copy and paste as ASCII.
"""

from __future__ import annotations

import re
import textwrap

from ... import __version__
from .command_tree import HEADER, PROG, Cmd, walk


def roff(text: str) -> str:
    """Escape text for roff: backslashes, every hyphen as \\- (so options copy and paste as
    ASCII), non-ASCII as \\[uXXXX] (groff reads Latin-1 unless told otherwise)."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "".join(ch if ord(ch) < 128 else f"\\[u{ord(ch):04X}]" for ch in text)


def _lines(text: str) -> list[str]:
    """Prose as text lines under 80 bytes (mandoc's style limit); a line that would start with
    . or ' (a request) is put behind \\&."""
    wrapped = textwrap.wrap(roff(text), 78, break_long_words=False, break_on_hyphens=False)
    return ["\\&" + ln if ln[:1] in (".", "'") else ln for ln in wrapped] or ["\\&"]


def _exit_status(exit_help: str) -> list[str]:
    """``Exit codes: 0 success; 1 ...`` as a .TP list; the text as is if it has another shape."""
    body = re.sub(r"^\s*exit (codes|status)\s*:\s*", "", " ".join(exit_help.split()), flags=re.I)
    items = [re.match(r"(\d+)\s+(.+?)\.?$", part) for part in re.split(r";\s*(?=\d)", body)]
    if not all(items):
        return _lines(exit_help)
    out = []
    for m in items:
        assert m is not None
        out += [".TP", f".B {m.group(1)}", *_lines(m.group(2))]
    return out


def docs_page(c: Cmd) -> str:
    """The Markdown page documenting ``c`` (a subcommand shares its command's page), relative
    to the source tree; ``tests/test_readme.py`` runs its examples."""
    return f"docs/commands/{c.path[0]}.md" if c.path else "docs/README.md"


def man_page(c: Cmd, root: Cmd, exit_help: str) -> str:
    """One page; the date field stays empty so that regenerating never changes the file."""
    out = [f'.\\" {HEADER}',
           f'.TH {roff(c.page.upper())} 1 "" "{PROG} {__version__}" "{PROG} manual"',
           ".SH NAME", *_lines(f"{c.page} - {c.short_help}"),
           ".SH SYNOPSIS", f".B {roff(c.words)}", *_lines(c.usage)]
    if c.paragraphs:
        out.append(".SH DESCRIPTION")
        for i, p in enumerate(c.paragraphs):
            out += ([".PP"] if i else []) + _lines(p)
    if c.subcommands:
        out.append(".SH COMMANDS")
        for s in c.subcommands:
            out += [".TP", f".BR {roff(s.page)} (1)", *_lines(s.short_help)]
    if c.args:
        out.append(".SH ARGUMENTS")
        for a in c.args:
            out += [".TP", f"\\fI{roff(a.name.upper())}\\fR{'...' if a.nargs < 0 else ''}",
                    *_lines(a.help + (" [required]" if a.required else ""))]
    if c.options:
        out.append(".SH OPTIONS")
        for o in c.options:
            names = ", ".join(f"\\fB{roff(n)}\\fR" for n in o.names)
            out += [".TP", names + (f" \\fI{roff(o.metavar)}\\fR" if o.takes_value else ""),
                    *_lines(o.help)]
    out += [".SH EXIT STATUS", *_exit_status(exit_help)]
    related = [s for s in walk(root) if s is not c and (
        s is root or s.path[:len(c.path)] == c.path or s.path == c.path[:-1])]
    out.append(".SH SEE ALSO")
    out += [f".BR {roff(s.page)} (1){',' if i < len(related) - 1 else ''}"
            for i, s in enumerate(related)]
    if related:
        out.append(".PP")
    pages = "README.md and " if not c.path else ""
    out += _lines(f"{pages}{docs_page(c)} in the source distribution: the reference and "
                  "examples, kept true by the test suite.")
    return "\n".join(out) + "\n"
