"""A generic table of rows: aligned plain columns when piped, a rich table on a terminal.

For commands whose output is a table (``scan -o table``, ``stats -o table``). Plain output is
what scripts and ``awk`` read: a header line, then one row per line, the first column and
text columns left-aligned, numbers right-aligned, two spaces apart. A long stream (a scan) is
laid out in blocks of rows so it starts printing at once: each block's widths are at least
the previous block's, so columns only ever move right. A rich table, with its box lines, is
only used for a whole table on a terminal without ``NO_COLOR``.
"""

from __future__ import annotations

import os
from itertools import islice
from typing import Iterable, Sequence, TextIO

BLOCK_ROWS = 1000


def _use_rich(out: TextIO) -> bool:
    try:
        return out.isatty() and not os.environ.get("NO_COLOR")
    except (AttributeError, ValueError):
        return False


def _line(cells: Sequence[str], widths: list[int], right: Sequence[bool]) -> str:
    last = len(cells) - 1
    parts = []
    for i, (cell, width) in enumerate(zip(cells, widths)):
        if right[i]:
            parts.append(cell.rjust(width))
        else:
            parts.append(cell if i == last else cell.ljust(width))
    return "  ".join(parts) + "\n"


def stream_table(columns: Sequence[str], rows: Iterable[Sequence[str]], out: TextIO,
                 right: Sequence[bool], block: int = BLOCK_ROWS) -> int:
    """Write ``rows`` (cells as strings) under ``columns`` in plain aligned blocks; returns
    the rows written."""
    widths = [len(c) for c in columns]
    it = iter(rows)
    written = 0
    header = True
    while True:
        chunk = list(islice(it, block))
        if not chunk and not header:
            return written
        for row in chunk:
            for i, cell in enumerate(row):
                if len(cell) > widths[i]:
                    widths[i] = len(cell)
        if header:
            out.write(_line(columns, widths, right))
            header = False
        out.write("".join(_line(row, widths, right) for row in chunk))
        written += len(chunk)
        if not chunk:
            return written


def render_table(columns: Sequence[str], rows: list[Sequence[str]], out: TextIO,
                 right: Sequence[bool], title: str | None = None) -> None:
    """A whole table: rich on a terminal, plain columns (with ``title`` above) otherwise."""
    if _use_rich(out):
        from rich import box
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(title=Text(title) if title else None, title_justify="left",
                      box=box.SIMPLE_HEAD)
        for name, is_right in zip(columns, right):
            table.add_column(name, justify="right" if is_right else "left",
                             overflow="fold")
        for row in rows:
            table.add_row(*(Text(c) for c in row))
        Console(file=out, highlight=False).print(table)
        return
    if title:
        out.write(title + "\n")
    stream_table(columns, rows, out, right, block=max(1, len(rows)))
