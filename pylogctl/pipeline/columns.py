"""The columns of a scanned record: one row per record, Kafka's names in camelCase.

The first eight are what Spark's own Kafka source gives a consumer (``topic``, ``partition``,
``offset``, ``timestamp``, ``timestampType``, ``key``, ``value``, ``headers``), with two
differences that matter offline: ``timestamp`` is Kafka's raw epoch milliseconds (BIGINT, -1
when a v0 message has none) rather than a Spark TIMESTAMP, and ``timestampType`` is Kafka's
label (``CreateTime``, ``LogAppendTime``, ``NoTimestampType``). Then come the record's sizes,
the batch attributes a log dir holds and a consumer never sees (producer id, epoch and
sequence, transactional and control flags, partition leader epoch, codec, magic), and where
the record is: its segment file and the byte position of its batch.

Python data sources cannot be told which columns a query uses (Spark 4 only pushes filters to
them), so pruning is explicit: ask for a subset with the ``columns`` option or a user schema,
and only those columns are decoded and shipped. Sizes are columns of their own so that
statistics need not ship values at all.
"""

from __future__ import annotations

from typing import Iterable

from ..errors import UsageError

# name -> Spark SQL type (DDL); the order is the schema's
COLUMN_TYPES: dict[str, str] = {
    "topic": "STRING",
    "partition": "INT",
    "offset": "BIGINT",
    "timestamp": "BIGINT",
    "timestampType": "STRING",
    "key": "BINARY",
    "value": "BINARY",
    "keySize": "INT",
    "valueSize": "INT",
    "headers": "ARRAY<STRUCT<key: STRING, value: BINARY>>",
    "producerId": "BIGINT",
    "producerEpoch": "SMALLINT",
    "sequence": "INT",
    "isTransactional": "BOOLEAN",
    "isControl": "BOOLEAN",
    "partitionLeaderEpoch": "INT",
    "codec": "STRING",
    "magic": "TINYINT",
    "segment": "STRING",
    "position": "BIGINT",
}
COLUMNS: tuple[str, ...] = tuple(COLUMN_TYPES)
# the columns that are the same for every record of a batch (filled once per batch)
BATCH_COLUMNS = frozenset({"topic", "partition", "timestampType", "producerId", "producerEpoch",
                           "isTransactional", "isControl", "partitionLeaderEpoch", "codec",
                           "magic", "segment", "position"})


def ddl(columns: Iterable[str]) -> str:
    """The Spark DDL schema of ``columns`` (backquoted: ``partition`` and ``offset`` are SQL
    words)."""
    return ", ".join(f"`{name}` {COLUMN_TYPES[name]}" for name in columns)


def select(names: Iterable[str] | str | None) -> tuple[str, ...]:
    """Validate a column selection (a list or a comma-separated string; None or empty: every
    column), keeping the caller's order and dropping repeats."""
    if names is None:
        return COLUMNS
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",")]
    chosen = tuple(dict.fromkeys(n for n in names if n))
    if not chosen:
        return COLUMNS
    unknown = [n for n in chosen if n not in COLUMN_TYPES]
    if unknown:
        raise UsageError(f"Unknown column(s) {', '.join(unknown)}; the columns are "
                         f"{', '.join(COLUMNS)}")
    return chosen


def normalize_type(ddl_type: str) -> str:
    """A Spark type string reduced for comparison (``array<struct<key:string,...>>``)."""
    return "".join(ddl_type.lower().split())
