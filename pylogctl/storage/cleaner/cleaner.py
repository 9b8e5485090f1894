"""One cleaning of one log (Kafka's ``Cleaner.doClean``): the offset map, the groups, the copy.

A cleaning covers ``[first dirty, first uncleanable)``
(:mod:`~pylogctl.storage.cleaner.log_to_clean`):

1. **Offset map** over the dirty range (``buildOffsetMap``): every keyed record's offset under
   the MD5 of its key (:class:`~pylogctl.storage.cleaner.offset_map.SkimpyOffsetMap`), skipping
   aborted transactional data, until the map holds ``slots * load factor`` keys. When it fills, the
   cleaning ends at the last batch mapped; the rest waits for the next cleaning. The map's
   latest offset then bounds what this cleaning may drop.
2. **Groups** (``groupSegmentsBySize``): the segments from the first up to the map's end are
   merged greedily into groups whose ``.log`` total fits ``segment.bytes``, whose offset and
   time indexes each fit ``segment.index.bytes``, and whose offsets fit one segment's int32 range.
3. **Copy** (``cleanSegments``/``cleanInto``): each group is filtered (``filter_to``, through
   :meth:`~pylogctl.storage.cleaner.cleaner_filter.CleanerFilter.filter_into`) into one ``.cleaned``
   segment based at the group's first base offset, appended one read buffer's worth at a time
   (so its indexes get the entries Kafka's appends give them), flushed, given the last source
   segment's mtime, and swapped in (:mod:`~pylogctl.storage.segment_swap`). What stays is the
   :class:`~pylogctl.storage.cleaner.cleaner_filter.CleanerFilter`'s decision; the legacy
   (magic < 2) tombstone horizon is the last clean segment's mtime minus ``delete.retention.ms``.

Both passes read plain v2 batches (uncompressed data batches) in C when the optional extension
``_cleaner_scan`` is built (:meth:`SkimpyOffsetMap.put_batch
<pylogctl.storage.cleaner.offset_map.SkimpyOffsetMap.put_batch>`, ``CleanerFilter.filter_into``),
with the same results as the Python path, which takes every other batch: reading each record into
objects twice, and re-encoding the kept ones, cost about five times a single decoding pass.

A decoding error names the segment file and the byte position of the batch.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from ...errors import CorruptRecordError, LogSegmentOffsetOverflowError, PylogctlError
from ...format.log_stream import AnyBatch
from ...format.record_batch import CONTROL_FLAG
from ...format.varint import INT32_MAX
from .cleaned_txn import CleanedTransactionMetadata
from .cleaner_config import CleanerConfig
from .cleaner_filter import CleanerFilter
from .cleaner_log import CleanerLog
from .log_to_clean import LogToClean
from .offset_map import SkimpyOffsetMap
from ..segment import LogSegment

logger = logging.getLogger(__name__)


class LogCleaningError(PylogctlError):
    """The log cannot be cleaned (Kafka marks such a partition uncleanable)."""


@dataclass
class CleanerStats:
    """Kafka's ``CleanerStats`` for one cleaning (times from a monotonic clock, in seconds)."""

    bytes_read: int = 0
    bytes_written: int = 0
    map_bytes_read: int = 0
    map_messages_read: int = 0
    messages_read: int = 0
    messages_written: int = 0
    invalid_messages_read: int = 0
    buffer_utilization: float = 0.0
    start_time: float = field(default_factory=time.monotonic)
    map_complete_time: float = -1.0
    end_time: float = -1.0

    @property
    def elapsed_secs(self) -> float:
        return max(self.end_time - self.start_time, 0.0)

    @property
    def elapsed_index_secs(self) -> float:
        return max(self.map_complete_time - self.start_time, 0.0)

    @property
    def records_removed(self) -> int:
        return self.messages_read - self.messages_written

    @property
    def space_saved(self) -> int:
        return self.bytes_read - self.bytes_written

    def kafka_lines(self, name: str, start: int, end: int) -> list[str]:
        """The statistics as Kafka's cleaner thread logs them (``recordStats``)."""
        def mb(n: float) -> float:
            return n / (1024 * 1024)

        secs = self.elapsed_secs or 1e-9
        index = self.elapsed_index_secs
        copy = max(secs - index, 1e-9)
        read, written = self.bytes_read or 1, self.bytes_written
        messages = self.messages_read or 1
        return [
            f"Log cleaner thread 0 cleaned log {name} (dirty section = [{start}, {end}])",
            f"{mb(self.bytes_read):,.1f} MB of log processed in {secs:,.1f} seconds "
            f"({mb(self.bytes_read) / secs:,.1f} MB/sec).",
            f"Indexed {mb(self.map_bytes_read):,.1f} MB in {index:.1f} seconds "
            f"({mb(self.map_bytes_read) / (index or 1e-9):,.1f} Mb/sec, "
            f"{100 * index / secs:.1f}% of total time)",
            f"Buffer utilization: {100 * self.buffer_utilization:.1f}%",
            f"Cleaned {mb(self.bytes_read):,.1f} MB in {copy:.1f} seconds "
            f"({mb(self.bytes_read) / copy:,.1f} Mb/sec, {100 * copy / secs:.1f}% of total time)",
            f"Start size: {mb(self.bytes_read):,.1f} MB ({self.messages_read:,} messages)",
            f"End size: {mb(written):,.1f} MB ({self.messages_written:,} messages)",
            f"{100.0 * (1.0 - written / read):.1f}% size reduction "
            f"({100.0 * (1.0 - self.messages_written / messages):.1f}% fewer messages)"]

    def to_dict(self) -> dict:
        mib = 1024 * 1024
        secs = self.elapsed_secs
        return {"bytesRead": self.bytes_read, "bytesWritten": self.bytes_written,
                "spaceSaved": self.space_saved, "messagesRead": self.messages_read,
                "messagesWritten": self.messages_written, "recordsRemoved": self.records_removed,
                "invalidMessages": self.invalid_messages_read,
                "mapBytesRead": self.map_bytes_read, "mapMessagesRead": self.map_messages_read,
                "bufferUtilization": round(self.buffer_utilization, 6),
                "elapsedSecs": round(secs, 3), "indexSecs": round(self.elapsed_index_secs, 3),
                "mbPerSec": round(self.bytes_read / mib / secs, 1) if secs > 0 else None}


@dataclass(frozen=True)
class GroupResult:
    """One group of source segments and the segment that replaced them."""

    base_offsets: tuple[int, ...]
    bytes_before: int
    bytes_after: int


@dataclass(frozen=True)
class CleaningResult:
    first_dirty_offset: int
    first_uncleanable_offset: int
    end_offset: int  # the next first dirty offset: the map's latest offset + 1
    groups: tuple[GroupResult, ...]
    stats: CleanerStats


class Cleaner:
    """A cleaner thread's resources (its offset map and buffer sizes) and the cleaning itself."""

    def __init__(self, config: CleanerConfig = CleanerConfig(),
                 offset_map: SkimpyOffsetMap | None = None) -> None:
        """``offset_map``: a map of another size than the config's (Kafka's tests use tiny
        ones to force several rounds)."""
        self.config = config
        self.offset_map = (SkimpyOffsetMap(config.offset_map_memory, config.hash_algorithm)
                           if offset_map is None else offset_map)
        self.io_buffer_size = config.io_buffer_per_thread
        self.max_io_buffer_size = config.max_message_size
        self.load_factor = config.dedupe_buffer_load_factor
        if self.offset_map.slots * self.load_factor <= 1:
            raise LogCleaningError("offset map is too small to fit in even a single message, so "
                                   "log cleaning will never make progress. You can increase "
                                   "log.cleaner.dedupe.buffer.size or decrease "
                                   "log.cleaner.threads")

    def clean(self, log: CleanerLog, cleanable: LogToClean, now_ms: int) -> CleaningResult:
        """``doClean``: clean ``cleanable`` of ``log`` as at ``now_ms``."""
        stats = CleanerStats()
        config = log.config
        clean_part = log.segments.values(0, cleanable.first_dirty_offset)
        legacy_horizon = (clean_part[-1].last_modified - config.delete_retention_ms
                          if clean_part else 0)
        upper = cleanable.first_uncleanable_offset
        self.build_offset_map(log, cleanable.first_dirty_offset, upper, stats)
        end = self.offset_map.latest_offset + 1
        stats.map_complete_time = time.monotonic()
        txn = CleanedTransactionMetadata()
        groups = group_segments_by_size(log.segments.values(0, end), config.segment_bytes,
                                        config.segment_index_bytes, upper)
        results = [self.clean_segments(log, group, now_ms, stats, txn, legacy_horizon, upper)
                   for group in groups]
        stats.buffer_utilization = self.offset_map.utilization
        stats.end_time = time.monotonic()
        return CleaningResult(cleanable.first_dirty_offset, upper, end, tuple(results), stats)

    # -- the offset map ------------------------------------------------------------------------
    def build_offset_map(self, log: CleanerLog, start: int, end: int, stats: CleanerStats) -> None:
        """Map the keys of ``[start, end)`` until the map is full (``buildOffsetMap``)."""
        offset_map = self.offset_map
        offset_map.clear()
        dirty = log.segments.values(start, end)
        next_starts = [s.base_offset for s in dirty[1:]] + [end]
        txn = CleanedTransactionMetadata()
        txn.add_aborted_transactions(log.collect_aborted_transactions(start, end))
        for segment, next_start in zip(dirty, next_starts):
            if self._map_segment(segment, start, next_start, txn, stats):
                logger.debug("Offset map is full, segment %d is partially mapped",
                             segment.base_offset)
                break

    def _map_segment(self, segment: LogSegment, start: int, next_start: int,
                     txn: CleanedTransactionMetadata, stats: CleanerStats) -> bool:
        """Map one segment's keys from ``start``; True if the map filled up."""
        offset_map = self.offset_map
        max_entries = int(offset_map.slots * self.load_factor)
        position = segment.offset_index.lookup(start).position
        put_records, put_batch = offset_map.put_records, offset_map.put_batch
        view = segment.log.view
        messages = read = 0
        try:
            for batch in _batches(segment, position):
                size = batch.length + 12
                if batch.attributes & CONTROL_FLAG:
                    txn.on_control_batch_read(batch)
                    messages += 1
                elif txn.on_batch_read(batch):
                    messages += batch.records_count or 0
                else:
                    count = put_batch(view, batch.position, start, max_entries)
                    if count is None:  # decoded: compressed, legacy, or the map may fill up
                        records = batch.records()
                        if put_records(records, start, max_entries):
                            return True
                        count = len(records)
                    messages += count
                last = batch.last_offset
                if last >= start:
                    offset_map.latest_offset = last
                read += size
        except PylogctlError as exc:
            raise exc.at(segment.log.path)
        finally:
            stats.map_messages_read += messages
            stats.map_bytes_read += read
        offset_map.update_latest_offset(next_start - 1)  # through an offset gap
        return False

    # -- copying -------------------------------------------------------------------------------
    def clean_segments(self, log: CleanerLog, segments: Sequence[LogSegment], now_ms: int,
                       stats: CleanerStats, txn: CleanedTransactionMetadata,
                       legacy_horizon: int, upper_bound_of_round: int) -> GroupResult:
        """Filter ``segments`` into one ``.cleaned`` segment and swap it in."""
        cleaned = log.create_cleaned_segment(segments[0].base_offset)
        txn.cleaned_index = cleaned.txn_index
        try:
            last_records = log.last_records_of_active_producers()
            for i, segment in enumerate(segments):
                upper = (segments[i + 1].base_offset if i + 1 < len(segments)
                         else segment.read_next_offset())
                txn.add_aborted_transactions(
                    log.collect_aborted_transactions(segment.base_offset, upper))
                keep = CleanerFilter(self.offset_map, now_ms, log.config.delete_retention_ms,
                                      segment.last_modified > legacy_horizon, txn, last_records,
                                      upper_bound_of_round, stats)
                self._clean_into(segment, cleaned, keep, log.config.max_message_bytes, stats)
            cleaned.on_become_inactive_segment()
            cleaned.flush()
            cleaned.set_last_modified(segments[-1].last_modified)
        except BaseException:
            cleaned.delete_if_exists()
            raise
        log.replace_segments([cleaned], list(segments))
        return GroupResult(tuple(s.base_offset for s in segments),
                           sum(s.size for s in segments), cleaned.size)

    def _clean_into(self, source: LogSegment, dest, keep: CleanerFilter,
                    max_message_bytes: int, stats: CleanerStats) -> None:
        """``cleanInto``: one read buffer of batches at a time, each buffer's output one append."""
        reader = _ReadBuffer(_batches(source, 0), self.io_buffer_size, self.max_io_buffer_size,
                             max_message_bytes)
        view = source.log.view
        while True:
            try:
                chunk = reader.fill()
                if not chunk:
                    return
                out = bytearray()
                result = keep.filter_into(view, chunk, out,
                                          max_record_batch_size=max_message_bytes,
                                          stop_above=reader.capacity)
            except PylogctlError as exc:
                raise exc.at(source.log.path)
            reader.consume(result.bytes_read)
            stats.messages_read += result.messages_read
            stats.bytes_read += result.bytes_read
            stats.messages_written += result.messages_retained
            stats.bytes_written += result.bytes_retained
            if out:
                try:
                    dest.append(result.max_offset, out)
                except LogSegmentOffsetOverflowError as exc:
                    raise LogCleaningError(
                        f"Segment {source.base_offset} holds offsets beyond its base offset + "
                        f"2^31-1 (KAFKA-6264): run `pylogctl recover` to split it, then clean "
                        f"again ({exc.message})", path=source.log.path) from None


class _ReadBuffer:
    """The batches Kafka's read buffer holds at each step of ``cleanInto``: as many whole
    batches from the current position as fit; when not even one fits, the buffer doubles (up
    to the batch's size) for the rest of the segment (``growBuffersOrFail``)."""

    def __init__(self, batches: Iterator[AnyBatch], capacity: int, max_io_buffer_size: int,
                 max_message_bytes: int) -> None:
        self._batches = batches
        self._pending: list[AnyBatch] = []
        self._pending_bytes = 0
        self._done = False
        self.capacity = capacity
        self._max_io = max_io_buffer_size
        self._max_message = max_message_bytes

    def fill(self) -> list[AnyBatch]:
        """The batches of the next read (none at the end of the segment)."""
        pending = self._pending
        while not self._done and self._pending_bytes <= self.capacity:
            batch = next(self._batches, None)
            if batch is None:
                self._done = True
            else:
                pending.append(batch)
                self._pending_bytes += batch.size_in_bytes
        if not pending:
            return []
        while pending[0].size_in_bytes > self.capacity:
            target = (pending[0].size_in_bytes if self.capacity >= self._max_message
                      else self._max_message)
            self.capacity = min(self.capacity * 2 or 1, max(target, self._max_io))
        used = 0
        for n, batch in enumerate(pending):
            if used + batch.size_in_bytes > self.capacity:
                return pending[:n]
            used += batch.size_in_bytes
        return pending[:]

    def consume(self, size: int) -> None:
        """Move past the first ``size`` bytes of batches (what the filter read)."""
        pending = self._pending
        n = used = 0
        while n < len(pending) and used < size:
            used += pending[n].size_in_bytes
            n += 1
        del pending[:n]
        self._pending_bytes -= used


def group_segments_by_size(segments: Sequence[LogSegment], max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list[LogSegment]]:
    """``groupSegmentsBySize`` (see the module docstring); an empty segment skips the offset
    range check, as in Kafka (no empty log left every 2^31 offsets)."""
    groups: list[list[LogSegment]] = []
    i, n = 0, len(segments)
    while i < n:
        head = segments[i]
        group = [head]
        log_size, index_size, time_size = (head.size, head.offset_index.size_in_bytes,
                                           head.time_index.size_in_bytes)
        i += 1
        while i < n:
            seg = segments[i]
            last_offset = (segments[i + 1].base_offset - 1 if i + 1 < n
                           else first_uncleanable_offset - 1)
            if not (log_size + seg.size <= max_size
                    and index_size + seg.offset_index.size_in_bytes <= max_index_size
                    and time_size + seg.time_index.size_in_bytes <= max_index_size
                    and (seg.size == 0 or last_offset - group[0].base_offset <= INT32_MAX)):
                break
            group.append(seg)
            log_size += seg.size
            index_size += seg.offset_index.size_in_bytes
            time_size += seg.time_index.size_in_bytes
            i += 1
        groups.append(group)
    return groups


def _batches(segment: LogSegment, position: int) -> Iterator[AnyBatch]:
    """The segment's batches from ``position``; bytes after the last whole one are corruption
    here (Kafka: "Log segment may be corrupt"), as recovery would have cut them."""
    records = segment.log
    batch = None
    for batch in records.batches(position):
        yield batch
    end = position if batch is None else batch.position + batch.size_in_bytes
    if end < records.size_in_bytes:
        raise CorruptRecordError(f"Log segment may be corrupt: {records.size_in_bytes - end} "
                                 f"bytes after the last whole batch of {records.path}",
                                 path=records.path, position=end)
