"""JSON: one array of section objects, each with its items streamed as a list.

``[{...header, "batches": [{...}, {...}], ...footer}, ...]``: valid JSON even when a dump
stops on an error (the error is in the footer), one item per line for readable diffs. A
:class:`~.Listing` is its rows alone: ``[{...}, {...}]``, or ``{"partitions": [...], ...}``.
"""

from __future__ import annotations

import json
from itertools import chain
from typing import Any, Iterable, TextIO

from . import Content, Listing

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _array(items: Iterable[Any], w: Any) -> None:
    """``[`` then an item per line, ``]`` on its own line (``[]`` when empty)."""
    w("[")
    first = True
    for item in items:
        w("\n  " if first else ",\n  ")
        first = False
        w(_dumps(item))
    w("]" if first else "\n]")


class JsonFormatter:
    def write(self, content: Content, out: TextIO) -> None:
        w = out.write
        if isinstance(content, Listing):
            self._listing(content, w)
            return
        w("[")
        first_section = True
        for section in content:
            w("\n" if first_section else ",\n")
            first_section = False
            head = _dumps(section.header)
            w(head[:-1])
            w(("," if len(section.header) else "") + _dumps(section.items_key) + ":")
            _array(section.items, w)
            for key, value in section.footer.items():
                w("," + _dumps(key) + ":" + _dumps(value))
            w("}")
        w("\n]\n")

    @staticmethod
    def _listing(listing: Listing, w: Any) -> None:
        if not listing.keyed:
            _array(chain.from_iterable(s.items for s in listing.sections), w)
            w("\n")
            return
        w("{")
        for i, section in enumerate(listing.sections):
            w(("," if i else "") + _dumps(section.items_key) + ":")
            _array(section.items, w)
        w("}\n")
