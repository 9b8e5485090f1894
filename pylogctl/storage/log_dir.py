"""One log dir (one ``log.dirs`` entry) as the offline commands see it: the parts of Kafka's
``LogManager`` that concern it.

A log dir holds ``meta.properties``, four offset checkpoints (``recovery-point-offset-
checkpoint``, ``replication-offset-checkpoint`` (high watermarks), ``log-start-offset-checkpoint``,
``cleaner-offset-checkpoint``), ``.kafka_cleanshutdown`` after a clean shutdown, ``.lock`` while a
broker runs, and one dir per partition. Kafka's rules kept here (``LogManager.loadLogs``,
``loadLog``, ``checkpointRecoveryOffsetsInDir``, ``checkpointLogStartOffsetsInDir``,
``truncateTo``):

- A partition is loaded with its checkpoint entries, 0 when absent; an unreadable recovery-point
  or log-start checkpoint counts as empty (Kafka warns and recovers everything). The clean
  shutdown marker applies to every partition of the dir.
- ``-delete`` dirs (deleted topics), ``-future`` dirs (intra-broker moves) and ``-stray`` dirs
  are not loaded as partitions here; they are reported in :attr:`LogDir.skipped`.
- ``__cluster_metadata`` is the KRaft log: Kafka's raft layer loads it with log start 0 and
  recovery point 0, never after a clean shutdown, and it has no entries in these checkpoints.
- After a load or a truncation, only the checkpoint entries that changed are rewritten; other
  partitions' entries stay as they are. The log start offset is checkpointed only above the
  first segment's base offset; an entry at or below it is removed, as Kafka's rewrite drops
  it. A truncation lowers a cleaner checkpoint above the active segment's base offset to it
  (``maybeTruncateCheckpoint``). Every write holds ``.lock``, and checkpoints are replaced
  atomically; a ``.tmp`` beside one (a write interrupted before its rename) is listed in
  :attr:`LogDir.temp_files` and removed by :meth:`LogDir.remove_temp_files`.
- Only :meth:`LogDir.mark_clean_shutdown` writes a new ``.kafka_cleanshutdown``: after a
  caller has recovered every partition of the log dir, it leaves what Kafka's clean shutdown
  leaves (files flushed, recovery points at the log ends, then the marker), so the next start
  skips recovery. An offline tool cannot vouch for partitions it did not load. While
  :meth:`LogDir.with_loaded_log` changes a partition, the marker is set aside, as a broker
  deletes it once it runs, and put back (the same bytes) once the log is closed and its
  checkpoints written: a kill in between leaves a dir the next start recovers, not one that
  claims a clean shutdown over half-changed files.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import os
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, TypeVar

from ..errors import CorruptRecordError, FileUnreadableError, UsageError
from .backup import Backup
from .checkpoint import (CLEANER_OFFSET_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT,
                         LOG_START_OFFSET_CHECKPOINT, OFFSET_CHECKPOINTS,
                         RECOVERY_POINT_CHECKPOINT, TEMP_SUFFIX, CheckpointUpdate,
                         TopicPartitionOffset, format_checkpoint, keeps_log_start,
                         read_offset_checkpoint, write_file_atomically)
from .loader.apply import PlanOutdatedError
from .loader.plan import LoadInputs, LoadPlan, LoadResult
from .loader.log_loader import apply_load, plan_load
from .files import delete_if_exists, fsync_dir, match_dir_owner, sync_file_system
from .lock import LogDirLock
from .log import Log, TruncationResult
from .log_config import LogConfig
from .log_dir_layout import CLEAN_SHUTDOWN_FILE, META_PROPERTIES, partition_dirs
from .metadata_files import read_properties
from .retention import delete_old_segments
from .retention_plan import RetentionOutcome, RetentionPlan, predict_retention
from .truncation_plan import TruncationPrediction, predict_truncation

logger = logging.getLogger(__name__)
R = TypeVar("R")

# .kafka_cleanshutdown as Kafka 3.5+ writes it (CleanShutdownFileHandler), with no broker epoch
CLEAN_SHUTDOWN_UNKNOWN_EPOCH = b'{"version":0,"brokerEpoch":-1}'
SYNCFS_FROM_FILES = 512  # --mark-clean flushes a log dir of this many files with one syncfs
METADATA_TOPIC = "__cluster_metadata"
_SKIP_REASONS = {"delete": "a deleted topic's partition, awaiting deletion (Kafka does not "
                           "recover it)",
                 "future": "a future replica (an intra-broker move in progress): loaded by Kafka "
                           "as a future log, not handled here",
                 "stray": "a stray replica no longer assigned to this broker"}


@dataclass(frozen=True)
class PartitionEntry:
    topic: str
    partition: int
    path: str

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition

    @property
    def is_metadata_log(self) -> bool:
        return self.topic == METADATA_TOPIC

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class SkippedDir:
    name: str
    reason: str


@dataclass(frozen=True)
class RecoveryResult:
    results: tuple[LoadResult, ...]
    checkpoint_updates: tuple[CheckpointUpdate, ...]
    backups: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class TruncationPlan:
    """A truncation predicted by reading only: the load it runs on, the truncation, and the
    checkpoint entries both change."""

    load: LoadPlan
    truncation: TruncationPrediction
    checkpoint_updates: tuple[CheckpointUpdate, ...]

    @property
    def is_empty(self) -> bool:
        return self.load.is_empty and not self.truncation.changed and \
            not self.checkpoint_updates


@dataclass(frozen=True)
class TruncationOutcome:
    load: LoadResult | None
    truncation: TruncationResult
    checkpoint_updates: tuple[CheckpointUpdate, ...]
    backups: tuple[str, ...]
    notes: tuple[str, ...]


class _Checkpoint:
    """One checkpoint file's entries in file order (None: absent; ``problem``: unreadable)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._entries: list[TopicPartitionOffset] | None = None
        self._offsets: dict[tuple[str, int], int] = {}
        self.problem: str | None = None
        if os.path.exists(path):
            try:
                self.entries = read_offset_checkpoint(path).entries
            except (CorruptRecordError, FileUnreadableError) as exc:
                self.problem = str(exc)

    @property
    def entries(self) -> list[TopicPartitionOffset] | None:
        return self._entries

    @entries.setter
    def entries(self, entries: list[TopicPartitionOffset] | None) -> None:
        self._entries = entries
        self._offsets = {}
        for e in reversed(entries or ()):  # the first entry of a key wins, as in a scan
            self._offsets[(e.topic, e.partition)] = e.offset

    def get(self, key: tuple[str, int]) -> int | None:
        return self._offsets.get(key)


class LogDir:
    """A log dir: its metadata, checkpoints and partitions, read at construction."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.path.abspath(os.fspath(path))
        if not os.path.isdir(self.path):
            raise FileUnreadableError(f"No such directory: {self.path}", path=self.path)
        meta = os.path.join(self.path, META_PROPERTIES)
        self.meta: dict[str, str] | None = read_properties(meta) if os.path.exists(meta) else None
        self._read_checkpoints()
        self.partitions: list[PartitionEntry] = []
        self.skipped: list[SkippedDir] = []
        parsed, others = partition_dirs(self.path)
        for name, dir_path in parsed:
            if name.marker is not None:
                self.skipped.append(SkippedDir(os.path.basename(dir_path),
                                               _SKIP_REASONS[name.marker]))
            else:
                self.partitions.append(PartitionEntry(name.topic, name.partition, dir_path))
        self.skipped += [SkippedDir(n, "not a partition dir name") for n in others]
        self._by_dir = {e.path: e for e in self.partitions}

    def _read_checkpoints(self) -> None:
        self.clean_shutdown = os.path.exists(os.path.join(self.path, CLEAN_SHUTDOWN_FILE))
        self.checkpoints = {name: _Checkpoint(os.path.join(self.path, name))
                            for name in OFFSET_CHECKPOINTS}
        self.notes = [f"{name}: {c.problem}" for name, c in self.checkpoints.items() if c.problem]
        # checkpoint writes interrupted before their rename (the checkpoint itself is intact)
        self.temp_files = [p for p in (c.path + TEMP_SUFFIX for c in self.checkpoints.values())
                           if os.path.isfile(p)]

    def refreshed(self) -> LogDir:
        """This log dir with its checkpoints and clean-shutdown marker read again (the
        partitions as they were listed): what an apply checks its plans against."""
        now = copy.copy(self)
        now._read_checkpoints()
        return now

    # -- lookups --------------------------------------------------------------------------------
    def partition(self, topic: str, partition: int) -> PartitionEntry:
        for entry in self.partitions:
            if entry.key == (topic, partition):
                return entry
        raise UsageError(f"No partition {topic}-{partition} in {self.path}", path=self.path)

    def entry_for_dir(self, partition_dir: str) -> PartitionEntry:
        entry = self._by_dir.get(os.path.abspath(partition_dir))
        if entry is not None:
            return entry
        raise UsageError(f"{partition_dir} is not a partition of {self.path}", path=partition_dir)

    def checkpointed(self, checkpoint: str, entry: PartitionEntry) -> int | None:
        return None if entry.is_metadata_log else self.checkpoints[checkpoint].get(entry.key)

    def load_inputs(self, entry: PartitionEntry) -> LoadInputs:
        """What Kafka's ``loadLog`` passes the loader for this partition."""
        if entry.is_metadata_log:
            return LoadInputs(0, 0, None, False)
        return LoadInputs(self.checkpointed(LOG_START_OFFSET_CHECKPOINT, entry) or 0,
                          self.checkpointed(RECOVERY_POINT_CHECKPOINT, entry) or 0,
                          self.checkpointed(HIGH_WATERMARK_CHECKPOINT, entry),
                          self.clean_shutdown)

    # -- recovery -------------------------------------------------------------------------------
    def plan(self, entry: PartitionEntry, config: LogConfig = LogConfig(), *,
             now_ms: int | None = None) -> LoadPlan:
        i = self.load_inputs(entry)
        return plan_load(entry.path, log_start_offset_checkpoint=i.log_start_offset_checkpoint,
                         recovery_point_checkpoint=i.recovery_point_checkpoint,
                         high_watermark_checkpoint=i.high_watermark_checkpoint,
                         had_clean_shutdown=i.had_clean_shutdown, config=config, now_ms=now_ms)

    def plan_all(self, config_for: Callable[[str], LogConfig] | None = None, *,
                 now_ms: int | None = None) -> list[LoadPlan]:
        """A plan per partition; ``config_for(topic)`` gives topic configs (default: Kafka's)."""
        return [self.plan(e, config_for(e.topic) if config_for else LogConfig(), now_ms=now_ms)
                for e in self.partitions]

    def checkpoint_updates(self, plan: LoadPlan) -> list[CheckpointUpdate]:
        """The checkpoint entries a load changes (Kafka checkpoints them after loading)."""
        entry = self.entry_for_dir(plan.partition_dir)
        return self._updates(entry, plan.recovery_point, plan.log_start_offset,
                             plan.segments[0], plan.high_watermark)

    def _updates(self, entry: PartitionEntry, recovery_point: int, log_start: int,
                 first_base: int, high_watermark: int,
                 active_base: int | None = None) -> list[CheckpointUpdate]:
        if entry.is_metadata_log:
            return []
        updates = []

        def update(checkpoint: str, new: int, add: bool) -> None:
            old = self.checkpointed(checkpoint, entry)
            if (old is not None and old != new) or (old is None and add):
                updates.append(CheckpointUpdate(checkpoint, entry.topic, entry.partition, old, new))

        update(RECOVERY_POINT_CHECKPOINT, recovery_point, recovery_point != 0)
        if keeps_log_start(log_start, first_base):
            update(LOG_START_OFFSET_CHECKPOINT, log_start, True)
        elif self.checkpointed(LOG_START_OFFSET_CHECKPOINT, entry) is not None:
            updates.append(CheckpointUpdate(LOG_START_OFFSET_CHECKPOINT, entry.topic,
                                            entry.partition,
                                            self.checkpointed(LOG_START_OFFSET_CHECKPOINT,
                                                              entry), None))
        update(HIGH_WATERMARK_CHECKPOINT, high_watermark, False)
        cleaner = self.checkpointed(CLEANER_OFFSET_CHECKPOINT, entry)
        if active_base is not None and cleaner is not None and cleaner > active_base:
            update(CLEANER_OFFSET_CHECKPOINT, active_base, False)
        return updates

    def apply(self, plans: Iterable[LoadPlan], *,
              backup_dir: str | os.PathLike[str] | None = None,
              lock: LogDirLock | None = None) -> RecoveryResult:
        """Apply load plans made from this object, then write the checkpoint entries they
        change, all under the log dir's lock (``lock`` when the caller holds it, so that one
        lock covers planning and several applies). Refuses if a checkpoint or the
        clean-shutdown marker changed since planning (:class:`PlanOutdatedError`)."""
        plans = list(plans)
        backup = None if backup_dir is None else Backup(backup_dir, self.path)
        results: list[LoadResult] = []
        updates: list[CheckpointUpdate] = []
        with _held(self.path, lock) as lock:
            now = self.refreshed()
            for plan in plans:
                now._check_current(plan)
            try:
                for plan in plans:
                    results.append(apply_load(plan, backup_dir=backup_dir, lock=lock))
                    updates += now.checkpoint_updates(plan)
            finally:
                notes = now.write_checkpoint_updates(updates, backup)
                self.checkpoints = now.checkpoints
        saved = [b for r in results for b in r.backups] + (backup.saved if backup else [])
        return RecoveryResult(tuple(results), tuple(updates), tuple(dict.fromkeys(saved)),
                              tuple(notes + [n for r in results for n in r.notes]))

    def apply_files(self, plan: LoadPlan, *, lock: LogDirLock,
                    backup_dir: str | os.PathLike[str] | None = None
                    ) -> tuple[LoadResult, list[CheckpointUpdate]]:
        """Apply one load plan made from this object while ``lock`` was held, and return the
        checkpoint entries it changes for the caller to write later, in one
        :meth:`write_checkpoint_updates` for many partitions: rewriting each checkpoint file
        once per partition is quadratic in a dir of thousands. Deferring them is safe: until
        they are written, the next load recovers from the old recovery point again and
        clamps the old high watermark again (``load_apply`` is idempotent), as a broker
        killed before its checkpoint flush does. Plans of different partitions may be applied
        from several threads at once: each touches only its own partition dir."""
        if not lock.locked:
            raise ValueError(f"{lock} is not held")
        self._check_current(plan)
        return apply_load(plan, backup_dir=backup_dir, lock=lock), self.checkpoint_updates(plan)

    def _check_current(self, plan: LoadPlan) -> None:
        """Refuse a plan whose inputs (checkpoints, clean-shutdown marker) are not these."""
        if self.load_inputs(self.entry_for_dir(plan.partition_dir)) != plan.inputs:
            raise PlanOutdatedError(f"The checkpoints of {self.path} changed since "
                                    f"{plan.partition_dir} was planned: plan again",
                                    path=self.path)

    # -- truncation -----------------------------------------------------------------------------
    def plan_truncation(self, entry: PartitionEntry, offset: int, *, start_at: bool = False,
                        log_start_offset: int | None = None, config: LogConfig = LogConfig(),
                        now_ms: int | None = None) -> TruncationPlan:
        """What :meth:`truncate` (or, with ``start_at``, :meth:`truncate_fully_and_start_at`)
        would do, without writing anything."""
        load = self.plan(entry, config, now_ms=now_ms)
        p = predict_truncation(load, offset, "start-at" if start_at else "to-offset",
                               log_start_offset=log_start_offset)
        updates = self._updates(entry, p.recovery_point, p.log_start_offset, p.first_segment,
                                p.high_watermark, p.active_segment)
        return TruncationPlan(load, p, tuple(updates))

    def truncate(self, entry: PartitionEntry, offset: int, config: LogConfig = LogConfig(), *,
                 backup_dir: str | os.PathLike[str] | None = None,
                 lock: LogDirLock | None = None) -> TruncationOutcome:
        """Load the partition (as a broker would) and truncate it so that it ends before
        ``offset``; a target below the first segment starts the log over there."""
        return TruncationOutcome(*self.with_loaded_log(entry, config, backup_dir, lock,
                                                 lambda log, _: log.truncate_to(offset)))

    def truncate_fully_and_start_at(self, entry: PartitionEntry, offset: int,
                                    config: LogConfig = LogConfig(), *,
                                    log_start_offset: int | None = None,
                                    backup_dir: str | os.PathLike[str] | None = None,
                                    lock: LogDirLock | None = None) -> TruncationOutcome:
        return TruncationOutcome(*self.with_loaded_log(
            entry, config, backup_dir, lock,
            lambda log, _: log.truncate_fully_and_start_at(offset, log_start_offset)))

    # -- retention ------------------------------------------------------------------------------
    def plan_retention(self, entry: PartitionEntry, config: LogConfig, now_ms: int
                       ) -> RetentionPlan:
        """What :meth:`delete_old_segments` would do at ``now_ms``, without writing anything
        (no checkpoint entry changes when nothing is deleted: then nothing is loaded)."""
        load = self.plan(entry, config)
        r = predict_retention(load, config, now_ms)
        # the net change: the deletion writes the new log start offset before the old first
        # segment goes, and drops the entry again once it is the first segment's base
        updates = (self._updates(entry, r.recovery_point, r.log_start_offset, r.segments[0],
                                 r.high_watermark) if r.changed else [])
        return RetentionPlan(load, r, tuple(updates))

    def delete_old_segments(self, entry: PartitionEntry, config: LogConfig, now_ms: int, *,
                            backup_dir: str | os.PathLike[str] | None = None,
                            lock: LogDirLock | None = None) -> RetentionOutcome:
        """Load the partition and run Kafka's retention on it; the checkpoint entries the new
        log start offset changes are written before any segment file goes."""
        return RetentionOutcome(*self.with_loaded_log(
            entry, config, backup_dir, lock,
            lambda log, checkpoint: delete_old_segments(log, now_ms, checkpoint)))

    def with_loaded_log(self, entry: PartitionEntry, config: LogConfig,
                  backup_dir: str | os.PathLike[str] | None, lock: LogDirLock | None,
                  action: Callable[[Log, Callable[[], None]], R]
                  ) -> tuple[LoadResult | None, R, tuple[CheckpointUpdate, ...],
                             tuple[str, ...], tuple[str, ...]]:
        """Load the partition under the lock, run ``action(log, checkpoint)`` and write the
        checkpoint entries the log's offsets changed; ``checkpoint()`` writes them at once."""
        backup = None if backup_dir is None else Backup(backup_dir, self.path)
        early: list[CheckpointUpdate] = []
        updates: list[CheckpointUpdate] = []
        notes: list[str] = []
        with _held(self.path, lock) as lock:
            now = self.refreshed()
            i = now.load_inputs(now.entry_for_dir(entry.path))
            log = Log.load(entry.path, config,
                           log_start_offset_checkpoint=i.log_start_offset_checkpoint,
                           recovery_point_checkpoint=i.recovery_point_checkpoint,
                           high_watermark_checkpoint=i.high_watermark_checkpoint,
                           had_clean_shutdown=i.had_clean_shutdown, lock=lock,
                           backup_dir=backup_dir)
            # set aside once the log loaded: a partition that fails to load changes nothing
            marker = _set_aside_clean_shutdown(self.path)

            def changed(active: int | None = None) -> list[CheckpointUpdate]:
                first = log.segments.first
                return now._updates(entry, log.recovery_point, log.log_start_offset,
                                    first.base_offset if first else 0, log.high_watermark,
                                    active)

            def checkpoint() -> None:
                written = changed()
                notes.extend(now.write_checkpoint_updates(written, backup))
                early.extend(written)

            try:
                result = action(log, checkpoint)
                updates = changed(log.active_segment.base_offset)
            finally:
                log.close()
                notes.extend(now.write_checkpoint_updates(updates, backup))
                self.checkpoints = now.checkpoints
            if marker is not None:
                write_file_atomically(os.path.join(self.path, CLEAN_SHUTDOWN_FILE), marker)
        saved = list(log.load_result.backups if log.load_result else [])
        saved += (log.backup.saved if log.backup else []) + (backup.saved if backup else [])
        return (log.load_result, result, _merged(early + updates), tuple(dict.fromkeys(saved)),
                tuple(dict.fromkeys(notes)))

    def remove_temp_files(self, lock: LogDirLock) -> list[str]:
        """Delete the stale checkpoint ``.tmp`` files (``lock`` held: no writer is behind
        them); returns their paths."""
        if not lock.locked:
            raise ValueError(f"{lock} is not held")
        for path in self.temp_files:
            delete_if_exists(path)
        removed, self.temp_files = self.temp_files, []
        if removed:
            fsync_dir(self.path)
        return removed

    # -- a clean shutdown, after a full recovery -------------------------------------------------
    def mark_clean_shutdown(self, log_ends: dict[tuple[str, int], int], *,
                            lock: LogDirLock | None = None,
                            backup: Backup | None = None) -> list[CheckpointUpdate]:
        """What Kafka's clean shutdown leaves, for a log dir whose every partition was just
        recovered (``log_ends``: each partition's log end offset): every partition file
        flushed, recovery points at the log ends, then ``.kafka_cleanshutdown``, last, so a
        crash before it leaves a dir the next start recovers as usual. The marker holds broker
        epoch -1 (``CleanShutdownFileHandler``: none known), so the controller treats the
        broker as shut down uncleanly for eligible-leader-replica elections (KIP-966), as it
        should after a crash, while log recovery is skipped."""
        missing = [str(e) for e in self.partitions if e.key not in log_ends]
        if missing:
            raise UsageError(f"{self.path}: not every partition was recovered ({', '.join(missing[:3])}"
                             f"{', ...' if len(missing) > 3 else ''}): not marked clean")
        with _held(self.path, lock):
            return self._mark_clean_shutdown(log_ends, backup)

    def _mark_clean_shutdown(self, log_ends: dict[tuple[str, int], int],
                             backup: Backup | None) -> list[CheckpointUpdate]:
        files = [os.path.join(e.path, n) for e in self.partitions for n in os.listdir(e.path)]
        # one fsync per file costs a journal commit each: past a few hundred files one syncfs
        # is cheaper, though it also flushes whatever else is dirty on the file system
        if len(files) < SYNCFS_FROM_FILES or not sync_file_system(self.path):
            for path in files:
                if os.path.isfile(path):
                    fd = os.open(path, os.O_RDONLY)
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
            for entry in self.partitions:
                fsync_dir(entry.path)
        updates = [CheckpointUpdate(RECOVERY_POINT_CHECKPOINT, e.topic, e.partition,
                                    self.checkpointed(RECOVERY_POINT_CHECKPOINT, e),
                                    log_ends[e.key])
                   for e in self.partitions if not e.is_metadata_log
                   and self.checkpointed(RECOVERY_POINT_CHECKPOINT, e) != log_ends[e.key]]
        self.write_checkpoint_updates(updates, backup)
        write_file_atomically(os.path.join(self.path, CLEAN_SHUTDOWN_FILE),
                              CLEAN_SHUTDOWN_UNKNOWN_EPOCH)
        match_dir_owner(self.path)
        self.clean_shutdown = True
        return updates

    # -- writing checkpoints --------------------------------------------------------------------
    def write_checkpoint_updates(self, updates: list[CheckpointUpdate],
                                 backup: Backup | None) -> list[str]:
        """Rewrite the checkpoint files these entries belong to, leaving every other entry as
        it is (the caller holds the lock); returns notes on files left alone (unreadable)."""
        notes = []
        for name in OFFSET_CHECKPOINTS:
            mine = {(u.topic, u.partition): u.new for u in updates if u.checkpoint == name}
            if not mine:
                continue
            checkpoint = self.checkpoints[name]
            if checkpoint.problem:
                notes.append(f"{name} is unreadable ({checkpoint.problem}): not rewritten")
                continue
            entries = list(checkpoint.entries or [])
            keys = {(e.topic, e.partition) for e in entries}
            entries = [TopicPartitionOffset(e.topic, e.partition, mine.get((e.topic, e.partition),
                                                                          e.offset))
                       for e in entries]
            entries = [e for e in entries if e.offset is not None]  # removed entries
            entries += [TopicPartitionOffset(t, p, o) for (t, p), o in mine.items()
                        if (t, p) not in keys and o is not None]
            if backup is not None:
                backup.save(checkpoint.path)
            like = checkpoint.path if os.path.exists(checkpoint.path) else None
            write_file_atomically(checkpoint.path, format_checkpoint(
                f"{e.topic} {e.partition} {e.offset}" for e in entries).encode(), like=like)
            match_dir_owner(self.path)
            checkpoint.entries = entries
            logger.info("Updated %d entries of %s", len(mine), checkpoint.path)
        return notes

    def __repr__(self) -> str:
        return (f"LogDir({self.path!r}, partitions={len(self.partitions)}, "
                f"clean_shutdown={self.clean_shutdown})")


def _set_aside_clean_shutdown(log_dir: str) -> bytes | None:
    """Delete ``.kafka_cleanshutdown`` (durably) and return its bytes; None if absent."""
    path = os.path.join(log_dir, CLEAN_SHUTDOWN_FILE)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    os.remove(path)
    fsync_dir(log_dir)
    return data


def _merged(updates: list[CheckpointUpdate]) -> tuple[CheckpointUpdate, ...]:
    """One update per entry: the first old value, the last new one."""
    merged: dict[tuple[str, str, int], CheckpointUpdate] = {}
    for u in updates:
        key = (u.checkpoint, u.topic, u.partition)
        first = merged.get(key, u)
        merged[key] = dataclasses.replace(u, old=first.old)
    return tuple(u for u in merged.values() if u.old != u.new)


@contextlib.contextmanager
def _held(log_dir: str, lock: LogDirLock | None) -> Iterator[LogDirLock]:
    """The caller's lock (checked to be held), or the log dir's, taken for the block."""
    if lock is not None:
        if not lock.locked:
            raise ValueError(f"{lock} is not held")
        yield lock
        return
    with LogDirLock(log_dir) as taken:
        yield taken
