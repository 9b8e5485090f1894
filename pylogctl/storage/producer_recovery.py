"""Producer state as the loader needs it, computed without touching snapshot files.

Kafka's ``LogLoader.recoverSegment`` rebuilds producer state up to a segment's base offset
before recovering it, because replaying the segment's transaction markers writes the aborted
transactions (with the last stable offset of the moment) into its ``.txnindex``; Kafka then
takes a snapshot and its ``truncateAndReload`` deletes the snapshots above the segment. Snapshots
are caches, so pylogctl builds that state in memory (:func:`producer_state_before`) and leaves
the files alone: the plan and the apply step compute the same state, and only the final
``rebuildProducerState`` at the log end changes snapshot files. :func:`predict_rebuild` says
which ones, following ``ProducerStateManager.removeStraySnapshots``, ``truncateAndReload`` and
``UnifiedLog.rebuildProducerState`` step by step.

Loading twice does not always give the same files in Kafka: a snapshot written at the log end
turns an older one into a stray only the next start deletes, and an empty log at a non-zero log
start alternates, clean restart after clean restart, between losing its snapshot
(``truncateAndReload`` drops those at or below the log start) and regaining it (no snapshot
after a clean shutdown takes the "upgrade" path, which writes empty ones). The loader therefore
plans, and applies, the producer-state steps of two consecutive loads: after that, planning
again finds nothing to change (two more loads end where these two did).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from ..format.producer_snapshot import CorruptSnapshotError
from .file_records import FileRecords
from .log_segments import bases_in_range
from .producer_state import ProducerStateManager, load_producers_from_batches, read_snapshot


def _batches(path: str, start_offset: int, transactional_only: bool) -> Iterator:
    """The batches of a ``.log`` from the one holding ``start_offset`` on."""
    with FileRecords(path) as records:
        for batch in records.batches():
            if batch.last_offset >= start_offset and (
                    not transactional_only or (batch.magic >= 2 and batch.is_transactional)):
                yield batch


def producer_state_before(partition_dir: str, segments: Sequence[tuple[int, str]],
                          snapshots: Mapping[int, str], offset: int, log_start_offset: int,
                          now_ms: int | None, *, transactional_only: bool = False,
                          skipped: Callable[[int, CorruptSnapshotError], None] | None = None
                          ) -> ProducerStateManager:
    """The producer state just below ``offset``: the latest readable snapshot in
    ``(log_start_offset, offset]`` (producers expired at ``now_ms`` skipped; None: none
    expire), then the batches of ``segments`` (``(base, .log path)``, sorted) from there up
    to ``offset``. ``transactional_only`` replays transactional batches alone: the state a
    ``.txnindex`` depends on (see :class:`~pylogctl.storage.loader.recovery_dry_run.
    TransactionReplay`). ``skipped`` hears of each unreadable snapshot passed over."""
    manager = ProducerStateManager(partition_dir)
    map_end = log_start_offset
    if offset > 0:
        for snapshot_offset in sorted((o for o in snapshots if log_start_offset < o <= offset),
                                      reverse=True):
            try:
                entries = read_snapshot(snapshots[snapshot_offset])
            except CorruptSnapshotError as exc:
                if skipped is not None:
                    skipped(snapshot_offset, exc)
                continue  # Kafka deletes it and tries the next older one
            for entry in entries:
                if now_ms is None or not manager.is_producer_expired(now_ms, entry):
                    manager.load_producer_entry(entry)
            map_end = snapshot_offset
            break
        paths = dict(segments)
        earlier = [b for b, _ in segments if b < offset]
        for base in bases_in_range(earlier, map_end, offset) if offset > map_end else ():
            start = max(base, map_end, log_start_offset)
            load_producers_from_batches(manager, _batches(paths[base], start,
                                                          transactional_only))
    manager.update_map_end_offset(offset)
    return manager


@dataclass(frozen=True)
class RebuildPrediction:
    """One load's producer-state effect on the snapshot files (offsets)."""

    stray: tuple[int, ...]  # deleted by removeStraySnapshots
    deleted: tuple[tuple[int, str], ...]  # deleted by truncateAndReload, or unreadable
    loaded: int | None
    replay_from: int | None
    written: tuple[int, ...]
    final: frozenset[int]
    upgrade: bool = False  # the written snapshots are empty (no scan)


def stray_snapshots(offsets: Iterable[int], bases: Sequence[int]) -> list[int]:
    """Kafka's ``removeStraySnapshots``: snapshots matching no segment base, except the newest
    such one when it lies above every segment (written at the log end by a clean shutdown)."""
    base_set = set(bases)
    strays = sorted(o for o in offsets if o not in base_set)
    if strays and not (bases and strays[-1] < max(bases)):
        strays.pop()
    return strays


def predict_rebuild(snapshots: Iterable[int], readable: Callable[[int], bool],
                    bases: Sequence[int], log_start_offset: int, log_end_offset: int,
                    had_clean_shutdown: bool) -> RebuildPrediction:
    """Which snapshot files one load's last two producer-state steps delete and write, for a
    fresh manager over the snapshot ``offsets`` and the final segment ``bases``."""
    stray = stray_snapshots(snapshots, bases)
    remaining = set(snapshots) - set(stray)
    offsets_to_snapshot = sorted(bases)[-2:] + [log_end_offset]
    written: list[int] = []
    last_snap = 0

    def take(offset: int) -> None:
        nonlocal last_snap
        if offset > last_snap:
            written.append(offset)
            last_snap = offset

    def result(deleted: list[tuple[int, str]], loaded: int | None, replay_from: int | None,
               upgrade: bool = False) -> RebuildPrediction:
        final = (remaining - {o for o, _ in deleted}) | set(written)
        return RebuildPrediction(tuple(stray), tuple(deleted), loaded, replay_from,
                                 tuple(written), frozenset(final), upgrade)

    if not remaining and had_clean_shutdown:  # the upgrade path: empty snapshots, no scan
        for offset in offsets_to_snapshot:
            take(offset)
        return result([], None, None, upgrade=True)
    deleted: list[tuple[int, str]] = []
    for offset in sorted(remaining):
        if offset > log_end_offset:
            deleted.append((offset, f"above the log end offset {log_end_offset}"))
        elif offset <= log_start_offset:
            deleted.append((offset, f"at or below the log start offset {log_start_offset}"))
    loaded = None
    map_end = log_start_offset
    if log_end_offset != 0:  # a fresh manager ends at 0: only then is there nothing to load
        for offset in sorted((o for o in remaining if log_start_offset < o <= log_end_offset),
                             reverse=True):
            if not readable(offset):
                deleted.append((offset, "unreadable (corrupt)"))
                continue
            loaded = map_end = offset
            break
    last_snap = map_end
    replay_from = None
    if log_end_offset > map_end:
        replay_from = map_end
        for base in bases_in_range(sorted(bases), map_end, log_end_offset):
            map_end = max(base, map_end, log_start_offset)
            if base in offsets_to_snapshot:
                take(map_end)
    take(log_end_offset)
    return result(deleted, loaded, replay_from)


def snapshot_entries(path: str) -> int | None:
    """How many producers a snapshot file holds, None when it is unreadable."""
    try:
        return len(read_snapshot(path))
    except CorruptSnapshotError:
        return None
