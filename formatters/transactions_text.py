"""Text of ``transactions``: kafka-transactions.sh's tables, byte for byte.

Kafka prints every view with ``ToolsUtils.prettyPrintTable``: the header row, then a line per
row; each cell is its value padded with spaces to the column's width (the longest of header
and values, in UTF-16 units as Java's ``String.length``), then a TAB, the last cell included.
"""

from __future__ import annotations

from typing import Any, Sequence, TextIO

from . import Section
from .table import TableSection

KINDS = ("transactions-list", "transactions-describe", "transactions-describe-producers",
         "transactions-find-hanging", "transactions-abort")


def transactions_section(kind: str, headers: Sequence[str], rows: list[dict[str, Any]],
                         cells: list[list[str]]) -> TableSection:
    """``rows`` for the data formats, ``cells`` (Kafka's text values) for text."""
    columns = tuple(rows[0]) if rows else ()
    return TableSection(rows, columns, block=max(1, len(rows)), kind=f"transactions-{kind}",
                        items_key="transactions" if kind == "list" else "rows",
                        text={"headers": list(headers), "cells": cells})


def _length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def pretty_print_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                       out: TextIO) -> None:
    widths = [_length(h) for h in headers]
    for row in rows:
        widths = [max(w, _length(c)) for w, c in zip(widths, row)]
    for row in (headers, *rows):
        out.write("".join(c + " " * (w - _length(c)) + "\t" for c, w in zip(row, widths))
                  + "\n")


def render(section: Section, out: TextIO) -> None:
    text = section.text  # type: ignore[attr-defined]
    pretty_print_table(text["headers"], text["cells"], out)


SECTION_RENDERERS = {kind: render for kind in KINDS}
