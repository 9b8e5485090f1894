"""One transactional id's state (Kafka's ``TransactionMetadata``): the producer id and epoch it
holds, the state of its transaction and the partitions in it, and the transitions the
coordinator makes between those states.

A transition never edits the cached metadata: ``prepare_*`` returns the next metadata, the
coordinator appends it to ``__transaction_state`` and only then puts it in the cache, so a
failed write leaves the state as it was (Kafka's ``TxnTransitMetadata`` and
``completeTransitionTo``). The states and their order:

    Empty -> Ongoing (AddPartitionsToTxn/AddOffsetsToTxn) -> PrepareCommit | PrepareAbort
    (EndTxn, or a fence/timeout for an abort) -> CompleteCommit | CompleteAbort
    (the markers are written) -> Ongoing (the next transaction) or Empty (InitProducerId)

This is transactions V1 (``transaction.version`` 0): the producer epoch changes only at
InitProducerId and when the coordinator fences a producer, never at the end of a transaction.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..format.transaction_log_records import TransactionState

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
SHORT_MAX = 32767

EMPTY = TransactionState.Empty
ONGOING = TransactionState.Ongoing
PREPARE_COMMIT = TransactionState.PrepareCommit
PREPARE_ABORT = TransactionState.PrepareAbort
COMPLETE_COMMIT = TransactionState.CompleteCommit
COMPLETE_ABORT = TransactionState.CompleteAbort

TopicPartition = tuple[str, int]


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka keeps the last epoch for fencing: an id at ``Short.MaxValue - 1`` is rotated."""
    return epoch >= SHORT_MAX - 1


class ProducerFenced(Exception):
    """The request's producer epoch is not the current one (PRODUCER_FENCED)."""


@dataclass(frozen=True)
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: frozenset[TopicPartition] = field(default_factory=frozenset)
    start_ms: int = -1  # when the first partition of the transaction was added
    last_update_ms: int = -1
    last_producer_epoch: int = NO_PRODUCER_EPOCH  # for a retried InitProducerId
    previous_producer_id: int = NO_PRODUCER_ID

    @property
    def exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    def _to(self, **changes: object) -> "TransactionMetadata":
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    # -- transitions (``TransactionMetadata.prepare*``) ----------------------------------------
    def prepare_increment_producer_epoch(self, timeout_ms: int, expected_epoch: int | None,
                                         now_ms: int) -> "TransactionMetadata":
        """InitProducerId on a finished transaction: the next epoch, or the same one again
        for a retry of a call that succeeded (``expected_epoch`` is the previous epoch)."""
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch
        else:
            raise ProducerFenced(f"Expected producer epoch {expected_epoch} does not match "
                                 f"current producer epoch {self.producer_epoch} or previous "
                                 f"producer epoch {self.last_producer_epoch}")
        return self._to(producer_epoch=epoch, last_producer_epoch=last, timeout_ms=timeout_ms,
                        state=EMPTY, partitions=frozenset(), start_ms=-1,
                        last_update_ms=now_ms)

    def prepare_producer_id_rotation(self, new_producer_id: int, timeout_ms: int, now_ms: int,
                                     record_last_epoch: bool) -> "TransactionMetadata":
        """The epochs of this producer id are used up: continue with a new id at epoch 0."""
        return self._to(previous_producer_id=self.producer_id, producer_id=new_producer_id,
                        producer_epoch=0,
                        last_producer_epoch=(self.producer_epoch if record_last_epoch
                                             else NO_PRODUCER_EPOCH),
                        timeout_ms=timeout_ms, state=EMPTY, partitions=frozenset(),
                        start_ms=-1, last_update_ms=now_ms)

    def prepare_fence_producer_epoch(self) -> "TransactionMetadata":
        """Bump the epoch so the current producer is fenced before its transaction is aborted
        (a new producer with the same id, or a timeout); the epoch is never handed out."""
        if self.producer_epoch == SHORT_MAX:
            raise ValueError("Cannot fence producer with epoch equal to Short.MaxValue")
        bumped = self.producer_epoch if self.exhausted else self.producer_epoch + 1
        return self._to(producer_epoch=bumped, last_producer_epoch=NO_PRODUCER_EPOCH)

    def prepare_add_partitions(self, added: frozenset[TopicPartition],
                               now_ms: int) -> "TransactionMetadata":
        start = now_ms if self.state in (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) \
            else self.start_ms
        return self._to(state=ONGOING, partitions=self.partitions | added, start_ms=start,
                        last_update_ms=now_ms)

    def prepare_abort_or_commit(self, commit: bool, now_ms: int) -> "TransactionMetadata":
        return self._to(state=PREPARE_COMMIT if commit else PREPARE_ABORT,
                        last_update_ms=now_ms)

    def prepare_complete(self, now_ms: int) -> "TransactionMetadata":
        state = COMPLETE_COMMIT if self.state == PREPARE_COMMIT else COMPLETE_ABORT
        return self._to(state=state, partitions=frozenset(), last_update_ms=now_ms,
                        last_producer_epoch=self.producer_epoch)

    # -- the ``__transaction_state`` value -----------------------------------------------------
    def to_value(self) -> dict[str, object]:
        """``TransactionLogValue`` fields as Kafka's ``TransactionLog.valueToBytes`` sets them
        (partitions null when Empty, grouped by topic otherwise)."""
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(self.partitions):
            by_topic.setdefault(topic, []).append(index)
        return {
            "producerId": self.producer_id, "producerEpoch": self.producer_epoch,
            "transactionTimeoutMs": self.timeout_ms, "transactionStatus": int(self.state),
            "transactionPartitions": (None if self.state == EMPTY else
                                      [{"topic": t, "partitionIds": ids}
                                       for t, ids in by_topic.items()]),
            "transactionLastUpdateTimestampMs": self.last_update_ms,
            "transactionStartTimestampMs": self.start_ms,
        }

    @classmethod
    def from_value(cls, transactional_id: str, value: dict[str, object]
                   ) -> "TransactionMetadata":
        """``TransactionLog.readTxnRecordValue`` (value v0 or v1)."""
        state = TransactionState(int(value["transactionStatus"]))  # type: ignore[arg-type]
        partitions: set[TopicPartition] = set()
        if state != EMPTY:
            for entry in value.get("transactionPartitions") or ():  # type: ignore[union-attr]
                partitions.update((entry["topic"], p) for p in entry["partitionIds"])
        def number(name: str, default: int = 0) -> int:
            return int(value.get(name, default))  # type: ignore[call-overload]
        return cls(transactional_id, number("producerId"), number("producerEpoch"),
                   number("transactionTimeoutMs"), state, frozenset(partitions),
                   number("transactionStartTimestampMs"),
                   number("transactionLastUpdateTimestampMs"),
                   previous_producer_id=number("previousProducerId", NO_PRODUCER_ID))
