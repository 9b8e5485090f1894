"""DeleteRecords: raising a partition's log start offset as a client's request does, and the
segments that then go (``Partition.deleteRecordsOnLeader``, ``UnifiedLog.
maybeIncrementLogStartOffset`` with reason ClientRecordDeletion, then retention's first pass).

Kafka's rules: a topic whose ``cleanup.policy`` is compact without delete refuses
(POLICY_VIOLATION); offset -1 means the high watermark; a negative offset, or one above the
high watermark, is OFFSET_OUT_OF_RANGE; the log start offset never moves down (an offset at or
below it changes nothing), and the low watermark answered is the log start offset after. The
recovery point rises with it, the leader-epoch cache and producer state drop what lies below
it (:meth:`~pylogctl.storage.log.Log.maybe_increment_log_start_offset`). The broker deletes the
segments wholly below the new log start offset on its next retention check (the
log-start-offset pass of :mod:`.retention`); offline that pass runs at once, after the new log
start offset is checkpointed, so a kill in between leaves segments below a checkpointed log
start, which the next run (or the broker's retention) deletes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from ..errors import ExitCode
from .loader.plan import LoadPlan
from .local_log import LogError
from .log import Log
from .log_config import LogConfig
from .retention import (LOG_START_RULE, DeletedSegment, RetentionResult, delete_old_segments,
                        simulate)
from .retention_plan import loaded_state
from .clock import wall_clock_ms

OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
POLICY_VIOLATION = "POLICY_VIOLATION"


class DeleteRecordsError(LogError):
    """A partition's DeleteRecords refused by Kafka's rules; ``error`` is Kafka's error name."""

    exit_code = ExitCode.REFUSED

    def __init__(self, error: str, message: str) -> None:
        super().__init__(f"{message} ({error})")
        self.error = error


@dataclass(frozen=True)
class RecordsDeletion:
    """One partition's DeleteRecords: the offset asked for (-1 resolved), the log start offset
    before and after (Kafka's low watermark), and the segments deleted and left."""

    offset: int
    log_start_offset_before: int
    low_watermark: int
    high_watermark: int
    log_end_offset: int
    deleted: tuple[DeletedSegment, ...]
    segments: tuple[int, ...]

    @property
    def changed(self) -> bool:
        return self.low_watermark != self.log_start_offset_before or bool(self.deleted)


def check_offset(topic: str, partition: int, offset: int, high_watermark: int,
                 config: LogConfig) -> int:
    """The log start offset DeleteRecords asks for (``offset``, -1 for the high watermark), or
    :class:`DeleteRecordsError` with Kafka's reason."""
    tp = f"{topic}-{partition}"
    if not config.delete and config.compact:
        raise DeleteRecordsError(POLICY_VIOLATION, f"Records of partition {tp} can not be "
                                                   f"deleted due to the configured policy")
    target = high_watermark if offset == -1 else offset
    if target < 0:
        raise DeleteRecordsError(OFFSET_OUT_OF_RANGE, f"The offset {target} for partition {tp} "
                                                      f"is not valid")
    if target > high_watermark:
        raise DeleteRecordsError(OFFSET_OUT_OF_RANGE, f"Cannot increment the log start offset to "
                                                      f"{target} of partition {tp} since it is "
                                                      f"larger than the high watermark "
                                                      f"{high_watermark}")
    return target


def predict_delete_records(plan: LoadPlan, topic: str, partition: int, offset: int,
                           config: LogConfig) -> RecordsDeletion:
    """What :func:`delete_records` does to the log ``plan`` loads, by reading only."""
    state = loaded_state(plan)
    target = check_offset(topic, partition, offset, state.high_watermark, config)
    start = max(state.log_start_offset, target)
    raised = dataclasses.replace(state, log_start_offset=start,
                                 recovery_point=max(state.recovery_point, start))
    return _deletion(target, state.log_start_offset,
                     simulate(raised, config, wall_clock_ms(), (LOG_START_RULE,)))


def delete_records(log: Log, topic: str, partition: int, offset: int,
                   before_delete: Callable[[], None] | None = None) -> RecordsDeletion:
    """Raise ``log``'s log start offset to ``offset`` and delete the segments wholly below it;
    ``before_delete`` (the caller's checkpoint write) runs before any segment goes."""
    target = check_offset(topic, partition, offset, log.high_watermark, log.config)
    before = log.log_start_offset
    log.maybe_increment_log_start_offset(target)
    if before_delete is not None and log.log_start_offset != before:
        before_delete()
    return _deletion(target, before, delete_old_segments(log, wall_clock_ms(), before_delete,
                                                         (LOG_START_RULE,)))


def _deletion(target: int, before: int, r: RetentionResult) -> RecordsDeletion:
    return RecordsDeletion(target, before, r.log_start_offset, r.high_watermark,
                           r.log_end_offset, r.deleted, r.segments)
