"""Read-only checks of one segment: what ``LogSegment.recover`` would find, and whether the
indexes on disk can be trusted, without creating, changing or deleting a byte.

A loader that shows its plan before acting cannot open a :class:`LogSegment`: its lazy indexes
create missing files. So this module reads with :class:`FileRecords` and the read-only index
classes only. :func:`scan_for_recovery` is the read-only twin of ``LogSegment.recover`` (Kafka's
``LogSegment.recover``): every batch is validated in file order (``ensureValid``: size and CRC;
the offset must fit the segment's int32 range), the scan stops at the first invalid batch, and
the offset/time index entries recovery would write are computed with recovery's rules (an
entry once more than ``index.interval.bytes`` were scanned since the last one; the time index
gets the running max timestamp and always ends with the segment's max). The plan compares those
bytes with the files to tell a recovery that changes something from one that rewrites the same
bytes. ``tests/storage/test_segment_check.py`` pins the twin against the real ``recover``.

:func:`check_indexes` is the sanity check. Kafka's loader only requires the ``.index`` to exist
and the ``.txnindex`` to be sane (recovery rebuilds what is above the recovery point anyway);
pylogctl also checks the structure every index must have (entries strictly increasing, inside
the segment, and the time index present), because that is what lets an interrupted rebuild be
detected and redone: a rebuild in progress leaves a preallocated index with a zero-filled tail.
Only the tail is checked (where such zeros are), so planning stays cheap on a big log dir;
``dump-segment --verify-index-only`` verifies every entry.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable

from ..errors import CorruptRecordError, LogSegmentOffsetOverflowError, PylogctlError
from ..format.control import ControlRecordType, parse_control_key, parse_end_txn_marker
from .file_records import FileRecords
from .index import AbstractIndex, CorruptIndexError
from .naming import INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX
from .offset_index import OffsetIndex
from .time_index import TimeIndex
from .transaction_index import read_transaction_index

INT32_MAX = 0x7FFFFFFF
NO_TIMESTAMP = -1
CHECKED_TAIL = 1024  # index entries checked at the end of each index (8 to 12 KiB)
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


class RecoveryScanError(PylogctlError):
    """Recovery cannot proceed the way Kafka's does (a full index, an unsplittable segment)."""


@dataclass(frozen=True)
class InvalidTail:
    """Where a segment's valid data ends and why (Kafka's rule named in ``kind``)."""

    position: int
    kind: str  # "incomplete-batch", "corrupt-size", "crc-mismatch", "invalid-batch"
    message: str


@dataclass(frozen=True)
class RecoveryScan:
    """What recovering the segment would produce."""

    base_offset: int
    size: int
    valid_bytes: int
    next_offset: int
    invalid_tail: InvalidTail | None
    offset_index: bytes  # the exact bytes recovery leaves in the ``.index``
    time_index: bytes
    epoch_starts: tuple[tuple[int, int], ...]  # (epoch, base offset) of each new highest epoch
    txn_markers: bool  # a transactional control batch: recovery must replay producer state
    invalid_offset: str | None  # Kafka's InvalidOffsetException: the segment is emptied

    @property
    def truncated_bytes(self) -> int:
        return self.size if self.invalid_offset else self.size - self.valid_bytes


class _Scan:
    """The state ``LogSegment.recover`` keeps while it walks a segment."""

    def __init__(self, path: str, base_offset: int, interval: int, max_index_size: int) -> None:
        self.path, self.base_offset, self.interval = path, base_offset, interval
        self.offset_entries: list[tuple[int, int]] = []
        self.time_entries: list[tuple[int, int]] = []
        self.max_ts, self.max_ts_offset = NO_TIMESTAMP, base_offset
        self.valid = self.last_entry = 0
        self.next_offset = base_offset
        self.epochs: list[tuple[int, int]] = []
        self.txn_markers = False
        self.max_offset_entries = max_index_size // OffsetIndex.entry_size
        self.max_time_entries = max_index_size // TimeIndex.entry_size - 1  # last slot: close

    def time_append(self, ts: int, offset: int, skip_full_check: bool = False) -> str | None:
        """``TimeIndex.maybe_append``; returns the InvalidOffsetException message, if any."""
        entries = self.time_entries
        if not skip_full_check and len(entries) >= self.max_time_entries:
            raise RecoveryScanError(f"Attempt to append to a full time index while recovering "
                                    f"{self.path}", path=self.path)
        if entries and offset < entries[-1][1]:
            return (f"Attempt to append an offset ({offset}) to slot {len(entries)} no larger "
                    f"than the last offset appended ({entries[-1][1]})")
        if ts > (entries[-1][0] if entries else NO_TIMESTAMP):
            entries.append((ts, offset))
        return None

    def add(self, batch) -> str | None:
        """Account one valid batch; returns an InvalidOffsetException message to stop."""
        if batch.max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = batch.max_timestamp, batch.last_offset
        if self.valid - self.last_entry > self.interval:
            entries = self.offset_entries
            if len(entries) >= self.max_offset_entries:
                raise RecoveryScanError(f"Attempt to append to a full index while recovering "
                                        f"{self.path}", path=self.path)
            if entries and batch.last_offset <= entries[-1][0]:
                return (f"Attempt to append an offset {batch.last_offset} to position "
                        f"{len(entries)} no larger than the last offset appended "
                        f"({entries[-1][0]})")
            entries.append((batch.last_offset, self.valid))
            problem = self.time_append(self.max_ts, self.max_ts_offset)
            if problem:
                return problem
            self.last_entry = self.valid
        self.valid += batch.size_in_bytes
        self.next_offset = batch.next_offset
        epoch = batch.partition_leader_epoch
        if batch.magic >= 2 and epoch >= 0 and (not self.epochs or epoch > self.epochs[-1][0]):
            self.epochs.append((epoch, batch.base_offset))
        return None


def _validate(batch, path: str, base_offset: int) -> InvalidTail | None:
    """``ensureValid`` and the offset range check of recovery, for one batch."""
    try:
        batch.ensure_valid()
    except CorruptRecordError as exc:
        kind = "crc-mismatch" if "crc" in exc.message else "invalid-batch"
        return InvalidTail(batch.position, kind, exc.message)
    if not 0 <= batch.last_offset - base_offset <= INT32_MAX:
        raise LogSegmentOffsetOverflowError(
            f"Detected offset overflow at offset {batch.last_offset} in segment {path}",
            path=path, position=batch.position, base_offset=base_offset, offset=batch.last_offset)
    return None


def is_txn_marker(batch) -> bool:
    return batch.magic >= 2 and batch.is_control and batch.is_transactional


def _marker_problem(batch) -> str | None:
    """What replaying a transaction marker into producer state would reject (recovery keeps the
    batch, as it is counted valid before the replay, and stops after it)."""
    try:
        for record in batch.records()[:1]:
            parse_end_txn_marker(ControlRecordType.from_id(parse_control_key(record.key)[1]),
                                 record.value)
    except CorruptRecordError as exc:
        return exc.message
    return None


def scan_for_recovery(path: str, base_offset: int, index_interval_bytes: int,
                      max_index_size: int) -> RecoveryScan:
    """Replay ``LogSegment.recover`` over the ``.log`` at ``path`` without writing.

    Raises :class:`LogSegmentOffsetOverflowError` where recovery does (Kafka splits such a
    segment) and :class:`RecoveryScanError` where recovery would fail.
    """
    scan = _Scan(path, base_offset, index_interval_bytes, max_index_size)
    invalid: InvalidTail | None = None
    invalid_offset: str | None = None
    with FileRecords(path) as records:
        size = records.file_size
        batches = records.batches()
        while invalid is None and invalid_offset is None:
            try:
                batch = next(batches, None)
            except CorruptRecordError as exc:  # a size field below 14, an unknown magic, ...
                kind = ("corrupt-size" if "minimum record overhead" in exc.message
                        else "invalid-batch")
                invalid = InvalidTail(scan.valid, kind, exc.message)
                break
            if batch is None:
                break
            invalid = _validate(batch, path, base_offset)
            if invalid is not None:
                break
            invalid_offset = scan.add(batch)
            if invalid_offset is None and is_txn_marker(batch):
                scan.txn_markers = True
                problem = _marker_problem(batch)
                if problem and scan.valid < size:
                    invalid = InvalidTail(scan.valid, "invalid-batch",
                                          f"the transaction marker before this position cannot "
                                          f"be replayed: {problem}")
        batch = batches = None  # no view into the map may outlive the file
        if invalid is None and invalid_offset is None and scan.valid < size:
            invalid = InvalidTail(scan.valid, "incomplete-batch",
                                  f"{size - scan.valid} bytes after the last complete batch do "
                                  f"not hold a whole batch")
    if invalid_offset is None:
        invalid_offset = scan.time_append(scan.max_ts, scan.max_ts_offset, skip_full_check=True)
    return RecoveryScan(
        base_offset, size, scan.valid, scan.next_offset, invalid,
        b"".join(_OFFSET_ENTRY.pack(o - base_offset, p) for o, p in scan.offset_entries),
        b"".join(_TIME_ENTRY.pack(ts, o - base_offset) for ts, o in scan.time_entries),
        tuple(scan.epochs), scan.txn_markers, invalid_offset)


# -- reading what is there ------------------------------------------------------------------
def read_next_offset(path: str, base_offset: int) -> tuple[int, int, str | None]:
    """``(next offset, valid bytes, problem)`` of a ``.log`` by its batch headers (Kafka's
    ``readNextOffset``, without CRC checks): the offset after the last complete batch, the
    base offset when there is none. ``problem`` describes trailing bytes that are not a batch."""
    next_offset, end = base_offset, 0
    problem = None
    with FileRecords(path) as records:
        size = records.file_size
        try:
            for batch in records.batches():
                next_offset, end = batch.next_offset, batch.position + batch.size_in_bytes
        except CorruptRecordError as exc:
            problem = f"{exc.message} at byte position {exc.position}"
    if problem is None and end < size:
        problem = f"{size - end} bytes after the last complete batch (byte position {end})"
    return next_offset, end, problem


@dataclass(frozen=True)
class IndexProblem:
    """Why a segment's indexes must be rebuilt; ``kafka`` says whether Kafka's loader sees it
    (missing ``.index``, insane ``.txnindex``) or only pylogctl's structural check does."""

    suffix: str  # which index: ".index", ".timeindex" or ".txnindex"
    message: str
    kafka: bool


def check_indexes(base_offset: int, log_size: int,
                  locate: Callable[[str], str | None]) -> IndexProblem | None:
    """The first reason to rebuild the indexes of the segment at ``base_offset``, or None when
    they look sound. ``locate(suffix)`` gives the file that will carry the index's name
    (``.index``, ...) once the plan's renames are done, or None when there is none."""
    index, time_index = locate(INDEX_SUFFIX), locate(TIME_INDEX_SUFFIX)
    txn_index = locate(TXN_INDEX_SUFFIX)
    if index is None:
        return IndexProblem(INDEX_SUFFIX, "the offset index does not exist (Kafka: 'Could not "
                            "find offset index file corresponding to log file ..., recovering "
                            "segment and rebuilding index files...')", kafka=True)
    if txn_index is not None:
        try:
            for txn in read_transaction_index(txn_index):
                if txn.last_offset < base_offset:
                    return IndexProblem(TXN_INDEX_SUFFIX, f"Last offset of aborted transaction "
                                        f"{txn} is less than start offset {base_offset}",
                                        kafka=True)
        except CorruptRecordError as exc:
            return IndexProblem(TXN_INDEX_SUFFIX, exc.message, kafka=True)
    if time_index is None:
        return IndexProblem(TIME_INDEX_SUFFIX, "the time index does not exist (Kafka would "
                            "create an empty one, losing the segment's max timestamp)",
                            kafka=False)
    for suffix, file, cls in ((INDEX_SUFFIX, index, OffsetIndex),
                              (TIME_INDEX_SUFFIX, time_index, TimeIndex)):
        problem = _check_index(file, cls, base_offset, log_size)
        if problem is not None:
            return IndexProblem(suffix, problem, kafka=False)
    return None


def _check_index(path: str, cls: type[AbstractIndex], base_offset: int,
                 log_size: int) -> str | None:
    """Kafka's sanity check, then the structure of the first entry and of the last
    :data:`CHECKED_TAIL` entries: an interrupted write leaves its zeros at the end, and reading
    every entry of every index would make planning a big log dir read gigabytes."""
    check = _offset_entry_problem if cls is OffsetIndex else _time_entry_problem
    with cls(path, base_offset) as index:
        try:
            index.sanity_check()
        except CorruptIndexError as exc:
            return exc.message
        entries = index.entries
        slots = [0, *range(max(1, entries - CHECKED_TAIL), entries)] if entries else []
        previous = None
        for n in slots:
            entry = index.entry(n)
            problem = check(n, entry, previous, log_size)
            if problem:
                return problem
            previous = entry
    return None


def _offset_entry_problem(n: int, entry, previous, log_size: int) -> str | None:
    if entry.position >= log_size:
        return (f"entry {n} ({entry.offset} -> {entry.position}) points past the end of the "
                f"{log_size}-byte segment")
    if previous is not None and (entry.offset <= previous.offset
                                 or entry.position <= previous.position):
        return (f"entry {n} ({entry.offset} -> {entry.position}) does not follow entry {n - 1} "
                f"({previous.offset} -> {previous.position}): offsets and positions must "
                f"strictly increase")
    return None


def _time_entry_problem(n: int, entry, previous, log_size: int) -> str | None:
    if previous is not None and (entry.timestamp <= previous.timestamp
                                 or entry.offset < previous.offset):
        return (f"entry {n} ({entry.timestamp} -> {entry.offset}) does not follow entry {n - 1} "
                f"({previous.timestamp} -> {previous.offset}): timestamps must strictly "
                f"increase and offsets never decrease")
    return None
