"""``pylogctl recover``: what a broker does to its log dirs at start-up, offline.

Each partition of the given paths (partition dirs, log dirs, dirs of log dirs) is planned by
:meth:`~pylogctl.storage.log_manager.LogDir.plan` (Kafka's ``LogLoader.load`` as data) and, with
``execute``, applied with :meth:`~pylogctl.storage.log_manager.LogDir.apply`, which also writes
the checkpoint entries that change. The rules kept here:

- A log dir whose ``.lock`` a running broker holds is refused in every mode (its files are
  in flux, and a plan of them would mislead): :class:`~pylogctl.errors.LogDirLockedError`.
  Executing takes the lock for the whole log dir, so planning and applying see the same files.
- Partitions are planned and applied one at a time, so a run over many partitions holds one
  partition's plan in memory and a kill leaves every partition either as it was or
  recovered (each apply is crash-safe on its own; see :mod:`pylogctl.storage.load_apply`).
- A partition that cannot be planned (an unreadable file, an unsupported layout) is reported
  and skipped; the others are still recovered.
- Running it twice changes nothing the second time: the second plan is empty.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..errors import ExitCode, LogDirLockedError, PylogctlError, UsageError
from ..storage.load_plan import LoadPlan, step_to_dict
from ..storage.lock import LogDirLock, ensure_unlocked
from ..storage.log_config import LogConfig
from ..storage.log_manager import CheckpointUpdate, LogDir, PartitionEntry, RecoveryResult
from .dump_files import PathKind, classify_path
from ..storage.log_dir import child_log_dirs

Progress = Callable[[int], None]


@dataclass(frozen=True)
class RecoverOptions:
    execute: bool = False
    backup_dir: str | None = None
    config: LogConfig = LogConfig()
    now_ms: int | None = None


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
            "checkpointUpdates": [{"checkpoint": u.checkpoint, "topic": u.topic,
                                   "partition": u.partition, "old": u.old, "new": u.new}
                                  for u in self.checkpoint_updates],
            "changes": self.changes,
            "executed": self.executed,
            "backups": list(self.result.backups) if self.result else [],
            "notes": notes,
            "error": error,
        }


@dataclass(frozen=True)
class _Target:
    log_dir: str
    partition_dirs: tuple[str, ...] | None  # None: every partition of the log dir


def resolve_targets(paths: list[str]) -> list[_Target]:
    """Log dirs and the partitions wanted in each, in argument order, merged."""
    wanted: dict[str, set[str] | None] = {}
    for path in paths:
        kind = classify_path(path)
        if kind is PathKind.FILE:
            raise UsageError(f"{path} is not a directory: recover takes partition dirs, log dirs "
                             f"or a dir holding log dirs", path=path)
        if kind is PathKind.PARTITION_DIR:
            part = os.path.abspath(path)
            log_dir = os.path.dirname(part)
            if log_dir not in wanted:
                wanted[log_dir] = set()
            chosen = wanted[log_dir]
            if chosen is not None:
                chosen.add(part)
        else:
            for log_dir in ([path] if kind is PathKind.LOG_DIR else child_log_dirs(path)):
                wanted[os.path.abspath(log_dir)] = None
    return [_Target(d, None if parts is None else tuple(sorted(parts)))
            for d, parts in wanted.items()]


@dataclass
class Recovery:
    """A recover run over ``paths``; iterate :meth:`partitions` to plan (and apply)."""

    paths: list[str]
    options: RecoverOptions = RecoverOptions()
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.targets = resolve_targets(self.paths)
        for target in self.targets:  # refuse before any output, not halfway through
            ensure_unlocked(target.log_dir)

    def partitions(self, progress: Progress | None = None) -> Iterator[PartitionRecovery]:
        for target in self.targets:
            yield from self._log_dir(target, progress)

    def count(self) -> int:
        """How many partitions the run covers (for a progress bar)."""
        return sum(len(self._entries(LogDir(t.log_dir), t)) for t in self.targets)

    def _entries(self, log_dir: LogDir, target: _Target) -> list[PartitionEntry]:
        if target.partition_dirs is None:
            return list(log_dir.partitions)
        return [log_dir.entry_for_dir(p) for p in target.partition_dirs]

    def _log_dir(self, target: _Target, progress: Progress | None) -> Iterator[PartitionRecovery]:
        lock = LogDirLock(target.log_dir).acquire() if self.options.execute else None
        try:
            log_dir = LogDir(target.log_dir)
            self.notes += [f"{log_dir.path}: {n}" for n in log_dir.notes]
            if target.partition_dirs is None:
                self.notes += [f"{os.path.join(log_dir.path, s.name)}: skipped: {s.reason}"
                               for s in log_dir.skipped]
            for entry in self._entries(log_dir, target):
                yield self._partition(log_dir, entry, lock)
                if progress is not None:
                    progress(1)
            if lock is not None:
                self.notes += [f"removed {p}: a checkpoint write interrupted before its rename"
                               for p in log_dir.remove_temp_files(lock)]
            else:
                self.notes += [f"{p}: a checkpoint write interrupted before its rename (removed "
                               f"by --execute)" for p in log_dir.temp_files]
        finally:
            if lock is not None:
                lock.release()

    def _partition(self, log_dir: LogDir, entry: PartitionEntry,
                   lock: LogDirLock | None) -> PartitionRecovery:
        section = PartitionRecovery(entry, log_dir.path)
        o = self.options
        try:
            section.plan = log_dir.plan(entry, o.config, now_ms=o.now_ms)
            section.checkpoint_updates = tuple(log_dir.checkpoint_updates(section.plan))
            if o.execute and section.changes:
                section.result = log_dir.apply([section.plan], backup_dir=o.backup_dir,
                                               lock=lock)
        except LogDirLockedError:
            raise
        except PylogctlError as exc:
            section.error = exc
        return section


def exit_code(sections: list[PartitionRecovery]) -> int:
    """The worst error among the partitions (0 if none)."""
    return max((int(s.error.exit_code) for s in sections if s.error is not None),
               default=int(ExitCode.OK))
