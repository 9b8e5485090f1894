"""The partition log as the log cleaner sees it: segments, offsets, producers, and where its
output goes.

Kafka's cleaner works on a ``UnifiedLog``. Here the same view is built two ways:

- :meth:`CleanerLog.for_log`: over a :class:`~pylogctl.storage.log.Log` loaded (recovered) under
  the log dir's lock; cleaned segments are written as ``.cleaned`` files and swapped in
  (:mod:`~pylogctl.storage.segment_swap`), and the producer snapshots of segments that are
  deleted without a replacement are deleted, as in ``UnifiedLog.replaceSegments``.
- :meth:`CleanerLog.for_live_log`: over a running broker's log, with its producer state.
- :meth:`CleanerLog.read_only`: over the files as they are, opened read-only, for the plan:
  cleaned output is only measured (:class:`DrySegment`) and nothing is swapped. A missing index
  reads as empty (lookups scan from the start; recovery would rebuild it).

In both, producer state is rebuilt in memory to the log end
(:func:`~pylogctl.storage.producer_recovery.producer_state_before`, the state a broker loading
the log at ``now_ms`` holds), and the high watermark is applied to it so that the last stable
offset is Kafka's: the first offset of an open transaction, or of one whose marker is not yet
below the high watermark, else the high watermark.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ...format.varint import INT64_MAX
from ..backup import Backup
from ..file_records import FileRecords
from ..files import delete_if_exists
from ..lazy_index import LazyIndex
from ..log import Log
from ..log_config import LogConfig
from ..log_segments import LogSegments
from ..naming import (CLEANED_FILE_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX,
                     TXN_INDEX_SUFFIX, segment_file)
from ..offset_index import OffsetIndex
from ..producer_recovery import producer_state_before
from ..producer_state import ProducerStateManager, list_snapshot_files
from ..segment import LogSegment
from ..segment_swap import replace_segments
from ..time_index import TimeIndex
from ..transaction_index import AbortedTxn, TransactionIndex


@dataclass(frozen=True)
class LastRecord:
    """An active producer's last data offset (None if its last batch was a marker) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


class DrySegment:
    """Where a planned cleaning writes: counts what a ``.cleaned`` segment would receive."""

    def __init__(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self.size = 0
        self.appends = 0
        self.max_offset = -1
        self.txn_index = _CountingTxnIndex()

    def append(self, largest_offset: int, records: bytes | bytearray) -> None:
        self.size += len(records)
        self.appends += 1
        self.max_offset = max(self.max_offset, largest_offset)

    def on_become_inactive_segment(self) -> None:
        pass

    def flush(self) -> None:
        pass

    def set_last_modified(self, ms: int) -> None:
        pass

    def delete_if_exists(self) -> None:
        pass


class _CountingTxnIndex:
    def __init__(self) -> None:
        self.entries: list[AbortedTxn] = []

    def append(self, txn: AbortedTxn) -> None:
        self.entries.append(txn)


class _ReadOnlyTxnIndex(TransactionIndex):
    """A ``.txnindex`` opened for reading only (the plan must not need write access)."""

    def _open(self):
        if self._file is None:
            self._file = open(self.path, "rb")
        return self._file

    def append(self, txn: AbortedTxn) -> None:
        raise ValueError(f"{self.path} is open read-only")


def open_segment_read_only(directory: str, base_offset: int, config: LogConfig, *,
                           indexed: bool = True, end: int | None = None) -> LogSegment:
    """A :class:`LogSegment` over existing files that never writes (not even a missing index);
    ``indexed=False`` reads its indexes as empty, ``end`` ends the ``.log`` early."""
    def index(suffix: str, kind: type) -> LazyIndex:
        path = segment_file(directory, base_offset, suffix)
        # missing (or not to be trusted): reads as empty
        source = path if indexed and os.path.exists(path) else os.devnull
        return LazyIndex(path, lambda _: kind(source, base_offset, config.segment_index_bytes,
                                              writable=False))

    return LogSegment(FileRecords(segment_file(directory, base_offset, LOG_SUFFIX), end=end),
                      index(INDEX_SUFFIX, OffsetIndex), index(TIME_INDEX_SUFFIX, TimeIndex),
                      _ReadOnlyTxnIndex(base_offset,
                                        segment_file(directory, base_offset, TXN_INDEX_SUFFIX)),
                      base_offset, config.index_interval_bytes, 0)


class CleanerLog:
    """One partition's log, for :class:`~pylogctl.storage.cleaner.cleaner.Cleaner`."""

    def __init__(self, directory: str, config: LogConfig, segments: LogSegments,
                 log_start_offset: int, log_end_offset: int, high_watermark: int,
                 producers: ProducerStateManager, *, log: Log | None = None,
                 backup: Backup | None = None) -> None:
        self.dir = directory
        self.config = config
        self.segments = segments
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset
        self.high_watermark = high_watermark
        self.producers = producers
        self.log = log
        self.backup = backup
        producers.on_high_watermark_updated(high_watermark)

    @classmethod
    def for_log(cls, log: Log, now_ms: int, high_watermark: int | None = None) -> "CleanerLog":
        """``high_watermark`` in place of the log's (which stays as it is): an operator's word
        that offline data is committed where no checkpoint says so."""
        hw = log.high_watermark if high_watermark is None else high_watermark
        return cls(log.dir, log.config, log.segments, log.log_start_offset, log.log_end_offset,
                   hw, _producers(log.dir, log.segments.base_offsets,
                                                  log.log_start_offset, log.log_end_offset,
                                                  now_ms), log=log, backup=log.backup)

    @classmethod
    def for_live_log(cls, log: Log) -> "CleanerLog":
        """Over a broker's open log: its own producer state is current (no rebuild from the
        files), and everything the cleaning changes is changed in the live log."""
        return cls(log.dir, log.config, log.segments, log.log_start_offset, log.log_end_offset,
                   log.high_watermark, log.producer_state, log=log, backup=log.backup)

    @classmethod
    def read_only(cls, directory: str, config: LogConfig, bases: list[int],
                  log_start_offset: int, log_end_offset: int, high_watermark: int,
                  now_ms: int) -> "CleanerLog":
        segments: LogSegments[LogSegment] = LogSegments()
        for base in bases:
            if os.path.exists(segment_file(directory, base, LOG_SUFFIX)):
                segments.add(open_segment_read_only(directory, base, config))
        present = segments.base_offsets
        return cls(directory, config, segments, log_start_offset, log_end_offset,
                   high_watermark, _producers(directory, present, log_start_offset,
                                              log_end_offset, now_ms))

    @property
    def dry_run(self) -> bool:
        return self.log is None

    @property
    def name(self) -> str:
        return os.path.basename(self.dir)

    @property
    def active_segment(self) -> LogSegment:
        segment = self.segments.last
        assert segment is not None, "a loaded log always has a segment"
        return segment

    def last_stable_offset(self) -> int:
        """Kafka's ``lastStableOffset``: the first unstable offset if below the high watermark."""
        first = self.producers.first_unstable_offset()
        if first is not None:
            first = max(first, self.log_start_offset)
            if first < self.high_watermark:
                return first
        return self.high_watermark

    def non_active_segments_from(self, offset: int) -> list[LogSegment]:
        active = self.active_segment.base_offset
        return [] if offset > active else self.segments.values(offset, active)

    def collect_aborted_transactions(self, start: int, upper: int) -> list[AbortedTxn]:
        """``LocalLog.collectAbortedTransactions``: from the segment holding ``start`` on, the
        aborted transactions ending at or after the log start and starting before ``upper``."""
        found: list[AbortedTxn] = []
        for segment in self.segments.values(start, INT64_MAX):
            result = segment.collect_aborted_txns(self.log_start_offset, upper)
            found.extend(result.aborted_transactions)
            if result.is_complete:
                break
        return found

    def last_records_of_active_producers(self) -> dict[int, LastRecord]:
        out = {}
        for producer_id, entry in self.producers.active_producers.items():
            last = entry.last_data_offset
            out[producer_id] = LastRecord(last if last >= 0 else None, entry.producer_epoch)
        return out

    def create_cleaned_segment(self, base_offset: int) -> LogSegment | DrySegment:
        """``createNewCleanedSegment``: a fresh ``{base}.log.cleaned`` (leftovers removed)."""
        if self.dry_run:
            return DrySegment(base_offset)
        LogSegment.delete_files_if_exist(self.dir, base_offset, CLEANED_FILE_SUFFIX)
        return LogSegment.create(self.dir, base_offset, self.config,
                                 file_suffix=CLEANED_FILE_SUFFIX)

    def replace_segments(self, new: list, old: list[LogSegment]) -> None:
        """Swap ``new`` in for ``old`` and delete the producer snapshots of old segments not
        replaced (a dry run changes nothing)."""
        if self.dry_run:
            return
        assert self.log is not None
        deleted = replace_segments(self.segments, new, old, self.dir, backup=self.backup,
                                   delete_files=self.log.delete_segment_files)
        for segment in deleted:
            path = self.log.producer_state.snapshot_path(segment.base_offset)
            if self.backup is not None:
                self.backup.save(path, will_delete=True)
            renamed = self.log.producer_state.remove_and_mark_snapshot_for_deletion(
                segment.base_offset)
            if renamed is not None:
                delete_if_exists(renamed)

    def close(self) -> None:
        """Release read-only segments (a loaded :class:`Log` is closed by its owner)."""
        if self.dry_run:
            for segment in self.segments:
                segment.close_handlers()


def _producers(directory: str, bases: list[int], log_start: int, log_end: int,
               now_ms: int) -> ProducerStateManager:
    segments = [(b, segment_file(directory, b, LOG_SUFFIX)) for b in bases]
    return producer_state_before(directory, segments, dict(list_snapshot_files(directory)),
                                 log_end, log_start, now_ms)
