"""DeleteRecords on a stopped cluster's files: each partition's log start offset raised on every
replica given that is in step with the one read (:func:`~.replica_append.replicas_in_step`),
as the leader's request and its followers' replication of the log start offset leave them.

The plan reads only (the chosen replica's load plan, :func:`~pylogctl.storage.delete_records.
predict_delete_records`) and checks every partition before anything is written: an unknown
partition, an offset Kafka refuses (above the high watermark, negative, a compact-only topic)
stops the whole run. The execution locks the log dirs of every replica first (a running
broker's refuses the run), then loads each replica and applies
:func:`~pylogctl.storage.delete_records.delete_records` with its checkpoints
(:meth:`~pylogctl.storage.log_dir.LogDir.with_loaded_log`).
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Callable

from ..errors import UsageError
from ..storage.delete_records import RecordsDeletion, delete_records, predict_delete_records
from ..storage.lock import LogDirLock
from ..storage.log_config import LogConfig
from ..storage.checkpoint import CheckpointUpdate
from ..storage.log_dir import LogDir
from .replica_append import replicas_in_step
from .replicas import LogDirs, Replica

ConfigFor = Callable[[LogDir, str], LogConfig]


class UnknownPartitionError(UsageError):
    """A partition none of the log dirs holds (Kafka: UNKNOWN_TOPIC_OR_PARTITION)."""


@dataclass(frozen=True)
class ReplicaDeletion:
    """One replica changed: where, what happened, the checkpoint entries and backups."""

    log_dir: str
    broker_id: int | None
    partition_dir: str
    deletion: RecordsDeletion
    checkpoint_updates: tuple[CheckpointUpdate, ...]
    backups: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass
class PartitionDeletion:
    """One partition's request, its plan on the replica read, and the replicas it goes to."""

    topic: str
    partition: int
    offset: int
    plan: RecordsDeletion
    config: LogConfig
    replicas: list[Replica]
    skipped: list[str]
    written: list[ReplicaDeletion] = field(default_factory=list)


def _log_dir(log_dirs: LogDirs, replica: Replica) -> LogDir:
    return next(d for d in log_dirs.log_dirs if d.path == replica.log_dir)


def plan_deletions(log_dirs: LogDirs, requests: list[tuple[str, int, int]],
                   config_for: ConfigFor) -> list[PartitionDeletion]:
    """Each ``(topic, partition, offset)`` planned on the replica read; raises at the first
    request Kafka would refuse."""
    out = []
    for topic, partition, offset in requests:
        replicas, skipped = replicas_in_step(log_dirs, topic, partition)
        if not replicas:
            raise UnknownPartitionError(f"{topic}-{partition}: no such partition in the log dirs "
                                        f"given (UNKNOWN_TOPIC_OR_PARTITION)")
        log_dir = _log_dir(log_dirs, replicas[0])
        config = config_for(log_dir, topic)
        plan = predict_delete_records(log_dir.plan(replicas[0].entry, config), topic, partition,
                                      offset, config)
        out.append(PartitionDeletion(topic, partition, offset, plan, config, replicas, skipped))
    return out


def locked(log_dirs: LogDirs, deletions: list[PartitionDeletion], stack: ExitStack
           ) -> dict[str, LogDirLock]:
    """The locks of every log dir the deletions touch, taken in ``stack``."""
    paths = dict.fromkeys(r.log_dir for d in deletions for r in d.replicas)
    return {p: stack.enter_context(LogDirLock(p)) for p in paths}


def execute(log_dirs: LogDirs, deletions: list[PartitionDeletion],
            backup_dir: str | os.PathLike[str] | None = None) -> list[PartitionDeletion]:
    """Apply the planned deletions to every in-step replica, under all the locks."""
    with ExitStack() as stack:
        locks = locked(log_dirs, deletions, stack)
        for d in deletions:
            for replica in d.replicas:
                d.written.append(_delete(replica, locks[replica.log_dir], d, backup_dir))
    return deletions


def _delete(replica: Replica, lock: LogDirLock, d: PartitionDeletion,
            backup_dir: str | os.PathLike[str] | None) -> ReplicaDeletion:
    log_dir = LogDir(replica.log_dir)
    entry = log_dir.entry_for_dir(replica.path)
    _, deletion, updates, backups, notes = log_dir.with_loaded_log(
        entry, d.config, backup_dir, lock,
        lambda log, checkpoint: delete_records(log, d.topic, d.partition, d.offset, checkpoint))
    return ReplicaDeletion(replica.log_dir, replica.broker_id, replica.path, deletion, updates,
                           backups, notes)
