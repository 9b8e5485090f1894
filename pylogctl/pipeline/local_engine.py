"""The local engine: the plan's splits read one after another in this process.

No JVM, no PySpark, no pyarrow (except to write Parquet). It is the reference the Spark
engine is tested against: same plan, same reader, same statistics arithmetic, so the two
differ only in where the splits are read.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterator

from .columns import select
from .export import ExportTarget, write_local
from .plan import (DEFAULT_SPLIT_BYTES, ScanPlan, SegmentSplit, plan_scan,
                   readable_path)
from .scan_filter import ScanFilter
from .segment_reader import chunk_rows, read_split
from .stats import STATS_COLUMNS, PartitionAccumulator, PartitionCounts, StatsReport, report

Progress = Callable[[int], None]


def split_size(split: SegmentSplit) -> int:
    """The bytes of a split's byte range (to the end of the file when it has no stop)."""
    stop = split.stop
    if stop is None:
        stop = split.file_size if split.file_size is not None else os.path.getsize(split.path)
    return max(0, stop - split.start)


class LocalEngine:
    """``progress``, when set, is called as each split is read, its calls summing to the
    split's bytes (and, for :meth:`stats`, with the bytes of the consumer groups' replay):
    the advance of a progress bar whose total :meth:`read_size` or :meth:`stats_read_size`
    gives."""

    name = "local"

    def __init__(self, paths: list[str], *, split_bytes: int = DEFAULT_SPLIT_BYTES,
                 replicas: str = "one", progress: Progress | None = None) -> None:
        self.paths = [readable_path(p) for p in paths]
        self.split_bytes = split_bytes
        self.replicas = replicas
        self.progress = progress
        self.last_plan: ScanPlan | None = None
        self._sized: tuple[tuple[ScanFilter, str], ScanPlan] | None = None

    def close(self) -> None:
        """Nothing to release (the Spark engine's counterpart stops its session)."""

    def plan(self, scan_filter: ScanFilter = ScanFilter()) -> ScanPlan:
        return self._plan(scan_filter, self.replicas)

    def _plan(self, scan_filter: ScanFilter, replicas: str, keep: bool = False) -> ScanPlan:
        """A new plan, except that the one made to size a progress bar (``keep``) is used
        by the next read of the same filter: the bar's total is what that read covers."""
        sized, self._sized = self._sized, None
        if sized is not None and sized[0] == (scan_filter, replicas):
            plan = sized[1]
        else:
            plan = plan_scan(self.paths, scan_filter, split_bytes=self.split_bytes,
                             replicas=replicas)
        if keep:
            self._sized = ((scan_filter, replicas), plan)
        self.last_plan = plan
        return plan

    def read_size(self, scan_filter: ScanFilter = ScanFilter()) -> int:
        """The segment bytes reading ``scan_filter``'s records covers."""
        return sum(map(split_size, self._plan(scan_filter, self.replicas, keep=True).splits))

    def stats_read_size(self) -> int:
        """The bytes :meth:`stats` reads: every split, then ``__consumer_offsets`` again for
        the groups' lag."""
        plan = self._plan(ScanFilter(), "one", keep=True)
        size = sum(map(split_size, plan.splits))
        if plan.log_dirs:
            from ..groups.committed_offsets import CommittedOffsets

            size += CommittedOffsets(plan.log_dirs).read_size(None)
        return size

    def _read(self, split: SegmentSplit, scan_filter: ScanFilter,
              columns: tuple[str, ...]) -> Iterator[Any]:
        progress = self.progress
        if progress is None:
            yield from read_split(split, scan_filter, columns)
            return
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            progress(n)

        yield from read_split(split, scan_filter, columns, progress=advance)
        progress(split_size(split) - done)  # the tail, and whatever an early stop skipped

    def _chunks(self, scan_filter: ScanFilter, columns: tuple[str, ...]):
        plan = self.plan(scan_filter)
        for split in plan.splits:
            yield from self._read(split, scan_filter, columns)

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
        parts = (self._read(split, scan_filter, cols) for split in plan.splits)
        return write_local(target, parts, cols)[1]

    def stats(self) -> StatsReport:
        plan = self._plan(ScanFilter(), "one")
        counts: dict[tuple[str, int], PartitionCounts] = {}
        current: tuple[str, int] | None = None
        acc = PartitionAccumulator()
        for split in plan.splits:  # in partition order: one partition's keys held at a time
            key = (split.topic, split.partition)
            if key != current:
                if current is not None:
                    counts[current] = acc.finish()
                current, acc = key, PartitionAccumulator()
            for chunk in self._read(split, ScanFilter(), STATS_COLUMNS):
                acc.add(chunk)
        if current is not None:
            counts[current] = acc.finish()
        sources = [(p.topic, p.partition, p.segment_bytes) for p in plan.partitions]
        return report(sources, counts, plan.log_dirs, list(plan.notes), self.progress)
