"""What ``LogSegment.recover`` would do to a segment, found by running it read-only.

A loader that shows its plan before acting, and ``rebuild-index``, must know what recovery
writes without touching a byte. Instead of a second implementation of recovery's rules, the
real :meth:`~pylogctl.storage.segment.LogSegment.recover` (with its C loop) runs over the
``.log`` opened read-only, with its indexes in a scratch dir: its final truncation only records
where the valid data ends. Recovery's hooks report the rest: the leader epochs it assigns, and
whether it met transaction markers (whose ``.txnindex`` entries need the producer state below
the segment: pass it as :class:`TransactionReplay` to get them).

Where the valid data ends early, :class:`InvalidTail` says why by Kafka's rule: a batch cut
short, a size below the minimum record overhead, a CRC mismatch, another invalid batch, or a
transaction marker producer state cannot replay (recovery keeps it and stops after it).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Callable

from ...errors import CorruptRecordError, InvalidOffsetError, PylogctlError
from ...format.control import ControlRecordType, parse_control_key, parse_end_txn_marker
from ..file_records import FileRecords
from ..lazy_index import LazyIndex
from ..naming import INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, segment_file
from ..producer_append import CompletedTxn, ProducerBatch
from ..producer_state import ProducerStateManager
from ..segment import LogSegment
from ..transaction_index import AbortedTxn, TransactionIndex, read_transaction_index

PROGRESS_STEP = 8 * 1024 * 1024
_MEMORY_DIR = "/dev/shm"
Progress = Callable[[int], None]


class ScratchDir:
    """Where dry runs write their indexes: created on first use, removed by :meth:`close`.
    In memory (``/dev/shm``) where there is one and ``TMPDIR`` does not say otherwise: a
    plan recovers many segments, and creating and removing files costs more on disk than
    recovering them does."""

    def __init__(self) -> None:
        self._path: str | None = None

    @property
    def path(self) -> str:
        if self._path is None:
            memory = "TMPDIR" not in os.environ and os.access(_MEMORY_DIR, os.W_OK)
            self._path = tempfile.mkdtemp(prefix="pylogctl-recover-",
                                          dir=_MEMORY_DIR if memory else None)
        return self._path

    def close(self) -> None:
        if self._path is not None:
            shutil.rmtree(self._path, ignore_errors=True)
            self._path = None

    def __enter__(self) -> "ScratchDir":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecoveryScanError(PylogctlError):
    """Recovery cannot proceed the way Kafka's does (a full index)."""


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
    aborted_txns: tuple[AbortedTxn, ...]  # the ``.txnindex`` (with a TransactionReplay)
    epoch_starts: tuple[tuple[int, int], ...]  # (epoch, base offset) of each new highest epoch
    txn_markers: bool  # a transactional control batch: recovery must replay producer state
    invalid_offset: str | None  # Kafka's InvalidOffsetException: the segment is emptied

    @property
    def truncated_bytes(self) -> int:
        return self.size if self.invalid_offset else self.size - self.valid_bytes

    @property
    def txn_index(self) -> bytes:
        return b"".join(t.to_bytes() for t in self.aborted_txns)


class TransactionReplay:
    """Producer state as far as a ``.txnindex`` depends on it, for ``LogSegment.recover``.

    Only transactional batches (data and markers) open and close transactions; a plain batch
    matters only from a producer inside one (Kafka refuses it). The others change sequence
    numbers and epochs, which recovery never rejects, so they are skipped: the index comes out
    the same. ``open_txn_producers`` tells recovery so, and its C loop then hands over only
    the batches that matter: a plain batch costs no Python at all.
    """

    def __init__(self, manager: ProducerStateManager) -> None:
        self.manager = manager
        # producers with a transaction open (kept in step with the manager after each update)
        self.open_txn_producers = {pid for pid, e in manager.active_producers.items()
                                   if e.current_txn_first_offset is not None}
        self.last_stable_offset = manager.last_stable_offset
        self.complete_txn = manager.complete_txn
        self.update_map_end_offset = manager.update_map_end_offset

    def update(self, batch: ProducerBatch) -> CompletedTxn | None:
        producer_id = batch.producer_id
        open_txn = self.open_txn_producers
        if not (batch.is_transactional or producer_id in open_txn):
            return None
        completed = self.manager.update(batch)
        entry = self.manager.last_entry(producer_id)
        if entry is not None and entry.current_txn_first_offset is not None:
            open_txn.add(producer_id)
        else:
            open_txn.discard(producer_id)
        return completed


class _Hooks:
    """Recovery's leader-epoch and producer-state hooks, recording what it reports; producer
    state goes on to ``replay`` when there is one, else only markers are parsed (a marker
    recovery could not replay stops it, as it stops Kafka's)."""

    def __init__(self, replay: TransactionReplay | None) -> None:
        self.replay = replay
        self.open_txn_producers = set() if replay is None else replay.open_txn_producers
        self.epoch_starts: list[tuple[int, int]] = []
        self.txn_markers = False
        self.marker_problem: str | None = None

    def latest_epoch(self) -> int | None:
        return self.epoch_starts[-1][0] if self.epoch_starts else None

    def assign(self, epoch: int, start_offset: int) -> None:
        self.epoch_starts.append((epoch, start_offset))

    def update(self, batch: ProducerBatch) -> CompletedTxn | None:
        marker = batch.is_control and batch.is_transactional
        self.txn_markers |= marker
        try:
            if self.replay is not None:
                return self.replay.update(batch)
            if marker:
                for record in batch.records()[:1]:
                    parse_end_txn_marker(ControlRecordType.from_id(
                        parse_control_key(record.key)[1]), record.value)
        except CorruptRecordError as exc:
            if marker:
                self.marker_problem = exc.message
            raise
        return None

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        assert self.replay is not None  # (update completes nothing without one)
        return self.replay.last_stable_offset(completed)

    def complete_txn(self, completed: CompletedTxn) -> None:
        assert self.replay is not None
        self.replay.complete_txn(completed)

    def update_map_end_offset(self, offset: int) -> None:
        if self.replay is not None:
            self.replay.update_map_end_offset(offset)


class _ReadOnlyLog(FileRecords):
    """A segment's ``.log`` opened read-only for ``LogSegment.recover``: the truncation that
    recovery ends with only shortens the view, and the scan reports progress (recovery's
    Python and C loops both ``release`` the pages they have passed)."""

    def __init__(self, path: str, progress: Progress | None) -> None:
        super().__init__(path)
        self._progress = progress
        self.reported = 0
        self.truncated_to: int | None = None

    def truncate_to(self, target_size: int) -> int:
        cut = self.end - target_size
        self.end = self.truncated_to = target_size
        return cut

    def release(self, position: int) -> None:
        super().release(position)
        if self._progress is not None and position - self.reported >= PROGRESS_STEP:
            self._progress(position - self.reported)
            self.reported = position


def scratch_index_paths(scratch: str, base_offset: int) -> tuple[str, str, str]:
    """The ``.index``, ``.timeindex`` and ``.txnindex`` a dry run writes in ``scratch``."""
    index, time_index, txn_index = (segment_file(scratch, base_offset, s)
                                    for s in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX))
    return index, time_index, txn_index


def recover_read_only(log_path: str, base_offset: int, index_interval_bytes: int,
                      max_index_size: int, scratch: ScratchDir,
                      producer_state: TransactionReplay | None = None,
                      progress: Progress | None = None) -> RecoveryScan:
    """Run ``LogSegment.recover`` over the ``.log`` at ``log_path`` without writing it, its
    indexes written in ``scratch`` (:func:`scratch_index_paths`, until the next dry run of a
    segment with the same base offset there).

    Raises :class:`~pylogctl.errors.LogSegmentOffsetOverflowError` where recovery does (Kafka
    splits such a segment) and :class:`RecoveryScanError` where it would fail.
    """
    paths = scratch_index_paths(scratch.path, base_offset)
    for path in paths:
        if os.path.exists(path):
            os.unlink(path)
    log = _ReadOnlyLog(log_path, progress)
    hooks = _Hooks(producer_state)
    segment = LogSegment(log, LazyIndex.for_offset(paths[0], base_offset, max_index_size),
                         LazyIndex.for_time(paths[1], base_offset, max_index_size),
                         TransactionIndex(base_offset, paths[2]), base_offset,
                         index_interval_bytes)
    invalid_offset = None
    try:
        truncated = segment.recover(hooks, hooks)
        valid = log.file_size - truncated
        next_offset = segment.read_next_offset()
    except InvalidOffsetError as exc:
        invalid_offset = exc.message.removesuffix(f" to {os.path.abspath(exc.path or '')}")
        valid = _valid_at_invalid_offset(segment, log, exc, paths[0])
        next_offset = base_offset
    except ValueError as exc:
        if not str(exc).startswith("Attempt to append to a full"):
            raise
        which = "time index" if "time index" in str(exc) else "index"
        raise RecoveryScanError(f"Attempt to append to a full {which} while recovering "
                                f"{log_path}", path=log_path) from None
    finally:
        if invalid_offset is None:
            segment.close()
        else:
            segment.close_handlers()
    if progress is not None:
        progress(log.file_size - log.reported)
    tail = None  # (an invalid offset in the loop stops recovery before any invalid batch)
    if valid < log.file_size and (invalid_offset is None or log.truncated_to is not None):
        tail = _invalid_tail(log_path, valid, hooks.marker_problem)
    index, time_index = (b"" if invalid_offset else _read(p) for p in paths[:2])
    aborted = () if invalid_offset or not os.path.exists(paths[2]) else tuple(
        read_transaction_index(paths[2]))
    return RecoveryScan(base_offset, log.file_size, valid, next_offset, tail, index,
                        time_index, aborted, tuple(hooks.epoch_starts), hooks.txn_markers,
                        invalid_offset)


def _valid_at_invalid_offset(segment: LogSegment, log: _ReadOnlyLog, exc: InvalidOffsetError,
                             index_path: str) -> int:
    """The position of the batch whose index entry broke the order: recovery appends one
    once more than ``index.interval.bytes`` were scanned since the last entry, the time
    index's right after the offset index's (or, last, at the end of the valid data)."""
    if os.path.abspath(exc.path or "") != os.path.abspath(index_path):
        if log.truncated_to is not None:
            return log.truncated_to
    index = segment.offset_index  # (it has an entry: the order broke, or one just went in)
    last = index.entry(index.entries - 1).position
    if os.path.abspath(exc.path or "") != os.path.abspath(index_path):
        return last
    for batch in log.batches(last):
        if batch.position - last > segment.index_interval_bytes:
            return batch.position
    return log.end


def _invalid_tail(log_path: str, position: int, marker_problem: str | None) -> InvalidTail:
    """Why recovery stopped at ``position``: the batch found there, or the marker before it."""
    if marker_problem is not None:
        return InvalidTail(position, "invalid-batch", f"the transaction marker before this "
                           f"position cannot be replayed: {marker_problem}")
    with FileRecords(log_path) as records:
        batches = records.batches(position)
        batch = None
        try:
            batch = next(batches, None)
            if batch is None:
                return InvalidTail(position, "incomplete-batch",
                                   f"{records.size_in_bytes - position} bytes after the last "
                                   f"complete batch do not hold a whole batch")
            batch.ensure_valid()
        except CorruptRecordError as exc:
            if batch is None:  # framing: a size field below 14, an unknown magic, ...
                kind = ("corrupt-size" if "minimum record overhead" in exc.message
                        else "invalid-batch")
            else:
                kind = "crc-mismatch" if "crc" in exc.message else "invalid-batch"
            return InvalidTail(position, kind, exc.message)
        finally:
            batches.close()
            batch = None  # no view into the map may outlive the file
    return InvalidTail(position, "invalid-batch", "the batch there is not valid")


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""
