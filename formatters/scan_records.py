"""Scanned records (``pylogctl scan``) and statistics (``pylogctl stats``) as text and JSON.

JSON (and NDJSON): one object per record with the scan's columns as keys, keys, values and
header values in base64 (they are bytes; ``--output table`` shows them as text), null kept.

Table: TOPIC PARTITION OFFSET TIMESTAMP KEY VALUE, the timestamp in UTC ISO 8601 with
milliseconds, key and value as UTF-8 text with control characters escaped (``\\n``,
``\\x00``), values cut to ``VALUE_WIDTH`` characters with ``…``; ``-`` for null.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
from typing import Any, Iterable, Iterator, TextIO

from .table import render_table, stream_table

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
SCAN_COLUMNS = ("TOPIC", "PARTITION", "OFFSET", "TIMESTAMP", "KEY", "VALUE")
SCAN_RIGHT = (False, True, True, False, False, False)
KEY_WIDTH = 40
VALUE_WIDTH = 100
_ESCAPES = {i: f"\\x{i:02x}" for i in range(32)} | {9: "\\t", 10: "\\n", 13: "\\r", 127: "\\x7f"}


def b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def record_json(row: dict[str, Any]) -> dict[str, Any]:
    """A scanned row, JSON-ready: binary columns and header values in base64."""
    out = dict(row)
    for name in ("key", "value"):
        if name in out:
            out[name] = b64(out[name])
    if "headers" in out:
        out["headers"] = [{"key": k, "value": b64(v)} for k, v in out["headers"]]
    return out


def format_time(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    try:
        when = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    except OverflowError:
        return str(ms)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def text_cell(value: bytes | None, width: int) -> str:
    if value is None:
        return "-"
    text = value.decode("utf-8", "replace").translate(_ESCAPES)
    return text if len(text) <= width else text[:width - 1] + "…"


def scan_table_rows(rows: Iterable[dict[str, Any]]) -> Iterator[list[str]]:
    for r in rows:
        yield [r["topic"], str(r["partition"]), str(r["offset"]), format_time(r["timestamp"]),
               text_cell(r["key"], KEY_WIDTH), text_cell(r["value"], VALUE_WIDTH)]


def write_scan_table(rows: Iterable[dict[str, Any]], out: TextIO) -> int:
    return stream_table(SCAN_COLUMNS, scan_table_rows(rows), out, SCAN_RIGHT)


STATS_COLUMNS = ("TOPIC", "PARTITION", "RECORDS", "BYTES", "SEGMENT_BYTES", "FIRST_OFFSET",
                 "LAST_OFFSET", "MIN_TIME", "MAX_TIME", "DISTINCT_KEYS", "TOMBSTONES",
                 "DUP_KEY_RATIO", "COMPACTION_SAVES")
GROUP_COLUMNS = ("GROUP", "STATE", "PARTITIONS", "LAG", "TOPICS")


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def write_stats_json(partitions: list[dict[str, Any]], groups: list[dict[str, Any]],
                     out: TextIO) -> None:
    """``{"partitions": [...], "groups": [...]}``, one row per line."""
    out.write("{")
    for i, (name, rows) in enumerate((("partitions", partitions), ("groups", groups))):
        out.write(("," if i else "") + f'"{name}":[')
        out.write(",".join("\n  " + _dumps(r) for r in rows) + ("\n]" if rows else "]"))
    out.write("}\n")


def write_stats_tables(partitions: list[dict[str, Any]], groups: list[dict[str, Any]],
                       out: TextIO) -> None:
    """The partitions table, then (when there are groups) the consumer-groups table."""
    rows = [[p["topic"], str(p["partition"]), str(p["records"]), str(p["bytes"]),
             str(p["segmentBytes"]), _cell(p["firstOffset"]), _cell(p["lastOffset"]),
             format_time(p["minTimestamp"]), format_time(p["maxTimestamp"]),
             str(p["distinctKeys"]), str(p["tombstones"]), f"{p['duplicateKeyRatio']:.4f}",
             str(p["compactionSavesBytes"])] for p in partitions]
    right = [False, True, True, True, True, True, True, False, False, True, True, True, True]
    render_table(STATS_COLUMNS, rows, out, right)
    if groups:
        out.write("\n")
        grows = [[g["group"] or '""', _cell(g["state"]), str(g["partitions"]), _cell(g["lag"]),
                  ",".join(g["topics"]) or "-"] for g in groups]
        render_table(GROUP_COLUMNS, grows, out, [False, False, True, True, False])
