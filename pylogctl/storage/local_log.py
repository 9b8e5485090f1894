"""A partition log's segments and their files (Kafka's ``LocalLog``), under
:class:`~pylogctl.storage.log.Log` (``UnifiedLog``): the segment map with the log end offset and
the recovery point, and the file operations on it (roll, append, read, delete, truncate, flush,
close). The log start offset, high watermark, leader epochs and producer state are the
``Log``'s; where a segment's producer snapshot goes with it, the ``Log`` passes a hook.

Every mutation is crash-safe the way Kafka's is: a segment is deleted by renaming its files to
``.deleted`` (the ``.log`` first), then removing them, newest segment first when the tail
goes (truncation) and oldest first when the head goes (retention, and a full truncation, whose
newest segment stays until the new one exists), so the segments left are always a contiguous
log; a new active segment exists before the old one goes (``createAndDeleteSegment``). Kafka
deletes ``.deleted`` files ``file.delete.delay.ms`` later so that readers can finish; an
offline tool has no readers and deletes them at once; a broker sets
:attr:`LocalLog.delete_segment_files` (through :attr:`Log.delete_segment_files
<pylogctl.storage.log.Log.delete_segment_files>`) to its scheduler
(:class:`pylogctl.broker.log_manager.LogManager`). Each file is handed to the backup, if any,
before it changes. Not thread-safe.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Callable

from ..errors import PylogctlError
from .backup import Backup
from .files import delete_if_exists, fsync_dir, match_dir_owner, open_for_read
from .log_config import LogConfig
from .log_offset_metadata import LogOffsetMetadata
from .log_segments import LogSegments
from .naming import DELETED_FILE_SUFFIX
from .offset_index import OffsetPosition
from .segment import LogSegment
from .transaction_index import AbortedTxn

logger = logging.getLogger(__name__)

# marks a deleted segment's companion file (its producer snapshot) for deletion, by the
# segment's base offset; returns the renamed path to remove with the segment's files, if any
MarkCompanion = Callable[[int], "str | None"]


class LogError(PylogctlError):
    """An operation the partition log refuses (Kafka's KafkaException and friends)."""


class OffsetOutOfRangeError(LogError):
    """Kafka's ``OffsetOutOfRangeException``: a read or lookup outside the log."""


@dataclass(frozen=True)
class LogReadInfo:
    """What :meth:`Log.read <pylogctl.storage.log.Log.read>` found (Kafka's ``FetchDataInfo``),
    located rather than copied: ``size`` bytes from ``fetch_offset_metadata``'s position in the
    segment file ``path`` (None when nothing is read), so a broker can send them with
    ``sendfile``. ``aborted_transactions`` is None unless asked for (read_committed)."""

    fetch_offset_metadata: LogOffsetMetadata
    path: str | None = None
    size: int = 0
    first_entry_incomplete: bool = False
    aborted_transactions: tuple[AbortedTxn, ...] | None = None

    @property
    def position(self) -> int:
        return self.fetch_offset_metadata.relative_position_in_segment

    def read_bytes(self) -> bytes:
        """The bytes themselves (a copy), for callers that do not send from the file."""
        if self.path is None or self.size == 0:
            return b""
        with open_for_read(self.path) as f:
            f.seek(self.position)
            return f.read(self.size)


class LocalLog:
    """A partition dir's segments (at least one), its log end offset and recovery point."""

    def __init__(self, directory: str, config: LogConfig, segments: LogSegments[LogSegment],
                 log_end_offset: int, recovery_point: int,
                 backup: Backup | None = None) -> None:
        self.dir = directory
        self.config = config
        self.segments = segments
        self.log_end_offset = log_end_offset
        self.recovery_point = recovery_point
        self.backup = backup
        # removes a segment's files once renamed .deleted and out of the map (Kafka's asyncDelete)
        self.delete_segment_files: Callable[[LogSegment], None] = LogSegment.delete_if_exists

    @property
    def active_segment(self) -> LogSegment:
        segment = self.segments.last
        assert segment is not None, "a loaded log always has a segment"
        return segment

    def update_log_end_offset(self, offset: int) -> None:
        """``updateLogEndOffset``: the recovery point never stays above the log end."""
        self.log_end_offset = offset
        self.recovery_point = min(self.recovery_point, offset)

    # -- reads -----------------------------------------------------------------------------------
    def offset_metadata(self, offset: int) -> LogOffsetMetadata:
        """``offset`` with its segment and byte position (the batch holding it; the end of the
        active segment for the log end offset)."""
        if offset >= self.log_end_offset:
            active = self.active_segment
            return LogOffsetMetadata(self.log_end_offset, active.base_offset, active.size)
        segment = self.segments.floor(offset)
        if segment is None:
            return LogOffsetMetadata(offset)
        hit = segment.translate_offset(offset)
        if hit is None:
            return LogOffsetMetadata(offset, segment.base_offset, segment.size)
        return LogOffsetMetadata(offset, segment.base_offset, hit.position)

    def read(self, start_offset: int, max_length: int, bound: int, min_one_message: bool,
             with_aborted: bool) -> LogReadInfo:
        """``LocalLog.read``: from the batch holding ``start_offset`` (at or above the log
        start, which is the caller's to check), never past ``bound``;
        :class:`OffsetOutOfRangeError` above the log end."""
        segment = self.segments.floor(start_offset)
        if start_offset > self.log_end_offset or segment is None:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition "
                f"{os.path.basename(self.dir)}, but we only have log segments upto "
                f"{self.log_end_offset}.")
        empty_aborted = () if with_aborted else None
        if start_offset >= bound:
            return LogReadInfo(self.offset_metadata(start_offset),
                               aborted_transactions=empty_aborted)
        bound_metadata = self.offset_metadata(bound)
        while segment is not None:
            if segment.base_offset < bound_metadata.segment_base_offset:
                max_position = segment.size
            else:
                max_position = bound_metadata.relative_position_in_segment
            found = segment.locate(start_offset, max_length, max_position, min_one_message)
            if found is not None:
                size = found.size or 0
                aborted = (self._aborted_transactions(start_offset, segment, found.metadata,
                                                      size) if with_aborted else None)
                return LogReadInfo(found.metadata, segment.log.path if size else None, size,
                                   found.first_entry_incomplete, aborted)
            segment = self.segments.higher(segment.base_offset)
        return LogReadInfo(self.offset_metadata(self.log_end_offset),
                           aborted_transactions=empty_aborted)

    def _aborted_transactions(self, start_offset: int, segment: LogSegment,
                              start: LogOffsetMetadata, size: int) -> tuple[AbortedTxn, ...]:
        """``addAbortedTransactions``: the aborted transactions overlapping the read, searched
        from its segment up to an offset surely past the bytes read."""
        upper = segment.fetch_upper_bound_offset(
            OffsetPosition(start.message_offset, start.relative_position_in_segment), size)
        if upper is None:
            following = self.segments.higher(segment.base_offset)
            upper = following.base_offset if following is not None else self.log_end_offset
        found: list[AbortedTxn] = []
        current: LogSegment | None = segment
        while current is not None:
            result = current.collect_aborted_txns(start_offset, upper)
            found.extend(result.aborted_transactions)
            if result.is_complete:
                break
            current = self.segments.higher(current.base_offset)
        return tuple(found)

    # -- deleting segments ---------------------------------------------------------------------
    def save(self, *paths: str, will_delete: bool = False) -> None:
        if self.backup is not None:
            for path in paths:
                self.backup.save(path, will_delete=will_delete)

    @staticmethod
    def segment_paths(segment: LogSegment) -> list[str]:
        return [segment.log.path, segment.lazy_offset_index.path, segment.lazy_time_index.path,
                segment.txn_index.path]

    def remove_and_delete_segments(self, doomed: list[LogSegment], reason: str,
                                   mark_companion: MarkCompanion | None = None,
                                   oldest_first: bool = False) -> None:
        """``removeAndDeleteSegments``, newest first (oldest first when cutting the head, so
        that what is left is always a contiguous log), each segment with its companion file
        (``mark_companion``) once its own files are renamed."""
        for segment in sorted(doomed, key=lambda s: s.base_offset, reverse=not oldest_first):
            logger.info("Deleting segment %d of %s: %s", segment.base_offset, self.dir, reason)
            self.save(*self.segment_paths(segment), will_delete=True)
            if self.segments.get(segment.base_offset) is segment:
                self.segments.remove(segment.base_offset)
            if not segment.has_suffix(DELETED_FILE_SUFFIX):
                segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
            companion = None if mark_companion is None else mark_companion(segment.base_offset)
            fsync_dir(self.dir)
            self.delete_segment_files(segment)
            if companion is not None:
                delete_if_exists(companion)

    def truncate_to(self, target_offset: int,
                    mark_companion: MarkCompanion | None) -> tuple[list[LogSegment], int]:
        """``LocalLog.truncateTo`` for a target at or above the first segment: delete the
        segments above it, cut the active segment at the batch holding it and flush it.
        Returns the segments deleted and the bytes cut; the log end offset is the caller's
        to move (to where the data now ends)."""
        doomed = [s for s in self.segments if s.base_offset > target_offset]
        self.remove_and_delete_segments(doomed, f"log truncation to offset {target_offset}",
                                        mark_companion)
        active = self.active_segment
        self.save(*self.segment_paths(active))
        truncated = active.truncate_to(target_offset)
        active.flush()
        return doomed, truncated

    def truncate_fully_and_start_at(self, new_offset: int,
                                    mark_companion: MarkCompanion | None) -> list[LogSegment]:
        """``LocalLog.truncateFullyAndStartAt``: every segment goes and an empty one starts at
        ``new_offset``, created before the last old one goes, so there always is one. All but
        the last go oldest first: the last stays until the new segment exists, so deleting the
        newest first would leave a hole in the middle of the log after a crash; this way what
        is left is always a contiguous log (its tail). Returns the old segments; the log end
        offset is the caller's to move."""
        reason = f"log truncation to start at offset {new_offset}"
        old = list(self.segments)
        self.remove_and_delete_segments(old[:-1], reason, mark_companion, oldest_first=True)
        last = old[-1]
        self.save(*self.segment_paths(last), will_delete=True)
        if new_offset == last.base_offset:
            last.change_file_suffixes("", DELETED_FILE_SUFFIX)
        self._new_segment(new_offset)
        self.remove_and_delete_segments([last], reason, mark_companion)
        return old

    # -- rolls, appends, flushes ---------------------------------------------------------------
    def _new_segment(self, base_offset: int) -> LogSegment:
        """A new active segment, its indexes created at full size as Kafka's are while active
        (:meth:`close` trims them)."""
        segment = LogSegment.create(self.dir, base_offset, self.config)
        segment.resize_indexes(self.config.segment_index_bytes)
        self.segments.add(segment)
        return segment

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """``LocalLog.roll``: a new active segment at max(``expected_next_offset``, log end),
        replacing the active one if that is empty and based there."""
        new_offset = max(expected_next_offset or 0, self.log_end_offset)
        active = self.active_segment
        if new_offset in self.segments:
            if active.base_offset != new_offset or active.size != 0:
                raise LogError(f"Trying to roll a new log segment for {self.dir} with start "
                               f"offset {new_offset} while it already exists")
            self.remove_and_delete_segments([active], "rolling an empty active segment")
        elif new_offset < active.base_offset:
            raise LogError(f"Trying to roll a new log segment for {self.dir} with start offset "
                           f"{new_offset} lower than start offset of the active segment "
                           f"{active.base_offset}")
        else:
            LogSegment.delete_files_if_exist(self.dir, new_offset)
            active.on_become_inactive_segment()
        return self._new_segment(new_offset)

    def append(self, last_offset: int, records: bytes | bytearray | memoryview) -> None:
        """``LocalLog.append``: validated batches onto the active segment; the log end offset
        moves right after the write."""
        self.active_segment.append(last_offset, records)
        self.log_end_offset = last_offset + 1

    def flush(self, offset: int | None = None) -> None:
        """fsync every segment holding offsets below ``offset`` (default: everything, the
        active segment included) and raise the recovery point to it."""
        flush_to = self.log_end_offset + 1 if offset is None else offset
        new_recovery_point = self.log_end_offset if offset is None else offset
        if flush_to <= self.recovery_point:
            return
        for segment in self.segments.values(self.recovery_point, flush_to):
            segment.flush()
        fsync_dir(self.dir)
        self.recovery_point = max(self.recovery_point, new_recovery_point)

    def close(self) -> None:
        """Close the segments (trimming the active segment's indexes) and give new files the
        dir's owner."""
        for segment in self.segments:
            segment.close()
        match_dir_owner(self.dir)
