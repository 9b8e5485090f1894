"""A partition's log (Kafka's ``UnifiedLog``): its offsets, leader-epoch cache and producer
state over its segments (:class:`~pylogctl.storage.local_log.LocalLog`), and the public read,
append, retention and truncation operations that keep them consistent.

Offsets kept (``UnifiedLog``'s): the log start offset (the first offset clients may read), the
log end offset (the next offset to assign), the high watermark (clamped into
[log start, log end]) and the recovery point (everything below it is flushed; the loader
re-validates what is above). :meth:`Log.load` opens a dir through the loader
(:func:`~pylogctl.storage.loader.log_loader.plan_load` and ``apply_load``), so a log is always
consistent when it opens.

Every mutation is crash-safe the way Kafka's is: segment files go as ``LocalLog`` describes
(renamed ``.deleted`` first, in an order that always leaves a contiguous log, each with its
producer snapshot); checkpoints and snapshots are written atomically. The log dir's offset
checkpoints are the caller's (:class:`~pylogctl.storage.log_dir.LogDir`) to write. Not
thread-safe.

One difference from Kafka: :meth:`Log.truncate_to` sets the log end offset to where the data
now ends. Kafka sets it to the target, which differs when the target lies inside a batch (the
whole batch goes), leaving an offset gap that the next load would not see.
"""

from __future__ import annotations

import enum
import logging
import os
from dataclasses import dataclass
from typing import Callable, Iterator

from ..format.log_stream import iter_batches
from ..format.record import NO_TIMESTAMP
from . import list_offsets
from .backup import Backup
from .checkpoint import EpochEntry
from .file_records import FileRecords, TimestampAndOffset
from .files import fsync_dir
from .leader_epoch_cache import LeaderEpochFileCache
from .loader.plan import LoadResult
from .loader.log_loader import apply_load, plan_load
# LogError, OffsetOutOfRangeError and LogReadInfo are the partition log's, imported from here
from .local_log import LocalLog, LogError, LogReadInfo, OffsetOutOfRangeError
from .lock import LogDirLock
from .log_config import LogConfig
from .log_segments import LogSegments
from .log_validator import RecordBatchTooLargeError, validate_and_assign_offsets
from .producer_append import AppendOrigin
from .producer_state import (ProducerStateManager, ProducerStateUpdate,
                             analyze_and_validate_producer_state, rebuild_producer_state)
from .clock import wall_clock_ms
from .segment import LogSegment, RollParams

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TruncationResult:
    """What a truncation did (``changed`` is False when there was nothing above the target)."""

    target_offset: int
    log_end_offset_before: int
    log_end_offset: int
    deleted_segments: tuple[int, ...]
    truncated_segment: int | None
    truncated_bytes: int
    created_segment: int | None
    leader_epochs_removed: tuple[EpochEntry, ...]
    log_start_offset: int
    recovery_point: int
    high_watermark: int

    @property
    def changed(self) -> bool:
        return bool(self.deleted_segments or self.truncated_bytes
                     or self.created_segment is not None or self.leader_epochs_removed)


@dataclass(frozen=True)
class AppendInfo:
    """What an append did (Kafka's ``LogAppendInfo``). A leader append that repeats one of its
    producer's last 5 batches writes nothing: ``duplicate`` is set and the offsets (and
    ``log_append_time``) are the original append's."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    bytes: int
    rolled: bool
    log_append_time: int = NO_TIMESTAMP
    log_start_offset: int = 0
    duplicate: bool = False


class FetchIsolation(enum.Enum):
    """How far a read may go (Kafka's ``FetchIsolation``): the log end (followers), the high
    watermark (read_uncommitted consumers) or the last stable offset (read_committed)."""

    LOG_END = "log_end"
    HIGH_WATERMARK = "high_watermark"
    TXN_COMMITTED = "txn_committed"


class Log:
    """An open partition log. Use :meth:`load`; close it (or use ``with``) when done."""

    def __init__(self, directory: str, config: LogConfig, segments: LogSegments[LogSegment],
                 log_start_offset: int, log_end_offset: int, recovery_point: int,
                 high_watermark: int, leader_epoch_cache: LeaderEpochFileCache,
                 producer_state: ProducerStateManager, *, lock: LogDirLock,
                 own_lock: bool = False, backup: Backup | None = None,
                 load_result: LoadResult | None = None) -> None:
        self.local_log = LocalLog(directory, config, segments, log_end_offset, recovery_point,
                                  backup)
        self.log_start_offset = log_start_offset
        self.high_watermark = high_watermark
        self.leader_epoch_cache = leader_epoch_cache
        self.producer_state = producer_state
        self.lock = lock
        self._own_lock = own_lock
        self.load_result = load_result
        self.closed = False

    @classmethod
    def load(cls, directory: str | os.PathLike[str], config: LogConfig = LogConfig(), *,
             log_start_offset_checkpoint: int = 0, recovery_point_checkpoint: int = 0,
             high_watermark_checkpoint: int | None = None, had_clean_shutdown: bool = False,
             lock: LogDirLock | None = None, backup_dir: str | os.PathLike[str] | None = None,
             now_ms: int | None = None) -> "Log":
        """Load the partition dir as a broker starts it (plan, apply, open), holding the log
        dir's lock (``lock``, or one taken here and released by :meth:`close`)."""
        directory = os.path.abspath(os.fspath(directory))
        own_lock = lock is None
        if lock is None:
            lock = LogDirLock(os.path.dirname(directory)).acquire()
        try:
            plan = plan_load(directory, log_start_offset_checkpoint=log_start_offset_checkpoint,
                             recovery_point_checkpoint=recovery_point_checkpoint,
                             high_watermark_checkpoint=high_watermark_checkpoint,
                             had_clean_shutdown=had_clean_shutdown, config=config, now_ms=now_ms)
            result = apply_load(plan, backup_dir=backup_dir, lock=lock)
            segments: LogSegments[LogSegment] = LogSegments()
            for base in plan.segments:
                segments.add(LogSegment.open(directory, base, config))
            # room for appends, as Kafka's loader leaves it; close() trims them again
            segments.last.resize_indexes(config.segment_index_bytes)  # type: ignore[union-attr]
            producers = ProducerStateManager(directory)
            rebuild_producer_state(producers, plan.segments, _segment_reader(segments),
                                   plan.log_start_offset, plan.log_end_offset,
                                   reload_from_clean_shutdown=had_clean_shutdown,
                                   now_ms=plan.now_ms)
            backup = None if backup_dir is None else Backup(backup_dir, os.path.dirname(directory))
            return cls(directory, config, segments, plan.log_start_offset, plan.log_end_offset,
                       plan.recovery_point, plan.high_watermark,
                       LeaderEpochFileCache.for_partition_dir(directory), producers, lock=lock,
                       own_lock=own_lock, backup=backup, load_result=result)
        except BaseException:
            if own_lock:
                lock.release()
            raise

    # -- the local log's state ------------------------------------------------------------------
    @property
    def dir(self) -> str:
        return self.local_log.dir

    @property
    def config(self) -> LogConfig:
        return self.local_log.config

    @config.setter
    def config(self, config: LogConfig) -> None:
        self.local_log.config = config

    @property
    def segments(self) -> LogSegments[LogSegment]:
        return self.local_log.segments

    @property
    def backup(self) -> Backup | None:
        return self.local_log.backup

    @property
    def delete_segment_files(self) -> Callable[[LogSegment], None]:
        """Removes a segment's files once renamed .deleted and out of the map (Kafka's
        asyncDelete); a broker sets its scheduler here."""
        return self.local_log.delete_segment_files

    @delete_segment_files.setter
    def delete_segment_files(self, delete: Callable[[LogSegment], None]) -> None:
        self.local_log.delete_segment_files = delete

    @property
    def recovery_point(self) -> int:
        return self.local_log.recovery_point

    @recovery_point.setter
    def recovery_point(self, offset: int) -> None:
        self.local_log.recovery_point = offset

    @property
    def active_segment(self) -> LogSegment:
        return self.local_log.active_segment

    # -- offsets -------------------------------------------------------------------------------
    @property
    def log_end_offset(self) -> int:
        return self.local_log.log_end_offset

    def segments_in_range(self, start: int, end: int) -> list[LogSegment]:
        """The segments that can hold offsets in ``[start, end)`` (Kafka's ``logSegments``)."""
        return self.segments.values(start, end)

    def update_high_watermark(self, offset: int) -> int:
        """Set the high watermark, clamped into [log start, log end]; returns it."""
        self.high_watermark = min(max(offset, self.log_start_offset), self.log_end_offset)
        self.producer_state.on_high_watermark_updated(self.high_watermark)
        return self.high_watermark

    def _update_log_end_offset(self, offset: int) -> None:
        """``LocalLog.updateLogEndOffset`` and ``updateHighWatermarkWithLogEndOffset``."""
        self.local_log.update_log_end_offset(offset)
        if self.high_watermark >= offset:
            self.high_watermark = offset

    @property
    def first_unstable_offset(self) -> int | None:
        """The first offset of a transaction still open, or decided above the high watermark."""
        return self.producer_state.first_unstable_offset()

    @property
    def last_stable_offset(self) -> int:
        """Kafka's LSO: the first unstable offset when it is below the high watermark, else
        the high watermark. read_committed consumers read up to it."""
        unstable = self.producer_state.first_unstable_offset()
        if unstable is not None and unstable < self.high_watermark:
            return unstable
        return self.high_watermark

    # -- reads -----------------------------------------------------------------------------------
    def read(self, start_offset: int, max_length: int,
             isolation: FetchIsolation = FetchIsolation.HIGH_WATERMARK,
             min_one_message: bool = True) -> LogReadInfo:
        """Kafka's ``UnifiedLog.read``/``LocalLog.read``: at most ``max_length`` bytes from the
        batch holding ``start_offset`` on (the whole first batch even if larger when
        ``min_one_message``), never past the isolation's bound; nothing when the start is at
        or above the bound. A read_committed read also collects the aborted transactions
        overlapping what it returns. :class:`OffsetOutOfRangeError` below the log start or
        above the log end."""
        self._check_open()
        if start_offset < self.log_start_offset:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition "
                f"{os.path.basename(self.dir)}, but we only have log segments starting from "
                f"offset: {self.log_start_offset}.")
        if isolation is FetchIsolation.LOG_END:
            bound = self.log_end_offset
        elif isolation is FetchIsolation.HIGH_WATERMARK:
            bound = self.high_watermark
        else:
            bound = self.last_stable_offset
        return self.local_log.read(start_offset, max_length, bound, min_one_message,
                                   isolation is FetchIsolation.TXN_COMMITTED)

    def fetch_offset_by_timestamp(self, timestamp: int, last_fetchable_offset: int
                                  ) -> TimestampAndOffset | None:
        """ListOffsets for a target that searches the log (max timestamp, or a timestamp):
        :func:`~pylogctl.storage.list_offsets.fetch_offset_by_timestamp` over this log's
        segments. Earliest and latest are the caller's."""
        self._check_open()
        return list_offsets.fetch_offset_by_timestamp(self.segments, timestamp,
                                                      self.log_start_offset,
                                                      last_fetchable_offset)

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int] | None:
        """Kafka's ``endOffsetForEpoch`` (OffsetForLeaderEpoch): ``(epoch, end offset)`` or
        None when the cache has no answer."""
        epoch, offset = self.leader_epoch_cache.end_offset_for(leader_epoch,
                                                               self.log_end_offset)
        return None if offset < 0 else (epoch, offset)

    # -- deleting segments ---------------------------------------------------------------------
    def _save(self, *paths: str, will_delete: bool = False) -> None:
        self.local_log.save(*paths, will_delete=will_delete)

    def _mark_snapshot_for_deletion(self, base_offset: int) -> str | None:
        """A deleted segment's producer snapshot, renamed for deletion with it."""
        self._save(self.producer_state.snapshot_path(base_offset), will_delete=True)
        return self.producer_state.remove_and_mark_snapshot_for_deletion(base_offset)

    def _delete_segments(self, doomed: list[LogSegment], reason: str,
                         oldest_first: bool = False) -> None:
        """``removeAndDeleteSegments`` with the producer snapshots at their base offsets."""
        self.local_log.remove_and_delete_segments(doomed, reason,
                                                  self._mark_snapshot_for_deletion, oldest_first)

    def maybe_increment_log_start_offset(self, new_log_start_offset: int) -> bool:
        """Kafka's ``maybeIncrementLogStartOffset``: raise the log start offset (never above
        the high watermark) and the recovery point with it, and drop the leader epochs and
        producer state below it. Returns whether it moved.

        At the log end (every segment deleted) the epoch cache is cleared in one write: Kafka
        would keep one entry there, which the next load drops (``truncateFromEnd``), so two
        loads in a row would disagree."""
        self._check_open()
        if new_log_start_offset > self.high_watermark:
            raise LogError(f"Cannot increment the log start offset of {self.dir} to "
                           f"{new_log_start_offset} since it is larger than the high watermark "
                           f"{self.high_watermark}")
        if new_log_start_offset <= self.log_start_offset:
            return False
        self.log_start_offset = new_log_start_offset
        self.recovery_point = max(self.recovery_point, new_log_start_offset)
        if any(e.start_offset <= new_log_start_offset
               for e in self.leader_epoch_cache.epoch_entries()):
            self._save(self.leader_epoch_cache.path)
        if new_log_start_offset >= self.log_end_offset:
            self.leader_epoch_cache.clear_and_flush()
        else:
            self.leader_epoch_cache.truncate_from_start(new_log_start_offset)
        self.producer_state.on_log_start_offset_incremented(new_log_start_offset)
        return True

    def delete_oldest_segments(self, count: int, reason: str,
                               before_delete: Callable[[], None] | None = None) -> int | None:
        """Kafka's ``deleteSegments`` for the ``count`` oldest segments (retention): when that
        is all of them, roll a new empty segment first (returned: its base offset); raise the
        log start offset to the first segment kept; call ``before_delete`` (the caller's
        checkpoint write: a crash after it leaves whole segments below a checkpointed log
        start, which the loader and the next retention run deal with); then delete the
        segments oldest first, with their producer snapshots and the snapshots the next load
        would drop (at or below the log start)."""
        self._check_open()
        doomed = list(self.segments)[:count]
        created = None
        if count == len(self.segments):
            created = self.roll().base_offset
        kept = self.segments.higher(doomed[-1].base_offset)
        assert kept is not None, "a segment is kept"
        self.maybe_increment_log_start_offset(kept.base_offset)
        if before_delete is not None:
            before_delete()
        self._delete_segments(doomed, reason, oldest_first=True)
        self._rebuild_producer_state(self.log_end_offset)
        return created

    # -- truncation ----------------------------------------------------------------------------
    def truncate_to(self, target_offset: int) -> TruncationResult:
        """Kafka's ``truncateTo``: make ``target_offset`` the log end (or less: the batch
        holding it goes whole, and the log then ends where the batch began)."""
        self._check_open()
        if target_offset < 0:
            raise LogError(f"Cannot truncate partition {self.dir} to a negative offset "
                           f"({target_offset}).")
        before = self.log_end_offset
        if target_offset >= before:
            logger.info("Truncating %s to %d has no effect as the largest offset in the log "
                        "is %d", self.dir, target_offset, before - 1)
            removed = self._truncate_epochs_from_end(before)
            return self._result(target_offset, before, (), None, 0, None, removed)
        if self.segments.first.base_offset > target_offset:  # type: ignore[union-attr]
            return self.truncate_fully_and_start_at(target_offset)
        doomed, truncated = self.local_log.truncate_to(target_offset,
                                                       self._mark_snapshot_for_deletion)
        active = self.active_segment
        new_end = active.read_next_offset()
        removed = self._truncate_epochs_from_end(new_end)
        self.log_start_offset = min(new_end, self.log_start_offset)
        self._update_log_end_offset(new_end)
        self._rebuild_producer_state(new_end)
        fsync_dir(self.dir)
        return self._result(target_offset, before, tuple(s.base_offset for s in doomed),
                            active.base_offset, truncated, None, removed)

    def truncate_fully_and_start_at(self, new_offset: int,
                                    log_start_offset: int | None = None) -> TruncationResult:
        """Kafka's ``truncateFullyAndStartAt``: delete every segment and start an empty one at
        ``new_offset`` (:meth:`LocalLog.truncate_fully_and_start_at
        <pylogctl.storage.local_log.LocalLog.truncate_fully_and_start_at>`), with the leader
        epochs and producer state."""
        self._check_open()
        before = self.log_end_offset
        old = self.local_log.truncate_fully_and_start_at(new_offset,
                                                         self._mark_snapshot_for_deletion)
        removed = tuple(self.leader_epoch_cache.epoch_entries())
        self._save(self.leader_epoch_cache.path)
        self.leader_epoch_cache.clear_and_flush()
        for offset in self.producer_state.snapshot_offsets():
            self._save(self.producer_state.snapshot_path(offset), will_delete=True)
        self.producer_state.truncate_fully_and_start_at(new_offset)
        self.log_start_offset = new_offset if log_start_offset is None else log_start_offset
        self._update_log_end_offset(new_offset)
        self._rebuild_producer_state(new_offset)
        self.high_watermark = new_offset
        fsync_dir(self.dir)
        return self._result(new_offset, before, tuple(s.base_offset for s in old), None,
                            sum(s.size for s in old), new_offset, removed)

    def _truncate_epochs_from_end(self, end_offset: int) -> tuple[EpochEntry, ...]:
        if any(e.start_offset >= end_offset for e in self.leader_epoch_cache.epoch_entries()):
            self._save(self.leader_epoch_cache.path)
        return tuple(self.leader_epoch_cache.truncate_from_end(end_offset))

    def _rebuild_producer_state(self, end_offset: int) -> None:
        for offset in self.producer_state.snapshot_offsets():
            if offset > end_offset or offset <= self.log_start_offset:
                self._save(self.producer_state.snapshot_path(offset), will_delete=True)
        rebuild_producer_state(self.producer_state, self.segments.base_offsets,
                               _segment_reader(self.segments), self.log_start_offset, end_offset)

    def _result(self, target: int, before: int, deleted: tuple[int, ...], truncated_segment,
                truncated: int, created, removed) -> TruncationResult:
        return TruncationResult(target, before, self.log_end_offset, deleted, truncated_segment,
                                truncated, created, tuple(removed), self.log_start_offset,
                                self.recovery_point, self.high_watermark)

    # -- appends, rolls, flushes ---------------------------------------------------------------
    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at max(``expected_next_offset``, log end)
        (:meth:`LocalLog.roll <pylogctl.storage.local_log.LocalLog.roll>`), snapshot the
        producer state there and flush everything below it."""
        self._check_open()
        segment = self.local_log.roll(expected_next_offset)
        new_offset = segment.base_offset
        self.producer_state.update_map_end_offset(new_offset)
        self.producer_state.take_snapshot()
        self.flush(new_offset)
        return segment

    def append_as_follower(self, records: bytes | bytearray | memoryview) -> AppendInfo:
        """Append batches that already carry their offsets (a follower's fetch, a copy):
        validated (CRC, increasing offsets at or above the log end), rolled into a new segment
        when Kafka would roll, indexed, fed to the leader-epoch cache and producer state."""
        self._check_open()
        batches = list(iter_batches(records))
        if not batches:
            raise LogError(f"Append to {self.dir} holds no complete batch")
        end = batches[-1].position + batches[-1].size_in_bytes
        if end != len(records):
            raise LogError(f"Append to {self.dir} ends with {len(records) - end} bytes that are "
                           f"not a batch")
        expected = self.log_end_offset
        for batch in batches:
            batch.ensure_valid()
            if batch.base_offset < expected:
                raise LogError(f"Unexpected offset in append to {self.dir}: batch at offset "
                               f"{batch.base_offset} is below the expected offset {expected}")
            expected = batch.last_offset + 1
        if len(records) > self.config.segment_bytes:
            raise LogError(f"Append of {len(records)} bytes to {self.dir} is larger than the "
                           f"segment size {self.config.segment_bytes}")
        best = max(batches, key=lambda b: b.max_timestamp)
        first_offset, last_offset = batches[0].base_offset, batches[-1].last_offset
        rolled = self._maybe_roll(first_offset, last_offset, best.max_timestamp, len(records))
        update = analyze_and_validate_producer_state(self.producer_state, batches,
                                                     AppendOrigin.REPLICATION)
        for batch in batches:
            if batch.magic >= 2 and batch.partition_leader_epoch >= 0:
                self.leader_epoch_cache.assign(batch.partition_leader_epoch, batch.base_offset)
        self._write(records, last_offset, update)
        return AppendInfo(first_offset, last_offset, best.max_timestamp, len(records), rolled,
                          log_start_offset=self.log_start_offset)

    def append_as_leader(self, records: bytes | bytearray | memoryview, leader_epoch: int,
                         origin: AppendOrigin = AppendOrigin.CLIENT, *,
                         now_ms: int | None = None) -> AppendInfo:
        """Append one v2 batch as the partition leader (Kafka's ``appendAsLeader``): validate
        it and give it the next offsets and ``leader_epoch``
        (:func:`~pylogctl.storage.log_validator.validate_and_assign_offsets`: in place, so the
        producer's compressed bytes are written as they came), start the epoch in the
        leader-epoch cache, roll when Kafka would, then check it against its producer's state
        (``origin``: a client's sequences, a coordinator's epochs). A retried batch (same
        producer epoch and sequence range as one of the producer's last 5) is not written
        again: the result carries the original offsets and ``duplicate``.

        Raises the validator's errors, ``CorruptRecordError``, the producer-state errors and
        :class:`~pylogctl.storage.log_validator.RecordBatchTooLargeError`; nothing is written
        then. The high watermark is not moved: that is the replica layer's business (a
        single-replica leader moves it to the log end once the append is written)."""
        self._check_open()
        now = wall_clock_ms() if now_ms is None else now_ms
        first_offset = self.log_end_offset
        result = validate_and_assign_offsets(records, first_offset, leader_epoch, self.config,
                                             origin, now, os.path.basename(self.dir))
        batch = result.batch
        size = batch.size_in_bytes
        if size > self.config.segment_bytes:
            raise RecordBatchTooLargeError(
                f"Message batch size is {size} bytes in append to partition "
                f"{os.path.basename(self.dir)}, which exceeds the maximum configured segment "
                f"size of {self.config.segment_bytes}.")
        last_offset = batch.last_offset
        self.leader_epoch_cache.assign(leader_epoch, first_offset)
        rolled = self._maybe_roll(first_offset, last_offset, result.max_timestamp, size)
        update = analyze_and_validate_producer_state(self.producer_state, [batch], origin)
        if update.duplicate is not None:
            dup = update.duplicate
            # Kafka reports the cached batch's timestamp as its log-append time, whatever the
            # topic's timestamp type
            return AppendInfo(dup.first_offset, dup.last_offset, result.max_timestamp, 0, rolled,
                              dup.timestamp, self.log_start_offset, duplicate=True)
        self._write(result.records, last_offset, update)
        return AppendInfo(first_offset, last_offset, result.max_timestamp, size, rolled,
                          result.log_append_time, self.log_start_offset)

    def _maybe_roll(self, first_offset: int, last_offset: int, max_timestamp: int,
                    size: int) -> bool:
        """Kafka's ``maybeRoll``: a new segment at ``first_offset`` when the active one is
        full, too old, its indexes are full, or the offsets would overflow it."""
        params = RollParams(self.config.max_segment_ms(), self.config.segment_bytes,
                            max_timestamp, last_offset, size, wall_clock_ms())
        rolled = self.active_segment.should_roll(params)
        if rolled:
            self.roll(first_offset)
        return rolled

    def _write(self, records: bytes | bytearray | memoryview, last_offset: int,
               update: ProducerStateUpdate) -> None:
        """Write validated batches to the active segment, then apply their producer state:
        the producers' new entries, the transactions their markers complete (aborted ones
        indexed in the ``.txnindex`` with the last stable offset of the moment), the map end
        offset; the log end offset moves right after the write, as in Kafka."""
        self.local_log.append(last_offset, records)
        segment = self.active_segment
        for info in update.updated_producers.values():
            self.producer_state.apply(info)
        for txn in update.completed_txns:
            segment.update_txn_index(txn, self.producer_state.last_stable_offset(txn))
            self.producer_state.complete_txn(txn)
        self.producer_state.update_map_end_offset(last_offset + 1)
        if self.log_end_offset - self.recovery_point >= self.config.flush_messages:
            self.flush()

    def flush(self, offset: int | None = None) -> None:
        """fsync every segment holding offsets below ``offset`` (default: everything, the
        active segment included) and raise the recovery point to it."""
        self._check_open()
        self.local_log.flush(offset)

    def close(self) -> None:
        """Snapshot producer state at the log end, close the segments (trimming the active
        segment's indexes), give new files the dir's owner, and release the lock if
        :meth:`load` took it."""
        if self.closed:
            return
        self.closed = True
        try:
            self.producer_state.take_snapshot()
            self.local_log.close()
        finally:
            if self._own_lock:
                self.lock.release()

    def _check_open(self) -> None:
        if self.closed:
            raise LogError(f"The log of {self.dir} is already closed")

    def __enter__(self) -> "Log":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Log({self.dir!r}, logStartOffset={self.log_start_offset}, "
                f"logEndOffset={self.log_end_offset}, highWatermark={self.high_watermark}, "
                f"recoveryPoint={self.recovery_point}, segments={len(self.segments)})")


def _segment_reader(segments: LogSegments[LogSegment]):
    """``read_segment(base)`` for :func:`rebuild_producer_state`: a segment's batches."""
    def read(base: int) -> Iterator:
        segment = segments.get(base)
        if segment is None:
            return
        with FileRecords(segment.log.path) as records:
            yield from records.batches()
    return read
