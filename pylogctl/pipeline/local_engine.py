"""The local engine: the plan's splits read one after another in this process.

No JVM, no PySpark, no pyarrow (except to write Parquet). It is the reference the Spark
engine is tested against: same plan, same reader, same statistics arithmetic, so the two
differ only in where the splits are read.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

from .columns import select
from .export import ExportTarget, write_local
from .plan import DEFAULT_SPLIT_BYTES, ScanPlan, plan_scan
from .scan_filter import ScanFilter
from .segment_reader import chunk_rows, read_split
from .stats import STATS_COLUMNS, PartitionAccumulator, PartitionCounts, StatsReport, report


class LocalEngine:
    name = "local"

    def __init__(self, paths: list[str], *, split_bytes: int = DEFAULT_SPLIT_BYTES,
                 replicas: str = "one") -> None:
        self.paths = [os.path.abspath(os.fspath(p)) for p in paths]
        self.split_bytes = split_bytes
        self.replicas = replicas
        self.last_plan: ScanPlan | None = None

    def close(self) -> None:
        """Nothing to release (the Spark engine's counterpart stops its session)."""

    def plan(self, scan_filter: ScanFilter = ScanFilter()) -> ScanPlan:
        self.last_plan = plan_scan(self.paths, scan_filter, split_bytes=self.split_bytes,
                                   replicas=self.replicas)
        return self.last_plan

    def _chunks(self, scan_filter: ScanFilter, columns: tuple[str, ...]):
        plan = self.plan(scan_filter)
        for split in plan.splits:
            yield from read_split(split, scan_filter, columns)

    def rows(self, scan_filter: ScanFilter = ScanFilter(),
             columns: tuple[str, ...] | None = None) -> Iterator[dict[str, Any]]:
        """Every record the filter keeps, in partition then offset order."""
        cols = select(columns)
        for chunk in self._chunks(scan_filter, cols):
            yield from chunk_rows(chunk, cols)

    def count(self, scan_filter: ScanFilter = ScanFilter()) -> int:
        return sum(len(chunk["offset"]) for chunk in self._chunks(scan_filter, ("offset",)))

    def export(self, target: ExportTarget, scan_filter: ScanFilter = ScanFilter(),
               columns: tuple[str, ...] | None = None) -> int:
        """Write the records to ``target``; returns how many."""
        cols = select(columns)
        target.check_absent()
        plan = self.plan(scan_filter)
        parts = (read_split(split, scan_filter, cols) for split in plan.splits)
        return write_local(target, parts, cols)[1]

    def stats(self) -> StatsReport:
        plan = plan_scan(self.paths, split_bytes=self.split_bytes, replicas="one")
        self.last_plan = plan
        counts: dict[tuple[str, int], PartitionCounts] = {}
        current: tuple[str, int] | None = None
        acc = PartitionAccumulator()
        for split in plan.splits:  # in partition order: one partition's keys held at a time
            key = (split.topic, split.partition)
            if key != current:
                if current is not None:
                    counts[current] = acc.finish()
                current, acc = key, PartitionAccumulator()
            for chunk in read_split(split, ScanFilter(), STATS_COLUMNS):
                acc.add(chunk)
        if current is not None:
            counts[current] = acc.finish()
        sources = [(p.topic, p.partition, p.segment_bytes) for p in plan.partitions]
        return report(sources, counts, plan.log_dirs, list(plan.notes))
