"""Which transactional batches and markers the log cleaner may drop (Kafka's
``CleanedTransactionMetadata``).

The cleaner only works below the last stable offset, so every transaction it meets is decided,
and the aborted ones are listed in the ``.txnindex`` files. They are loaded ahead (a heap by
first offset) and become "ongoing aborted" once the cleaner reaches their first offset; a
transactional data batch of such a producer is aborted data (dropped whatever its keys), any
other transactional batch belongs to a committed transaction. At the marker:

- ABORT: kept while batches of the transaction were seen in this pass (its ``.txnindex`` entry
  is then written to the cleaned segment); once they are all gone it may go too.
- COMMIT: may go once no batch of the transaction is left.
- other control records (KRaft's) are never dropped; an empty control batch (a marker already
  cleaned away) may go.

"May go" is the marker's half of the decision: the cleaner still keeps it until its delete
horizon has passed, as for a tombstone.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Iterable, Protocol

from ...format.control import ControlRecordType, parse_control_key
from ..transaction_index import AbortedTxn


class _TxnIndexWriter(Protocol):
    def append(self, txn: AbortedTxn) -> None: ...


class _Batch(Protocol):
    """What is read of a batch (a v2 :class:`~pylogctl.format.record_batch.RecordBatch`)."""

    @property
    def last_offset(self) -> int: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def records_count(self) -> int | None: ...
    def records(self) -> list: ...


@dataclass
class _AbortedTxnMetadata:
    aborted_txn: AbortedTxn
    last_observed_batch_offset: int | None = None


@dataclass
class CleanedTransactionMetadata:
    """Transaction state carried through one cleaning (or one offset-map pass)."""

    cleaned_index: _TxnIndexWriter | None = None
    _ongoing_committed: set[int] = field(default_factory=set)
    _ongoing_aborted: dict[int, _AbortedTxnMetadata] = field(default_factory=dict)
    _aborted: list[tuple[int, int, AbortedTxn]] = field(default_factory=list)  # heap
    _seq: int = 0

    def add_aborted_transactions(self, txns: Iterable[AbortedTxn]) -> None:
        for txn in txns:
            heapq.heappush(self._aborted, (txn.first_offset, self._seq, txn))
            self._seq += 1

    def _consume_aborted_txns_up_to(self, offset: int) -> None:
        heap = self._aborted
        while heap and heap[0][0] <= offset:
            txn = heapq.heappop(heap)[2]
            if txn.producer_id not in self._ongoing_aborted:
                self._ongoing_aborted[txn.producer_id] = _AbortedTxnMetadata(txn)

    def on_control_batch_read(self, batch: _Batch) -> bool:
        """Note a control batch; True if it may be discarded."""
        self._consume_aborted_txns_up_to(batch.last_offset)
        records = batch.records()
        if not records:
            return True  # an empty control batch was already cleaned
        control_type = ControlRecordType.from_id(parse_control_key(records[0].key)[1])
        producer_id = batch.producer_id
        if control_type == ControlRecordType.ABORT:
            aborted = self._ongoing_aborted.pop(producer_id, None)
            if aborted is not None and aborted.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(aborted.aborted_txn)
                return False
            return True
        if control_type == ControlRecordType.COMMIT:
            if producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(producer_id)
                return False
            return True
        return False

    def on_batch_read(self, batch: _Batch) -> bool:
        """Note a data batch; True if it is aborted data (safe to discard)."""
        if self._aborted:
            self._consume_aborted_txns_up_to(batch.last_offset)
        if batch.is_transactional:
            aborted = self._ongoing_aborted.get(batch.producer_id)
            if aborted is not None:
                aborted.last_observed_batch_offset = batch.last_offset
                return True
            self._ongoing_committed.add(batch.producer_id)
        return False
