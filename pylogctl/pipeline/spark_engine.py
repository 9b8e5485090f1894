"""The Spark engine: the same scans and statistics as the local engine, as Spark jobs.

The records come from the ``kafka-log`` data source (:mod:`.datasource`), so every task runs
the local engine's reader on one split; Spark adds the parallelism (one task per split, on
as many cores or executors as the session has), the aggregation for ``stats`` and the
writers for ``--export``.

The session comes from :mod:`.spark_session`: local, a cluster's master, ``spark-submit``'s,
or a Spark Connect server's. The same DataFrame code runs on each.

Topic, partition, offset and timestamp conditions are DataFrame filters, which Spark pushes
to the data source; a key or value test rides along as the source's ``filter`` option (Spark
cannot push conditions on binary columns to a Python data source), so tasks drop those
records before they cross to the JVM.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from .. import errors
from ..format.record import Header
from .columns import select
from .datasource import NAME, register
from .export import ExportTarget
from .plan import DEFAULT_SPLIT_BYTES, ScanPlan, plan_scan, readable_path
from .scan_filter import INT_END, LONG_END, LONG_MIN, ScanFilter
from .spark_session import get_session
from .stats import STATS_COLUMNS, PartitionCounts, StatsReport, counts_from, report

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


_TASK_ERROR = re.compile(r"pylogctl\.errors\.(\w+): ([^\n]+)")
_NO_PYLOGCTL = "No module named 'pylogctl'"


@contextmanager
def task_errors() -> Iterator[None]:
    """Turn a pylogctl error raised in a Spark task (which reaches the driver as a Java or
    Python exception with the task's traceback in its text) back into that error, so the
    CLI reports it as one line with the file and byte position, and its exit code; and a
    cluster whose Python lacks pylogctl into a usage error saying so."""
    try:
        yield
    except errors.PylogctlError:
        raise
    except Exception as exc:
        if _NO_PYLOGCTL in str(exc):
            raise errors.UsageError(
                "The Spark cluster's Python cannot import pylogctl: install it on every node "
                "and name that interpreter (--conf spark.pyspark.python=..., or PYSPARK_PYTHON "
                "where a Spark Connect server starts)") from None
        found = _TASK_ERROR.findall(str(exc))
        cls = getattr(errors, found[-1][0], None) if found else None
        if not (isinstance(cls, type) and issubclass(cls, errors.PylogctlError)):
            raise
        try:
            error = cls(found[-1][1])
        except TypeError:  # an error class with more to its constructor
            error = errors.CorruptRecordError(found[-1][1])
        raise error from None


def _conditions(f: ScanFilter) -> list["Column"]:
    """The filter's pushable parts as DataFrame conditions."""
    from pyspark.sql import functions as F

    out = []
    if f.topics is not None:
        out.append(F.col("topic").isin(sorted(f.topics)))
    if f.topic_prefix:
        out.append(F.col("topic").startswith(f.topic_prefix))
    if f.partitions is not None:
        out.append(F.col("partition").isin(sorted(f.partitions)))
    for column, lo, hi, lo_default, hi_default in (
            ("partition", f.partition_from, f.partition_to, 0, INT_END),
            ("offset", f.offset_from, f.offset_to, LONG_MIN, LONG_END),
            ("timestamp", f.time_from, f.time_to, LONG_MIN, LONG_END)):
        if lo != lo_default:
            out.append(F.col(column) >= F.lit(lo))
        if hi != hi_default:
            out.append(F.col(column) < F.lit(hi))
    return out


def _filter_columns(f: ScanFilter) -> list[str]:
    cols = []
    if f.topics is not None or f.topic_prefix:
        cols.append("topic")
    if f.partitions is not None or f.partition_from > 0 or f.partition_to < INT_END:
        cols.append("partition")
    if f.offset_from > LONG_MIN or f.offset_to < LONG_END:
        cols.append("offset")
    if f.time_from > LONG_MIN or f.time_to < LONG_END:
        cols.append("timestamp")
    return cols


def spark_row(row: Any) -> dict[str, Any]:
    """A collected Spark row as the local engine's row (bytes, headers as tuples)."""
    out = row.asDict(recursive=False)
    for name in ("key", "value"):
        if isinstance(out.get(name), bytearray):
            out[name] = bytes(out[name])
    if "headers" in out and out["headers"] is not None:
        out["headers"] = tuple(Header(h["key"], None if h["value"] is None else bytes(h["value"]))
                               for h in out["headers"])
    return out


def _collect(df: "DataFrame") -> list[Any]:
    with task_errors():
        return df.collect()


class SparkEngine:
    name = "spark"

    def __init__(self, paths: list[str], *, master: str | None = None,
                 remote: str | None = None, conf: dict[str, str] | None = None,
                 split_bytes: int = DEFAULT_SPLIT_BYTES, replicas: str = "one",
                 spark: "SparkSession | None" = None) -> None:
        self.paths = [readable_path(p) for p in paths]
        self.split_bytes = split_bytes
        self.replicas = replicas
        if spark is None:
            spark, self._owns_session = get_session(master, remote, conf)
        else:
            register(spark)
            self._owns_session = False
        self.spark = spark
        self.last_plan: ScanPlan | None = None

    def close(self) -> None:
        """Stop the session if this engine started it."""
        if self._owns_session:
            self.spark.stop()
            self._owns_session = False

    def plan(self, scan_filter: ScanFilter = ScanFilter()) -> ScanPlan:
        """The plan the data source makes for this filter (computed here, on the driver)."""
        self.last_plan = plan_scan(self.paths, scan_filter, split_bytes=self.split_bytes,
                                   replicas=self.replicas)
        return self.last_plan

    def dataframe(self, scan_filter: ScanFilter = ScanFilter(),
                  columns: tuple[str, ...] | None = None, *,
                  replicas: str | None = None) -> "DataFrame":
        """The records the filter keeps, with ``columns``."""
        cols = select(columns)
        needed = list(dict.fromkeys([*cols, *_filter_columns(scan_filter)]))
        reader = (self.spark.read.format(NAME).option("paths", json.dumps(self.paths))
                  .option("columns", ",".join(needed))
                  .option("splitBytes", str(self.split_bytes))
                  .option("replicas", replicas or self.replicas))
        in_tasks = ScanFilter(key=scan_filter.key, value_contains=scan_filter.value_contains)
        if in_tasks != ScanFilter():
            reader = reader.option("filter", in_tasks.to_json())
        with task_errors():  # a classic session plans (in Python) right here
            df = reader.load()
        for condition in _conditions(scan_filter):
            df = df.where(condition)
        return df.select(*cols)

    def rows(self, scan_filter: ScanFilter = ScanFilter(),
             columns: tuple[str, ...] | None = None) -> Iterator[dict[str, Any]]:
        self.plan(scan_filter)
        with task_errors():
            # one Spark job per input partition, the next one running while this is printed:
            # bounded memory, but sequential (--count and --export are the bulk paths)
            df = self.dataframe(scan_filter, columns)
            for row in df.toLocalIterator(prefetchPartitions=True):
                yield spark_row(row)

    def count(self, scan_filter: ScanFilter = ScanFilter()) -> int:
        self.plan(scan_filter)
        with task_errors():
            return self.dataframe(scan_filter, ("offset",)).count()

    def export(self, target: ExportTarget, scan_filter: ScanFilter = ScanFilter(),
               columns: tuple[str, ...] | None = None) -> int:
        """Write with Spark's own writer (to any file system the cluster reaches); returns
        the records written, counted from what was written."""
        target.check_absent()
        self.plan(scan_filter)
        df = self.dataframe(scan_filter, columns)
        with task_errors():
            getattr(df.write, target.fmt)(target.directory)
        if target.fmt == "parquet":
            return self.spark.read.parquet(target.directory).count()
        return self.spark.read.text(target.directory).count()

    def stats(self) -> StatsReport:
        from pyspark.sql import functions as F

        plan = plan_scan(self.paths, split_bytes=self.split_bytes, replicas="one")
        self.last_plan = plan
        df = self.dataframe(ScanFilter(), STATS_COLUMNS, replicas="one")
        size = F.greatest("keySize", F.lit(0)) + F.greatest("valueSize", F.lit(0))
        stamp = F.when(F.col("timestamp") >= 0, F.col("timestamp"))
        # one row per partition and key (all keyless records of a partition share one)
        per_key = (df.withColumn("size", size)
                   .groupBy("topic", "partition", "isControl", "key")
                   .agg(F.count(F.lit(1)).alias("n"), F.sum("size").alias("total"),
                        F.max_by("size", "offset").alias("last"),
                        F.min("offset").alias("lo"), F.max("offset").alias("hi"),
                        F.min(stamp).alias("tlo"), F.max(stamp).alias("thi"),
                        F.sum(F.when(F.col("valueSize") < 0, 1).otherwise(0)).alias("nulls")))
        keyed = ~F.col("isControl") & F.col("key").isNotNull()

        def when_keyed(value: Any) -> "Column":
            return F.sum(F.when(keyed, value).otherwise(0))

        per_partition = per_key.groupBy("topic", "partition").agg(
            F.sum("n").alias("records"),
            F.sum(F.when(F.col("isControl"), F.col("n")).otherwise(0)).alias("control_records"),
            F.sum("total").alias("bytes"),
            F.min("lo").alias("first_offset"), F.max("hi").alias("last_offset"),
            F.min("tlo").alias("min_timestamp"), F.max("thi").alias("max_timestamp"),
            when_keyed(F.col("n")).alias("keyed_records"),
            when_keyed(F.lit(1)).alias("distinct_keys"),
            when_keyed(F.col("nulls")).alias("tombstones"),
            when_keyed(F.col("n") - 1).alias("superseded_records"),
            when_keyed(F.col("total") - F.col("last")).alias("superseded_bytes"))
        counts: dict[tuple[str, int], PartitionCounts] = {
            (r["topic"], r["partition"]): counts_from(r.asDict())
            for r in _collect(per_partition)}
        sources = [(p.topic, p.partition, p.segment_bytes) for p in plan.partitions]
        return report(sources, counts, plan.log_dirs, list(plan.notes))
