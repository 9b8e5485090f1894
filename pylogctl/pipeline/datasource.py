"""The ``kafka-log`` PySpark data source: Kafka log dirs as a DataFrame, one row per record.

::

    from pylogctl.pipeline.datasource import register
    register(spark)
    df = spark.read.format("kafka-log").load("/data/kafka-logs")
    df.where("topic = 'orders' AND offset >= 1000").select("offset", "key").show()

``load`` takes a log dir, a dir holding log dirs (one per broker), a partition dir, or several
of them (``load([a, b])`` or ``option("paths", json list)``), as absolute paths: planning runs
in another process, whose working directory is not the driver's. Options (all optional):

- ``columns``: the columns to produce, comma-separated (default: all of
  :data:`pylogctl.pipeline.columns.COLUMNS`). Spark does not tell a Python data source which
  columns a query uses, so this (or a user schema naming a subset, ``.schema("offset BIGINT,
  key BINARY")``) is how columns are pruned: the others are never decoded nor shipped;
- ``splitBytes``: segments larger than this are read by several tasks, cut at offset-index
  positions (default 128 MiB);
- ``replicas``: ``one`` (default: one replica per partition, as ``consumer-groups`` picks it)
  or ``all``;
- ``filter``: a :class:`~pylogctl.pipeline.scan_filter.ScanFilter` as JSON, applied in the
  tasks (what the CLI uses for ``--key`` and ``--grep``, which Spark cannot push down).

Filters on ``topic`` (=, IN, LIKE 'x%'), ``partition``, ``offset`` and ``timestamp`` (=, <, <=,
>, >=, IN) are pushed down when ``spark.sql.python.filterPushdown.enabled`` is true
(:func:`register` sets it): planning then leaves out partitions, segments and splits that
cannot match and seeks with the offset and time indexes, and the tasks apply them exactly.

Planning (``partitions()``) runs once, in a Python worker the driver's JVM starts: it only
lists directories and reads a few index entries. Each split is one input partition; its task
decodes it with pylogctl's readers and yields Arrow record batches built column by column.
Executors must be able to import ``pylogctl`` (the class is pickled by reference) and read
the log dirs at the same paths.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Sequence

from pyspark.sql.datasource import (DataSource, DataSourceReader, EqualTo, Filter, GreaterThan,
                                    GreaterThanOrEqual, In, InputPartition, IsNotNull, LessThan,
                                    LessThanOrEqual, StringStartsWith)
from pyspark.sql.types import StructType

from ..errors import UsageError
from .columns import COLUMN_TYPES, ddl, normalize_type, select
from .plan import DEFAULT_SPLIT_BYTES, SegmentSplit, plan_scan
from .scan_filter import ScanFilter

NAME = "kafka-log"
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
_RANGE_PREFIX = {"partition": "partition", "offset": "offset", "timestamp": "time"}
_NULLABLE = frozenset({"key", "value"})  # every other column always has a value


class SplitPartition(InputPartition):
    """One split of one segment: the unit of work of a task."""

    def __init__(self, split: SegmentSplit) -> None:
        super().__init__(split)
        self.split = split


def _paths(options: Any) -> list[str]:
    raw = options.get("paths")
    if raw:
        try:
            paths = json.loads(raw)
        except ValueError:
            paths = [raw]
        paths = [paths] if isinstance(paths, str) else list(paths)
    else:
        paths = [options["path"]] if options.get("path") else []
    if not paths:
        raise UsageError("kafka-log needs a path: load(log_dir) or option('paths', json list)")
    return [str(p) for p in paths]


def _columns(schema: StructType) -> tuple[str, ...]:
    """The columns a (possibly user-given) schema asks for; each must be one of ours, of our
    type."""
    names = select([f.name for f in schema.fields])
    for f in schema.fields:
        if normalize_type(f.dataType.simpleString()) != normalize_type(COLUMN_TYPES[f.name]):
            raise UsageError(f"Column {f.name} is {COLUMN_TYPES[f.name]}, not "
                             f"{f.dataType.simpleString()}")
    return names


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def narrow(scan_filter: ScanFilter, f: Filter) -> tuple[ScanFilter, bool]:
    """``scan_filter`` AND the Spark filter ``f``, and whether that is exact (False: Spark
    must still evaluate ``f``; the narrowing is then only a superset used to skip)."""
    attribute = getattr(f, "attribute", None)  # Not(...) has a child instead
    if attribute is None or len(attribute) != 1:
        return scan_filter, False
    column = attribute[0]
    value = getattr(f, "value", None)
    if isinstance(f, IsNotNull):  # Spark adds one beside each comparison
        return scan_filter, column in COLUMN_TYPES and column not in _NULLABLE
    if column == "topic":
        if isinstance(f, EqualTo) and isinstance(value, str):
            return scan_filter.narrowed(topics={value}), True
        if isinstance(f, In) and all(isinstance(v, str) for v in value):
            return scan_filter.narrowed(topics=set(value)), True
        if isinstance(f, StringStartsWith) and isinstance(value, str):
            return scan_filter.narrowed(topic_prefix=value), True
        return scan_filter, False
    prefix = _RANGE_PREFIX.get(column)
    if prefix is None:
        return scan_filter, False
    lo, hi = f"{prefix}_from", f"{prefix}_to"
    if isinstance(f, In) and value and all(_is_int(v) for v in value):
        if column == "partition":
            return scan_filter.narrowed(partitions=set(value)), True
        return scan_filter.narrowed(**{lo: min(value), hi: max(value) + 1}), False
    if not _is_int(value):
        return scan_filter, False
    if isinstance(f, EqualTo):
        return scan_filter.narrowed(**{lo: value, hi: value + 1}), True
    if isinstance(f, GreaterThan):
        return scan_filter.narrowed(**{lo: value + 1}), True
    if isinstance(f, GreaterThanOrEqual):
        return scan_filter.narrowed(**{lo: value}), True
    if isinstance(f, LessThan):
        return scan_filter.narrowed(**{hi: value}), True
    if isinstance(f, LessThanOrEqual):
        return scan_filter.narrowed(**{hi: value + 1}), True
    return scan_filter, False


class KafkaLogReader(DataSourceReader):
    def __init__(self, options: Any, schema: StructType) -> None:
        self.paths = _paths(options)
        self.schema = schema
        self.columns = _columns(schema)
        self.split_bytes = int(options.get("splitBytes") or DEFAULT_SPLIT_BYTES)
        self.replicas = options.get("replicas") or "one"
        raw = options.get("filter")
        self.filter = ScanFilter.from_json(raw) if raw else ScanFilter()

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        for f in filters:
            self.filter, exact = narrow(self.filter, f)
            if not exact:
                yield f

    def partitions(self) -> Sequence[InputPartition]:
        plan = plan_scan(self.paths, self.filter, split_bytes=self.split_bytes,
                         replicas=self.replicas)
        return [SplitPartition(s) for s in plan.splits]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        split = getattr(partition, "split", None)
        if split is None:  # Spark's stand-in when planning found nothing to read
            return
        from pyspark.sql.pandas.types import to_arrow_schema

        from .arrow import to_record_batch
        from .segment_reader import read_split

        schema = to_arrow_schema(self.schema, timezone="UTC")
        for chunk in read_split(split, self.filter, self.columns):
            yield to_record_batch(chunk, schema)


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafka-log")``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return ddl(select(self.options.get("columns")))

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaLogReader(self.options, schema)


def register(spark: Any) -> None:
    """Register ``kafka-log`` with a session and turn on filter pushdown for it."""
    spark.conf.set(PUSHDOWN_CONF, "true")
    spark.dataSource.register(KafkaLogDataSource)
