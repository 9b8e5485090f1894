"""Appending batches to every in-step replica of a partition of a stopped cluster.

What a leader's append and its followers' replication leave on disk, done offline: the
batches (offsets assigned by the caller, stamped with the partition's leader epoch) go at the
log end offset through the engine's follower append (segment roll, indexes, leader-epoch
cache, producer state with the ``.txnindex`` entries of the transactions a marker ends), are
fsynced, the high watermark moves to the new end so they count as committed, and the
checkpoints and the producer snapshot at the new end are written
(:meth:`LogDir.with_loaded_log`).

A partition has a replica in each broker that hosts it. The batches must reach every replica
given that is in step with the one read (same leader epoch and log end offset), with the same
bytes at the same offsets: otherwise, when the cluster starts, a replica without them could
lead, and a follower truncates what its leader lacks. Replicas not in step are left alone and
reported (they catch up from the leader by replication). The log dirs of all those replicas
are locked before anything is written; a locked one (a running broker) refuses the whole
append.

Crash safety is the engine's: a batch cut short by a kill is invalid bytes at the log end,
which recovery removes; a kill between replicas leaves them disagreeing only in whether the
last batch is there, which the leader's log settles.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Sequence

from ..storage.loader.apply import PlanOutdatedError
from ..storage.lock import LogDirLock
from ..storage.log_config import LogConfig
from ..storage.checkpoint import CheckpointUpdate
from ..storage.log_dir import LogDir
from .end_offsets import read_log_end
from .replicas import LogDirs, Replica


@dataclass(frozen=True)
class ReplicaWrite:
    """One replica written: where, and the checkpoint entries and backups that came with it."""

    log_dir: str
    broker_id: int | None
    partition_dir: str
    checkpoint_updates: tuple[CheckpointUpdate, ...]
    backups: tuple[str, ...]
    notes: tuple[str, ...]
    last_stable_offset: int | None = None  # after the append, as the reloaded log has it


@dataclass
class AppendOutcome:
    """The records appended to one partition: offsets ``[first_offset, next_offset)``."""

    partition: int
    batches: int
    records: int
    first_offset: int
    next_offset: int
    written: list[ReplicaWrite] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    topic: str = "__consumer_offsets"


def replicas_in_step(log_dirs: LogDirs, topic: str, partition: int
                     ) -> tuple[list[Replica], list[str]]:
    """The replicas of ``topic-partition`` to write (the one read first), and why the others
    are left alone."""
    choice = log_dirs.choose(topic, partition)
    if choice is None:
        return [], []
    chosen = choice.chosen
    in_step, skipped = [chosen], []
    for other in choice.others:
        if (other.leader_epoch, other.log_end.offset) == (chosen.leader_epoch,
                                                          chosen.log_end.offset):
            in_step.append(other)
        else:
            skipped.append(f"{other.describe()}: not in step with {chosen.describe()}, left "
                           f"alone (it catches up from the leader once the cluster runs)")
    return in_step, skipped


def append_to_replicas(log_dirs: LogDirs, topic: str, partition: int, data: Sequence[bytes],
                       outcome: AppendOutcome, *, config: LogConfig,
                       backup_dir: str | os.PathLike[str] | None = None,
                       planned: str = "planned") -> AppendOutcome:
    """Append the built batches ``data`` (offsets ``outcome.first_offset`` on) to every replica
    in step, filling ``outcome``. A replica whose log ends elsewhere than
    ``outcome.first_offset`` (the end when ``planned``) raises :class:`PlanOutdatedError`
    before anything is appended to any replica."""
    replicas, outcome.skipped = replicas_in_step(log_dirs, topic, partition)
    if not replicas:
        raise PlanOutdatedError(f"{topic}-{partition} is in none of the log dirs")
    expected_end = outcome.first_offset
    with ExitStack() as stack:
        locks = {r.log_dir: stack.enter_context(LogDirLock(r.log_dir)) for r in replicas}
        for replica in replicas:  # under the locks, before any write (a load writes too)
            end = read_log_end(replica.path).offset
            if end != expected_end:
                raise PlanOutdatedError(f"{replica.path} ends at offset {end}, not "
                                        f"{expected_end} as when {planned}: run again",
                                        path=replica.path)
        for replica in replicas:
            outcome.written.append(_append(replica, locks[replica.log_dir], data, outcome,
                                           backup_dir, config, planned))
    return outcome


def _append(replica: Replica, lock: LogDirLock, data: Sequence[bytes], outcome: AppendOutcome,
            backup_dir: str | os.PathLike[str] | None, config: LogConfig,
            planned: str) -> ReplicaWrite:
    log_dir = LogDir(replica.log_dir)
    entry = log_dir.entry_for_dir(replica.path)
    expected_end = outcome.first_offset

    def action(log, checkpoint) -> int:
        if log.log_end_offset != expected_end:
            raise PlanOutdatedError(f"{replica.path} ends at offset {log.log_end_offset}, not "
                                    f"{expected_end} as when {planned}: run again",
                                    path=replica.path)
        for batch in data:
            log.append_as_follower(batch)
        log.flush()
        log.update_high_watermark(log.log_end_offset)
        assert log.log_end_offset == outcome.next_offset
        return log.last_stable_offset

    _, lso, updates, backups, notes = log_dir.with_loaded_log(entry, config, backup_dir, lock,
                                                              action)
    return ReplicaWrite(replica.log_dir, replica.broker_id, replica.path, updates, backups, notes,
                        lso)
