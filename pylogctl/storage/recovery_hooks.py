"""What segment recovery calls on the partition's leader-epoch cache and producer state.

``LogSegment.recover`` re-reads every batch; for v2 batches it tells the epoch cache where each
new, larger leader epoch starts, and replays the batch into producer state, which reports a
transaction a marker completes so an aborted one lands in the ``.txnindex``. These Protocols
are the whole contract: any object with these methods plugs in.
"""

from __future__ import annotations

from typing import Protocol

from ..format.record_batch import RecordBatch
from .transaction_index import CompletedTxnLike


class LeaderEpochCacheHook(Protocol):
    def latest_epoch(self) -> int | None:
        """The largest epoch assigned so far, or None when the cache is empty."""
        ...

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset``."""
        ...


class ProducerStateHook(Protocol):
    def update(self, batch: RecordBatch) -> CompletedTxnLike | None:
        """Replay a batch carrying a producer id (as replication does); return the
        transaction it completes when it is a COMMIT/ABORT marker."""
        ...

    def last_stable_offset(self, completed_txn: CompletedTxnLike) -> int:
        """The last stable offset once ``completed_txn`` ends (for its txn-index entry)."""
        ...

    def complete_txn(self, completed_txn: CompletedTxnLike) -> None:
        """Forget the transaction as ongoing."""
        ...

    def update_map_end_offset(self, offset: int) -> None:
        """Producer state now reflects the log up to ``offset`` (exclusive)."""
        ...
