"""Appending coordinator records to a stopped cluster's ``__consumer_offsets`` partition.

What a group coordinator does when it stores offsets (``storeOffsets``,
``appendForGroup``), done offline: each group's records go in one batch (magic 2, no
compression, CreateTime ``now``, no producer id) at the log end offset, stamped with the
partition's current leader epoch, through the engine's append (segment roll, indexes,
leader-epoch cache), then fsynced, with the high watermark moved to the new end so that the
records count as committed, and the checkpoints updated (:meth:`LogDir.with_loaded_log`).

A partition has a replica in each broker that hosts it. The records must reach every replica
given that is in step with the one the groups were read from (same leader epoch and log end
offset), with the same bytes at the same offsets: otherwise, when the cluster starts, a
replica without them could lead, and a follower truncates what its leader lacks. Replicas
not in step are left alone and reported (they catch up from the leader by replication). The
log dirs of all those replicas are locked before anything is written; a locked one (a
running broker) refuses the whole append.

Crash safety is the engine's: a batch cut short by a kill is invalid bytes at the log end,
which recovery removes; a kill between replicas leaves them disagreeing only in whether the
last commit is there, which the leader's log settles.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Sequence

from ..format.builder import RecordBatchBuilder
from ..format.group_coordinator_records import TOPIC
from ..format.record import NO_PARTITION_LEADER_EPOCH
from ..storage.load_apply import PlanOutdatedError
from ..storage.lock import LogDirLock
from ..storage.log_config import CLEANUP_POLICY_COMPACT, LogConfig
from ..storage.log_manager import CheckpointUpdate, LogDir
from .end_offsets import read_log_end
from .record_helpers import KeyValue
from .replicas import LogDirs, Replica

# Kafka's offsets.topic.segment.bytes (100 MiB) and the topic's compact policy
OFFSETS_TOPIC_CONFIG = LogConfig(segment_bytes=100 * 1024 * 1024,
                                 cleanup_policy=(CLEANUP_POLICY_COMPACT,))


@dataclass(frozen=True)
class ReplicaWrite:
    """One replica written: where, and the checkpoint entries and backups that came with it."""

    log_dir: str
    broker_id: int | None
    partition_dir: str
    checkpoint_updates: tuple[CheckpointUpdate, ...]
    backups: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass
class AppendOutcome:
    """The records appended to one offsets partition: offsets ``[first_offset, next_offset)``."""

    partition: int
    batches: int
    records: int
    first_offset: int
    next_offset: int
    written: list[ReplicaWrite] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def replicas_in_step(log_dirs: LogDirs, partition: int) -> tuple[list[Replica], list[str]]:
    """The replicas of ``__consumer_offsets-{partition}`` to write (the one read first), and
    why the others are left alone."""
    choice = log_dirs.choose(TOPIC, partition)
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


def append_group_batches(log_dirs: LogDirs, partition: int, batches: Sequence[Sequence[KeyValue]],
                         *, expected_end: int, now_ms: int,
                         backup_dir: str | os.PathLike[str] | None = None,
                         config: LogConfig = OFFSETS_TOPIC_CONFIG) -> AppendOutcome:
    """Append ``batches`` (one list of key/value records per group) to every replica in step.

    ``expected_end`` is the log end offset the plan was made at; a replica whose loaded log
    ends elsewhere raises :class:`PlanOutdatedError` before anything is appended to it.
    """
    replicas, skipped = replicas_in_step(log_dirs, partition)
    if not replicas:
        raise PlanOutdatedError(f"{TOPIC}-{partition} is in none of the log dirs")
    epoch = replicas[0].leader_epoch
    data, offset = [], expected_end
    for records in batches:
        builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=(
            NO_PARTITION_LEADER_EPOCH if epoch is None else epoch))
        for key, value in records:
            builder.append(now_ms, key, value)
        data.append(builder.build())
        offset = builder.next_offset()
    outcome = AppendOutcome(partition, len(data), sum(map(len, batches)), expected_end, offset,
                            skipped=skipped)
    with ExitStack() as stack:
        locks = {r.log_dir: stack.enter_context(LogDirLock(r.log_dir)) for r in replicas}
        for replica in replicas:  # under the locks, before any write (a load writes too)
            end = read_log_end(replica.path).offset
            if end != expected_end:
                raise PlanOutdatedError(f"{replica.path} ends at offset {end}, not "
                                        f"{expected_end} as when the groups were read: run "
                                        f"again", path=replica.path)
        for replica in replicas:
            outcome.written.append(_append(replica, locks[replica.log_dir], data, expected_end,
                                           offset, backup_dir, config))
    return outcome


def _append(replica: Replica, lock: LogDirLock, data: list[bytes], expected_end: int,
            next_offset: int, backup_dir: str | os.PathLike[str] | None,
            config: LogConfig) -> ReplicaWrite:
    log_dir = LogDir(replica.log_dir)
    entry = log_dir.entry_for_dir(replica.path)

    def action(log, checkpoint) -> None:
        if log.log_end_offset != expected_end:
            raise PlanOutdatedError(f"{replica.path} ends at offset {log.log_end_offset}, not "
                                    f"{expected_end} as when the groups were read: run again",
                                    path=replica.path)
        for batch in data:
            log.append_as_follower(batch)
        log.flush()
        log.update_high_watermark(log.log_end_offset)
        assert log.log_end_offset == next_offset

    _, _, updates, backups, notes = log_dir.with_loaded_log(entry, config, backup_dir, lock,
                                                            action)
    return ReplicaWrite(replica.log_dir, replica.broker_id, replica.path, updates, backups, notes)
