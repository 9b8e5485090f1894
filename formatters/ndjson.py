"""NDJSON: one item object per line (for ``jq``), tagged with the file it came from.

Section footers are not data lines; callers report them on stderr and in the exit code. A
keyed :class:`~.Listing` tags each row with its kind instead (``"type": "partition"``).
"""

from __future__ import annotations

import json
from typing import TextIO

from . import Content, Listing

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class NdjsonFormatter:
    def write(self, content: Content, out: TextIO) -> None:
        w = out.write
        listing = isinstance(content, Listing)
        for section in (content.sections if listing else content):
            if listing:
                tag = {"type": section.kind} if content.keyed else None
            else:
                source = section.header.get("file")
                tag = None if source is None else {"file": source}
            for item in section.items:
                w(_dumps(item if tag is None else {**tag, **item}))
                w("\n")
