"""Copying the records a filter keeps into new batches (Kafka's ``MemoryRecords.filterTo``).

A filter first judges each batch as a whole (:class:`BatchRetention`: drop it unread, keep it
even if every record goes, or keep it only if a record stays), then each record of a batch not
dropped. A batch whose records all stay is copied byte for byte; one that lost records, or that
needs a delete horizon, is rebuilt with the same codec, producer fields, leader epoch,
timestamp type and last offset delta (so the producer's last sequence survives), each record
keeping its offset, timestamp, key, value and headers. A batch kept with no records becomes a
61-byte header (``writeEmptyHeader``: no codec, base timestamp -1, the batch's max timestamp).

KIP-534: a v2 batch that keeps a tombstone, or a transaction marker that may be dropped later,
and has no delete horizon yet gets one: ``now + delete.retention.ms``, stored as the base
timestamp with the delete-horizon attribute, record timestamps rebased onto it. A later
cleaning drops such tombstones and markers once ``now`` reaches the horizon.

Legacy (magic 0/1) entries are copied whole or dropped whole; rebuilding a compressed legacy
wrapper that keeps only some of its messages is not supported (:class:`UnsupportedFormatError`).
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import Iterable, Protocol

from ..errors import PylogctlError, UnsupportedFormatError
from .compression import compress
from .log_stream import AnyBatch
from .record import NO_TIMESTAMP, Record, TimestampType
from .record_batch import (CODEC_MASK, RECORD_BATCH_OVERHEAD, compute_attributes,
                           encode_batch_header, encode_record)

logger = logging.getLogger(__name__)


class BatchRetention(enum.Enum):
    DELETE = "delete"  # drop the batch without reading its records
    RETAIN_EMPTY = "retain-empty"  # keep the batch even if no record stays
    DELETE_EMPTY = "delete-empty"  # drop the batch if no record stays


@dataclass(frozen=True)
class BatchRetentionResult:
    retention: BatchRetention
    contains_marker_for_empty_txn: bool = False

    @staticmethod
    def of(retention: BatchRetention, contains_marker_for_empty_txn: bool = False
           ) -> "BatchRetentionResult":
        """The shared instance for these values (one per batch would be garbage)."""
        return _VERDICTS[retention, contains_marker_for_empty_txn]


_VERDICTS = {(r, m): BatchRetentionResult(r, m) for r in BatchRetention for m in (False, True)}


class RecordFilter(Protocol):
    current_time: int
    delete_retention_ms: int

    def check_batch_retention(self, batch: AnyBatch) -> BatchRetentionResult: ...

    def filter_records(self, batch: AnyBatch, records: list[Record]) -> list[Record]:
        """The records of ``batch`` to keep, in order (Kafka's ``shouldRetainRecord`` applied to
        each: one call per batch keeps the per-record loop in the filter)."""
        ...


class RecordFilterError(PylogctlError):
    """A batch cannot be filtered the way Kafka filters it."""


@dataclass
class FilterResult:
    """What one call read and wrote (Kafka's ``FilterResult``): the counts feed the cleaner's
    statistics, the max offset/timestamp its segment append."""

    messages_read: int = 0
    bytes_read: int = 0
    messages_retained: int = 0
    bytes_retained: int = 0
    max_offset: int = -1
    max_timestamp: int = NO_TIMESTAMP
    shallow_offset_of_max_timestamp: int = -1

    def _retained(self, max_timestamp: int, shallow_offset: int, max_offset: int,
                  messages: int, size: int) -> None:
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.shallow_offset_of_max_timestamp = shallow_offset
        if max_offset > self.max_offset:
            self.max_offset = max_offset
        self.messages_retained += messages
        self.bytes_retained += size


def filter_to(batches: Iterable[AnyBatch], record_filter: RecordFilter, out: bytearray, *,
              max_record_batch_size: int, stop_above: int | None = None) -> FilterResult:
    """Append the retained batches to ``out``.

    ``stop_above``: stop after the batch that makes ``out`` longer than this (Kafka returns
    early when a rebuilt batch outgrows its write buffer); the caller continues from
    ``bytes_read``.
    """
    result = FilterResult()
    for batch in batches:
        verdict = record_filter.check_batch_retention(batch)
        result.bytes_read += batch.size_in_bytes
        if verdict.retention is BatchRetention.DELETE:
            continue
        _filter_batch(batch, verdict, record_filter, out, result, max_record_batch_size)
        if stop_above is not None and len(out) > stop_above:
            break
    return result


def _filter_batch(batch: AnyBatch, verdict: BatchRetentionResult, record_filter: RecordFilter,
                  out: bytearray, result: FilterResult, max_record_batch_size: int) -> None:
    magic = batch.magic
    records = batch.records()
    result.messages_read += len(records)
    retained = record_filter.filter_records(batch, records)
    write_original = len(retained) == len(records)
    if magic < 2 and any(getattr(r, "magic", magic) != magic for r in retained):
        write_original = False  # KAFKA-4298: rewritten with the wrapper's magic
    if retained:
        max_offset = retained[-1].offset
        needs_horizon = (magic >= 2 and batch.delete_horizon_ms is None and (
            verdict.contains_marker_for_empty_txn or any(r.value is None for r in retained)))
        if write_original and not needs_horizon:
            out += batch.raw_bytes()
            result._retained(batch.max_timestamp, batch.last_offset, batch.last_offset,
                             len(retained), batch.size_in_bytes)
            return
        if magic < 2:
            raise UnsupportedFormatError(
                f"Cannot rewrite the magic v{magic} entry at offset {batch.last_offset}: "
                f"compacting part of a compressed pre-0.11 message set is not supported",
                position=batch.position)
        horizon = (record_filter.current_time + record_filter.delete_retention_ms
                   if needs_horizon else batch.delete_horizon_ms)
        data, max_ts, shallow = rebuild_batch(batch, retained, horizon)
        if len(data) > batch.size_in_bytes and len(data) > max_record_batch_size:
            logger.warning("Record batch with last offset %d exceeded max record batch size %d "
                           "after cleaning (new size is %d). Consumers with version earlier "
                           "than 0.10.1.0 may need to increase their fetch sizes.",
                           batch.last_offset, max_record_batch_size, len(data))
        out += data
        result._retained(max_ts, shallow, max_offset, len(retained), len(data))
    elif verdict.retention is BatchRetention.RETAIN_EMPTY:
        if magic < 2:
            raise RecordFilterError(
                f"Empty batches are only supported for magic v2 and above: the magic v{magic} "
                f"entry ending at offset {batch.last_offset} closes the cleaning round, and "
                f"compaction removes all of it (Kafka's cleaner fails here too)",
                position=batch.position)
        out += empty_batch_header(batch)
        result._retained(batch.max_timestamp, batch.last_offset, batch.last_offset, 0,
                         RECORD_BATCH_OVERHEAD)


def rebuild_batch(batch, retained: list[Record],
                  delete_horizon_ms: int | None) -> tuple[bytes, int, int]:
    """A v2 batch holding ``retained`` (some of ``batch``'s records) with ``batch``'s header
    fields (``buildRetainedRecordsInto``); returns the bytes, the max timestamp and the shallow
    offset of the max timestamp.

    What ``MemoryRecordsBuilder`` writes (the tests check it against
    :class:`~pylogctl.format.builder.RecordBatchBuilder`): the base timestamp is the horizon or
    the first record's timestamp, every record is re-encoded against it with attributes 0, the
    last offset delta is the original's (``overrideLastOffset``: the producer's last sequence
    survives), the codec is the original's at its default level. Assembled here rather than
    through the builder, which cannot keep a last offset beyond its last record.
    """
    lat = batch.timestamp_type == TimestampType.LOG_APPEND_TIME
    base_offset = batch.base_offset
    base_ts = retained[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    area = b"".join([encode_record(r.offset - base_offset, r.timestamp - base_ts, r.key, r.value,
                                   r.headers) for r in retained])
    codec = batch.attributes & CODEC_MASK
    if codec:
        area = compress(codec, area)
    max_ts = batch.max_timestamp if lat else max(NO_TIMESTAMP, *(r.timestamp for r in retained))
    data = encode_batch_header(
        base_offset=base_offset, records_area=area, last_offset_delta=batch.last_offset_delta,
        partition_leader_epoch=batch.partition_leader_epoch,
        attributes=compute_attributes(codec, batch.timestamp_type, batch.is_transactional,
                                      batch.is_control, delete_horizon_ms is not None),
        base_timestamp=base_ts, max_timestamp=max_ts, producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
        records_count=len(retained))
    return data, max_ts, batch.last_offset if lat or max_ts != NO_TIMESTAMP else -1


def empty_batch_header(batch) -> bytes:
    """The header Kafka keeps for a batch retained without records (``writeEmptyHeader``)."""
    attributes = compute_attributes(0, batch.timestamp_type, batch.is_transactional,
                                    batch.is_control, False)
    return encode_batch_header(
        base_offset=batch.base_offset, records_area=b"", last_offset_delta=batch.last_offset_delta,
        partition_leader_epoch=batch.partition_leader_epoch, attributes=attributes,
        base_timestamp=NO_TIMESTAMP, max_timestamp=batch.max_timestamp,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, records_count=0)
