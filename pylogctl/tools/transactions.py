"""What ``pylogctl transactions`` computes: kafka-transactions.sh's tables, from the files.

Each view is a :class:`TransactionTable`: the rows for json/yaml (camelCase keys named after
Kafka's columns, with the extra fields scripts need; null where Kafka prints ``None``) and the
text cells of Kafka's table (``TransactionsCommand``'s headers, values as it formats them).
Durations are measured against ``now_ms``, the caller's clock, as the tool measures them
against the broker's answer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

from ..errors import UsageError
from ..format.transaction_log_records import TransactionState
from ..groups.hanging_transactions import HangingTransaction, find_hanging, partitions_to_search
from ..groups.producer_states import PartitionProducers, producer_states, replica_for
from ..groups.java_hash_map import partition_order
from ..groups.offset_commits import TopicPartition
from ..groups.replicas import LogDirs
from ..groups.replica_append import AppendOutcome
from ..groups.transaction_abort import (AbortPlan, execute_abort, plan_abort,
                                        spec_for_producer, spec_for_start_offset)
from ..groups.transaction_state_topic import (CoordinatedTransaction, TransactionStates,
                                              TransactionStateTopic, list_transactions)

LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_HEADERS = ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                    "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
                    "TransactionDurationMs", "TopicPartitions")
PRODUCER_HEADERS = ("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                    "LastTimestamp", "CurrentTransactionStartOffset")
HANGING_HEADERS = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
                   "StartOffset", "LastTimestamp", "Duration(min)")
ABORT_HEADERS = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
                 "StartOffset", "MarkerOffset", "LastStableOffset", "NewLastStableOffset")


@dataclass
class TransactionTable:
    kind: str  # the subcommand
    headers: tuple[str, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)
    cells: list[list[str]] = field(default_factory=list)


def _tp(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"  # TopicPartition.toString


def _s(value: Any) -> str:
    return "None" if value is None else str(value)


class Transactions:
    """The log dirs of a stopped cluster, for the ``transactions`` views."""

    def __init__(self, log_dirs: Sequence[str | os.PathLike[str]]) -> None:
        self.log_dirs = LogDirs(log_dirs)
        self.topic = TransactionStateTopic(self.log_dirs)

    @cached_property
    def states(self) -> TransactionStates:
        return self.topic.load()

    @property
    def notes(self) -> list[str]:
        return self.log_dirs.notes + (self.states.notes if self.topic.present else [])

    def _need_topic(self) -> None:
        if not self.topic.present:
            raise UsageError("__transaction_state is in none of the log dirs given: no "
                             "transaction coordinator state to read")

    def list(self, now_ms: int, duration_filter_ms: int | None = None,
             pattern: str | None = None) -> TransactionTable:
        self._need_topic()
        table = TransactionTable("list", LIST_HEADERS)
        for entry in list_transactions(self.states, now_ms,
                                       -1 if duration_filter_ms is None else duration_filter_ms,
                                       pattern):
            m = entry.metadata
            table.rows.append({
                "transactionalId": m.transactional_id, "coordinator": entry.coordinator,
                "producerId": m.producer_id, "transactionState": str(m.state),
                "producerEpoch": m.producer_epoch, "transactionTimeoutMs": m.timeout_ms,
                "topicPartitions": _partitions(entry),
                "transactionStartTimeMs": m.start_ms, "lastUpdateTimeMs": m.last_update_ms,
                "coordinatorEpoch": entry.coordinator_epoch,
                "transactionStatePartition": entry.partition})
            table.cells.append([m.transactional_id, _s(entry.coordinator), str(m.producer_id),
                                str(m.state)])
        return table

    def describe(self, transactional_id: str, now_ms: int) -> TransactionTable:
        self._need_topic()
        entry = self.states.get(transactional_id)
        if entry is None or entry.metadata.state == TransactionState.Dead:
            where = self.topic.partition_for(transactional_id)
            raise UsageError(f"Failed to describe transaction state of transactional-id "
                             f"`{transactional_id}`: The transactionalId could not be found "
                             f"(in __transaction_state-{where}).")
        m = entry.metadata
        start = m.start_ms if m.start_ms >= 0 else None
        duration = None if start is None else now_ms - start
        partitions = _partitions(entry)
        table = TransactionTable("describe", DESCRIBE_HEADERS)
        table.rows.append({
            "coordinatorId": entry.coordinator, "transactionalId": transactional_id,
            "producerId": m.producer_id, "producerEpoch": m.producer_epoch,
            "transactionState": str(m.state), "transactionTimeoutMs": m.timeout_ms,
            "currentTransactionStartTimeMs": start, "transactionDurationMs": duration,
            "topicPartitions": partitions, "lastUpdateTimeMs": m.last_update_ms,
            "coordinatorEpoch": entry.coordinator_epoch})
        table.cells.append([_s(entry.coordinator), transactional_id, str(m.producer_id),
                            str(m.producer_epoch), str(m.state), str(m.timeout_ms), _s(start),
                            _s(duration), ",".join(partitions)])
        return table

    def producers(self, topic: str, partition: int, broker_id: int | None,
                  now_ms: int) -> tuple[TransactionTable, PartitionProducers]:
        replica = replica_for(self.log_dirs, topic, partition, broker_id)
        state = producer_states(replica, topic, partition, now_ms)
        table = TransactionTable("describe-producers", PRODUCER_HEADERS)
        for p in state.producers:
            table.rows.append({
                "producerId": p.producer_id, "producerEpoch": p.producer_epoch,
                "latestCoordinatorEpoch": p.coordinator_epoch, "lastSequence": p.last_sequence,
                "lastTimestamp": p.last_timestamp,
                "currentTransactionStartOffset": p.current_transaction_start_offset})
            table.cells.append([str(p.producer_id), str(p.producer_epoch),
                                str(p.coordinator_epoch), str(p.last_sequence),
                                str(p.last_timestamp), _s(p.current_transaction_start_offset)])
        return table, state

    def hanging(self, topic: str | None, partition: int | None, broker_id: int | None,
                max_timeout_min: int, now_ms: int, *, scoped: bool = True
                ) -> tuple[TransactionTable, list[HangingTransaction]]:
        partitions = partitions_to_search(self.log_dirs, topic, partition, broker_id,
                                          scoped=scoped)
        found = find_hanging(self.log_dirs, partitions, now_ms, max_timeout_min * 60_000,
                             broker_id, self.states if self.topic.present else None)
        return hanging_table(found, now_ms), found


    def abort_plans(self, topic: str | None, partition: int | None, *,
                    start_offset: int | None = None, producer: tuple[int, int, int] | None = None,
                    all_hanging: bool = False, broker_id: int | None = None,
                    max_timeout_min: int = 15, now_ms: int) -> tuple[list[AbortPlan], list[str]]:
        """The markers to write: for the transaction starting at ``start_offset``, the one of
        ``producer`` (id, epoch, coordinator epoch), or every hanging transaction the producer
        state tracks (those it lost pin nothing: skipped, with a note)."""
        notes: list[str] = []
        if all_hanging:
            _, found = self.hanging(topic, partition, broker_id, max_timeout_min, now_ms,
                                    scoped=False)
            by_partition: dict[tuple[str, int], list[HangingTransaction]] = {}
            for h in found:
                if not h.in_producer_state:
                    notes.append(f"{h.topic}-{h.partition} producer {h.producer_id} at offset "
                                 f"{h.start_offset}: not in the producer state, nothing to "
                                 f"abort")
                    continue
                by_partition.setdefault((h.topic, h.partition), []).append(h)
            plans = []
            for (t, p), items in sorted(by_partition.items()):
                state = producer_states(replica_for(self.log_dirs, t, p), t, p, now_ms)
                plans.append(plan_abort(self.log_dirs, [spec_for_start_offset(
                    state, h.start_offset) for h in items], now_ms))
            return plans, notes
        if topic is None or partition is None:
            raise UsageError("abort needs --topic and --partition (or --all-hanging)")
        state = producer_states(replica_for(self.log_dirs, topic, partition), topic, partition,
                                now_ms)
        if start_offset is not None:
            spec = spec_for_start_offset(state, start_offset)
        elif producer is not None:
            spec = spec_for_producer(state, *producer)
        else:
            raise UsageError("The transaction to abort must be identified either with "
                             "--start-offset (for brokers on 3.0 or above) or with "
                             "--producer-id, --producer-epoch, and --coordinator-epoch (for "
                             "older brokers)")
        return [plan_abort(self.log_dirs, [spec], now_ms)], notes

    def execute(self, plans: Sequence[AbortPlan], now_ms: int,
                backup_dir: str | os.PathLike[str] | None) -> list[AppendOutcome]:
        return [execute_abort(self.log_dirs, plan, now_ms, backup_dir) for plan in plans]


def abort_table(plans: Sequence[AbortPlan], after: dict[tuple[str, int], int] | None
                ) -> TransactionTable:
    """The markers planned; ``after``: each partition's last stable offset once reloaded."""
    table = TransactionTable("abort", ABORT_HEADERS)
    for plan in plans:
        new = None if after is None else after.get((plan.topic, plan.partition))
        for i, s in enumerate(plan.specs):
            table.rows.append({
                "topic": s.topic, "partition": s.partition, "producerId": s.producer_id,
                "producerEpoch": s.producer_epoch, "coordinatorEpoch": s.coordinator_epoch,
                "startOffset": s.start_offset, "markerOffset": plan.marker_offset + i,
                "leaderEpoch": plan.leader_epoch, "lastStableOffset": plan.last_stable_offset,
                "newLastStableOffset": new, "executed": after is not None,
                "replicas": plan.replicas})
            table.cells.append([s.topic, str(s.partition), str(s.producer_id),
                                str(s.producer_epoch), str(s.coordinator_epoch),
                                _s(s.start_offset), str(plan.marker_offset + i),
                                str(plan.last_stable_offset), _s(new)])
    return table


def last_stable_offsets(log_dirs: Sequence[str | os.PathLike[str]], plans: Sequence[AbortPlan],
                        now_ms: int) -> dict[tuple[str, int], int]:
    """Each planned partition's last stable offset, reloaded from the files."""
    dirs = LogDirs(log_dirs)
    return {(p.topic, p.partition): producer_states(
        replica_for(dirs, p.topic, p.partition), p.topic, p.partition, now_ms).last_stable_offset
        for p in plans}


def hanging_table(found: Sequence[HangingTransaction], now_ms: int) -> TransactionTable:
    table = TransactionTable("find-hanging", HANGING_HEADERS)
    for h in found:
        minutes = h.duration_minutes(now_ms)
        table.rows.append({
            "topic": h.topic, "partition": h.partition, "producerId": h.producer_id,
            "producerEpoch": h.producer_epoch, "coordinatorEpoch": h.coordinator_epoch,
            "startOffset": h.start_offset, "lastTimestamp": h.last_timestamp,
            "durationMin": minutes, "lastStableOffset": h.last_stable_offset,
            "batchOffset": h.start_offset, "batchTimestamp": h.batch_timestamp,
            "transactionalId": h.transactional_id, "brokerId": h.broker_id, "note": h.note})
        table.cells.append([h.topic, str(h.partition), str(h.producer_id),
                            str(h.producer_epoch), str(h.coordinator_epoch), str(h.start_offset),
                            str(h.last_timestamp), str(minutes)])
    return table


def _partitions(entry: CoordinatedTransaction) -> list[str]:
    """In the order the admin client's ``HashSet<TopicPartition>`` gives them."""
    return [_tp(t, p) for t, p in partition_order(
        TopicPartition(t, p) for t, p in sorted(entry.metadata.partitions))]
