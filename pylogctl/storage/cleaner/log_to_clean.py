"""What part of a compacted log the cleaner may clean, and how dirty it is (Kafka's
``LogToClean`` and ``LogCleanerManager.cleanableOffsets`` / ``calculateCleanableBytes`` /
``maxCompactionDelay``).

- The first dirty offset is the ``cleaner-offset-checkpoint`` entry, or the log start offset
  when there is none; an entry below the log start or beyond the log end is reset to the log
  start (and the checkpoint rewritten: ``force_update_checkpoint``).
- The first uncleanable offset is the smallest of: the last stable offset (which is at most
  the high watermark), the active segment's base offset, and, with ``min.compaction.lag.ms``,
  the base of the first dirty non-active segment whose largest timestamp is within the lag of
  now. It is then moved down to the base offset of the segment holding it, so a cleaning always
  ends at a segment boundary.
- cleanable bytes = the segments from the first dirty one up to that boundary; clean bytes =
  the segments starting below the first dirty offset (the segment holding it counts twice, as
  in Kafka); dirty ratio = cleanable / (clean + cleanable).
- A log must be cleaned now (whatever its ratio) when a dirty non-active segment's first batch
  is older than ``max.compaction.lag.ms``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ...format.varint import INT64_MAX
from .cleaner_log import CleanerLog

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LogToClean:
    """One log's cleanable range and dirtiness."""

    topic_partition: str
    first_dirty_offset: int
    first_uncleanable_offset: int  # a segment base offset
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool = False
    force_update_checkpoint: bool = False  # the checkpointed offset was out of range

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    def eligible(self, min_cleanable_ratio: float) -> bool:
        """``grabFilthiestCompactedLog``'s test: overdue with something to clean, or dirtier
        than ``min.cleanable.dirty.ratio`` (and not empty)."""
        if self.total_bytes <= 0:
            return False
        return ((self.need_compaction_now and self.cleanable_bytes > 0)
                or self.cleanable_ratio > min_cleanable_ratio)


def cleanable_offsets(log: CleanerLog, checkpointed: int | None,
                      now_ms: int) -> tuple[int, int, bool]:
    """``(first dirty offset, first uncleanable offset, checkpoint reset)`` before the
    segment-boundary adjustment (Kafka's ``OffsetsToClean``)."""
    start = log.log_start_offset
    dirty = start if checkpointed is None else checkpointed
    reset = False
    if dirty < start:
        logger.info("Resetting first dirty offset of %s to log start offset %d since the "
                    "checkpointed offset %d is invalid.", log.name, start, dirty)
        dirty, reset = start, True
    elif dirty > log.log_end_offset:
        logger.warning("The last checkpoint dirty offset for partition %s is %d, which is larger "
                       "than the log end offset %d. Resetting to the log start offset %d.",
                       log.name, dirty, log.log_end_offset, start)
        dirty, reset = start, True
    candidates = [log.last_stable_offset(), log.active_segment.base_offset]
    lag = max(log.config.min_compaction_lag_ms, 0)
    if lag > 0:
        for segment in log.non_active_segments_from(dirty):
            if segment.largest_timestamp > now_ms - lag:
                candidates.append(segment.base_offset)
                break
    return dirty, max(dirty, min(candidates)), reset


def max_compaction_delay(log: CleanerLog, first_dirty_offset: int, now_ms: int) -> int:
    """How far past ``max.compaction.lag.ms`` the oldest dirty segment is (0: not overdue)."""
    stamps = [ts for s in log.non_active_segments_from(first_dirty_offset)
              if (ts := s.first_batch_timestamp) is not None and ts > 0]
    earliest = min(stamps, default=INT64_MAX)
    clean_until = now_ms - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


def calculate_cleanable_bytes(log: CleanerLog, first_dirty_offset: int,
                              uncleanable_offset: int) -> tuple[int, int]:
    """``(first uncleanable segment's base offset, bytes in [first dirty, that base))``."""
    non_active = log.non_active_segments_from(uncleanable_offset)
    first_uncleanable = (non_active[0] if non_active else log.active_segment).base_offset
    segments = log.segments.values(min(first_dirty_offset, first_uncleanable), first_uncleanable)
    return first_uncleanable, sum(s.size for s in segments)


def log_to_clean(log: CleanerLog, checkpointed: int | None, now_ms: int) -> LogToClean:
    dirty, uncleanable, reset = cleanable_offsets(log, checkpointed, now_ms)
    first_uncleanable, cleanable = calculate_cleanable_bytes(log, dirty, uncleanable)
    clean = sum(s.size for s in log.segments.values(-1, dirty))
    return LogToClean(log.name, dirty, first_uncleanable, clean, cleanable,
                      max_compaction_delay(log, dirty, now_ms) > 0, reset)
