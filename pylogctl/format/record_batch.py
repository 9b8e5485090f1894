"""The v2 record batch (magic 2, Kafka 0.11+): header, records, and their encoding.

Layout (big-endian), 61-byte header then the record area::

    baseOffset int64 | length int32 | partitionLeaderEpoch int32 | magic int8 | crc uint32 |
    attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
    producerId int64 | producerEpoch int16 | baseSequence int32 | recordsCount int32 | records

``length`` counts the bytes after itself; the CRC-32C covers attributes to the end, so the
leader epoch can be stamped without recomputing it. Attribute bits: 0-2 codec, 3 timestamp
type, 4 transactional, 5 control, 6 delete horizon (then baseTimestamp holds the horizon).

Each record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
key (varint length, -1 = null), value (likewise), header count varint, headers (key length +
UTF-8 key, value length + value). Compressed batches compress the record area only.
"""

from __future__ import annotations

import struct
from typing import Iterable, Sequence

from ..errors import CompressionError, CorruptRecordError, PylogctlError
from .compression import Codec, decompress
from .crc import crc32c
from .record import (NO_TIMESTAMP, Header, Record, TimestampType)
from .varint import encode_varint, read_varint

HEADER = struct.Struct(">qiibIhiqqqhii")
RECORD_BATCH_OVERHEAD = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + length
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAGIC_OFFSET = 16
RECORDS_COUNT_OFFSET = 57

CODEC_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40
_INT32_MAX = 0x7FFFFFFF


class RecordBatch:
    """A v2 batch located at ``position`` in ``buf`` (bytes, or a memoryview over an mmap).

    Header fields are parsed eagerly (one ``struct`` call); the CRC and the records are only
    computed when asked for, so a shallow scan costs one unpack per batch.
    """

    __slots__ = ("base_offset", "length", "partition_leader_epoch", "magic", "crc", "attributes",
                 "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id",
                 "producer_epoch", "base_sequence", "records_count", "position", "_buf",
                 "_valid")

    def __init__(self, buf: bytes | memoryview, position: int = 0) -> None:
        (self.base_offset, self.length, self.partition_leader_epoch, self.magic, self.crc,
         self.attributes, self.last_offset_delta, self.base_timestamp, self.max_timestamp,
         self.producer_id, self.producer_epoch, self.base_sequence,
         self.records_count) = HEADER.unpack_from(buf, position)
        self.position = position
        self._buf = buf
        self._valid: bool | None = None

    # -- header-derived properties ---------------------------------------------------------
    @property
    def size_in_bytes(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def codec(self) -> Codec:
        return Codec.from_id(self.attributes & CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        return (TimestampType.LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_FLAG
                else TimestampType.CREATE_TIME)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def delete_horizon_ms(self) -> int | None:
        return self.base_timestamp if self.attributes & DELETE_HORIZON_FLAG else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == -1:
            return -1
        return _increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def count(self) -> int:
        return self.records_count

    # -- validation -------------------------------------------------------------------------
    def compute_crc(self) -> int:
        end = self.position + LOG_OVERHEAD + self.length
        view = memoryview(self._buf)
        try:
            return crc32c(view[self.position + ATTRIBUTES_OFFSET:end])
        finally:
            view.release()

    @property
    def is_valid(self) -> bool:
        """Kafka's ``isValid``: big enough for a header and the stored CRC-32C matches."""
        if self._valid is None:
            self._valid = (self.size_in_bytes >= RECORD_BATCH_OVERHEAD
                           and self.crc == self.compute_crc())
        return self._valid

    def ensure_valid(self) -> None:
        if self.size_in_bytes < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {self.size_in_bytes} is smaller than the "
                f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})", position=self.position)
        if not self.is_valid:
            raise CorruptRecordError(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {self.compute_crc()})",
                position=self.position)

    # -- records ----------------------------------------------------------------------------
    def raw_bytes(self) -> bytes:
        """The whole batch, offset and length prefix included."""
        return bytes(self._buf[self.position:self.position + LOG_OVERHEAD + self.length])

    def records(self) -> list[Record]:
        """Decode every record (decompressing if needed), with absolute offsets and timestamps."""
        start = self.position + RECORD_BATCH_OVERHEAD
        end = self.position + LOG_OVERHEAD + self.length
        if end < start:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {self.size_in_bytes} is smaller than the "
                f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})", position=self.position)
        codec = self.attributes & CODEC_MASK
        at: int | None = None
        try:
            if codec:
                data = decompress(codec, self._buf[start:end], 2)
            else:
                data = bytes(self._buf[start:end])
                at = start
            lat = self.max_timestamp if self.attributes & TIMESTAMP_TYPE_FLAG else None
            return decode_records(data, self.records_count, self.base_offset,
                                  self.base_timestamp, self.base_sequence, lat)
        except PylogctlError as exc:
            if isinstance(exc, CompressionError) or at is None or exc.position is None:
                exc.position = self.position
            else:
                exc.position += at
            raise

    def __iter__(self):
        return iter(self.records())

    def __repr__(self) -> str:
        return (f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
                f"count={self.records_count}, position={self.position}, "
                f"size={self.size_in_bytes}, codec={self.codec})")


def _increment_sequence(sequence: int, increment: int) -> int:
    if sequence > _INT32_MAX - increment:
        return increment - (_INT32_MAX - sequence) - 1
    return sequence + increment


def decode_records(data: bytes, count: int, base_offset: int, base_timestamp: int,
                   base_sequence: int, log_append_time: int | None) -> list[Record]:
    """Decode ``count`` v2 records from an (uncompressed) record area.

    Follows ``DefaultRecord.readFrom``: every record's declared size must match what was read,
    and nothing may be left after the last record. Error positions are relative to ``data``.
    This is the hot loop of every deep read, so the one-byte varint case is inlined.
    """
    if count < 0:
        raise CorruptRecordError(f"Found invalid record count {count} in magic v2 batch", position=0)
    out: list[Record] = []
    append = out.append
    rv = read_varint
    Rec = Record
    end = len(data)
    pos = 0
    start = 0
    has_seq = base_sequence >= 0
    try:
        for _ in range(count):
            if pos >= end:
                raise CorruptRecordError("Incorrect declared batch size, premature EOF reached",
                                         position=pos)
            b = data[pos]
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                size, pos = rv(data, pos)
            start = pos
            if size > end - pos or size < 0:
                raise CorruptRecordError(
                    f"Invalid record size: expected {size} bytes in record payload, but instead "
                    f"the buffer has only {end - pos} remaining bytes.", position=start)
            attributes = data[pos]
            b = data[pos + 1]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                ts_delta, pos = rv(data, pos + 1, 10)
            b = data[pos]
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                off_delta, pos = rv(data, pos)
            b = data[pos]
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                n, pos = rv(data, pos)
            if n >= 0:
                key = data[pos:pos + n]
                pos += n
            elif n == -1:
                key = None
            else:
                raise CorruptRecordError(f"Found invalid record structure: key size {n}", position=pos)
            b = data[pos]
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                n, pos = rv(data, pos)
            if n >= 0:
                value = data[pos:pos + n]
                pos += n
            elif n == -1:
                value = None
            else:
                raise CorruptRecordError(f"Found invalid record structure: value size {n}", position=pos)
            b = data[pos]
            if b == 0:
                headers: tuple[Header, ...] = ()
                pos += 1
            else:
                headers, pos = _read_headers(data, pos)
            if pos - start != size:
                raise CorruptRecordError(
                    f"Invalid record size: expected to read {size} bytes in record payload, but "
                    f"instead read {pos - start}", position=start)
            if has_seq:
                seq = base_sequence + off_delta
                if seq > _INT32_MAX:
                    seq -= 0x80000000
            else:
                seq = -1
            append(Rec(base_offset + off_delta,
                       base_timestamp + ts_delta if log_append_time is None else log_append_time,
                       key, value, headers, seq, attributes))
    except (IndexError, CorruptRecordError) as exc:
        # a length that ran past the buffer: report it at the start of the record, as Kafka's
        # BufferUnderflowException becomes "Found invalid record structure"
        if isinstance(exc, CorruptRecordError) and exc.position is not None and exc.position <= end:
            raise
        raise CorruptRecordError("Found invalid record structure", position=start) from None
    if pos != end:
        raise CorruptRecordError("Incorrect declared batch size, records still remaining in file",
                                 position=pos)
    return out


def _read_headers(data: bytes, pos: int) -> tuple[tuple[Header, ...], int]:
    count, pos = read_varint(data, pos)
    if count < 0:
        raise CorruptRecordError(f"Found invalid number of record headers {count}", position=pos)
    if count > len(data) - pos:
        raise CorruptRecordError(f"Found invalid number of record headers. {count} is larger than "
                                 f"the remaining size of the buffer", position=pos)
    headers = []
    for _ in range(count):
        klen, pos = read_varint(data, pos)
        if klen < 0:
            raise CorruptRecordError(f"Invalid negative header key size {klen}", position=pos)
        if pos + klen > len(data):
            raise IndexError
        key = data[pos:pos + klen].decode("utf-8", "replace")
        pos += klen
        vlen, pos = read_varint(data, pos)
        if vlen >= 0:
            if pos + vlen > len(data):
                raise IndexError
            value = data[pos:pos + vlen]
            pos += vlen
        elif vlen == -1:
            value = None
        else:
            raise CorruptRecordError(f"Found invalid record structure: header value size {vlen}",
                                     position=pos)
        headers.append(Header(key, value))
    return tuple(headers), pos


# -- encoding ------------------------------------------------------------------------------

def encode_record(offset_delta: int, timestamp_delta: int, key: bytes | None,
                  value: bytes | None, headers: Sequence[Header | tuple[str, bytes | None]] = (),
                  attributes: int = 0) -> bytes:
    """Encode one v2 record (length prefix included), exactly as ``DefaultRecord.writeTo``."""
    parts = [bytes((attributes & 0xFF,)), encode_varint(timestamp_delta), encode_varint(offset_delta)]
    for blob in (key, value):
        if blob is None:
            parts.append(b"\x01")  # zig-zag -1
        else:
            parts.append(encode_varint(len(blob)))
            parts.append(bytes(blob))
    parts.append(encode_varint(len(headers)))
    for hkey, hvalue in headers:
        kb = hkey.encode("utf-8")
        parts.append(encode_varint(len(kb)))
        parts.append(kb)
        if hvalue is None:
            parts.append(b"\x01")
        else:
            parts.append(encode_varint(len(hvalue)))
            parts.append(bytes(hvalue))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_batch_header(*, base_offset: int, records_area: bytes, last_offset_delta: int,
                        partition_leader_epoch: int, attributes: int, base_timestamp: int,
                        max_timestamp: int, producer_id: int, producer_epoch: int,
                        base_sequence: int, records_count: int) -> bytes:
    """Assemble a whole batch from its (already compressed) record area, computing the CRC."""
    length = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(records_area)
    header = bytearray(HEADER.pack(base_offset, length, partition_leader_epoch, 2, 0, attributes,
                                   last_offset_delta, base_timestamp, max_timestamp, producer_id,
                                   producer_epoch, base_sequence, records_count))
    crc = crc32c(records_area, crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
    struct.pack_into(">I", header, CRC_OFFSET, crc)
    return bytes(header) + records_area


def compute_attributes(codec: Codec | int, timestamp_type: TimestampType, transactional: bool,
                       control: bool, delete_horizon: bool) -> int:
    attrs = int(codec) & CODEC_MASK
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attrs |= TIMESTAMP_TYPE_FLAG
    if transactional:
        attrs |= TRANSACTIONAL_FLAG
    if control:
        attrs |= CONTROL_FLAG
    if delete_horizon:
        attrs |= DELETE_HORIZON_FLAG
    return attrs


def iter_records_of(batches: Iterable[RecordBatch]) -> Iterable[Record]:
    """Flatten batches into records (convenience for tests and small tools)."""
    for batch in batches:
        yield from batch.records()


__all__ = ["RecordBatch", "decode_records", "encode_record", "encode_batch_header",
           "compute_attributes", "HEADER", "RECORD_BATCH_OVERHEAD", "LOG_OVERHEAD", "NO_TIMESTAMP"]
