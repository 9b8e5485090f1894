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

:meth:`CleanerFilter.filter_into` is ``filter_to`` with this filter, the plain v2 batches (no
codec, not control, records judged one by one) done in C (``_cleaner_scan.filter_batch``, an
optional extension): the same decisions, output bytes and counts, without decoding a record
into objects or re-encoding the kept ones in Python. Every other batch, and any the C code
hands back (malformed, or a case it leaves to Python), goes through ``filter_to``.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from ...format.log_stream import AnyBatch
from ...format.record import Record
from ...format.record_batch import CODEC_MASK, CONTROL_FLAG, RECORD_BATCH_OVERHEAD
from ...format.record_filter import (BatchRetention, BatchRetentionResult, FilterResult,
                                    empty_batch_header, filter_to)
from ...speedups import accelerator
from .cleaned_txn import CleanedTransactionMetadata
from .cleaner_log import LastRecord
from .offset_map import SkimpyOffsetMap

# Switched off (pylogctl/speedups.py), or no extension: every batch goes through filter_to.
_c = accelerator("pylogctl.storage.cleaner._cleaner_scan")
_filter_batch = None if _c is None else _c.filter_batch
_INT64 = range(-(1 << 63), 1 << 63)
_DELETE, _RETAIN_EMPTY = BatchRetention.DELETE, BatchRetention.RETAIN_EMPTY


class InvalidCounter(Protocol):
    """Where the filter counts the keyless records it drops (the cleaner's statistics)."""

    invalid_messages_read: int


class CleanerFilter:
    """The filter for one source segment (see the module docstring); ``stats`` counts the
    keyless records it drops."""

    __slots__ = ("current_time", "delete_retention_ms", "_latest", "_get", "_present",
                 "_retain_legacy", "_txn", "_last_records", "_upper", "_stats",
                 "_discard_batch_records", "_offsets")

    def __init__(self, offset_map: SkimpyOffsetMap, now_ms: int, delete_retention_ms: int,
                 retain_legacy_deletes: bool, txn: CleanedTransactionMetadata,
                 last_records: dict[int, LastRecord], upper_bound_of_round: int,
                 stats: InvalidCounter) -> None:
        self.current_time = now_ms
        self.delete_retention_ms = delete_retention_ms
        self._latest = offset_map.latest_offset
        self._get = offset_map.get
        self._present = offset_map.present()
        self._offsets = offset_map.lookup_table()
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

    def filter_into(self, buf, batches: Sequence[AnyBatch], out: bytearray, *,
                    max_record_batch_size: int, stop_above: int | None = None) -> FilterResult:
        """``filter_to(batches, self, out, ...)`` for batches located in ``buf`` (the
        segment's mapped bytes), the plain v2 ones filtered in C (see the module docstring).

        Step for step what ``filter_to`` does: each batch judged once, its bytes counted, a
        deleted batch skipped, any other filtered, and a stop after the one that takes
        ``out`` past ``stop_above``; a batch the C code does not take goes through
        ``filter_to`` alone, with its verdict."""
        horizon = self.current_time + self.delete_retention_ms
        scan = _filter_batch
        if scan is None or self.current_time not in _INT64 or horizon not in _INT64:
            return filter_to(batches, self, out, max_record_batch_size=max_record_batch_size,
                             stop_above=stop_above)
        result = FilterResult()
        latest, offsets, get, now = self._latest, self._offsets, self._get, self.current_time
        for batch in batches:
            verdict = self.check_batch_retention(batch)
            size = batch.size_in_bytes
            if verdict.retention is _DELETE:
                result.bytes_read += size
                continue
            got = NotImplemented
            if not (batch.magic != 2 or batch.attributes & (CODEC_MASK | CONTROL_FLAG)
                    or self._discard_batch_records):
                got = scan(buf, batch.position, out, latest, offsets, get, now, horizon)
                if got is not NotImplemented and got[3] > size and got[3] > max_record_batch_size:
                    del out[len(out) - got[3]:]  # outgrew the limit: filter_to warns about it
                    got = NotImplemented
            if got is NotImplemented:
                part = filter_to((batch,), _Judged(self, verdict), out,
                                 max_record_batch_size=max_record_batch_size)
                result.messages_read += part.messages_read
                result.bytes_read += part.bytes_read
                result._retained(part.max_timestamp, part.shallow_offset_of_max_timestamp,
                                 part.max_offset, part.messages_retained, part.bytes_retained)
            else:
                read, kept, invalid, written, max_ts, shallow, max_offset = got
                self._stats.invalid_messages_read += invalid
                result.bytes_read += size
                result.messages_read += read
                if kept:
                    result._retained(max_ts, shallow, max_offset, kept, written)
                elif verdict.retention is _RETAIN_EMPTY:
                    out += empty_batch_header(batch)
                    result._retained(batch.max_timestamp, batch.last_offset, batch.last_offset,
                                     0, RECORD_BATCH_OVERHEAD)
            if stop_above is not None and len(out) > stop_above:
                break
        return result


class _Judged:
    """A :class:`CleanerFilter` whose verdict on the next batch is already known (its
    ``check_batch_retention`` updates transaction state, so it runs once per batch)."""

    __slots__ = ("_filter", "_verdict", "current_time", "delete_retention_ms")

    def __init__(self, record_filter: CleanerFilter, verdict: BatchRetentionResult) -> None:
        self._filter = record_filter
        self._verdict = verdict
        self.current_time = record_filter.current_time
        self.delete_retention_ms = record_filter.delete_retention_ms

    def check_batch_retention(self, batch: AnyBatch) -> BatchRetentionResult:
        return self._verdict

    def filter_records(self, batch: AnyBatch, records: list[Record]) -> list[Record]:
        return self._filter.filter_records(batch, records)
