"""A log segment (Kafka's ``LogSegment``): ``{base}.log`` and its three indexes.

The ``.log`` holds batches with offsets from the segment's base offset on (every offset minus
the base must fit an int32). The ``.index`` gets an entry ``(last offset of an append ->
position where it starts)`` whenever more than ``index.interval.bytes`` were appended since the
previous entry (so the first append never gets one); the ``.timeindex`` gets the largest
timestamp so far with it. A recovered segment is indexed the same way, batch by batch. Reads
translate an offset through the index and scan batch headers forward from there.

Kafka's rules kept here: recovery stops at the first invalid batch and cuts the file there;
the time index always ends with the segment's max timestamp once the segment is rolled,
closed or recovered; a segment rolls when the next append would not fit, when it is too old
(with per-segment jitter), when an index is full, or when an offset would overflow. Not
thread-safe: the partition log serialises calls.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Callable

from ..errors import CorruptRecordError, LogSegmentOffsetOverflowError
from ..format.log_stream import AnyBatch, batch_spans
from ..format.record import NO_TIMESTAMP
from ..format.record_batch import MAGIC_OFFSET, RECORD_BATCH_OVERHEAD, RecordBatch
from ..format.varint import INT32_MAX
from ..speedups import accelerator
from .clock import wall_clock_ms
from .file_records import FileRecords, LogOffsetPosition, TimestampAndOffset
from .files import delete_if_exists
from .lazy_index import LazyIndex
from .log_config import LogConfig
from .log_offset_metadata import LogOffsetMetadata
from .naming import (INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
                     replace_suffix, segment_file)
from .offset_index import OffsetIndex, OffsetPosition
from .recovery_hooks import LeaderEpochCacheHook, ProducerStateHook
from .time_index import TimeIndex, TimestampOffset
from .transaction_index import (AbortedTxn, CompletedTxnLike, TransactionIndex,
                                TxnIndexSearchResult)

logger = logging.getLogger(__name__)

Clock = Callable[[], int]
APPEND_FROM_FILE_CHUNK = 1024 * 1024

# recover()'s batch loop in C (pylogctl/storage/_recover_scan.c, optional: see
# pylogctl/speedups.py): the same checks and index entries, and the Python loop for every
# batch it leaves alone. Switched off, or no extension, the Python loop takes them all.
_c = accelerator("pylogctl.storage._recover_scan")
_scan_recovery = None if _c is None else _c.scan_recovery
# bytes per C call: between calls the mapped pages are released and progress is reported
RECOVERY_SCAN_BYTES = 8 * 1024 * 1024
_NO_EPOCH_CACHE = INT32_MAX  # no leader epoch is above it: nothing to tell a cache
PRODUCER_ID_OFFSET = 43  # in a v2 batch header: its first byte < 0x80 means an id >= 0


@dataclass(frozen=True)
class SegmentSlice:
    """Where a read lands in a segment's ``.log``: from the position in ``metadata``, ``size``
    bytes (None: the position only)."""

    metadata: LogOffsetMetadata
    size: int | None
    first_entry_incomplete: bool


@dataclass(frozen=True)
class RollParams:
    """What an append brings, for :meth:`LogSegment.should_roll`."""

    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


class LogSegment:
    """One segment's files and the in-memory state Kafka keeps beside them (the max timestamp
    so far, the roll clock, the bytes since the last index entry)."""

    def __init__(self, records: FileRecords, offset_index: LazyIndex[OffsetIndex],
                 time_index: LazyIndex[TimeIndex], txn_index: TransactionIndex,
                 base_offset: int, index_interval_bytes: int, roll_jitter_ms: int = 0,
                 clock: Clock = wall_clock_ms) -> None:
        self.log = records
        self.lazy_offset_index = offset_index
        self.lazy_time_index = time_index
        self.txn_index = txn_index
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self.clock = clock
        self.created = clock()
        # max timestamp of the first append: the basis of time-based rolling
        self._rolling_based_timestamp: int | None = None
        # largest timestamp so far and the (last) offset of its batch; None = not read yet
        self._max_timestamp_and_offset: TimestampOffset | None = None
        self._bytes_since_last_index_entry = 0

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def open(cls, directory: str | os.PathLike[str], base_offset: int,
             config: LogConfig = LogConfig(), *, clock: Clock = wall_clock_ms,
             file_already_exists: bool = True, init_file_size: int = 0,
             preallocate: bool = False, file_suffix: str = "",
             roll_jitter_ms: int | None = None) -> "LogSegment":
        """Open the segment's files (``file_suffix`` for ``.swap``/``.cleaned`` variants);
        the indexes are opened, and created if missing, on first use."""
        def path(suffix: str) -> str:
            return segment_file(directory, base_offset, suffix, file_suffix)

        max_index = config.segment_index_bytes
        return cls(
            FileRecords.open(path(LOG_SUFFIX), file_already_exists=file_already_exists,
                             init_file_size=init_file_size, preallocate=preallocate),
            LazyIndex.for_offset(path(INDEX_SUFFIX), base_offset, max_index),
            LazyIndex.for_time(path(TIME_INDEX_SUFFIX), base_offset, max_index),
            TransactionIndex(base_offset, path(TXN_INDEX_SUFFIX)),
            base_offset, config.index_interval_bytes,
            config.random_segment_jitter() if roll_jitter_ms is None else roll_jitter_ms, clock)

    @classmethod
    def create(cls, directory: str | os.PathLike[str], base_offset: int,
               config: LogConfig = LogConfig(), *, clock: Clock = wall_clock_ms,
               file_suffix: str = "", roll_jitter_ms: int | None = None) -> "LogSegment":
        """A new segment, preallocated as the config says (what a roll creates)."""
        return cls.open(directory, base_offset, config, clock=clock, file_already_exists=False,
                        init_file_size=config.init_file_size, preallocate=config.preallocate,
                        file_suffix=file_suffix, roll_jitter_ms=roll_jitter_ms)

    @staticmethod
    def delete_files_if_exist(directory: str | os.PathLike[str], base_offset: int,
                              file_suffix: str = "") -> None:
        """Remove a segment's files without opening it (e.g. a leftover before a roll)."""
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LOG_SUFFIX):
            delete_if_exists(segment_file(directory, base_offset, suffix, file_suffix))

    # -- simple properties ------------------------------------------------------------------
    @property
    def offset_index(self) -> OffsetIndex:
        return self.lazy_offset_index.get()

    @property
    def time_index(self) -> TimeIndex:
        return self.lazy_time_index.get()

    @property
    def size(self) -> int:
        """Bytes of batches in the ``.log``."""
        return self.log.size_in_bytes

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        """Whether ``offset`` fits this segment's indexes. Asking opens the offset index, as
        in Kafka, so the first append creates the index files."""
        return self.offset_index.can_append_offset(offset)

    def _ensure_offset_in_range(self, offset: int, position: int | None = None) -> None:
        """``position``: of the batch holding ``offset`` (default: the end, for appends)."""
        if not self.can_convert_to_relative_offset(offset):
            raise LogSegmentOffsetOverflowError(
                f"Detected offset overflow at offset {offset} in segment {self}",
                path=self.log.path, position=self.size if position is None else position,
                base_offset=self.base_offset, offset=offset)

    def _max_so_far(self) -> TimestampOffset:
        """Largest timestamp so far and its offset, read from the time index the first time."""
        if self._max_timestamp_and_offset is None:
            self._max_timestamp_and_offset = self.time_index.last_entry
        return self._max_timestamp_and_offset

    def max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        """Kafka's ``readMaxTimestampAndOffsetSoFar``: the largest timestamp and the (last)
        offset of the batch that carried it."""
        return self._max_so_far()

    @property
    def max_timestamp_so_far(self) -> int:
        return self._max_so_far().timestamp

    @property
    def shallow_offset_of_max_timestamp_so_far(self) -> int:
        return self._max_so_far().offset

    @property
    def largest_timestamp(self) -> int:
        """Max record timestamp, or the file's mtime when no record has one (retention)."""
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else self.last_modified

    @property
    def last_modified(self) -> int:
        """mtime of the ``.log`` in ms."""
        return os.stat(self.log.path).st_mtime_ns // 1_000_000

    def set_last_modified(self, ms: int) -> None:
        """Set the mtime of the ``.log`` and of the index files that exist (the cleaner copies
        the source segment's)."""
        for path in (self.log.path, self.lazy_offset_index.path, self.lazy_time_index.path):
            if path == self.log.path or os.path.exists(path):
                os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))

    # -- append -----------------------------------------------------------------------------
    def append(self, largest_offset: int, records: bytes | bytearray | memoryview) -> None:
        """Append complete batches (Kafka's ``LogSegment.append``). Each batch is looked at in
        turn: the first one to start once ``index.interval.bytes`` have gone by since the last
        index entry gets one (its last offset, where it starts), so an append of many batches
        (the cleaner's, a split's) indexes as densely as one batch at a time."""
        if len(records) == 0:
            return
        position = self.size
        first = position == 0
        self._ensure_offset_in_range(largest_offset)
        self.log.append(records)
        for size, last_offset, max_timestamp in batch_spans(records):
            if first:
                self._rolling_based_timestamp = max_timestamp
                first = False
            if max_timestamp > self.max_timestamp_so_far:
                self._max_timestamp_and_offset = TimestampOffset(max_timestamp, last_offset)
            if self._bytes_since_last_index_entry > self.index_interval_bytes:
                self.offset_index.append(last_offset, position)
                self.time_index.maybe_append(*self._max_so_far())
                self._bytes_since_last_index_entry = 0
            position += size
            self._bytes_since_last_index_entry += size

    def append_from_file(self, records: FileRecords, start: int) -> int:
        """Copy batches from ``records`` (from byte ``start``) until one's offset would
        overflow this segment; returns the bytes copied (the loader splits segments so).

        Each append is what fits Kafka's read buffer: 1 MiB, grown to hold a larger batch and
        kept at that size (``GrowableBufferSupplier``), which decides where the index entries
        fall."""
        position = start
        capacity = APPEND_FROM_FILE_CHUNK
        while position < start + records.size_in_bytes:
            copied = self._append_chunk_from_file(records, position, capacity)
            if copied == 0:
                break
            capacity = max(capacity, copied)
            position += copied
        return position - start

    def _append_chunk_from_file(self, records: FileRecords, position: int, capacity: int) -> int:
        size = 0
        max_offset = -(2**63)
        for batch in records.batches(position):
            if not self.can_convert_to_relative_offset(batch.last_offset):
                break
            if size and size + batch.size_in_bytes >= capacity:
                break
            max_offset = batch.last_offset
            size += batch.size_in_bytes
        if size:
            self.append(max_offset, records.read(position, size))
        return size

    def update_txn_index(self, completed_txn: CompletedTxnLike, last_stable_offset: int) -> None:
        if completed_txn.is_aborted:
            self.txn_index.append(AbortedTxn.from_completed(completed_txn, last_stable_offset))

    # -- read -------------------------------------------------------------------------------
    def translate_offset(self, offset: int, starting_position: int = 0) -> LogOffsetPosition | None:
        """The first batch whose last offset is >= ``offset``: index lookup, then a scan of
        batch headers from ``max(indexed position, starting_position)``."""
        mapping = self.offset_index.lookup(offset)
        return self.log.search_for_offset_with_size(offset, max(mapping.position,
                                                                starting_position))

    def locate(self, start_offset: int, max_size: int, max_position: int | None = None,
               min_one_message: bool = False) -> "SegmentSlice | None":
        """Where Kafka's ``LogSegment.read`` reads, without reading: the position metadata and
        the byte count, so a broker can send the bytes straight from the file (``sendfile``).

        From the batch holding ``start_offset`` (or the next one), at most ``max_size`` bytes
        and none past ``max_position`` (default: the segment size); None when no batch ends at
        or after ``start_offset``. ``min_one_message`` takes the whole first batch even if it is
        larger than ``max_size``. Kafka's "max position unknown" case is ``(offset, 0)``: the
        position metadata and ``size`` None.
        """
        if max_size < 0:
            raise ValueError(f"Invalid max size {max_size} for log read from segment "
                             f"{self.log.path}")
        hit = self.translate_offset(start_offset)
        if hit is None:
            return None
        metadata = LogOffsetMetadata(start_offset, self.base_offset, hit.position)
        adjusted = max(max_size, hit.size) if min_one_message else max_size
        if adjusted == 0:
            return SegmentSlice(metadata, None, False)
        end = self.size if max_position is None else max_position
        fetch_size = min(end - hit.position, adjusted)
        if fetch_size < 0:
            raise ValueError(f"Invalid size: {fetch_size} in read from {self.log.path}")
        return SegmentSlice(metadata, fetch_size, adjusted < hit.size)

    def read_next_offset(self) -> int:
        """The offset after the last batch (the base offset when empty); scans from the last
        index entry."""
        hit = self.translate_offset(self.offset_index.last_offset)
        last: AnyBatch | None = None
        if hit is not None:
            for last in self.log.batches(hit.position):
                pass
        return self.base_offset if last is None else last.next_offset

    def fetch_upper_bound_offset(self, start_offset_position: OffsetPosition,
                                 fetch_size: int) -> int | None:
        """An offset surely past ``fetch_size`` bytes from ``start_offset_position``."""
        found = self.offset_index.fetch_upper_bound_offset(start_offset_position, fetch_size)
        return None if found is None else found.offset

    def collect_aborted_txns(self, fetch_offset: int,
                             upper_bound_offset: int) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    def find_offset_by_timestamp(self, timestamp: int,
                                 starting_offset: int | None = None) -> TimestampAndOffset | None:
        """The first record with timestamp >= ``timestamp`` and offset >= ``starting_offset``."""
        start = self.base_offset if starting_offset is None else starting_offset
        indexed = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(indexed.offset, start)).position
        return self.log.search_for_timestamp(timestamp, position, start)

    # -- recovery ---------------------------------------------------------------------------
    def recover(self, producer_state: ProducerStateHook | None = None,
                leader_epoch_cache: LeaderEpochCacheHook | None = None) -> int:
        """Rebuild the indexes from the ``.log``, validating every batch; cut the file at the
        first invalid batch. Returns the bytes truncated.

        An offset that overflows the segment raises :class:`LogSegmentOffsetOverflowError`
        (the loader splits the segment). v2 batches feed the epoch cache (the first batch of
        each new, larger epoch) and producer state, which rebuilds the ``.txnindex``. A
        producer-state hook with an ``open_txn_producers`` set declares that only
        transactional batches and those of the producers in the set change it: the others
        are not replayed (``update_map_end_offset`` still moves past them).

        With the C accelerator, runs of valid v2 batches are validated and indexed by
        ``scan_recovery`` (the loop below, in C); this loop takes every other batch, so errors
        and truncations come from here alone and the files are the same byte for byte.
        """
        offset_index, time_index = self.offset_index, self.time_index
        offset_index.reset()
        time_index.reset()
        self.txn_index.reset()
        valid_bytes = 0
        last_index_entry = 0
        interval = self.index_interval_bytes
        fits = offset_index.can_append_offset
        replay = producer_state is not None or leader_epoch_cache is not None
        # the max timestamp so far and its offset live in locals while the loop runs (it runs
        # once per batch of a multi-GB log); the index is empty, so this is (-1, base offset)
        max_ts, max_ts_offset = time_index.last_entry
        scan = _scan_recovery is not None
        view, end = self.log.view, self.log.size_in_bytes
        producers = getattr(producer_state, "open_txn_producers", None)
        replay_all = producer_state is not None and producers is None
        batch: AnyBatch | None = None
        try:
            while True:
                if scan:
                    out = self._scan_v2(view, valid_bytes, last_index_entry, max_ts,
                                        max_ts_offset, producer_state, producers,
                                        leader_epoch_cache)
                    if out is None:  # a value beyond int64: Python does the rest
                        scan = False
                    else:
                        (valid_bytes, last_index_entry, max_ts, max_ts_offset, plain, replay_at,
                         more) = out
                        if plain is not None and producer_state is not None:
                            producer_state.update_map_end_offset(plain + 1)
                        if replay_at is not None:
                            self._replay(RecordBatch(view, replay_at), producer_state,
                                         leader_epoch_cache)
                        if more or (replay_at is not None
                                    and _for_c_loop(view, valid_bytes, end, replay_all)):
                            continue
                for batch in self.log.batches(valid_bytes):
                    batch.ensure_valid()
                    last_offset = batch.last_offset
                    if not fits(last_offset):
                        self._max_timestamp_and_offset = TimestampOffset(max_ts, max_ts_offset)
                        self._ensure_offset_in_range(last_offset, valid_bytes)  # raises
                    if batch.max_timestamp > max_ts:
                        max_ts, max_ts_offset = batch.max_timestamp, last_offset
                    if valid_bytes - last_index_entry > interval:
                        offset_index.append(last_offset, valid_bytes)
                        time_index.maybe_append(max_ts, max_ts_offset)
                        last_index_entry = valid_bytes
                    valid_bytes += batch.size_in_bytes
                    if replay and batch.magic >= 2:
                        self._replay(batch, producer_state, leader_epoch_cache)
                    if scan and _for_c_loop(view, valid_bytes, end, replay_all):
                        break
                else:
                    break
        except CorruptRecordError as exc:
            logger.warning("Found invalid messages in log segment %s at byte offset %d: %s",
                        os.path.abspath(self.log.path), valid_bytes, exc)
        finally:
            self._max_timestamp_and_offset = TimestampOffset(max_ts, max_ts_offset)
        batch = None  # no view into the map may outlive the truncation below
        del view
        truncated = self.size - valid_bytes
        self.log.truncate_to(valid_bytes)
        offset_index.trim_to_valid_size()
        # a normally closed segment always ends with its largest timestamp: so does this one
        time_index.maybe_append(*self._max_so_far(), skip_full_check=True)
        time_index.trim_to_valid_size()
        return truncated

    def _scan_v2(self, view: memoryview, position: int, last_index_entry: int, max_ts: int,
                 max_ts_offset: int, producer_state: ProducerStateHook | None,
                 producers: set[int] | None, epoch_cache: LeaderEpochCacheHook | None
                 ) -> tuple[int, int, int, int, int | None, int | None, bool] | None:
        """One ``scan_recovery`` call over the next ``RECOVERY_SCAN_BYTES`` from ``position``:
        appends the index entries it packed and releases the pages it passed.

        Returns ``(position, last_index_entry, max_ts, max_ts_offset, last plain offset,
        position to replay, more)`` (``more``: it stopped only at the chunk's end), or None
        when a value is beyond int64 and recover() must go on in Python.
        """
        offset_index, time_index, log = self.offset_index, self.time_index, self.log
        end = log.size_in_bytes
        mode = 0 if producer_state is None else 1 if producers is None else 2
        limit = min(end, position + RECOVERY_SCAN_BYTES)
        latest = None if epoch_cache is None else epoch_cache.latest_epoch()
        epoch_above = (_NO_EPOCH_CACHE if epoch_cache is None
                       else -1 if latest is None else latest)
        if time_index.entries:
            time_last_ts, time_last_offset = time_index.last_entry
        else:
            time_last_ts, time_last_offset = NO_TIMESTAMP, None
        out = _scan_recovery(
            view, position, limit, end, self.base_offset, self.index_interval_bytes,
            last_index_entry, max_ts, max_ts_offset,
            offset_index.last_offset if offset_index.entries else None,
            offset_index.max_entries - offset_index.entries, time_last_ts, time_last_offset,
            time_index.max_entries - 1 - time_index.entries, epoch_above, mode, producers)
        if out is NotImplemented:
            return None
        position, last_index_entry, max_ts, max_ts_offset, plain, replay_at, oi, ti = out
        offset_index.append_entries(oi)
        time_index.append_entries(ti)
        log.release(position)
        return (position, last_index_entry, max_ts, max_ts_offset, plain, replay_at,
                limit <= position < end)

    def _replay(self, batch: RecordBatch, producer_state: ProducerStateHook | None,
                epoch_cache: LeaderEpochCacheHook | None) -> None:
        if epoch_cache is not None and batch.partition_leader_epoch >= 0:
            latest = epoch_cache.latest_epoch()
            if latest is None or batch.partition_leader_epoch > latest:
                epoch_cache.assign(batch.partition_leader_epoch, batch.base_offset)
        if producer_state is None:
            return
        if batch.producer_id >= 0:
            completed = producer_state.update(batch)
            if completed is not None:
                self.update_txn_index(completed, producer_state.last_stable_offset(completed))
                producer_state.complete_txn(completed)
        producer_state.update_map_end_offset(batch.last_offset + 1)

    def sanity_check(self, time_index_file_newly_created: bool) -> None:
        """What the loader checks before trusting a segment: the offset index exists (its
        contents are rebuilt by recovery anyway) and the ``.txnindex`` is sane; a time index
        the open just created is cut to zero length."""
        if not os.path.exists(self.lazy_offset_index.path):
            raise FileNotFoundError(f"Offset index file "
                                    f"{os.path.abspath(self.lazy_offset_index.path)} does not exist")
        if time_index_file_newly_created:
            self.time_index.resize(0)
        self.txn_index.sanity_check()

    # -- truncation -------------------------------------------------------------------------
    def truncate_to(self, offset: int) -> int:
        """Drop every batch ending at or after ``offset`` and the index entries naming such
        offsets; the indexes grow back to full size (the segment is active again). Returns
        the bytes dropped (0 when ``offset`` is past the last batch)."""
        mapping = self.translate_offset(offset)  # before the index loses its entries
        offset_index, time_index = self.offset_index, self.time_index
        offset_index.truncate_to(offset)
        time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        offset_index.resize(offset_index.max_index_size)
        time_index.resize(time_index.max_index_size)
        dropped = 0 if mapping is None else self.log.truncate_to(mapping.position)
        if self.size == 0:
            self.created = self.clock()
            self._rolling_based_timestamp = None
        self._bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far >= 0:
            self._max_timestamp_and_offset = self._read_largest_timestamp()
        return dropped

    def _read_largest_timestamp(self) -> TimestampOffset:
        """The time index's last entry, unless a batch after it has a larger timestamp."""
        last = self.time_index.last_entry
        position = self.offset_index.lookup(last.offset).position
        after = self.log.largest_timestamp_after(position)
        if after.timestamp > last.timestamp:
            return TimestampOffset(after.timestamp, after.offset)
        return last

    # -- rolling ----------------------------------------------------------------------------
    def should_roll(self, params: RollParams) -> bool:
        reached_roll_ms = (self.time_waited_for_roll(params.now, params.max_timestamp_in_messages)
                           > params.max_segment_ms - self.roll_jitter_ms)
        size = self.size
        return (size > params.max_segment_bytes - params.messages_size
                or (size > 0 and reached_roll_ms)
                or self.offset_index.is_full or self.time_index.is_full
                or not self.can_convert_to_relative_offset(params.max_offset_in_messages))

    def _load_first_batch_timestamp(self) -> None:
        if self._rolling_based_timestamp is None:
            first = next(iter(self.log.batches()), None)
            if first is not None:
                self._rolling_based_timestamp = first.max_timestamp

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        """Age for rolling: the new batch's timestamp minus the first batch's when the first
        batch has one, else wall-clock time since the segment was created."""
        self._load_first_batch_timestamp()
        ts = self._rolling_based_timestamp
        if ts is not None and ts >= 0:
            return message_timestamp - ts
        return now - self.created

    @property
    def first_batch_timestamp(self) -> int | None:
        """The first batch's timestamp when it has one (max compaction lag)."""
        self._load_first_batch_timestamp()
        ts = self._rolling_based_timestamp
        return ts if ts is not None and ts >= 0 else None

    def resize_indexes(self, size: int) -> None:
        self.offset_index.resize(size)
        self.time_index.resize(size)

    def on_become_inactive_segment(self) -> None:
        """A newer segment took over: end the time index with the max timestamp and trim
        the indexes and the ``.log`` to their contents."""
        self.time_index.maybe_append(*self._max_so_far(), skip_full_check=True)
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        self.log.trim()

    # -- files ------------------------------------------------------------------------------
    def flush(self) -> None:
        """fsync the ``.log`` and the indexes."""
        self.log.flush()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        """Rename all four files, e.g. ``""`` -> ``".deleted"`` or ``".swap"`` -> ``""``."""
        self.log.rename_to(replace_suffix(self.log.path, old_suffix, new_suffix))
        self.lazy_offset_index.rename_to(
            replace_suffix(self.lazy_offset_index.path, old_suffix, new_suffix))
        self.lazy_time_index.rename_to(
            replace_suffix(self.lazy_time_index.path, old_suffix, new_suffix))
        self.txn_index.rename_to(replace_suffix(self.txn_index.path, old_suffix, new_suffix))

    def has_suffix(self, suffix: str) -> bool:
        return all(p.endswith(suffix) for p in (self.log.path, self.lazy_offset_index.path,
                                                self.lazy_time_index.path, self.txn_index.path))

    def update_parent_dir(self, directory: str | os.PathLike[str]) -> None:
        self.log.update_parent_dir(directory)
        self.lazy_offset_index.update_parent_dir(directory)
        self.lazy_time_index.update_parent_dir(directory)
        self.txn_index.update_parent_dir(directory)

    def close(self) -> None:
        """Write the final time-index entry if the max timestamp is known, then trim and
        close every file (a failure on one still closes the others)."""
        if self._max_timestamp_and_offset is not None:
            try:
                self.time_index.maybe_append(*self._max_timestamp_and_offset,
                                             skip_full_check=True)
            except (ValueError, OSError) as exc:
                logger.warning("Cannot append the final time index entry of %s: %s", self, exc)
        _run_all((self.lazy_offset_index.close, self.lazy_time_index.close, self.log.close,
                  self.txn_index.close))

    def close_handlers(self) -> None:
        """Close without writing anything (the disk may have failed)."""
        _run_all((self.lazy_offset_index.close_handler, self.lazy_time_index.close_handler,
                  self.log.close_handlers, self.txn_index.close))

    def delete_if_exists(self) -> None:
        """Delete all four files (attempting each even if one fails)."""
        _run_all((self.log.delete_if_exists, self.lazy_offset_index.delete_if_exists,
                  self.lazy_time_index.delete_if_exists, self.txn_index.delete_if_exists))

    @property
    def deleted(self) -> bool:
        return not any(os.path.exists(p) for p in (self.log.path, self.lazy_offset_index.path,
                                                   self.lazy_time_index.path, self.txn_index.path))

    def __enter__(self) -> "LogSegment":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        ts = self._max_timestamp_and_offset.timestamp if self._max_timestamp_and_offset else -1
        return (f"LogSegment(baseOffset={self.base_offset}, size={self.size}, "
                f"largestRecordTimestamp={ts})")


def _for_c_loop(view: memoryview, position: int, end: int, replay_all: bool) -> bool:
    """Whether recover() goes back to the C loop for the batch at ``position``: a v2 batch
    the C loop will not hand straight back (with every producer batch replayed, one without a
    producer id), or the end. Only a matter of speed: either loop gives the same result."""
    if position > end - RECORD_BATCH_OVERHEAD:
        return True  # the end, or a short batch: the C loop stops at once
    return view[position + MAGIC_OFFSET] == 2 and not (replay_all and
                                                       view[position + PRODUCER_ID_OFFSET] < 0x80)


def _run_all(actions) -> None:
    """Run every action; re-raise the first failure once all have run."""
    first: BaseException | None = None
    for action in actions:
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - re-raised below
            first = first or exc
    if first is not None:
        raise first
