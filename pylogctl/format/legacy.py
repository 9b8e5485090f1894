"""Legacy message sets: magic 0 (Kafka 0.8-0.9) and magic 1 (0.10), read-only.

Each entry is ``offset int64 | size int32`` followed by a message::

    crc uint32 | magic int8 | attributes int8 | [timestamp int64, magic 1 only] |
    key (int32 length, -1 = null) | value (int32 length, -1 = null)

The CRC-32 covers magic to the end. A compressed message (codec in attribute bits 0-2) is a
*wrapper* whose value is a compressed message set of inner messages. In magic 1 the inner
offsets are relative (0..n-1) and the wrapper carries the absolute offset of the last inner
message; in magic 0 the inner offsets are already absolute. A LogAppendTime wrapper's timestamp
applies to every inner message. This mirrors Kafka's ``AbstractLegacyRecordBatch``.
"""

from __future__ import annotations

import struct

from ..errors import CorruptRecordError, PylogctlError, UnsupportedFormatError
from .compression import Codec, decompress
from .crc import crc32
from .record import (NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE,
                     NO_TIMESTAMP, LegacyRecord, TimestampType)

RECORD_OVERHEAD_V0 = 14  # crc + magic + attributes + key length + value length
LOG_OVERHEAD = 12
_OFFSET_SIZE = struct.Struct(">qi")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")


def _parse_message(buf, start: int, end: int, offset: int, wrapper_ts: int | None = None,
                   wrapper_type: TimestampType | None = None) -> LegacyRecord:
    """Parse one message occupying ``buf[start:end]`` (after the offset/size prefix)."""
    if end - start < RECORD_OVERHEAD_V0:
        raise CorruptRecordError(f"Record is corrupt (crc could not be retrieved as the record is "
                                 f"too small, size = {end - start})", position=start)
    (crc,) = _U32.unpack_from(buf, start)
    magic = buf[start + 4]
    if magic > 127:
        magic -= 256
    attributes = buf[start + 5]
    if magic not in (0, 1):
        raise UnsupportedFormatError(f"Unknown magic value {magic} in legacy message", position=start)
    pos = start + 6
    if magic == 0:
        timestamp = NO_TIMESTAMP
        ts_type = TimestampType.NO_TIMESTAMP_TYPE
    else:
        if end - start < RECORD_OVERHEAD_V0 + 8:
            raise CorruptRecordError(f"Magic v1 message too small for its timestamp "
                                     f"(size = {end - start})", position=start)
        (timestamp,) = _I64.unpack_from(buf, pos)
        pos += 8
        if wrapper_type is not None:
            ts_type = wrapper_type
            if wrapper_type == TimestampType.LOG_APPEND_TIME and wrapper_ts is not None:
                timestamp = wrapper_ts
        else:
            ts_type = (TimestampType.LOG_APPEND_TIME if attributes & 0x08
                       else TimestampType.CREATE_TIME)
    key, pos = _sized(buf, pos, end, "key")
    value, pos = _sized(buf, pos, end, "value")
    view = memoryview(buf)
    try:
        valid = crc == crc32(view[start + 4:end])
    finally:
        view.release()
    return LegacyRecord(offset, timestamp, key, value, magic, crc, valid, attributes, ts_type)


def _sized(buf, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise CorruptRecordError(f"Legacy message truncated before its {what} length", position=pos)
    (n,) = _I32.unpack_from(buf, pos)
    pos += 4
    if n < 0:
        return None, pos
    if pos + n > end:
        raise CorruptRecordError(f"Legacy message {what} of {n} bytes exceeds the message "
                                 f"({end - pos} bytes left)", position=pos)
    return bytes(buf[pos:pos + n]), pos + n


class LegacyBatch:
    """One outer v0/v1 entry (a plain message, or a compressed wrapper of inner messages).

    Presents the same attributes as :class:`~pylogctl.format.record_batch.RecordBatch` with
    Kafka's defaults for what the legacy format lacks (no producer id, sequence, epoch).
    """

    __slots__ = ("offset", "length", "position", "_buf", "_outer", "_inner")

    partition_leader_epoch = NO_PARTITION_LEADER_EPOCH
    producer_id = NO_PRODUCER_ID
    producer_epoch = NO_PRODUCER_EPOCH
    base_sequence = NO_SEQUENCE
    last_sequence = NO_SEQUENCE
    is_transactional = False
    is_control = False
    delete_horizon_ms = None
    records_count = None
    count = None

    def __init__(self, buf, position: int = 0) -> None:
        self.offset, self.length = _OFFSET_SIZE.unpack_from(buf, position)
        self.position = position
        self._buf = buf
        start = position + LOG_OVERHEAD
        self._outer = _parse_message(buf, start, start + self.length, self.offset)
        self._inner: list[LegacyRecord] | None = None

    @property
    def magic(self) -> int:
        return self._outer.magic

    @property
    def attributes(self) -> int:
        return self._outer.attributes

    @property
    def crc(self) -> int:
        return self._outer.crc

    @property
    def is_valid(self) -> bool:
        return self._outer.is_valid

    def ensure_valid(self) -> None:
        """Kafka's ``ensureValid`` for a legacy batch: the outer message's CRC-32 must match."""
        if not self.is_valid:
            start = self.position + LOG_OVERHEAD
            with memoryview(self._buf) as view:
                computed = crc32(view[start + 4:start + self.length])
            raise CorruptRecordError(f"Record is corrupt (stored crc = {self.crc}, computed crc = "
                                     f"{computed})", position=self.position)

    @property
    def size_in_bytes(self) -> int:
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def base_offset(self) -> int:
        """The first inner offset: needs decompression for a wrapper, as in Kafka."""
        return self.records()[0].offset if self.codec != Codec.NONE else self.offset

    @property
    def codec(self) -> Codec:
        return Codec.from_id(self._outer.attributes & 0x07)

    @property
    def timestamp_type(self) -> TimestampType:
        return self._outer.timestamp_type

    @property
    def max_timestamp(self) -> int:
        return self._outer.timestamp

    def raw_bytes(self) -> bytes:
        return bytes(self._buf[self.position:self.position + LOG_OVERHEAD + self.length])

    def records(self) -> list[LegacyRecord]:
        if self.codec == Codec.NONE:
            return [self._outer]
        if self._inner is None:
            try:
                self._inner = self._deep_records()
            except PylogctlError as exc:
                exc.position = self.position
                raise
        return self._inner

    def __iter__(self):
        return iter(self.records())

    def _deep_records(self) -> list[LegacyRecord]:
        outer = self._outer
        codec = self.codec
        if codec == Codec.ZSTD:
            raise UnsupportedFormatError(
                f"Invalid wrapper compressionType found in legacy deep record iterator {outer.magic}")
        if outer.value is None:
            raise CorruptRecordError(f"Found invalid compressed record set with null value "
                                     f"(magic = {outer.magic})")
        data = decompress(codec, outer.value, outer.magic)
        inner: list[LegacyRecord] = []
        pos, end = 0, len(data)
        wrapper_ts = outer.timestamp
        wrapper_type = outer.timestamp_type
        while end - pos >= LOG_OVERHEAD:
            offset, size = _OFFSET_SIZE.unpack_from(data, pos)
            if size < RECORD_OVERHEAD_V0:
                raise CorruptRecordError(
                    f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})")
            if pos + LOG_OVERHEAD + size > end:
                break  # Kafka stops quietly at a partial inner message
            start = pos + LOG_OVERHEAD
            msg_magic = data[start + 4]
            if msg_magic == 1:
                rec = _parse_message(data, start, start + size, offset, wrapper_ts, wrapper_type)
            else:
                rec = _parse_message(data, start, start + size, offset)
            if rec.attributes & 0x07:
                raise CorruptRecordError("Inner messages must not be compressed")
            inner.append(rec)
            pos = start + size
        if not inner:
            raise CorruptRecordError("Found invalid compressed record set with no inner records")
        if outer.magic == 1:
            last_inner = inner[-1].offset
            if self.offset == 0:
                base = 0  # some librdkafka versions wrote produce data with wrapper offset 0
            elif self.offset < last_inner:
                raise CorruptRecordError(
                    f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                    f"'{self.offset}' is less than the last inner message offset '{last_inner}' "
                    f"and it is not zero.")
            else:
                base = self.offset - last_inner
            for rec in inner:
                rec.offset += base
        return inner

    def __repr__(self) -> str:
        return (f"LegacyBatch(offset={self.offset}, magic={self.magic}, position={self.position}, "
                f"size={self.size_in_bytes}, codec={self.codec})")
