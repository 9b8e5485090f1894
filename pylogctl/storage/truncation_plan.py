"""What truncating a partition would do, predicted by reading only (``pylogctl truncate``'s plan).

A truncation runs on a loaded log, so it is predicted from the partition's load plan (the log
as a broker would open it: recovered segments, clamped offsets) and then follows
:meth:`~pylogctl.storage.log.Log.truncate_to` and
:meth:`~pylogctl.storage.log.Log.truncate_fully_and_start_at` (Kafka's ``truncateTo`` and
``truncateFullyAndStartAt``):

- ``truncateTo(T)`` with T at or past the log end changes nothing. With T below the first
  segment's base offset the whole log goes (``truncateFullyAndStartAt(T)``). Otherwise every
  segment whose base offset is above T is deleted, and the last remaining one is cut at the
  first batch whose last offset is >= T (so a batch holding T goes whole, and the log ends
  where it began, possibly below T).
- Then the log end offset is what the cut segment's last batch makes it; the leader epochs
  starting at or after it are removed; the log start offset, recovery point and high
  watermark are clamped to it; producer snapshots above it (and at or below the log start)
  are deleted and producer state is rebuilt.
- ``truncateFullyAndStartAt(N)`` deletes every segment, creates an empty one at N, clears the
  epoch cache and every producer snapshot, and sets the log start (N unless told), log end and
  high watermark to N.

The prediction is checked against the truncation itself in the tests, field by field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from .file_records import FileRecords
from .log import TruncationResult
from .loader.plan import (DeleteSegment, DeleteSnapshot, LoadPlan, RebuildProducerState,
                        RecoverSegment, SplitSegment, plain_data)
from .naming import log_filename
from .producer_state import list_snapshot_files

Mode = Literal["to-offset", "start-at"]


@dataclass(frozen=True)
class TruncationPrediction(TruncationResult):
    """The log after the truncation, as :class:`~pylogctl.storage.log.TruncationResult`
    reports it, plus the files it deletes and the segments it leaves first and last."""

    mode: Mode
    snapshots_deleted: tuple[int, ...]
    first_segment: int
    active_segment: int

    def describe(self) -> list[str]:
        """One line per change, for people."""
        if not self.changed:
            return [f"nothing to truncate: the log ends at {self.log_end_offset_before}, and "
                    f"{self.target_offset} is at or past it"]
        lines = []
        if self.deleted_segments:
            lines.append(f"delete {len(self.deleted_segments)} segment"
                         f"{'' if len(self.deleted_segments) == 1 else 's'}: "
                         + ", ".join(str(b) for b in self.deleted_segments))
        if self.truncated_segment is not None:
            lines.append(f"cut segment {self.truncated_segment}: drop its last "
                         f"{self.truncated_bytes} bytes")
        if self.created_segment is not None:
            lines.append(f"create empty segment {self.created_segment}")
        if self.leader_epochs_removed:
            lines.append("remove leader epochs " + ", ".join(
                f"{e.epoch}@{e.start_offset}" for e in self.leader_epochs_removed))
        if self.snapshots_deleted:
            lines.append("delete producer snapshots at " + ", ".join(
                str(o) for o in self.snapshots_deleted))
        lines.append(f"log end {self.log_end_offset_before} -> {self.log_end_offset}; log start "
                     f"{self.log_start_offset}, recovery point {self.recovery_point}, high "
                     f"watermark {self.high_watermark}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {**plain_data(self), "changed": self.changed}


def predict_truncation(plan: LoadPlan, target: int, mode: Mode = "to-offset", *,
                       log_start_offset: int | None = None) -> TruncationPrediction:
    """The truncation of the log that ``plan`` loads, read from its files."""
    before = plan.log_end_offset
    segments = plan.segments
    common = dict(mode=mode, target_offset=target, log_end_offset_before=before)
    if mode == "to-offset" and target >= before:
        return TruncationPrediction(
            **common, log_end_offset=before, deleted_segments=(), truncated_segment=None,
            truncated_bytes=0, created_segment=None, leader_epochs_removed=(),
            snapshots_deleted=(), log_start_offset=plan.log_start_offset,
            recovery_point=plan.recovery_point, high_watermark=plan.high_watermark,
            first_segment=segments[0], active_segment=segments[-1])
    if mode == "start-at" or target < segments[0]:
        new_start = target if log_start_offset is None or mode == "to-offset" else log_start_offset
        return TruncationPrediction(
            **common, log_end_offset=target, deleted_segments=segments, truncated_segment=None,
            truncated_bytes=sum(_size_after_load(plan, b) for b in segments),
            created_segment=target,
            leader_epochs_removed=plan.leader_epochs,
            snapshots_deleted=snapshots_after_load(plan), log_start_offset=new_start,
            recovery_point=min(plan.recovery_point, target), high_watermark=target,
            first_segment=target, active_segment=target)
    cut_base = max(b for b in segments if b <= target)
    position, new_end = _cut(plan, cut_base, target)
    log_start = min(new_end, plan.log_start_offset)
    return TruncationPrediction(
        **common, log_end_offset=new_end,
        deleted_segments=tuple(b for b in segments if b > target), truncated_segment=cut_base,
        truncated_bytes=_size_after_load(plan, cut_base) - position, created_segment=None,
        leader_epochs_removed=tuple(e for e in plan.leader_epochs if e.start_offset >= new_end),
        snapshots_deleted=tuple(o for o in snapshots_after_load(plan)
                                if o > new_end or o <= log_start),
        log_start_offset=log_start, recovery_point=min(plan.recovery_point, new_end),
        high_watermark=min(plan.high_watermark, new_end), first_segment=segments[0],
        active_segment=cut_base)


def segment_bytes_after_load(plan: LoadPlan, base: int) -> tuple[str, int, int]:
    """Where the loaded segment ``base``'s bytes are now, as ``(file, start, size)``: in its
    ``.log``, or, for a segment a split creates, in the overflowing segment it comes from; the
    size is what the load leaves (a recovery may cut it)."""
    path, start, size = os.path.join(plan.partition_dir, log_filename(base)), 0, None
    for step in plan.steps:
        if isinstance(step, SplitSegment):
            for part in step.segments:
                if part.base_offset == base:
                    path, start, size = step.path, part.position, part.size
        elif isinstance(step, RecoverSegment) and step.base_offset == base:
            size = 0 if step.invalid_offset else step.valid_bytes
    if size is None:
        size = os.path.getsize(path) if os.path.exists(path) else 0
    return path, start, size


def _size_after_load(plan: LoadPlan, base: int) -> int:
    return segment_bytes_after_load(plan, base)[2]


def _cut(plan: LoadPlan, base: int, target: int) -> tuple[int, int]:
    """Where ``LogSegment.truncateTo(target)`` cuts the segment (a position in it), and the
    log end after it: the next offset after the last batch kept (the base offset if none is)."""
    path, start, size = segment_bytes_after_load(plan, base)
    if size == 0:  # empty, or an empty segment the load creates
        return 0, base
    end = base
    with FileRecords(path, end=start + size) as records:
        for batch in records.batches(start):
            if batch.last_offset >= target:
                return batch.position - start, end
            end = batch.last_offset + 1
        return size, end


def snapshots_after_load(plan: LoadPlan) -> tuple[int, ...]:
    """Offsets of the producer snapshots the loaded log has: those in the dir, less those the
    load deletes, plus those it writes."""
    found = {offset for offset, _ in list_snapshot_files(plan.partition_dir)}
    for step in plan.steps:
        if isinstance(step, DeleteSnapshot):
            found.discard(step.offset)
        elif isinstance(step, DeleteSegment):
            found.discard(step.base_offset)
        elif isinstance(step, RebuildProducerState):
            found.difference_update(o for o, _ in step.deleted)
            found.update(step.written)
    return tuple(sorted(found))
