"""Scanned records (``pylogctl scan``) and statistics (``pylogctl stats``) for the formatters.

JSON (and NDJSON, YAML): one object per record with the scan's columns as keys, keys, values
and header values in base64 (they are bytes; ``--output table`` shows them as text), null
kept; a key or value that ``--key-decoder``/``--value-decoder`` decoded is its decoded
(JSON-ready) value instead. Stats JSON and YAML are one document, ``{partitions: [...],
groups: [...]}``, and its NDJSON a row per line tagged ``"type": "partition"`` or
``"group"``: both are :class:`~pylogctl.formatters.Listing` documents.

Table (and text, which is the plain table): TOPIC PARTITION OFFSET TIMESTAMP KEY VALUE, the
timestamp in UTC ISO 8601 with milliseconds, key and value by pylogctl's one rule for bytes
(:func:`pylogctl.format.readable_bytes.readable`: valid UTF-8 as text, control characters escaped,
anything else with ``\\xNN`` escapes), a decoded value as its text or compact JSON, values
cut to ``VALUE_WIDTH`` characters with ``…``; ``-`` for null. These are
:class:`~.table.TableSection` objects for any formatter.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
from typing import Any, Iterable, Iterator

from pylogctl.format.readable_bytes import readable

from .table import TableSection

SCAN_COLUMNS = ("TOPIC", "PARTITION", "OFFSET", "TIMESTAMP", "KEY", "VALUE")
SCAN_RIGHT = ("PARTITION", "OFFSET")
KEY_WIDTH = 40
VALUE_WIDTH = 100


def b64(value: Any) -> Any:
    """Bytes in base64; a decoded value (never bytes) as it is."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


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


def text_cell(value: Any, width: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, (bytes, bytearray)):
        text = readable(bytes(value))
    elif isinstance(value, str):
        text = readable(value.encode("utf-8", "surrogatepass"))
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= width else text[:width - 1] + "…"


def scan_table_rows(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for r in rows:
        yield {"TOPIC": r["topic"], "PARTITION": r["partition"], "OFFSET": r["offset"],
               "TIMESTAMP": format_time(r["timestamp"]), "KEY": text_cell(r["key"], KEY_WIDTH),
               "VALUE": text_cell(r["value"], VALUE_WIDTH)}


def scan_table_section(rows: Iterable[dict[str, Any]]) -> TableSection:
    """Scanned rows (with at least the table's columns) as a streamed table."""
    return TableSection(scan_table_rows(rows), SCAN_COLUMNS, SCAN_RIGHT, kind="record",
                        items_key="records")


def scan_json_section(rows: Iterable[dict[str, Any]]) -> TableSection:
    """Scanned rows with every column, JSON-ready, streamed."""
    return TableSection(map(record_json, rows), kind="record", items_key="records")


STATS_COLUMNS = ("TOPIC", "PARTITION", "RECORDS", "BYTES", "SEGMENT_BYTES", "FIRST_OFFSET",
                 "LAST_OFFSET", "MIN_TIME", "MAX_TIME", "DISTINCT_KEYS", "TOMBSTONES",
                 "DUP_KEY_RATIO", "COMPACTION_SAVES")
GROUP_COLUMNS = ("GROUP", "STATE", "PARTITIONS", "LAG", "TOPICS")


def stats_json_sections(partitions: list[dict[str, Any]], groups: list[dict[str, Any]]
                        ) -> list[TableSection]:
    """Every partition and group as it is (camelCase keys, timestamps in ms), for a keyed
    :class:`~pylogctl.formatters.Listing`: ``{"partitions": [...], "groups": [...]}``."""
    return [TableSection(partitions, kind="partition", items_key="partitions"),
            TableSection(groups, kind="group", items_key="groups")]


def stats_table_sections(partitions: list[dict[str, Any]], groups: list[dict[str, Any]]
                         ) -> list[TableSection]:
    """The partitions table, then (when there are groups) the consumer-groups table."""
    rows = [dict(zip(STATS_COLUMNS, (
        p["topic"], p["partition"], p["records"], p["bytes"], p["segmentBytes"],
        p["firstOffset"], p["lastOffset"], format_time(p["minTimestamp"]),
        format_time(p["maxTimestamp"]), p["distinctKeys"], p["tombstones"],
        f"{p['duplicateKeyRatio']:.4f}", p["compactionSavesBytes"]))) for p in partitions]
    right = set(STATS_COLUMNS) - {"TOPIC", "MIN_TIME", "MAX_TIME"}
    sections = [TableSection(rows, STATS_COLUMNS, right, max(1, len(rows)),
                             kind="partition", items_key="partitions")]
    if groups:
        grows = [dict(zip(GROUP_COLUMNS, (g["group"] or '""', g["state"], g["partitions"],
                                          g["lag"], ",".join(g["topics"]) or "-")))
                 for g in groups]
        sections.append(TableSection(grows, GROUP_COLUMNS, ("PARTITIONS", "LAG"),
                                     max(1, len(grows)), kind="group", items_key="groups"))
    return sections
