"""What one append does to one producer's state (Kafka's ``ProducerStateEntry``,
``ProducerAppendInfo``, ``BatchMetadata``, ``TxnMetadata`` and ``CompletedTxn``).

Per producer id a broker remembers the producer epoch, the metadata of the last 5 batches
(sequence range and offsets, for duplicate detection), the transaction coordinator epoch, the
first offset of its open transaction and the last timestamp. An append is validated against
that state before it is written, and its result applied after. The rules:

- A batch from an older producer epoch is rejected (``InvalidProducerEpoch``; only a warning
  for replication and recovery). From clients, the first sequence of a new epoch must be 0 and
  otherwise follow the last sequence by one, wrapping at int32 max (``OutOfOrderSequence``); a
  retried batch is recognised by its exact sequence range
  (:meth:`ProducerStateEntry.find_duplicate_batch`).
  Coordinator appends get the epoch check only; replication gets neither.
- A transactional batch opens a transaction at its base offset; a plain batch while one is open
  is ``InvalidTxnState`` (whatever the origin). A COMMIT/ABORT marker closes it
  (:class:`CompletedTxn`); a marker from an older coordinator epoch is
  ``TransactionCoordinatorFenced`` (logged only for replication). A marker with no transaction
  open completes nothing.
- A new producer epoch starts a new sequence space: the cached batches are dropped.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import Iterable, Protocol

from ..errors import PylogctlError
from ..format.control import (ControlRecordType, EndTransactionMarker, parse_control_key,
                              parse_end_txn_marker)
from ..format.producer_snapshot import ProducerSnapshotEntry
from ..format.record import NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP, decrement_sequence
from ..format.varint import INT32_MAX


_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())


# -- errors (a broker answers each with the Kafka error of the same name) -------------------
class ProducerStateError(PylogctlError):
    """A batch that the producer-state rules reject."""


class OutOfOrderSequenceError(ProducerStateError):
    """Kafka's ``OutOfOrderSequenceException``."""


class InvalidProducerEpochError(ProducerStateError):
    """Kafka's ``InvalidProducerEpochException``: a batch from a fenced (older) producer epoch."""


class InvalidTxnStateError(ProducerStateError):
    """Kafka's ``InvalidTxnStateException``: a plain write while a transaction is open."""


class TransactionCoordinatorFencedError(ProducerStateError):
    """Kafka's ``TransactionCoordinatorFencedException``: a marker from an older coordinator."""


class AppendOrigin(enum.Enum):
    """Where an append comes from, which decides how much is validated."""

    REPLICATION = "replication"  # from the leader, or log recovery: warn, do not reject
    COORDINATOR = "coordinator"  # group/transaction coordinator: epochs checked, not sequences
    CLIENT = "client"  # a produce request: full validation
    RAFT_LEADER = "raft_leader"


class ProducerBatch(Protocol):
    """The batch fields producer state reads (a ``RecordBatch``; legacy batches have no
    producer id)."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    base_offset: int
    max_timestamp: int

    @property
    def last_sequence(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control(self) -> bool: ...
    def records(self) -> list: ...


# -- value objects -------------------------------------------------------------------------
@dataclass(frozen=True)
class BatchMetadata:
    """One appended batch of a producer: enough to recognise a retry of it."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass
class TxnMetadata:
    """An open (``last_offset`` None) or completed-but-unreplicated transaction."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None


@dataclass(frozen=True)
class CompletedTxn:
    """A transaction closed by the marker at ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


# -- per-producer state --------------------------------------------------------------------
class ProducerStateEntry:
    """The state of one producer id; batch metadata oldest first, at most 5 batches."""

    NUM_BATCHES_TO_RETAIN = 5

    __slots__ = ("producer_id", "producer_epoch", "coordinator_epoch", "last_timestamp",
                 "current_txn_first_offset", "_batches")

    def __init__(self, producer_id: int, producer_epoch: int = NO_PRODUCER_EPOCH,
                 coordinator_epoch: int = -1, last_timestamp: int = NO_TIMESTAMP,
                 current_txn_first_offset: int | None = None,
                 batch_metadata: Iterable[BatchMetadata] = ()) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.coordinator_epoch = coordinator_epoch
        self.last_timestamp = last_timestamp
        self.current_txn_first_offset = current_txn_first_offset
        self._batches: list[BatchMetadata] = list(batch_metadata)[-self.NUM_BATCHES_TO_RETAIN:]

    @classmethod
    def from_snapshot(cls, e: ProducerSnapshotEntry) -> "ProducerStateEntry":
        """A snapshot keeps only the last batch; its timestamp is the producer's last timestamp."""
        batches = ([BatchMetadata(e.last_sequence, e.last_offset, e.offset_delta, e.last_timestamp)]
                   if e.has_batch_metadata else [])
        return cls(e.producer_id, e.producer_epoch, e.coordinator_epoch, e.last_timestamp,
                   e.current_txn_first_offset, batches)

    def to_snapshot(self) -> ProducerSnapshotEntry:
        return ProducerSnapshotEntry(self.producer_id, self.producer_epoch, self.coordinator_epoch,
                                     self.last_timestamp, self.current_txn_first_offset,
                                     self.last_seq, self.last_data_offset, self.last_offset_delta)

    @property
    def batch_metadata(self) -> tuple[BatchMetadata, ...]:
        return tuple(self._batches)

    @property
    def is_empty(self) -> bool:
        """No batch metadata (new producer, or only markers since its epoch changed)."""
        return not self._batches

    @property
    def first_seq(self) -> int:
        return self._batches[0].first_seq if self._batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self._batches[-1].last_seq if self._batches else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        return self._batches[0].first_offset if self._batches else -1

    @property
    def last_data_offset(self) -> int:
        return self._batches[-1].last_offset if self._batches else -1

    @property
    def last_offset_delta(self) -> int:
        return self._batches[-1].offset_delta if self._batches else 0

    def add_batch(self, producer_epoch: int, last_seq: int, last_offset: int, offset_delta: int,
                  timestamp: int) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self._add_batch_metadata(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        """A new epoch starts a new sequence space, so the old batches are forgotten."""
        if self.producer_epoch == producer_epoch:
            return False
        self._batches.clear()
        self.producer_epoch = producer_epoch
        return True

    def update(self, next_entry: "ProducerStateEntry") -> None:
        """Fold in the state an append produced (its batches, epochs, transaction, timestamp)."""
        self.maybe_update_producer_epoch(next_entry.producer_epoch)
        for batch in next_entry._batches:
            self._add_batch_metadata(batch)
        self.coordinator_epoch = next_entry.coordinator_epoch
        self.current_txn_first_offset = next_entry.current_txn_first_offset
        self.last_timestamp = next_entry.last_timestamp

    def end_transaction(self, producer_epoch: int, coordinator_epoch: int,
                        last_timestamp: int) -> None:
        """A marker closed the transaction (Kafka's three-argument ``update``)."""
        self.update(ProducerStateEntry(self.producer_id, producer_epoch, coordinator_epoch,
                                       last_timestamp))

    def find_duplicate_batch(self, batch: ProducerBatch) -> BatchMetadata | None:
        """The cached batch a retried ``batch`` duplicates (same epoch, same sequence range)."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        return self.batch_with_sequence_range(batch.base_sequence, batch.last_sequence)

    def batch_with_sequence_range(self, first_seq: int, last_seq: int) -> BatchMetadata | None:
        for b in self._batches:
            if b.first_seq == first_seq and b.last_seq == last_seq:
                return b
        return None

    def _copy_without_batches(self) -> "ProducerStateEntry":
        return ProducerStateEntry(self.producer_id, self.producer_epoch, self.coordinator_epoch,
                                  self.last_timestamp, self.current_txn_first_offset)

    def _add_batch_metadata(self, batch: BatchMetadata) -> None:
        if len(self._batches) == self.NUM_BATCHES_TO_RETAIN:
            del self._batches[0]
        self._batches.append(batch)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProducerStateEntry):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a in self.__slots__)

    def __repr__(self) -> str:
        return (f"ProducerStateEntry(producer_id={self.producer_id}, "
                f"producer_epoch={self.producer_epoch}, "
                f"current_txn_first_offset={self.current_txn_first_offset}, "
                f"coordinator_epoch={self.coordinator_epoch}, "
                f"last_timestamp={self.last_timestamp}, batch_metadata={self._batches})")


class ProducerAppendInfo:
    """Validates one producer's batches of an append against its state before the append, and
    collects the resulting state and the transactions they open."""

    def __init__(self, topic_partition: str, producer_id: int, current_entry: ProducerStateEntry,
                 origin: AppendOrigin) -> None:
        self.topic_partition = topic_partition
        self.producer_id = producer_id
        self.current_entry = current_entry
        self.origin = origin
        self.started_transactions: list[TxnMetadata] = []
        self._updated = current_entry._copy_without_batches()

    def to_entry(self) -> ProducerStateEntry:
        return self._updated

    def append(self, batch: ProducerBatch, first_offset: int | None = None) -> CompletedTxn | None:
        """Apply one batch of this producer; a COMMIT/ABORT marker may complete a transaction.

        An empty control batch (its transaction was cleaned away) changes nothing.
        """
        if batch.is_control:
            records = batch.records()
            if not records:
                return None
            record = records[0]
            _, type_id = parse_control_key(record.key)
            marker = parse_end_txn_marker(ControlRecordType.from_id(type_id), record.value)
            return self.append_end_txn_marker(marker, batch.producer_epoch, batch.base_offset,
                                              record.timestamp)
        self.append_data_batch(batch.producer_epoch, batch.base_sequence, batch.last_sequence,
                               batch.max_timestamp,
                               batch.base_offset if first_offset is None else first_offset,
                               batch.last_offset, batch.is_transactional)
        return None

    def append_data_batch(self, epoch: int, first_seq: int, last_seq: int, last_timestamp: int,
                          first_offset: int, last_offset: int, is_transactional: bool) -> None:
        self._check_producer_epoch(epoch, first_offset)
        if self.origin is AppendOrigin.CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        self._updated.add_batch(epoch, last_seq, last_offset, last_offset - first_offset,
                                last_timestamp)
        open_txn = self._updated.current_txn_first_offset
        if open_txn is not None and not is_transactional:
            raise InvalidTxnStateError(
                f"Expected transactional write from producer {self.producer_id} at offset "
                f"{first_offset} in partition {self.topic_partition}")
        if open_txn is None and is_transactional:
            self._updated.current_txn_first_offset = first_offset
            self.started_transactions.append(TxnMetadata(self.producer_id, first_offset))

    def append_end_txn_marker(self, marker: EndTransactionMarker, producer_epoch: int, offset: int,
                              timestamp: int) -> CompletedTxn | None:
        """Close the open transaction; a marker with no transaction open completes nothing."""
        self._check_producer_epoch(producer_epoch, offset)
        self._check_coordinator_epoch(marker, offset)
        open_txn = self._updated.current_txn_first_offset
        completed = None
        if open_txn is not None:
            completed = CompletedTxn(self.producer_id, open_txn, offset,
                                     marker.control_type == ControlRecordType.ABORT)
        self._updated.end_transaction(producer_epoch, marker.coordinator_epoch, timestamp)
        return completed

    def _check_producer_epoch(self, producer_epoch: int, offset: int) -> None:
        if producer_epoch >= self._updated.producer_epoch:
            return
        message = (f"Epoch of producer {self.producer_id} at offset {offset} in "
                   f"{self.topic_partition} is {producer_epoch}, which is smaller than the last "
                   f"seen epoch {self._updated.producer_epoch}")
        if self.origin is AppendOrigin.REPLICATION:
            _log.warning(message)
        else:
            raise InvalidProducerEpochError(message)

    def _check_sequence(self, producer_epoch: int, first_seq: int, offset: int) -> None:
        updated = self._updated
        if producer_epoch != updated.producer_epoch:
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"Invalid sequence number for new epoch of producer {self.producer_id} at "
                    f"offset {offset} in partition {self.topic_partition}: {producer_epoch} "
                    f"(request epoch), {first_seq} (seq. number), {updated.producer_epoch} "
                    f"(current producer epoch)")
            return
        if not updated.is_empty:
            current_last_seq = updated.last_seq
        elif producer_epoch == self.current_entry.producer_epoch:
            current_last_seq = self.current_entry.last_seq
        else:
            current_last_seq = NO_SEQUENCE
        # with no known epoch (all its data deleted by retention or DeleteRecords) any sequence goes
        if self.current_entry.producer_epoch == NO_PRODUCER_EPOCH:
            return
        if _in_sequence(current_last_seq, first_seq):
            return
        raise OutOfOrderSequenceError(
            f"Out of order sequence number for producer {self.producer_id} at offset {offset} in "
            f"partition {self.topic_partition}: {first_seq} (incoming seq. number), "
            f"{current_last_seq} (current end sequence number)")

    def _check_coordinator_epoch(self, marker: EndTransactionMarker, offset: int) -> None:
        if self._updated.coordinator_epoch <= marker.coordinator_epoch:
            return
        message = (f"Invalid coordinator epoch for producerId {self.producer_id} at offset "
                   f"{offset} in partition {self.topic_partition}: {marker.coordinator_epoch} "
                   f"(zombie), {self._updated.coordinator_epoch} (current)")
        if self.origin is AppendOrigin.REPLICATION:
            _log.info(message)
        else:
            raise TransactionCoordinatorFencedError(message)

    def __repr__(self) -> str:
        return (f"ProducerAppendInfo(producer_id={self.producer_id}, entry={self._updated!r}, "
                f"started_transactions={self.started_transactions})")


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)

