"""Appending coordinator records to a stopped cluster's ``__consumer_offsets`` partition.

What a group coordinator does when it stores offsets (``storeOffsets``,
``appendForGroup``), done offline: each group's records go in one batch (magic 2, no
compression, CreateTime ``now``, no producer id) at the log end offset, stamped with the
partition's current leader epoch, through the engine's append (segment roll, indexes,
leader-epoch cache), then fsynced, with the high watermark moved to the new end so that the
records count as committed, and the checkpoints updated (:meth:`LogDir.with_loaded_log`).

The records reach every in-step replica through :func:`.replica_append.append_to_replicas`
(locks, checks, crash safety: see there).
"""

from __future__ import annotations

import os
from typing import Sequence

from ..format.builder import RecordBatchBuilder
from ..format.group_coordinator_records import TOPIC
from ..format.record import NO_PARTITION_LEADER_EPOCH
from ..storage.loader.apply import PlanOutdatedError
from ..storage.log_config import OFFSETS_TOPIC_CONFIG, LogConfig
from .record_helpers import KeyValue
from .replica_append import AppendOutcome, ReplicaWrite, append_to_replicas
from .replica_append import replicas_in_step as _replicas_in_step
from .replicas import LogDirs, Replica

__all__ = ["OFFSETS_TOPIC_CONFIG", "AppendOutcome", "ReplicaWrite", "append_group_batches",
           "replicas_in_step"]



def replicas_in_step(log_dirs: LogDirs, partition: int) -> tuple[list[Replica], list[str]]:
    """The replicas of ``__consumer_offsets-{partition}`` to write (the one read first), and
    why the others are left alone."""
    return _replicas_in_step(log_dirs, TOPIC, partition)


def append_group_batches(log_dirs: LogDirs, partition: int, batches: Sequence[Sequence[KeyValue]],
                         *, expected_end: int, now_ms: int,
                         backup_dir: str | os.PathLike[str] | None = None,
                         config: LogConfig = OFFSETS_TOPIC_CONFIG) -> AppendOutcome:
    """Append ``batches`` (one list of key/value records per group) to every replica in step.

    ``expected_end`` is the log end offset the plan was made at; a replica whose loaded log
    ends elsewhere raises :class:`PlanOutdatedError` before anything is appended to it.
    """
    choice = log_dirs.choose(TOPIC, partition)
    if choice is None:
        raise PlanOutdatedError(f"{TOPIC}-{partition} is in none of the log dirs")
    epoch = choice.chosen.leader_epoch
    data, offset = [], expected_end
    for records in batches:
        builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=(
            NO_PARTITION_LEADER_EPOCH if epoch is None else epoch))
        for key, value in records:
            builder.append(now_ms, key, value)
        data.append(builder.build())
        offset = builder.next_offset()
    outcome = AppendOutcome(partition, len(data), sum(map(len, batches)), expected_end, offset,
                            topic=TOPIC)
    return append_to_replicas(log_dirs, TOPIC, partition, data, outcome, config=config,
                              backup_dir=backup_dir, planned="the groups were read")
