"""NDJSON: one item object per line (for ``jq``), tagged with the file it came from.

Section footers are not data lines; callers report them on stderr and in the exit code.
"""

from __future__ import annotations

import json
from typing import Iterable, TextIO

from . import Section

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class NdjsonFormatter:
    def write(self, sections: Iterable[Section], out: TextIO) -> None:
        w = out.write
        for section in sections:
            source = section.header.get("file")
            for item in section.items:
                if source is not None:
                    item = {"file": source, **item}
                w(_dumps(item))
                w("\n")
