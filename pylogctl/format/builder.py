"""Writing v2 record batches that Kafka loads, byte for byte as ``MemoryRecordsBuilder``.

For uncompressed input the output is identical to Kafka's: baseTimestamp is the first record's
timestamp (or the delete horizon when one is set), maxTimestamp the largest record timestamp
(or the log-append time), deltas are relative to those, record attributes are 0. Compressed
batches use the framing Kafka's Java client writes (see :mod:`pylogctl.format.compression`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..errors import UsageError
from .compression import Codec, compress
from .control import ControlRecordType, EndTransactionMarker, encode_control_key
from .record import (NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE,
                     NO_TIMESTAMP, Header, TimestampType)
from .record_batch import compute_attributes, encode_batch_header, encode_record
from .varint import INT32_MAX

HeaderLike = Header | tuple["str | bytes", "bytes | None"]  # bytes: a raw (maybe non-UTF-8) key


@dataclass
class RecordBatchBuilder:
    """Accumulate records, then :meth:`build` one batch.

    >>> b = RecordBatchBuilder(base_offset=0)
    >>> b.append(1700000000000, b"key", b"value")
    0
    >>> len(b.build())
    76
    """

    base_offset: int = 0
    codec: Codec = Codec.NONE
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    log_append_time: int | None = None
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE
    is_transactional: bool = False
    is_control: bool = False
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    delete_horizon_ms: int | None = None
    compression_level: int | None = None
    _records: list[bytes] = field(default_factory=list, repr=False)
    _base_ts: int | None = field(default=None, repr=False)
    _max_ts: int = field(default=NO_TIMESTAMP, repr=False)
    _last_offset: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.codec = Codec(int(self.codec))
        if self.delete_horizon_ms is not None:
            self._base_ts = self.delete_horizon_ms
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME and self.log_append_time is None:
            raise UsageError("a LogAppendTime batch needs log_append_time")

    @property
    def num_records(self) -> int:
        return len(self._records)

    def next_offset(self) -> int:
        return self.base_offset if self._last_offset is None else self._last_offset + 1

    def append(self, timestamp: int, key: bytes | None, value: bytes | None,
               headers: Sequence[HeaderLike] = ()) -> int:
        """Append at the next sequential offset; return that offset."""
        offset = self.next_offset()
        self.append_with_offset(offset, timestamp, key, value, headers)
        return offset

    def append_with_offset(self, offset: int, timestamp: int, key: bytes | None,
                           value: bytes | None, headers: Sequence[HeaderLike] = ()) -> None:
        """Append at an explicit offset (strictly increasing), as compaction output needs."""
        if self._last_offset is not None and offset <= self._last_offset:
            raise UsageError(f"Illegal offset {offset} following previous offset {self._last_offset} "
                             f"(Offsets must increase monotonically).")
        if offset < self.base_offset:
            raise UsageError(f"Offset {offset} is below the batch base offset {self.base_offset}")
        if offset - self.base_offset > INT32_MAX:
            raise UsageError(f"Maximum offset delta exceeded, base offset: {self.base_offset}, "
                             f"last offset: {offset}")
        if timestamp < 0 and timestamp != NO_TIMESTAMP:
            raise UsageError(f"Invalid negative timestamp {timestamp}")
        if self._base_ts is None:
            self._base_ts = timestamp
        self._records.append(encode_record(offset - self.base_offset, timestamp - self._base_ts,
                                           key, value, headers))
        if timestamp > self._max_ts:
            self._max_ts = timestamp
        self._last_offset = offset

    def append_control(self, control_type: ControlRecordType, value: bytes, timestamp: int) -> int:
        """Append a control record (the batch must have been created with ``is_control``)."""
        if not self.is_control:
            raise UsageError("control records go into a control batch (is_control=True)")
        return self.append(timestamp, encode_control_key(control_type), value)

    def build(self) -> bytes:
        """Return the complete batch (offset and length prefix included)."""
        if not self._records:
            raise UsageError("cannot build a batch with no records")
        area = b"".join(self._records)
        if self.codec is not Codec.NONE:
            area = compress(self.codec, area, self.compression_level)
        max_ts = (self.log_append_time if self.timestamp_type == TimestampType.LOG_APPEND_TIME
                  else self._max_ts)
        attrs = compute_attributes(self.codec, self.timestamp_type, self.is_transactional,
                                   self.is_control, self.delete_horizon_ms is not None)
        return encode_batch_header(
            base_offset=self.base_offset, records_area=area,
            last_offset_delta=self._last_offset - self.base_offset,
            partition_leader_epoch=self.partition_leader_epoch, attributes=attrs,
            base_timestamp=self._base_ts, max_timestamp=max_ts, producer_id=self.producer_id,
            producer_epoch=self.producer_epoch, base_sequence=self.base_sequence,
            records_count=len(self._records))


def build_batch(records: Sequence[tuple[int, bytes | None, bytes | None]] |
                Sequence[tuple[int, bytes | None, bytes | None, Sequence[HeaderLike]]],
                **options) -> bytes:
    """One-shot helper: ``records`` are ``(timestamp, key, value[, headers])`` tuples."""
    builder = RecordBatchBuilder(**options)
    for rec in records:
        builder.append(*rec)
    return builder.build()


def build_end_txn_marker(*, offset: int, producer_id: int, producer_epoch: int, commit: bool,
                         coordinator_epoch: int, timestamp: int,
                         partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH) -> bytes:
    """A COMMIT or ABORT marker batch, as a transaction coordinator has the leader write it."""
    control_type = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    builder = RecordBatchBuilder(base_offset=offset, producer_id=producer_id,
                                 producer_epoch=producer_epoch, is_transactional=True,
                                 is_control=True, partition_leader_epoch=partition_leader_epoch)
    builder.append_control(control_type, EndTransactionMarker(control_type, coordinator_epoch)
                           .encode_value(), timestamp)
    return builder.build()
