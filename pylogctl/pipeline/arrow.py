"""Column chunks as Arrow record batches (the Spark data source's output, and Parquet's input).

The Arrow types are the ones Spark maps the columns' SQL types to (``BIGINT`` -> int64,
``SMALLINT`` -> int16, ``TINYINT`` -> int8, ``BINARY`` -> binary, the headers an
``list<struct<key: string, value: binary>>``), all nullable: Spark checks a Python data
source's batches against its schema with ``Schema.equals``, so they must match exactly. Each
column is built straight from its list, never through Python rows.
"""

from __future__ import annotations

import pyarrow as pa

from .segment_reader import Columns

_TYPES = {
    "STRING": pa.string(), "INT": pa.int32(), "BIGINT": pa.int64(), "SMALLINT": pa.int16(),
    "TINYINT": pa.int8(), "BOOLEAN": pa.bool_(), "BINARY": pa.binary(),
}
_HEADERS = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))


def arrow_type(ddl_type: str) -> pa.DataType:
    if ddl_type.startswith("ARRAY"):
        return _HEADERS
    return _TYPES[ddl_type]


def arrow_schema(columns: tuple[str, ...]) -> pa.Schema:
    from .columns import COLUMN_TYPES

    return pa.schema([pa.field(c, arrow_type(COLUMN_TYPES[c])) for c in columns])


def to_record_batch(chunk: Columns, schema: pa.Schema) -> pa.RecordBatch:
    """The chunk's columns in ``schema``'s order and types."""
    return pa.RecordBatch.from_arrays([pa.array(chunk[f.name], type=f.type) for f in schema],
                                      schema=schema)
