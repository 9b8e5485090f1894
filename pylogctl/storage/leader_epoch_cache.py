"""The leader-epoch cache of one partition (Kafka's ``LeaderEpochFileCache``).

Each entry says "leader epoch E wrote its first record at offset S"; the cache lives in the
partition's ``leader-epoch-checkpoint`` (``epoch startOffset`` lines, see
:mod:`pylogctl.storage.checkpoint`). Kafka's rules, kept here:

- Entries increase strictly in both epoch and start offset. ``assign`` is a no-op for the
  latest epoch at the same or a later offset; otherwise it first drops every entry from the end
  whose epoch is >= the new epoch or whose start offset is >= the new start offset, then appends.
  A changing ``assign`` flushes the file at once, so the checkpoint never misses an entry.
- ``truncate_from_end(end)`` drops entries starting at or after ``end`` (log truncation);
  ``truncate_from_start(start)`` drops entries starting at or before ``start`` and re-adds the
  last dropped epoch at ``start`` (log start offset moved up): exclusive, so an entry at
  ``start`` is kept. Kafka flushes these two asynchronously; pylogctl flushes them before
  returning (if the partition dir still exists, as Kafka's ``writeIfDirExists``).
- Entries read back from the file go through ``assign``, so a stale or non-monotonic file is
  normalised in memory the way a broker normalises it at start-up; unlike the broker, merely
  opening the cache never rewrites the file (offline tools open caches they only read).
- During log recovery a v2 batch adds its ``partitionLeaderEpoch`` at its base offset when it
  is >= 0 and above the latest cached epoch (:meth:`LeaderEpochFileCache.assign_from_batch`).

Writes go through the atomic checkpoint writer (temp file, fsync, rename, fsync of the dir).
"""

from __future__ import annotations

import bisect
import logging
import os
from typing import Iterable, Protocol

from .checkpoint import (LEADER_EPOCH_CHECKPOINT, CorruptCheckpointError, EpochEntry,
                         read_leader_epoch_checkpoint, write_checkpoint_atomically)

UNDEFINED_EPOCH = -1  # OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH
UNDEFINED_EPOCH_OFFSET = -1  # OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET
_MAGIC_V2 = 2

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())


class EpochBatch(Protocol):
    """What :meth:`LeaderEpochFileCache.assign_from_batch` reads from a batch (v2 or legacy)."""

    magic: int
    partition_leader_epoch: int
    base_offset: int


class LeaderEpochFileCache:
    """Leader epoch -> start offset for one partition, backed by its ``leader-epoch-checkpoint``.

    ``path`` is the checkpoint file (:meth:`for_partition_dir` builds it from the dir). A missing
    file is an empty cache; nothing is written until the cache changes. ``persist=False`` keeps
    every change in memory (a loader's plan simulates the cache without writing it).
    """

    def __init__(self, path: str | os.PathLike[str], *, persist: bool = True) -> None:
        self.path = os.fspath(path)
        self.persist = persist
        self._epochs: list[EpochEntry] = []
        if os.path.exists(self.path):
            for entry in read_leader_epoch_checkpoint(self.path).entries:
                if entry.epoch < 0 or entry.start_offset < 0:
                    raise CorruptCheckpointError(
                        f"Received invalid partition leader epoch entry {_fmt(entry)} in "
                        f"checkpoint file ({self.path})", path=self.path)
                self._assign(entry)

    @classmethod
    def for_partition_dir(cls, partition_dir: str | os.PathLike[str], *,
                          persist: bool = True) -> "LeaderEpochFileCache":
        return cls(os.path.join(os.fspath(partition_dir), LEADER_EPOCH_CHECKPOINT),
                   persist=persist)

    @classmethod
    def in_memory(cls, entries: Iterable[EpochEntry]) -> "LeaderEpochFileCache":
        """A cache of ``entries`` with no file behind it (a replica's chain, simulated)."""
        cache = cls("", persist=False)
        for entry in entries:
            cache._assign(entry)
        return cache

    # -- writes ----------------------------------------------------------------------------
    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset``; flushed at once if that changes
        anything."""
        if self._assign(EpochEntry(epoch, start_offset)):
            self._flush()

    def assign_all(self, entries: Iterable[EpochEntry]) -> None:
        """Assign several entries, flushing once (Kafka's ``assign(List)``)."""
        entries = list(entries)
        for entry in entries:
            self._assign(entry)
        if entries:
            self._flush()

    def assign_from_batch(self, batch: EpochBatch) -> bool:
        """The recovery rule (``LogSegment.recover``): a v2 batch whose leader epoch is >= 0 and
        newer than the latest cached one starts that epoch at its base offset. True if assigned."""
        epoch = batch.partition_leader_epoch
        if batch.magic < _MAGIC_V2 or epoch < 0:
            return False
        latest = self.latest_epoch()
        if latest is not None and epoch <= latest:
            return False
        self.assign(epoch, batch.base_offset)
        return True

    def truncate_from_end(self, end_offset: int) -> list[EpochEntry]:
        """Remove the entries with start offset >= ``end_offset``; returns them, oldest first."""
        removed = _truncate_from_end(self._epochs, end_offset)
        if removed:
            self._flush(if_dir_exists=True)
        return removed

    def truncate_from_start(self, start_offset: int) -> list[EpochEntry]:
        """Remove the entries starting at or before ``start_offset`` and restart the last of them
        at ``start_offset``; returns the removed entries, oldest first."""
        removed = _truncate_from_start(self._epochs, start_offset)
        if removed:
            self._flush(if_dir_exists=True)
        return removed

    def clear_and_flush(self) -> None:
        """Forget every epoch and write the empty checkpoint (e.g. on a pre-v2 append)."""
        self._epochs.clear()
        self._flush()

    def clear(self) -> None:
        """Forget every epoch in memory only."""
        self._epochs.clear()

    # -- reads -----------------------------------------------------------------------------
    def epoch_entries(self) -> list[EpochEntry]:
        return list(self._epochs)

    def is_empty(self) -> bool:
        return not self._epochs

    def latest_entry(self) -> EpochEntry | None:
        return self._epochs[-1] if self._epochs else None

    def latest_epoch(self) -> int | None:
        """The epoch currently being written to (the largest cached one)."""
        return self._epochs[-1].epoch if self._epochs else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's ``endOffsetFor`` (OffsetsForLeaderEpoch): ``(epoch, end offset)``.

        The epoch is the largest cached one <= ``requested_epoch``; its end offset is the start
        of the next cached epoch, or ``log_end_offset`` when the latest epoch is asked for. An
        undefined or unknown (too new) epoch gives ``(-1, -1)``; one older than every cached
        epoch gives ``(requested_epoch, start of the first cached epoch)``.
        """
        undefined = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        if requested_epoch == UNDEFINED_EPOCH:
            return undefined
        latest = self.latest_epoch()
        if latest is not None and latest == requested_epoch:
            return requested_epoch, log_end_offset
        higher = self._index_after_epoch(requested_epoch)
        if higher >= len(self._epochs):
            return undefined
        if higher == 0:  # older than every cached epoch: its data is gone from the log
            return requested_epoch, self._epochs[0].start_offset
        return self._epochs[higher - 1].epoch, self._epochs[higher].start_offset

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch that wrote ``offset``: the last entry starting at or before it."""
        i = bisect.bisect_right([e.start_offset for e in self._epochs], offset)
        return self._epochs[i - 1].epoch if i > 0 else None

    def epoch_entries_in_range(self, start_offset: int, end_offset: int) -> list[EpochEntry]:
        """The entries covering ``[start_offset, end_offset)``, the first one restarted at
        ``start_offset`` (a negative start means from the beginning)."""
        epochs = list(self._epochs)
        if start_offset >= 0:
            _truncate_from_start(epochs, start_offset)
        _truncate_from_end(epochs, end_offset)
        return epochs

    def __len__(self) -> int:
        return len(self._epochs)

    def __repr__(self) -> str:
        body = ", ".join(_fmt(e) for e in self._epochs)
        return f"LeaderEpochFileCache({self.path!r}, [{body}])"

    # -- internals -------------------------------------------------------------------------
    def _index_after_epoch(self, epoch: int) -> int:
        return bisect.bisect_right([e.epoch for e in self._epochs], epoch)

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {_fmt(entry)}")
        latest = self.latest_entry()
        if (latest is not None and entry.epoch == latest.epoch
                and entry.start_offset >= latest.start_offset):
            return False
        removed = []
        while self._epochs and (self._epochs[-1].epoch >= entry.epoch
                                or self._epochs[-1].start_offset >= entry.start_offset):
            removed.append(self._epochs.pop())
        if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
            # removing an entry at the same start offset means it wrote nothing: expected
            _log.warning("New epoch entry %s caused truncation of conflicting entries %s in %s",
                         _fmt(entry), [_fmt(e) for e in reversed(removed)], self.path)
        self._epochs.append(entry)
        return True

    def _flush(self, if_dir_exists: bool = False) -> None:
        if not self.persist:
            return
        if if_dir_exists and not os.path.isdir(os.path.dirname(os.path.abspath(self.path))):
            return  # the partition dir was renamed away (topic deletion); nothing to keep
        lines = (f"{e.epoch} {e.start_offset}" for e in self._epochs)
        write_checkpoint_atomically(self.path, lines)


def _truncate_from_end(epochs: list[EpochEntry], end_offset: int) -> list[EpochEntry]:
    if end_offset < 0 or not epochs or epochs[-1].start_offset < end_offset:
        return []
    removed = []
    while epochs and epochs[-1].start_offset >= end_offset:
        removed.append(epochs.pop())
    removed.reverse()
    return removed


def _truncate_from_start(epochs: list[EpochEntry], start_offset: int) -> list[EpochEntry]:
    n = 0
    while n < len(epochs) and epochs[n].start_offset <= start_offset:
        n += 1
    if n == 0:
        return []
    removed = epochs[:n]
    epochs[:n] = [EpochEntry(removed[-1].epoch, start_offset)]
    return removed


def _fmt(entry: EpochEntry) -> str:
    return f"EpochEntry(epoch={entry.epoch}, startOffset={entry.start_offset})"
