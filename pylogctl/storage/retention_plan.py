"""What retention would delete from a partition, predicted by reading only (``pylogctl
retention``'s plan).

Retention runs on a loaded log, so the prediction starts from the partition's load plan (the
log as a broker would open it) and gives :func:`~pylogctl.storage.retention.simulate` what the
loaded segments will show the passes: each segment's size once loaded, and its largest
timestamp as :class:`~pylogctl.storage.segment.LogSegment` reads it, the last entry of its
``.timeindex``, except for a segment the load recovers (its index is rebuilt, so the largest
batch timestamp of its valid bytes), and the ``.log``'s mtime for the segments with no
timestamp (the time of the load for a file the load rewrites). The deletion itself
(:func:`~pylogctl.storage.retention.delete_old_segments`) reports the same
:class:`~pylogctl.storage.retention.RetentionResult`, and the two are compared field by field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from .checkpoint import CheckpointUpdate
from .file_records import FileRecords
from .loader.plan import CreateSegment, LoadPlan, LoadResult, RecoverSegment
from .log_config import LogConfig
from .naming import TIME_INDEX_SUFFIX, log_filename, segment_file
from .retention import LogState, RetentionResult, SegmentInfo, simulate
from .clock import wall_clock_ms
from .time_index import TimeIndex
from .truncation_plan import segment_bytes_after_load, snapshots_after_load


@dataclass(frozen=True)
class RetentionPlan:
    """Retention predicted by reading only (``LogDir.plan_retention``): the load it runs on,
    the deletions, and the checkpoint entries they change."""

    load: LoadPlan
    retention: RetentionResult
    checkpoint_updates: tuple[CheckpointUpdate, ...]


@dataclass(frozen=True)
class RetentionOutcome:
    """What ``LogDir.delete_old_segments`` did (the checkpoint entries written early and at
    the end merged into one per entry)."""

    load: LoadResult | None
    retention: RetentionResult
    checkpoint_updates: tuple[CheckpointUpdate, ...]
    backups: tuple[str, ...]
    notes: tuple[str, ...]


def predict_retention(plan: LoadPlan, config: LogConfig, now_ms: int) -> RetentionResult:
    """The passes' deletions on the log ``plan`` loads, at ``now_ms``."""
    return simulate(loaded_state(plan), config, now_ms)


def loaded_state(plan: LoadPlan) -> LogState:
    """What the passes see of the log ``plan`` loads."""
    return LogState(tuple(_segment_info(plan, base) for base in plan.segments),
                    plan.log_start_offset, plan.log_end_offset, plan.high_watermark,
                    plan.recovery_point, snapshots_after_load(plan), plan.leader_epochs)


def _segment_info(plan: LoadPlan, base: int) -> SegmentInfo:
    if any(isinstance(s, CreateSegment) and s.base_offset == base for s in plan.steps):
        return SegmentInfo(base, 0, -1, wall_clock_ms())
    path, start, size = segment_bytes_after_load(plan, base)
    if path != os.path.join(plan.partition_dir, log_filename(base)):
        # a split writes it anew with the source's mtime (Kafka's setLastModified)
        return SegmentInfo(base, size, _largest_timestamp(path, start, start + size),
                           os.stat(path).st_mtime_ns // 1_000_000)
    recovery = next((s for s in plan.steps
                     if isinstance(s, RecoverSegment) and s.base_offset == base), None)
    if recovery is not None:
        max_timestamp = _largest_timestamp(path, 0, size)
    else:
        index = segment_file(plan.partition_dir, base, TIME_INDEX_SUFFIX)
        max_timestamp = -1
        if os.path.exists(index):
            time_index = TimeIndex(index, base)
            try:
                max_timestamp = time_index.last_entry.timestamp
            finally:
                time_index.close()
    rewritten = recovery is not None and recovery.truncated_bytes > 0
    modified = (wall_clock_ms() if rewritten or not os.path.exists(path)
                else os.stat(path).st_mtime_ns // 1_000_000)
    return SegmentInfo(base, size, max_timestamp, modified)


def _largest_timestamp(path: str, start: int, end: int) -> int:
    if end <= start or not os.path.exists(path):
        return -1
    with FileRecords(path, end=end) as records:
        return records.largest_timestamp_after(start).timestamp
