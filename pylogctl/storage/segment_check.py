"""Read-only checks of one segment: where its batches end, and whether the indexes on disk
can be trusted, without creating, changing or deleting a byte (what recovery would write is
:mod:`pylogctl.storage.loader.recovery_dry_run`'s business).

A loader that shows its plan before acting cannot open a :class:`LogSegment`: its lazy indexes
create missing files. So this module reads with :class:`FileRecords` and the read-only index
classes only.

:func:`check_indexes` is the sanity check. Kafka's loader only requires the ``.index`` to exist
and the ``.txnindex`` to be sane (recovery rebuilds what is above the recovery point anyway);
pylogctl also checks the structure every index must have (entries strictly increasing, inside
the segment, and the time index present), because that is what lets an interrupted rebuild be
detected and redone: a rebuild in progress leaves a preallocated index with a zero-filled tail.
Only the tail is checked (where such zeros are), so planning stays cheap on a big log dir;
``dump-segment --verify-index-only`` verifies every entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import CorruptRecordError
from .file_records import FileRecords
from .index import AbstractIndex, CorruptIndexError
from .naming import INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX
from .offset_index import OffsetIndex
from .time_index import TimeIndex
from .transaction_index import read_transaction_index

CHECKED_TAIL = 1024  # index entries checked at the end of each index (8 to 12 KiB)


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
