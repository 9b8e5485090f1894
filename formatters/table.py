"""Tables: aligned plain columns when piped, a rich table on a terminal.

:class:`TableFormatter` is the ``table`` output of every subcommand: it takes the same
sections as the other formatters and shows each one as its header (``key: value`` lines),
its items as rows, then its footer. Columns are the item keys in first-seen order; nested
dicts and lists are compact JSON, numbers are right-aligned, ``-`` is a missing value, control
characters are escaped so a row stays one line.

Plain output is what scripts and ``awk`` read: a header line, then one row per line, text
columns left-aligned, numbers right-aligned, two spaces apart. A long stream (a scan, a
multi-GB dump) is laid out in blocks of rows so it starts printing at once and runs in bounded
memory: each block's widths are at least the previous block's, so columns only ever move
right, and a block that brings new keys repeats the header line with them added at the end.
A rich table, with its box lines, is only used where :func:`color.color_allowed` says so; it
is printed a block at a time.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Collection, Iterable, Iterator, Sequence, TextIO

from . import Content, Section, sections_of
from .color import color_allowed

BLOCK_ROWS = 1000
_ESCAPES = {i: f"\\x{i:02x}" for i in range(32)} | {9: "\\t", 10: "\\n", 13: "\\r", 127: "\\x7f"}
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _line(cells: Sequence[str], widths: Sequence[int], right: Sequence[bool]) -> str:
    last = len(cells) - 1
    parts = []
    for i, (cell, width) in enumerate(zip(cells, widths)):
        if right[i]:
            parts.append(cell.rjust(width))
        else:
            parts.append(cell if i == last else cell.ljust(width))
    return "  ".join(parts) + "\n"


def _rich_table(columns: Sequence[str], rows: Iterable[Sequence[str]], out: TextIO,
                right: Sequence[bool], title: str | None = None) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title) if title else None, title_justify="left",
                  box=box.SIMPLE_HEAD)
    for name, is_right in zip(columns, right):
        table.add_column(name, justify="right" if is_right else "left", overflow="fold")
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    Console(file=out, highlight=False).print(table)


def cell(value: Any) -> str:
    """One value as one line of text."""
    t = type(value)
    if t is str:  # the common cases first: a dump or scan has millions of cells
        return value if value.isprintable() else value.translate(_ESCAPES)
    if t is int:
        return str(value)
    if value is None:
        return "-"
    if t is bool:
        return "true" if value else "false"
    if isinstance(value, str):
        return value.translate(_ESCAPES)
    if isinstance(value, (dict, list, tuple)):
        return _dumps(value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


@dataclass
class TableSection:
    """A section that is a table from the start (scan rows, stats, group rows).

    Its ``columns`` are known before any row, so an empty table still prints its header
    line; ``right`` names columns to right-align whatever their cells (numbers already
    formatted as text); ``block`` is the rows laid out together (a list known in full is one
    block, for the tightest columns). ``text`` holds what a kind's text renderer needs beyond
    the rows (Kafka's text for consumer groups is not a table of them); it is not data.
    """

    items: Iterable[dict[str, Any]]
    columns: Sequence[str] = ()
    right: Collection[str] = ()
    block: int = BLOCK_ROWS
    header: dict[str, Any] = field(default_factory=dict)
    footer: dict[str, Any] = field(default_factory=dict)
    kind: str = "table"
    items_key: str = "rows"
    text: dict[str, Any] = field(default_factory=dict)


class TableFormatter:
    """``--output table``: any sections as tables, a blank line between sections.

    ``rich`` forces rich (True) or plain (False) output; by default :func:`color_allowed`
    decides for each stream.
    """

    def __init__(self, rich: bool | None = None) -> None:
        self.rich = rich
        self._sections = 0

    def write(self, content: Content, out: TextIO) -> None:
        for section in sections_of(content):
            self.write_one(section, out)

    def write_one(self, section: Section, out: TextIO) -> None:
        """One section, after a blank line if this formatter has written one before."""
        if self._sections:
            out.write("\n")
        self._sections += 1
        rich = color_allowed(out) if self.rich is None else self.rich
        _write_pairs(section.header, out)
        _write_rows(section, out, rich)
        _write_pairs(section.footer, out)


def _write_pairs(pairs: dict[str, Any], out: TextIO) -> None:
    out.write("".join(f"{key}: {cell(value)}\n" for key, value in pairs.items()))


def _write_rows(section: Section, out: TextIO, rich: bool) -> None:
    """The items in blocks; a header line whenever the columns grow (and before the first)."""
    columns = list(getattr(section, "columns", ()))
    declared = set(getattr(section, "right", ()))
    block = getattr(section, "block", BLOCK_ROWS)
    right = [c in declared for c in columns]
    widths = [len(c) for c in columns]
    shown = -1  # columns in the last header line
    items: Iterator[dict[str, Any]] = iter(section.items)
    while True:
        chunk = list(islice(items, block))
        if not chunk and shown >= 0:
            return
        known = set(columns)
        for item in chunk:
            for key in item:
                if key not in known:
                    known.add(key)
                    columns.append(key)
                    first = next((i[key] for i in chunk if i.get(key) is not None), None)
                    right.append(key in declared or _is_number(first))
                    widths.append(len(key))
        if not columns:
            return
        rows = [list(map(cell, map(item.get, columns))) for item in chunk]
        if rich:
            _rich_table(columns, rows, out, right)
            shown = len(columns)
        else:
            for row in rows:
                for i, text in enumerate(row):
                    if len(text) > widths[i]:
                        widths[i] = len(text)
            if len(columns) > shown:
                out.write(_line(columns, widths, right))
                shown = len(columns)
            out.write("".join(_line(row, widths, right) for row in rows))
        if not chunk:
            return
