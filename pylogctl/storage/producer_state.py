"""The producer state of one partition and its snapshots (Kafka's ``ProducerStateManager``,
plus ``UnifiedLog.rebuildProducerState`` and the producer-state part of an append).

The manager maps producer ids to :class:`~pylogctl.storage.producer_append.ProducerStateEntry`
and tracks transactions; :mod:`pylogctl.storage.producer_append` holds the per-append rules.
The rules kept here:

- An aborted transaction goes to the segment's ``.txnindex`` with the last stable offset at the
  time (:meth:`ProducerStateManager.last_stable_offset`: the first offset of the oldest
  transaction still open by another producer, else the marker offset + 1), and only then is it
  marked complete. Completed transactions stay "unreplicated" until the high watermark passes
  their marker; the first unstable offset is the smallest first offset of open or unreplicated
  transactions.
- Producers with no open transaction expire ``producer.id.expiration.ms`` after their last
  timestamp; expired ones are also skipped when a snapshot is loaded.
- Snapshots ``{offset:020d}.snapshot`` hold the state for everything below ``offset`` (see
  :mod:`pylogctl.format.producer_snapshot`). A new one is only taken when the map end offset
  moved past the last one, and written atomically; a corrupt one found while loading is deleted
  and the next older one tried, as Kafka does. Entries are written in the order Java's
  ``HashMap`` iterates Kafka's producer map (hash bucket, then insertion), so a snapshot is
  byte-identical to the broker's for the same state (bins of 9+ colliding ids, which Java
  resizes or turns into trees, are not modelled).
- Rebuilding loads the latest snapshot at or below the target offset and replays the batches
  after it (:func:`rebuild_producer_state`).

Transaction verification (KIP-890 ``VerificationStateEntry``) is a broker concern and is not here.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from ..format.producer_snapshot import (CorruptSnapshotError, read_producer_snapshot,
                                        write_producer_snapshot)
from ..format.java_collections import hash_map_order, long_hash_code
from ..format.record import NO_PRODUCER_ID
from .checkpoint import write_file_atomically
from .clock import wall_clock_ms
from .files import read_bytes
from .naming import DELETED_FILE_SUFFIX, PRODUCER_SNAPSHOT_SUFFIX, offset_from_name, segment_file
from .producer_append import (AppendOrigin, BatchMetadata, CompletedTxn, ProducerAppendInfo,
                              ProducerBatch, ProducerStateEntry, TxnMetadata)

PRODUCER_ID_EXPIRATION_MS_DEFAULT = 86_400_000  # producer.id.expiration.ms
TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT = 900_000  # transaction.max.timeout.ms
LATE_TRANSACTION_BUFFER_MS = 5 * 60 * 1000

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())


# -- the manager -------------------------------------------------------------------------
class ProducerStateManager:
    """Producer ids -> their state for one partition dir, plus its open transactions and its
    ``.snapshot`` files. Offsets are plain ints (Kafka keeps ``LogOffsetMetadata`` for the
    first offset of each transaction; the partition log can resolve positions itself)."""

    def __init__(self, partition_dir: str | os.PathLike[str], *,
                 max_transaction_timeout_ms: int = TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT,
                 producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS_DEFAULT) -> None:
        self.dir = os.fspath(partition_dir)
        self.topic_partition = os.path.basename(os.path.abspath(self.dir))
        self.max_transaction_timeout_ms = max_transaction_timeout_ms
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self._producers: dict[int, ProducerStateEntry] = {}
        self._table_capacity = 16  # the Java HashMap's bucket count: grows, never shrinks
        self._ongoing_txns: dict[int, TxnMetadata] = {}  # by first offset
        self._unreplicated_txns: dict[int, TxnMetadata] = {}  # by first offset
        self._oldest_txn_last_timestamp = -1
        self._snapshots: dict[int, str] = self._load_snapshots()
        self._last_map_offset = 0
        self._last_snap_offset = 0

    # -- producers ---------------------------------------------------------------------------
    @property
    def active_producers(self) -> Mapping[int, ProducerStateEntry]:
        return MappingProxyType(self._producers)

    def producers_in_map_order(self) -> list[ProducerStateEntry]:
        """The producers as Kafka's ``HashMap`` iterates them (its snapshots and its
        ``DescribeProducers`` answers list them so)."""
        return [self._producers[pid]
                for pid in hash_map_order(self._producers, long_hash_code, self._table_capacity)]

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    def is_empty(self) -> bool:
        return not self._producers and not self._unreplicated_txns

    @property
    def map_end_offset(self) -> int:
        """The offset up to which (exclusive) the state reflects the log."""
        return self._last_map_offset

    def update_map_end_offset(self, offset: int) -> None:
        self._last_map_offset = offset

    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        current = self._producers.get(producer_id) or ProducerStateEntry(producer_id)
        return ProducerAppendInfo(self.topic_partition, producer_id, current, origin)

    def apply(self, append_info: ProducerAppendInfo) -> None:
        """Make a validated append's producer state current and register the transactions it
        opened (Kafka's ``update(ProducerAppendInfo)``)."""
        if append_info.producer_id == NO_PRODUCER_ID:
            raise ValueError(f"Invalid producer id {append_info.producer_id} passed to update for "
                             f"partition {self.topic_partition}")
        updated = append_info.to_entry()
        current = self._producers.get(append_info.producer_id)
        if current is not None:
            current.update(updated)
        else:
            self._add_producer(updated)
        for txn in append_info.started_transactions:
            self._ongoing_txns[txn.first_offset] = txn
        self._update_oldest_txn_timestamp()

    def update(self, batch: ProducerBatch,
               origin: AppendOrigin = AppendOrigin.REPLICATION) -> CompletedTxn | None:
        """Apply one batch of one producer at once (the recovery hook of ``LogSegment.recover``):
        prepare, append, apply. Returns the transaction a COMMIT/ABORT marker completes; the
        caller writes its ``.txnindex`` entry, then calls :meth:`complete_txn`, and moves
        :meth:`update_map_end_offset` past the batch. A batch without producer id changes nothing.
        """
        if batch.producer_id <= NO_PRODUCER_ID:
            return None
        info = self.prepare_update(batch.producer_id, origin)
        completed = info.append(batch)
        self.apply(info)
        return completed

    def load_producer_entry(self, entry: ProducerStateEntry) -> None:
        self._add_producer(entry)
        if entry.current_txn_first_offset is not None:
            self._ongoing_txns[entry.current_txn_first_offset] = TxnMetadata(
                entry.producer_id, entry.current_txn_first_offset)

    def is_producer_expired(self, now_ms: int, entry: ProducerStateEntry) -> bool:
        return (entry.current_txn_first_offset is None
                and now_ms - entry.last_timestamp >= self.producer_id_expiration_ms)

    # -- transactions ------------------------------------------------------------------------
    def first_unstable_offset(self) -> int | None:
        """The first offset that is undecided, or decided by a marker not yet below the high
        watermark; None when there is no such transaction."""
        firsts = [min(txns) for txns in (self._ongoing_txns, self._unreplicated_txns) if txns]
        return min(firsts) if firsts else None

    def first_undecided_offset(self) -> int | None:
        return min(self._ongoing_txns) if self._ongoing_txns else None

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        self._remove_unreplicated_transactions(high_watermark)

    def last_stable_offset(self, completed_txn: CompletedTxn) -> int:
        """The LSO to record with ``completed_txn`` before it is marked complete."""
        for first in sorted(self._ongoing_txns):
            if self._ongoing_txns[first].producer_id != completed_txn.producer_id:
                return first
        return completed_txn.last_offset + 1

    def complete_txn(self, completed_txn: CompletedTxn) -> None:
        txn = self._ongoing_txns.pop(completed_txn.first_offset, None)
        if txn is None:
            raise ValueError(f"Attempted to complete transaction {completed_txn} on partition "
                             f"{self.topic_partition} which was not started")
        txn.last_offset = completed_txn.last_offset
        self._unreplicated_txns[completed_txn.first_offset] = txn
        self._update_oldest_txn_timestamp()

    def has_late_transaction(self, now_ms: int) -> bool:
        """The oldest open transaction has been silent longer than the max transaction timeout
        plus 5 minutes (a hanging transaction)."""
        last = self._oldest_txn_last_timestamp
        limit = self.max_transaction_timeout_ms + LATE_TRANSACTION_BUFFER_MS
        return last > 0 and now_ms - last > limit

    # -- snapshots ---------------------------------------------------------------------------
    def snapshot_path(self, offset: int) -> str:
        return segment_file(self.dir, offset, PRODUCER_SNAPSHOT_SUFFIX)

    def take_snapshot(self) -> str | None:
        """Write ``{map end offset}.snapshot`` unless the last snapshot is already there;
        returns its path, or None when nothing was written."""
        if self._last_map_offset <= self._last_snap_offset:
            return None
        offset = self._last_map_offset
        path = self.snapshot_path(offset)
        write_file_atomically(path, write_producer_snapshot(
            e.to_snapshot() for e in self.producers_in_map_order()))
        self._snapshots[offset] = path
        self._last_snap_offset = offset
        return path

    def latest_snapshot_offset(self) -> int | None:
        return max(self._snapshots) if self._snapshots else None

    def fetch_snapshot(self, offset: int) -> str | None:
        return self._snapshots.get(offset)

    def snapshot_offsets(self) -> list[int]:
        return sorted(self._snapshots)

    def load_from_snapshot(self, log_start_offset: int, now_ms: int | None = None) -> None:
        """Load the latest readable snapshot (deleting corrupt ones on the way), skipping
        producers expired at ``now_ms`` (default: now); with none, the state starts empty at
        ``log_start_offset``."""
        now_ms = wall_clock_ms() if now_ms is None else now_ms
        while self._snapshots:
            offset = max(self._snapshots)
            path = self._snapshots[offset]
            try:
                entries = read_snapshot(path)
            except CorruptSnapshotError as exc:
                _log.warning("Failed to load producer snapshot from '%s': %s", path, exc.message)
                self._remove_and_delete_snapshot(offset)
                continue
            for entry in entries:
                if not self.is_producer_expired(now_ms, entry):
                    self.load_producer_entry(entry)
            self._last_snap_offset = self._last_map_offset = offset
            self._update_oldest_txn_timestamp()
            return
        self._last_snap_offset = self._last_map_offset = log_start_offset

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int,
                            now_ms: int | None = None) -> None:
        """Delete snapshots outside ``(log_start_offset, log_end_offset]`` and, unless the state
        already ends at ``log_end_offset``, reload from the latest remaining one. Assumes the
        log end offset is at or below the high watermark."""
        for offset in list(self._snapshots):
            if offset > log_end_offset or offset <= log_start_offset:
                self._remove_and_delete_snapshot(offset)
        if log_end_offset != self._last_map_offset:
            self._producers.clear()
            self._ongoing_txns.clear()
            self._unreplicated_txns.clear()
            self._update_oldest_txn_timestamp()
            self.load_from_snapshot(log_start_offset, now_ms)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget every producer and delete every snapshot; the state starts at ``offset``."""
        self._producers.clear()
        self._ongoing_txns.clear()
        self._unreplicated_txns.clear()
        for snapshot_offset in list(self._snapshots):
            self._remove_and_delete_snapshot(snapshot_offset)
        self._last_snap_offset = 0
        self._last_map_offset = offset
        self._update_oldest_txn_timestamp()

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        self._remove_unreplicated_transactions(log_start_offset)
        if self._last_map_offset < log_start_offset:
            self._last_map_offset = log_start_offset
        latest = self.latest_snapshot_offset()
        self._last_snap_offset = log_start_offset if latest is None else latest

    def remove_stray_snapshots(self, segment_base_offsets: Iterable[int]) -> list[str]:
        """Delete snapshots that match no segment base offset, except the newest such one if it
        lies above every segment (the one a clean shutdown writes at the log end). Re-lists the
        dir first, as recovery may have deleted files. Returns the deleted paths."""
        bases = set(segment_base_offsets)
        self._snapshots = self._load_snapshots()
        deleted = []
        latest_stray: int | None = None
        for offset in sorted(self._snapshots):
            if offset in bases:
                continue
            if latest_stray is not None:
                deleted.append(self._snapshots[latest_stray])
                self._remove_and_delete_snapshot(latest_stray)
            latest_stray = offset
        if latest_stray is not None and bases and latest_stray < max(bases):
            deleted.append(self._snapshots[latest_stray])
            self._remove_and_delete_snapshot(latest_stray)
        return deleted

    def remove_and_mark_snapshot_for_deletion(self, offset: int) -> str | None:
        """Forget the snapshot at ``offset`` and rename it to ``.deleted`` for a later delete
        (with the segment it belongs to); None if there is none or it is already gone."""
        path = self._snapshots.pop(offset, None)
        if path is None:
            return None
        renamed = path + DELETED_FILE_SUFFIX
        try:
            os.replace(path, renamed)
        except FileNotFoundError:
            return None
        return renamed

    def update_parent_dir(self, partition_dir: str | os.PathLike[str]) -> None:
        """Follow a rename of the partition dir (e.g. to ``-delete`` or from ``-future``)."""
        self.dir = os.fspath(partition_dir)
        self._snapshots = {o: self.snapshot_path(o) for o in self._snapshots}

    # -- internals ---------------------------------------------------------------------------
    def _add_producer(self, entry: ProducerStateEntry) -> None:
        new = entry.producer_id not in self._producers
        self._producers[entry.producer_id] = entry
        if new and len(self._producers) > self._table_capacity * 3 // 4:
            self._table_capacity *= 2

    def _remove_unreplicated_transactions(self, offset: int) -> None:
        for first in [f for f, t in self._unreplicated_txns.items()
                      if t.last_offset is not None and t.last_offset < offset]:
            del self._unreplicated_txns[first]

    def _update_oldest_txn_timestamp(self) -> None:
        if not self._ongoing_txns:
            self._oldest_txn_last_timestamp = -1
            return
        entry = self._producers.get(self._ongoing_txns[min(self._ongoing_txns)].producer_id)
        self._oldest_txn_last_timestamp = entry.last_timestamp if entry is not None else -1

    def _remove_and_delete_snapshot(self, offset: int) -> None:
        path = self._snapshots.pop(offset, None)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)

    def _load_snapshots(self) -> dict[int, str]:
        return dict(list_snapshot_files(self.dir))


# -- files -----------------------------------------------------------------------------------
def list_snapshot_files(partition_dir: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """``(offset, path)`` of every regular ``*.snapshot`` file in the dir, by offset."""
    partition_dir = os.fspath(partition_dir)
    if not os.path.isdir(partition_dir):
        return []
    out = []
    with os.scandir(partition_dir) as it:
        for e in it:
            if e.name.endswith(PRODUCER_SNAPSHOT_SUFFIX) and e.is_file():
                offset = offset_from_name(e.name)
                if offset is not None:  # else not named by an offset: not a producer snapshot
                    out.append((offset, e.path))
    return sorted(out)


def read_snapshot(path: str | os.PathLike[str]) -> list[ProducerStateEntry]:
    """The producers stored in a ``.snapshot`` file (:class:`CorruptSnapshotError` if it is bad)."""
    try:
        entries = read_producer_snapshot(read_bytes(path))
    except CorruptSnapshotError as exc:
        raise exc.at(path) from None
    return [ProducerStateEntry.from_snapshot(e) for e in entries]


def write_snapshot(path: str | os.PathLike[str], entries: Iterable[ProducerStateEntry]) -> None:
    """Write a snapshot of ``entries`` (in that order) atomically."""
    write_file_atomically(path, write_producer_snapshot(e.to_snapshot() for e in entries))


# -- the log-level procedures (``UnifiedLog``) ---------------------------------------------
@dataclass
class ProducerStateUpdate:
    """What validating an append found: the per-producer updates to apply after the write, the
    transactions its markers complete, or the cached batch it duplicates (then nothing is
    written)."""

    updated_producers: dict[int, ProducerAppendInfo] = field(default_factory=dict)
    completed_txns: list[CompletedTxn] = field(default_factory=list)
    duplicate: BatchMetadata | None = None


def update_producers(manager: ProducerStateManager, batch: ProducerBatch,
                     producers: dict[int, ProducerAppendInfo], first_offset: int | None,
                     origin: AppendOrigin) -> CompletedTxn | None:
    """Apply ``batch`` to its producer's pending append info in ``producers`` (created on
    first use)."""
    info = producers.get(batch.producer_id)
    if info is None:
        info = producers[batch.producer_id] = manager.prepare_update(batch.producer_id, origin)
    return info.append(batch, first_offset)


def analyze_and_validate_producer_state(manager: ProducerStateManager,
                                        batches: Iterable[ProducerBatch],
                                        origin: AppendOrigin) -> ProducerStateUpdate:
    """Validate the batches of one append (offsets already assigned) before writing them.

    For a client append, a batch that repeats one of the producer's last 5 batches stops the
    validation with ``duplicate`` set: the broker answers with the earlier append's offsets.
    Raises the ``ProducerStateError`` subclasses for fenced epochs, sequence gaps and
    transaction misuse. Nothing changes in ``manager`` until :meth:`ProducerStateManager.apply`.
    """
    result = ProducerStateUpdate()
    for batch in batches:
        if batch.producer_id <= NO_PRODUCER_ID:
            continue
        if origin is AppendOrigin.CLIENT:
            entry = manager.last_entry(batch.producer_id)
            duplicate = entry.find_duplicate_batch(batch) if entry is not None else None
            if duplicate is not None:
                result.duplicate = duplicate
                return result
        completed = update_producers(manager, batch, result.updated_producers, None, origin)
        if completed is not None:
            result.completed_txns.append(completed)
    return result


def load_producers_from_batches(manager: ProducerStateManager,
                                batches: Iterable[ProducerBatch]) -> None:
    """Replay already-validated batches (Kafka's ``loadProducersFromRecords``): producers are
    updated after the whole run, then its transactions completed. Writes no ``.txnindex``."""
    loaded: dict[int, ProducerAppendInfo] = {}
    completed: list[CompletedTxn] = []
    for batch in batches:
        if batch.producer_id > NO_PRODUCER_ID:
            txn = update_producers(manager, batch, loaded, None, AppendOrigin.REPLICATION)
            if txn is not None:
                completed.append(txn)
    for info in loaded.values():
        manager.apply(info)
    for txn in completed:
        manager.complete_txn(txn)


def _segments_in_range(base_offsets: Sequence[int], start: int, end: int) -> list[int]:
    """Kafka's ``LogSegments.values(from, to)``: from the segment holding ``start`` up to,
    excluding, the first segment based at or after ``end``."""
    if start == end:
        return []
    if end < start:
        raise ValueError(f"Invalid log segment range: requested segments from offset {start} "
                         f"which is greater than limit offset {end}")
    first = max(bisect.bisect_right(base_offsets, start) - 1, 0)
    return [b for b in base_offsets[first:] if b < end]


def _batches_between(batches: Iterable[ProducerBatch], start: int,
                     end: int) -> Iterator[ProducerBatch]:
    """The batches a segment read from ``start`` bounded by the position of ``end`` yields:
    from the batch holding ``start`` up to, excluding, the batch holding ``end``."""
    with contextlib.ExitStack() as stack:
        close = getattr(batches, "close", None)
        if close is not None:
            stack.callback(close)
        for batch in batches:
            if batch.last_offset >= end:
                return
            if batch.last_offset >= start:
                yield batch


def rebuild_producer_state(manager: ProducerStateManager, segment_base_offsets: Iterable[int],
                           read_segment: Callable[[int], Iterable[ProducerBatch]],
                           log_start_offset: int, last_offset: int, *,
                           reload_from_clean_shutdown: bool = False, now_ms: int | None = None,
                           message_format_v2: bool = True) -> None:
    """Bring ``manager`` to ``last_offset`` (Kafka's ``UnifiedLog.rebuildProducerState``).

    ``read_segment(base_offset)`` yields the batches of the segment based there, in order; it
    is only called for segments that must be replayed. The latest snapshot at or below
    ``last_offset`` is loaded and the batches after it replayed, with snapshots taken at the
    bases of the last two segments on the way and at ``last_offset`` at the end. After a clean
    shutdown with no snapshot at all (an upgrade from a broker that wrote none) or on a pre-v2
    message format, nothing is scanned: empty snapshots are written at those offsets instead.
    """
    bases = sorted(segment_base_offsets)
    now = wall_clock_ms() if now_ms is None else now_ms
    offsets_to_snapshot = bases[-2:] + [last_offset]
    upgrade = manager.latest_snapshot_offset() is None and reload_from_clean_shutdown
    if not message_format_v2 or upgrade:
        for offset in offsets_to_snapshot:
            manager.update_map_end_offset(offset)
            manager.take_snapshot()
        return
    was_empty = manager.is_empty() and manager.map_end_offset >= last_offset
    manager.truncate_and_reload(log_start_offset, last_offset, now)
    # replay only when the snapshot is behind and there were producers before the truncation
    if last_offset > manager.map_end_offset and not was_empty:
        for base in _segments_in_range(bases, manager.map_end_offset, last_offset):
            start = max(base, manager.map_end_offset, log_start_offset)
            manager.update_map_end_offset(start)
            if base in offsets_to_snapshot:
                manager.take_snapshot()
            batches = _batches_between(read_segment(base), start, last_offset)
            load_producers_from_batches(manager, batches)
    manager.update_map_end_offset(last_offset)
    manager.take_snapshot()
