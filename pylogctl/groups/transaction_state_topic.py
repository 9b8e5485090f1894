"""The ``__transaction_state`` topic across the given log dirs, loaded as the transaction
coordinator loads it (Kafka's ``TransactionStateManager.loadTransactionMetadata``).

Each partition is read from one replica (:meth:`LogDirs.choose`), from its log start offset to
its log end (not the high watermark): the last record of a transactional id wins and a
tombstone removes it; records of an unknown key or value version are skipped, as Kafka warns
and skips them. The coordinator of the ids of a partition is the broker whose replica was read
(its ``node.id``), and the coordinator epoch is that replica's leader epoch, the epoch Kafka
stamps on the markers it writes.

:meth:`TransactionStateTopic.list_transactions` filters as ``listTransactionStates`` does and
lists in its order: partitions ascending (the coordinator's cache), each partition's ids in
the iteration order of its ``ConcurrentHashMap`` (the ``HashMap`` order of
:mod:`.java_hash_map`, the same while a partition holds fewer than 12 ids).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import CorruptRecordError, PylogctlError, UsageError
from ..format.transaction_log_records import TOPIC, TransactionState, decode_transaction_record
from ..storage.file_records import FileRecords
from ..storage.log_dir_layout import log_segments
from .java_hash_map import group_order
from .partitioner import partition_for
from .replicas import LogDirs, Replica
from .transaction_metadata import TopicPartition, TransactionMetadata


@dataclass(frozen=True)
class CoordinatedTransaction:
    """One transactional id's metadata and the coordinator that holds it."""

    metadata: TransactionMetadata
    partition: int  # of __transaction_state
    coordinator: int | None  # broker id of the replica read
    coordinator_epoch: int | None

    @property
    def transactional_id(self) -> str:
        return self.metadata.transactional_id


@dataclass
class TransactionStates:
    """Every transactional id found, by partition in load order, and notes on what was
    skipped."""

    by_partition: dict[int, dict[str, CoordinatedTransaction]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def get(self, transactional_id: str) -> CoordinatedTransaction | None:
        for ids in self.by_partition.values():
            if transactional_id in ids:
                return ids[transactional_id]
        return None

    def all(self) -> list[CoordinatedTransaction]:
        """In the coordinator's iteration order."""
        return [ids[t] for _, ids in sorted(self.by_partition.items())
                for t in group_order(ids)]

    def by_producer_id(self) -> dict[int, CoordinatedTransaction]:
        """``ListTransactions`` with a producer-id filter: the id holding each producer id."""
        return {c.metadata.producer_id: c for c in self.all()
                if c.metadata.state != TransactionState.Dead}


class TransactionStateTopic:
    """``__transaction_state`` as the log dirs hold it (``present`` is False without it)."""

    def __init__(self, log_dirs: LogDirs) -> None:
        self.log_dirs = log_dirs
        self.partitions = log_dirs.partitions(TOPIC)

    @property
    def present(self) -> bool:
        return bool(self.partitions)

    def partition_for(self, transactional_id: str) -> int | None:
        """Where the coordinator looks for the id (None when the topic is not in the dirs)."""
        if not self.partitions:
            return None
        return partition_for(transactional_id, max(self.partitions) + 1)

    def load(self) -> TransactionStates:
        states = TransactionStates()
        for partition in self.partitions:
            choice = self.log_dirs.choose(TOPIC, partition)
            if choice is not None:
                states.by_partition[partition] = _load_partition(choice.chosen, partition,
                                                                 states.notes)
        return states


def list_transactions(states: TransactionStates, now_ms: int, duration_filter_ms: int = -1,
                      pattern: str | None = None) -> list[CoordinatedTransaction]:
    """``listTransactionStates`` (no producer-id or state filter): Dead ids never; with a
    duration filter >= 0 only transactions started more than that long ago; with a pattern
    only ids it matches in full (Java's ``Matcher.matches``)."""
    regex = None
    if pattern:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"Transaction ID pattern `{pattern}` is not a valid regular "
                             f"expression: {exc}.") from None
    out = []
    for entry in states.all():
        m = entry.metadata
        if m.state == TransactionState.Dead:
            continue
        if duration_filter_ms >= 0 and now_ms - m.start_ms <= duration_filter_ms:
            continue
        if regex is not None and regex.fullmatch(m.transactional_id) is None:
            continue
        out.append(entry)
    return out


def ongoing_partitions(entry: CoordinatedTransaction | None) -> frozenset[TopicPartition]:
    """The partitions ``DescribeTransactions`` reports for the id (none for a missing id)."""
    return frozenset() if entry is None else entry.metadata.partitions


def _load_partition(replica: Replica, partition: int, notes: list[str]
                    ) -> dict[str, CoordinatedTransaction]:
    loaded: dict[str, TransactionMetadata] = {}
    start, end = replica.log_start_offset, replica.log_end.offset
    for _, segment in log_segments(replica.path):
        try:
            with FileRecords(segment) as records:
                for batch in records.batches():
                    if batch.last_offset < start or batch.is_control:
                        continue
                    if batch.base_offset >= end:
                        break
                    for record in batch.records():
                        if start <= record.offset < end:
                            _apply(loaded, record.key, record.value, segment, notes)
        except PylogctlError as exc:
            notes.append(f"{segment}: {exc}; {TOPIC}-{partition} read up to there")
            break
    return {t: CoordinatedTransaction(m, partition, replica.broker_id, replica.leader_epoch)
            for t, m in loaded.items()}


def _apply(loaded: dict[str, TransactionMetadata], key: bytes | None, value: bytes | None,
           segment: str, notes: list[str]) -> None:
    if key is None:
        notes.append(f"{segment}: a record without a key, skipped")
        return
    try:
        record = decode_transaction_record(key, value)
    except CorruptRecordError as exc:  # an unknown version: Kafka warns and skips it
        notes.append(f"{segment}: {exc}; the record is skipped")
        return
    if record.value is None:
        loaded.pop(record.transactional_id, None)
    else:
        loaded[record.transactional_id] = TransactionMetadata.from_value(
            record.transactional_id, record.value)
