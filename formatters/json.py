"""JSON: one array of section objects, each with its items streamed as a list.

``[{...header, "batches": [{...}, {...}], ...footer}, ...]``: valid JSON even when a dump
stops on an error (the error is in the footer), one item per line for readable diffs.
"""

from __future__ import annotations

import json
from typing import Iterable, TextIO

from . import Section

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class JsonFormatter:
    def write(self, sections: Iterable[Section], out: TextIO) -> None:
        w = out.write
        w("[")
        first_section = True
        for section in sections:
            w("\n" if first_section else ",\n")
            first_section = False
            head = _dumps(section.header)
            w(head[:-1])
            w(("," if len(section.header) else "") + _dumps(section.items_key) + ":[")
            first = True
            for item in section.items:
                w("\n  " if first else ",\n  ")
                first = False
                w(_dumps(item))
            w("\n]" if not first else "]")
            for key, value in section.footer.items():
                w("," + _dumps(key) + ":" + _dumps(value))
            w("}")
        w("\n]\n")
