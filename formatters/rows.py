"""A flat list of rows (dicts) as JSON, NDJSON, YAML or a table: what table-like commands
give scripts.

JSON is one array with a row per line (``[]`` when empty); NDJSON one row per line; YAML a
sequence of mappings. Keys keep their order, missing values are null. A table is the rows as
one :class:`~.table.TableSection` through the ``table`` formatter.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, TextIO

import yaml

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
ROW_FORMATS = ("table", "json", "ndjson", "yaml")


def write_rows(rows: Iterable[dict[str, Any]], out: TextIO, fmt: str) -> None:
    """Write ``rows`` in ``fmt`` (one of :data:`ROW_FORMATS`)."""
    if fmt not in ROW_FORMATS:
        raise ValueError(f"unknown row format {fmt!r}; choose from {', '.join(ROW_FORMATS)}")
    if fmt == "table":
        from .table import TableFormatter, TableSection

        TableFormatter().write([TableSection(rows)], out)
        return
    w = out.write
    if fmt == "ndjson":
        for row in rows:
            w(_dumps(row) + "\n")
        return
    if fmt == "yaml":
        empty = True
        for row in rows:
            empty = False
            w(yaml.dump([row], Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                        allow_unicode=True, width=2**31 - 1))
        if empty:
            w("[]\n")
        return
    first = True
    for row in rows:
        w("[\n  " if first else ",\n  ")
        first = False
        w(_dumps(row))
    w("[]\n" if first else "\n]\n")
