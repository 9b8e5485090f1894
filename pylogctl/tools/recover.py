"""``pylogctl recover``: what a broker does to its log dirs at start-up, offline.

Each partition of the given paths (partition dirs, log dirs, dirs of log dirs) is planned by
:meth:`~pylogctl.storage.log_dir.LogDir.plan` (Kafka's ``LogLoader.load`` as data) and, with
``execute``, applied with :meth:`~pylogctl.storage.log_dir.LogDir.apply`, which also writes
the checkpoint entries that change. The rules kept here:

- A log dir whose ``.lock`` a running broker holds is refused in every mode (its files are
  in flux, and a plan of them would mislead): :class:`~pylogctl.errors.LogDirLockedError`.
  Executing takes the lock for the whole log dir, so planning and applying see the same files.
- Each partition is planned and applied on its own, ``threads`` of them at once (Kafka's
  ``num.recovery.threads.per.data.dir``; the CLI's default is the CPU count), so a run over
  many partitions holds a few plans in memory and a kill leaves every partition either as it
  was or recovered (each apply is crash-safe on its own; see
  :mod:`pylogctl.storage.loader.apply`). The checkpoint entries the partitions change are
  written once per log dir, after its last partition (:meth:`~pylogctl.storage.log_dir.
  LogDir.apply_files` says why a kill before that is safe).
- A partition that cannot be planned (an unreadable file, an unsupported layout) is reported
  and skipped; the others are still recovered.
- Running it twice changes nothing the second time: the second plan is empty.
- Each partition is recovered with its topic's configuration (``index.interval.bytes`` spaces
  the rebuilt index entries, ``segment.index.bytes`` sizes them), resolved as ``pylogctl
  config`` shows it (:class:`~.config.TopicConfigs`: the KRaft metadata log, ``--config``,
  ``--config-file``), as a broker loads each log with its own ``LogConfig``.
- Moves between log dirs a kill interrupted (:mod:`pylogctl.storage.leftover_moves`: a
  ``-future`` copy, a partition live in two dirs) are settled first, across the whole log
  dirs given that belong to one broker; a log dir given alone cannot be compared with the
  other end of its move, so give every log dir of the broker.
- With ``mark_clean``, a log dir all of whose partitions were recovered without error is left
  as Kafka's clean shutdown leaves it (:meth:`~pylogctl.storage.log_dir.LogDir.
  mark_clean_shutdown`), so the broker then starts without recovering anything; a log dir
  given only in part, or with a partition that failed, is not marked, and a note says why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..errors import ExitCode, LogDirLockedError, PylogctlError
from ..storage.backup import Backup
from ..storage.leftover_moves import leftover_moves
from ..storage.loader.plan import LoadPlan, plain_data, step_to_dict
from ..storage.loader.raft import is_metadata_log_dir
from ..storage.lock import LogDirLock
from ..storage.checkpoint import CheckpointUpdate
from ..storage.log_dir import LogDir, PartitionEntry, RecoveryResult
from ..storage.replica_move import execute as execute_move
from .config import ConfigOptions, TopicConfigs
from .log_dir_run import LogDirRun, Target


@dataclass(frozen=True)
class RecoverOptions:
    execute: bool = False
    backup_dir: str | None = None
    config: ConfigOptions = ConfigOptions()
    now_ms: int | None = None
    mark_clean: bool = False
    threads: int = 1


@dataclass
class PartitionRecovery:
    """A formatter section: one partition, its plan's steps as items, the outcome as footer."""

    entry: PartitionEntry
    log_dir: str
    plan: LoadPlan | None = None
    checkpoint_updates: tuple[CheckpointUpdate, ...] = ()
    result: RecoveryResult | None = None
    error: PylogctlError | None = None
    kind: str = "recover"
    items_key: str = "steps"

    @property
    def changes(self) -> bool:
        """Whether the plan changes anything on disk (files or checkpoint entries)."""
        return self.plan is not None and (not self.plan.is_empty or bool(self.checkpoint_updates))

    @property
    def nothing_to_do(self) -> bool:
        """No change, no error, nothing noted: what a long plan leaves out."""
        return (self.error is None and not self.changes and not (self.plan and self.plan.notes)
                and not (self.result and self.result.notes))

    @property
    def needs_recovery(self) -> bool:
        """What ``--check`` asks: changes beyond the metadata log's routine ones (Kafka's raft
        layer loads it as after an unclean shutdown at every start, so a healthy one gets its
        indexes rebuilt and stray snapshots deleted each time)."""
        return self.changes and not (
            self.plan is not None and not self.checkpoint_updates
            and is_metadata_log_dir(self.entry.path) and self.plan.is_routine)

    @property
    def executed(self) -> bool:
        return self.result is not None

    @property
    def header(self) -> dict[str, Any]:
        return {"partition": str(self.entry), "partitionDir": self.entry.path,
                "logDir": self.log_dir}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        return (step_to_dict(s) for s in (self.plan.steps if self.plan else ()))

    @property
    def footer(self) -> dict[str, Any]:
        p = self.plan
        error = None if self.error is None else {"message": str(self.error),
                                                 "path": self.error.path,
                                                 "position": self.error.position}
        notes = list(p.notes) if p else []
        if self.result is not None:
            notes += [n for n in self.result.notes if n not in notes]
        return {
            "logStartOffset": p.log_start_offset if p else None,
            "logEndOffset": p.log_end_offset if p else None,
            "recoveryPoint": p.recovery_point if p else None,
            "highWatermark": p.high_watermark if p else None,
            "segments": len(p.segments) if p else None,
            "truncatedBytes": p.truncated_bytes if p else None,
            "deletedSegments": list(p.deleted_segments) if p else [],
            "verified": [s.describe() for s in p.verified] if p else [],
            "checkpointUpdates": plain_data(self.checkpoint_updates),
            "changes": self.changes,
            "executed": self.executed,
            "backups": list(self.result.backups) if self.result else [],
            "notes": notes,
            "error": error,
        }


@dataclass
class Recovery(LogDirRun[PartitionRecovery]):
    """A recover run over ``paths``; iterate :meth:`partitions` to plan (and apply)."""

    paths: list[str]
    options: RecoverOptions = RecoverOptions()
    notes: list[str] = field(default_factory=list)
    command = "recover"

    def __post_init__(self) -> None:
        self.resolve(self.paths, self.options.execute)
        self.configs = TopicConfigs([t.log_dir for t in self.targets], self.options.config)
        self.threads = max(1, self.options.threads)
        self.backups: list[str] = []  # of checkpoint files (partitions' are in their results)
        self._log_ends: dict[tuple[str, int], int] = {}
        self._updates: list[CheckpointUpdate] = []
        self._failed = 0
        self._whole = False
        self.moves_pending = 0  # interrupted moves a plan found (--check counts them)

    def partitions(self, progress: Any = None) -> Iterator[PartitionRecovery]:
        self._settle_moves()
        yield from super().partitions(progress)

    def _settle_moves(self) -> None:
        """Finish or cancel the moves between the whole log dirs given that a kill cut short,
        holding every one of their locks (:mod:`~pylogctl.storage.leftover_moves`)."""
        whole = [t.log_dir for t in self.targets if t.partition_dirs is None]
        locks = [LogDirLock(d).acquire() for d in whole] if self.options.execute else []
        try:
            dirs = {d: LogDir(d) for d in whole}
            for found in leftover_moves(list(dirs.values())):
                if found.plan is None:
                    self.notes.append(found.note)
                elif not self.options.execute:
                    self.moves_pending += 1
                    self.notes.append(f"{found.note} with --execute")
                else:
                    p = found.plan
                    source, target = LogDir(p.source), LogDir(p.target)
                    done = execute_move(p, source, target, backup_dir=self.options.backup_dir)
                    self.notes += [found.note] + done.notes
                    self.backups += done.backups
        finally:
            for lock in locks:
                lock.release()

    def open_log_dir(self, log_dir: LogDir, target: Target) -> None:
        super().open_log_dir(log_dir, target)
        self._log_ends, self._updates, self._failed = {}, [], 0
        self._whole = target.partition_dirs is None
        if target.partition_dirs is None:
            self.notes += [f"{os.path.join(log_dir.path, s.name)}: skipped: {s.reason}"
                           for s in log_dir.skipped]

    def close_log_dir(self, log_dir: LogDir, lock: LogDirLock | None) -> None:
        if lock is not None and self._updates:
            backup = (None if self.options.backup_dir is None
                      else Backup(self.options.backup_dir, log_dir.path))
            self.notes += [f"{log_dir.path}: {n}"
                           for n in log_dir.write_checkpoint_updates(self._updates, backup)]
            self.backups += backup.saved if backup else []
        if self.options.mark_clean:
            self._mark_clean(log_dir, lock)
        if lock is not None:
            self.notes += [f"removed {p}: a checkpoint write interrupted before its rename"
                           for p in log_dir.remove_temp_files(lock)]
        else:
            self.notes += [f"{p}: a checkpoint write interrupted before its rename (removed "
                           f"by --execute)" for p in log_dir.temp_files]

    def _mark_clean(self, log_dir: LogDir, lock: LogDirLock | None) -> None:
        why = ("only some of its partitions were given" if not self._whole else
               f"{self._failed} partition(s) could not be recovered" if self._failed else None)
        if why is not None:
            self.notes.append(f"{log_dir.path}: not marked clean: {why}")
        elif lock is None:
            self.notes.append(f"{log_dir.path}: would be marked clean (recovery points at the "
                              f"log ends, .kafka_cleanshutdown written) with --execute")
        else:
            updates = log_dir.mark_clean_shutdown(self._log_ends, lock=lock)
            self.notes.append(f"{log_dir.path}: marked clean: files flushed, {len(updates)} "
                              f"recovery point(s) moved to the log end, .kafka_cleanshutdown "
                              f"written")

    def partition(self, log_dir: LogDir, entry: PartitionEntry,
                  lock: LogDirLock | None) -> PartitionRecovery:
        section = PartitionRecovery(entry, log_dir.path)
        o = self.options
        try:
            config = self.configs.sources(log_dir).topic(entry.topic).log_config
            section.plan = log_dir.plan(entry, config, now_ms=o.now_ms)
            section.checkpoint_updates = tuple(log_dir.checkpoint_updates(section.plan))
            if o.execute and section.changes:
                assert lock is not None
                loaded, updates = log_dir.apply_files(section.plan, lock=lock,
                                                      backup_dir=o.backup_dir)
                section.result = RecoveryResult((loaded,), tuple(updates), loaded.backups,
                                                loaded.notes)
        except LogDirLockedError:
            raise
        except PylogctlError as exc:
            section.error = exc
        return section

    def done(self, log_dir: LogDir, section: PartitionRecovery) -> None:
        if section.error is not None or section.plan is None:
            self._failed += 1
            return
        self._log_ends[section.entry.key] = section.plan.log_end_offset
        if section.result is not None:
            self._updates += section.result.checkpoint_updates


def exit_code(sections: list[PartitionRecovery]) -> int:
    """The worst error among the partitions (0 if none)."""
    return max((int(s.error.exit_code) for s in sections if s.error is not None),
               default=int(ExitCode.OK))
