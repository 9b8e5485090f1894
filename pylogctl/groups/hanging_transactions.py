"""Hanging transactions (KIP-664) found offline, following Kafka's
``TransactionsCommand.FindHangingTransactionsCommand``.

A candidate is a producer whose transaction is open in a partition's producer state and whose
last write is older than the maximum transaction timeout (the coordinator would have aborted
it by then). It hangs unless the coordinator still lists the partition in that producer's
ongoing transaction: Kafka asks ``ListTransactions`` which transactional id holds the producer
id and ``DescribeTransactions`` for its partitions; here both come from ``__transaction_state``
when it is in the log dirs given (without it every candidate is reported, with a note).

Beyond what Kafka can see, a transactional batch no marker closed whose producer the state no
longer tracks as open (lost snapshots, truncation) is reported too, with a note: a broker that
rebuilds its state from the log would find it open.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from ..errors import UsageError
from .producer_states import batch_at, producer_states, replica_for, unmarked_transactions
from .replicas import LogDirs
from .transaction_state_topic import TransactionStates, ongoing_partitions

MAX_TRANSACTION_TIMEOUT_MIN = 15  # the tool's --max-transaction-timeout default


@dataclass(frozen=True)
class HangingTransaction:
    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int
    last_stable_offset: int  # of the partition: the hanging transaction holds it back
    batch_timestamp: int | None  # max timestamp of the batch at start_offset
    broker_id: int | None
    transactional_id: str | None = None
    note: str | None = None
    in_producer_state: bool = True  # False: found in the batches only (pins nothing now)

    def duration_minutes(self, now_ms: int) -> int:
        """Kafka's ``TimeUnit.MILLISECONDS.toMinutes(now - lastTimestamp)``."""
        return int((now_ms - self.last_timestamp) / 60_000)


def partitions_to_search(log_dirs: LogDirs, topic: str | None, partition: int | None,
                         broker_id: int | None, *, scoped: bool = True) -> list[tuple[str, int]]:
    """``collectTopicPartitionsToSearch``: a partition, a topic's, or every partition with a
    replica on ``broker_id``; every partition when not ``scoped`` and none of them is given
    (Kafka's tool insists on a scope: a live search asks every broker)."""
    if scoped and topic is None and broker_id is None:
        raise UsageError("The `find-hanging` command requires either --topic or --broker-id to "
                         "limit the scope of the search")
    if partition is not None and topic is None:
        raise UsageError("The --partition argument requires --topic to be provided")
    if topic is not None and partition is not None:
        return [(topic, partition)]
    topics = [topic] if topic is not None else log_dirs.topics()
    if topic is not None and not log_dirs.partitions(topic):
        raise UsageError(f"Unknown topic {topic!r}: no partition of it in the log dirs given")
    return [(t, p) for t in topics for p in log_dirs.partitions(t)
            if broker_id is None or any(r.broker_id == broker_id
                                        for r in log_dirs.replicas(t, p))]


def find_hanging(log_dirs: LogDirs, partitions: Iterable[tuple[str, int]], now_ms: int,
                 max_timeout_ms: int, broker_id: int | None,
                 states: TransactionStates | None) -> list[HangingTransaction]:
    """The hanging transactions of ``partitions``; ``states`` is the coordinator's metadata,
    None when ``__transaction_state`` is not in the log dirs."""
    found: list[HangingTransaction] = []
    holders = states.by_producer_id() if states is not None else {}
    for topic, partition in partitions:
        replica = replica_for(log_dirs, topic, partition, broker_id)
        state = producer_states(replica, topic, partition, now_ms)
        tracked = set()
        for p in state.producers:
            if p.current_transaction_start_offset is None:
                continue
            tracked.add((p.producer_id, p.current_transaction_start_offset))
            if now_ms - p.last_timestamp <= max_timeout_ms:
                continue
            batch = batch_at(replica, p.current_transaction_start_offset)
            found.append(HangingTransaction(
                topic, partition, p.producer_id, p.producer_epoch, p.coordinator_epoch,
                p.current_transaction_start_offset, p.last_timestamp, state.last_stable_offset,
                None if batch is None else batch.max_timestamp, replica.broker_id))
        for open_batch in unmarked_transactions(replica).values():
            if (open_batch.producer_id, open_batch.offset) in tracked or \
                    now_ms - open_batch.max_timestamp <= max_timeout_ms:
                continue
            found.append(HangingTransaction(
                topic, partition, open_batch.producer_id, open_batch.producer_epoch, -1,
                open_batch.offset, open_batch.max_timestamp, state.last_stable_offset,
                open_batch.max_timestamp, replica.broker_id, in_producer_state=False,
                note="not in the producer state (no marker closes it in the log; a broker "
                     "rebuilding its state from the log would find it open)"))
    if states is None:
        unchecked = "__transaction_state is not in the log dirs: not checked against the " \
            "coordinator"
        return [replace(h, note="; ".join(filter(None, (h.note, unchecked)))) for h in found]
    out = []
    for h in found:
        holder = holders.get(h.producer_id)
        if holder is not None and (h.topic, h.partition) in ongoing_partitions(holder):
            continue  # the coordinator still runs it: it will end it
        out.append(replace(h, transactional_id=None if holder is None
                           else holder.transactional_id))
    return out

