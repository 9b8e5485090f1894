"""The producer state of a partition replica, as the broker holding it would answer
``DescribeProducers`` (Kafka's ``UnifiedLog.activeProducers``), read from the files only.

The state is the one a broker builds when it loads the log: the latest producer snapshot at or
below the log end, then the batches after it, replayed by the routine recovery uses
(:func:`~pylogctl.storage.producer_recovery.producer_state_before`, in memory: no snapshot is
written or deleted). Producers expired by ``producer.id.expiration.ms`` at ``now`` are skipped
as a broker skips them when it loads a snapshot. The last stable offset is Kafka's: the first
offset of the oldest transaction still undecided (or decided above the high watermark), capped
by the high watermark.

Transactions the producer state no longer knows (truncated snapshots, a producer that expired
while its transaction was open on an old broker) still pin the last stable offset of a broker
that rebuilds the state from the log; :func:`unmarked_transactions` finds them in the batches.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PylogctlError, UsageError
from ..format.control import ControlRecordType, parse_control_key
from ..storage.file_records import FileRecords
from ..storage.log_dir_layout import log_segments
from ..storage.producer_recovery import producer_state_before
from ..storage.producer_state import list_snapshot_files
from .replicas import LogDirs, Replica


@dataclass(frozen=True)
class ProducerState:
    """One active producer (the admin client's ``ProducerState``)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int  # -1: no marker seen
    current_transaction_start_offset: int | None


@dataclass(frozen=True)
class PartitionProducers:
    """A replica's producers and the offsets transactions pin."""

    topic: str
    partition: int
    replica: Replica
    producers: tuple[ProducerState, ...]
    high_watermark: int
    first_unstable_offset: int | None

    @property
    def last_stable_offset(self) -> int:
        first = self.first_unstable_offset
        return self.high_watermark if first is None or first >= self.high_watermark else first


@dataclass(frozen=True)
class OpenBatch:
    """The first batch of a transaction no marker has closed, found in the log."""

    producer_id: int
    producer_epoch: int
    offset: int
    max_timestamp: int


def replica_for(log_dirs: LogDirs, topic: str, partition: int,
                broker_id: int | None = None) -> Replica:
    """The replica a ``DescribeProducers`` would ask: the one of ``broker_id``, else the one
    the groups layer reads (highest leader epoch, then log end)."""
    if not log_dirs.partitions(topic):
        raise UsageError(f"Unknown topic {topic!r}: no partition of it in the log dirs given")
    replicas = log_dirs.replicas(topic, partition)
    if not replicas:
        raise UsageError(f"Unknown partition {topic}-{partition}: not in the log dirs given "
                         f"(partitions {_ranges(log_dirs.partitions(topic))})")
    if broker_id is None:
        choice = log_dirs.choose(topic, partition)
        assert choice is not None
        return choice.chosen
    for replica in replicas:
        if replica.broker_id == broker_id:
            return replica
    raise UsageError(f"Broker {broker_id} holds no replica of {topic}-{partition} in the log "
                     f"dirs given")


def producer_states(replica: Replica, topic: str, partition: int,
                    now_ms: int) -> PartitionProducers:
    """The producer state of ``replica`` at its log end (read-only)."""
    path = replica.path
    end = replica.log_end.offset
    manager = producer_state_before(path, log_segments(path), dict(list_snapshot_files(path)),
                                    end, replica.log_start_offset, now_ms)
    hw = replica.high_watermark_checkpoint
    hw = end if hw is None else min(hw, end)
    manager.on_high_watermark_updated(hw)
    producers = tuple(ProducerState(e.producer_id, e.producer_epoch, e.last_seq,
                                    e.last_timestamp, e.coordinator_epoch,
                                    e.current_txn_first_offset)
                      for e in manager.producers_in_map_order())
    return PartitionProducers(topic, partition, replica, producers, hw,
                              manager.first_unstable_offset())


def unmarked_transactions(replica: Replica, notes: list[str] | None = None
                          ) -> dict[int, OpenBatch]:
    """Per producer id, the first batch of its transaction left open at the log end: a
    transactional batch opens one, a COMMIT or ABORT marker of the producer closes it."""
    start, end = replica.log_start_offset, replica.log_end.offset
    open_: dict[int, OpenBatch] = {}
    for _, segment in log_segments(replica.path):
        try:
            with FileRecords(segment) as records:
                for batch in records.batches():
                    if batch.base_offset >= end:
                        break
                    if batch.last_offset < start or batch.magic < 2 \
                            or not batch.is_transactional:
                        continue
                    if batch.is_control:
                        if _is_end_marker(batch):
                            open_.pop(batch.producer_id, None)
                    elif batch.producer_id not in open_:
                        open_[batch.producer_id] = OpenBatch(
                            batch.producer_id, batch.producer_epoch, batch.base_offset,
                            batch.max_timestamp)
        except PylogctlError as exc:
            if notes is not None:
                notes.append(f"{segment}: {exc}; read up to there")
            break
    return open_


def batch_at(replica: Replica, offset: int) -> OpenBatch | None:
    """The batch starting at ``offset`` (None when no batch starts there)."""
    segments = [s for s in log_segments(replica.path) if s[0] <= offset]
    if not segments:
        return None
    with FileRecords(segments[-1][1]) as records:
        for batch in records.batches():
            if batch.base_offset == offset:
                return OpenBatch(batch.producer_id, batch.producer_epoch, batch.base_offset,
                                 batch.max_timestamp)
            if batch.base_offset > offset:
                return None
    return None


def _is_end_marker(batch) -> bool:
    records = batch.records()
    if not records:
        return False
    return parse_control_key(records[0].key)[1] in (ControlRecordType.ABORT,
                                                    ControlRecordType.COMMIT)


def _ranges(partitions: list[int]) -> str:
    return ", ".join(map(str, partitions)) if len(partitions) < 8 else \
        f"{partitions[0]}-{partitions[-1]}"
