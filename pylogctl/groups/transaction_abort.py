"""Aborting an open transaction in a partition of a stopped cluster, as
``kafka-transactions abort`` has the partition leader do it (``Admin.abortTransaction``: a
``WriteTxnMarkers`` request the leader appends as a coordinator would).

The transaction is named as the tool names it: by its start offset, which the partition's
producer state maps to the producer id, epoch and coordinator epoch
(``AbortTransactionCommand.buildAbortSpec``: the coordinator epoch is the producer's latest, 0
when it has seen no marker), or by those three directly. The spec is checked against the
producer state as the leader's append would check the marker (``ProducerAppendInfo``): an
epoch below the producer's current one is fenced, a coordinator epoch below its latest too.

The ABORT marker goes at the log end, stamped with the partition's leader epoch, to every
in-step replica (:func:`.replica_append.append_to_replicas`); the engine's append completes the
transaction in the producer state, writes the ``.txnindex`` entry with the last stable offset
of the moment, and the snapshot at the new end is written on close. The last stable offset
then moves past the transaction unless an older one still holds it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

from ..errors import ExitCode, PylogctlError, UsageError
from ..format.builder import build_end_txn_marker
from ..format.record import NO_PARTITION_LEADER_EPOCH
from ..storage.topic_config import ConfigSources
from .producer_states import PartitionProducers, producer_states, replica_for
from .replica_append import AppendOutcome, append_to_replicas, replicas_in_step
from .replicas import LogDirs


class AbortRefusedError(PylogctlError):
    """The marker would be refused by the partition's producer state (Kafka's
    ``InvalidProducerEpochException``, ``TransactionCoordinatorFencedException``)."""

    exit_code = ExitCode.REFUSED


@dataclass(frozen=True)
class AbortSpec:
    """Kafka's ``AbortTransactionSpec``."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int | None = None


@dataclass
class AbortPlan:
    """The markers to append to one partition, at ``marker_offset`` on."""

    topic: str
    partition: int
    specs: list[AbortSpec]
    marker_offset: int
    leader_epoch: int | None
    last_stable_offset: int  # before
    replicas: list[str] = field(default_factory=list)  # partition dirs written
    skipped: list[str] = field(default_factory=list)


def spec_for_start_offset(state: PartitionProducers, start_offset: int) -> AbortSpec:
    """``buildAbortSpec``: the producer whose open transaction starts at ``start_offset``."""
    for p in state.producers:
        if p.current_transaction_start_offset == start_offset:
            return AbortSpec(state.topic, state.partition, p.producer_id, p.producer_epoch,
                             max(p.coordinator_epoch, 0), start_offset)
    raise UsageError(f"Could not find any open transactions starting at offset {start_offset} "
                     f"on partition {state.topic}-{state.partition}")


def spec_for_producer(state: PartitionProducers, producer_id: int, producer_epoch: int,
                      coordinator_epoch: int) -> AbortSpec:
    """The tool's older form (``--producer-id/--producer-epoch/--coordinator-epoch``; a
    negative coordinator epoch is 0), checked against the producer state."""
    where = f"{state.topic}-{state.partition}"
    entry = next((p for p in state.producers if p.producer_id == producer_id), None)
    if entry is None or entry.current_transaction_start_offset is None:
        raise UsageError(f"Producer {producer_id} has no open transaction on partition {where}")
    if producer_epoch < entry.producer_epoch:
        raise AbortRefusedError(f"Producer {producer_id}'s epoch has moved on: {producer_epoch} "
                                f"is older than its current epoch {entry.producer_epoch} on "
                                f"partition {where} (the marker would be fenced)")
    coordinator_epoch = max(coordinator_epoch, 0)
    if coordinator_epoch < entry.coordinator_epoch:
        raise AbortRefusedError(f"Coordinator epoch {coordinator_epoch} is older than "
                                f"{entry.coordinator_epoch}, the latest producer {producer_id} "
                                f"has seen on partition {where} (the marker would be fenced)")
    return AbortSpec(state.topic, state.partition, producer_id, producer_epoch,
                     coordinator_epoch, entry.current_transaction_start_offset)


def plan_abort(log_dirs: LogDirs, specs: Sequence[AbortSpec], now_ms: int) -> AbortPlan:
    """The markers for ``specs`` (all of one partition), at its log end."""
    topic, partition = specs[0].topic, specs[0].partition
    state = producer_states(replica_for(log_dirs, topic, partition), topic, partition, now_ms)
    in_step, skipped = replicas_in_step(log_dirs, topic, partition)
    return AbortPlan(topic, partition, list(specs), state.replica.log_end.offset,
                     state.replica.leader_epoch, state.last_stable_offset,
                     [r.path for r in in_step], skipped)


def execute_abort(log_dirs: LogDirs, plan: AbortPlan, now_ms: int,
                  backup_dir: str | os.PathLike[str] | None = None) -> AppendOutcome:
    """Append the plan's ABORT markers to every in-step replica."""
    epoch = NO_PARTITION_LEADER_EPOCH if plan.leader_epoch is None else plan.leader_epoch
    data = [build_end_txn_marker(offset=plan.marker_offset + i, producer_id=s.producer_id,
                                 producer_epoch=s.producer_epoch, commit=False,
                                 coordinator_epoch=s.coordinator_epoch, timestamp=now_ms,
                                 partition_leader_epoch=epoch)
            for i, s in enumerate(plan.specs)]
    chosen = replica_for(log_dirs, plan.topic, plan.partition)
    config = ConfigSources.for_log_dir(chosen.log_dir).topic(plan.topic).log_config
    outcome = AppendOutcome(plan.partition, len(data), len(data), plan.marker_offset,
                            plan.marker_offset + len(data), topic=plan.topic)
    return append_to_replicas(log_dirs, plan.topic, plan.partition, data, outcome,
                              config=config, backup_dir=backup_dir,
                              planned="the abort was planned")
