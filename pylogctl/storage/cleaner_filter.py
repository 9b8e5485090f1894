"""The log cleaner's record filter (Kafka's ``logCleanerFilter`` in ``Cleaner.cleanInto``):
which batches and records of a source segment a cleaning keeps.

Per batch (``checkBatchRetention``): transactional state decides whether it may be discarded
(aborted data; a marker whose transaction has no batch left, once its delete horizon passed);
the last batch of each active producer, and the last batch before the first uncleanable offset,
are kept even if no record stays; otherwise a discardable batch goes unread, and any other
goes if it ends up empty. Per record (``shouldRetainRecord``): past the offset map's latest
offset it stays; a keyless record goes (counted invalid); a record stays if no later offset of
its key is mapped and it has a value, or is a tombstone whose batch's delete horizon has not
passed (magic < 2: whose segment is newer than the legacy horizon). Control records stay with
their batch.
"""

from __future__ import annotations

from typing import Protocol

from ..format.log_stream import AnyBatch
from ..format.record import Record
from ..format.record_filter import BatchRetention, BatchRetentionResult
from .cleaned_txn import CleanedTransactionMetadata
from .cleaner_log import LastRecord
from .offset_map import SkimpyOffsetMap


class InvalidCounter(Protocol):
    """Where the filter counts the keyless records it drops (the cleaner's statistics)."""

    invalid_messages_read: int


class CleanerFilter:
    """The filter for one source segment (see the module docstring); ``stats`` counts the
    keyless records it drops."""

    __slots__ = ("current_time", "delete_retention_ms", "_latest", "_get", "_present",
                 "_retain_legacy", "_txn", "_last_records", "_upper", "_stats",
                 "_discard_batch_records")

    def __init__(self, offset_map: SkimpyOffsetMap, now_ms: int, delete_retention_ms: int,
                 retain_legacy_deletes: bool, txn: CleanedTransactionMetadata,
                 last_records: dict[int, LastRecord], upper_bound_of_round: int,
                 stats: InvalidCounter) -> None:
        self.current_time = now_ms
        self.delete_retention_ms = delete_retention_ms
        self._latest = offset_map.latest_offset
        self._get = offset_map.get
        self._present = offset_map.present()
        self._retain_legacy = retain_legacy_deletes
        self._txn = txn
        self._last_records = last_records
        self._upper = upper_bound_of_round
        self._stats = stats
        self._discard_batch_records = False

    def check_batch_retention(self, batch: AnyBatch) -> BatchRetentionResult:
        control = batch.is_control
        if control:
            can_discard = self._txn.on_control_batch_read(batch)
            horizon = batch.delete_horizon_ms
            self._discard_batch_records = (can_discard and horizon is not None
                                           and horizon <= self.current_time)
        else:
            can_discard = self._txn.on_batch_read(batch)
            self._discard_batch_records = can_discard
        if batch.producer_id > -1 and self._is_last_batch_of_producer(batch):
            retention = BatchRetention.RETAIN_EMPTY
        elif batch.next_offset == self._upper:
            retention = BatchRetention.RETAIN_EMPTY  # keep the last offset of the round
        elif self._discard_batch_records:
            retention = BatchRetention.DELETE
        else:
            retention = BatchRetention.DELETE_EMPTY
        return BatchRetentionResult.of(retention, can_discard and control)

    def _is_last_batch_of_producer(self, batch: AnyBatch) -> bool:
        last = self._last_records.get(batch.producer_id)
        if last is None:
            return False
        if last.last_data_offset is not None:
            return batch.last_offset == last.last_data_offset
        return batch.is_control and batch.producer_epoch == last.producer_epoch

    def filter_records(self, batch: AnyBatch, records: list[Record]) -> list[Record]:
        """Kafka's ``shouldRetainRecord`` for each record of ``batch``."""
        if self._discard_batch_records:
            return []  # kept only for its producer's sequence: the records go
        latest = self._latest
        if batch.is_control or batch.base_offset > latest:
            return records
        if batch.magic >= 2:
            horizon = batch.delete_horizon_ms
            retain_deletes = horizon is None or self.current_time < horizon
        else:
            retain_deletes = self._retain_legacy
        present, get = self._present, self._get
        kept = []
        for record in records:
            offset = record.offset
            if offset > latest:
                kept.append(record)
                continue
            key = record.key
            if key is None:
                self._stats.invalid_messages_read += 1
                continue
            mapped = present(key)
            if offset >= (get(key) if mapped is None else mapped) and (
                    retain_deletes or record.value is not None):
                kept.append(record)
        return kept
