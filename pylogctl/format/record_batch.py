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
from dataclasses import dataclass
from typing import Sequence

from ..errors import CorruptRecordError, PylogctlError
from ..speedups import accelerator
from .compression import Codec, decompress
from .crc import crc32c
from .record import NO_TIMESTAMP, Header, Record, TimestampType, increment_sequence
from .varint import INT32_MAX, encode_varint, read_varint
from .java_string import java_utf8

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


@dataclass(frozen=True)
class RecordsSummary:
    """A batch's records at a glance: the timestamp range, null keys, whether the offset
    deltas run 0, 1, 2, ... and the OR of the records' attribute bytes."""

    min_timestamp: int
    max_timestamp: int
    keyless: int
    sequential: bool
    inner_attributes: int


class RecordBatch:
    """A v2 batch located at ``position`` in ``buf`` (bytes, or a memoryview over an mmap).

    Header fields are parsed eagerly (one ``struct`` call); the CRC and the records are only
    computed when asked for, so a shallow scan costs one unpack per batch.

    With the C accelerator, ``FileRecords.batches()`` builds these objects in C without calling
    the class (``scan_batches``, ``register_classes`` in ``_speedups.c``), storing each slot
    what ``__init__`` stores, and may fill ``_valid`` ahead: keep ``__init__`` a plain unpack
    into ``__slots__`` (in that order), or change the C side with it.
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
        last = self.base_offset + self.last_offset_delta
        if -(1 << 63) <= last < (1 << 63):
            return last
        return (last + (1 << 63)) % (1 << 64) - (1 << 63)  # a Java long wraps (corrupt headers)

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
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def count(self) -> int:
        return self.records_count

    # -- validation -------------------------------------------------------------------------
    def compute_crc(self) -> int:
        start = self.position + ATTRIBUTES_OFFSET
        end = self.position + LOG_OVERHEAD + self.length
        if _c_crc_range is not None and start >= 0 and end >= 0:
            return _c_crc_range(self._buf, start, end)  # the slice below, without making it
        buf = self._buf
        if isinstance(buf, memoryview):  # slicing a view copies nothing
            return crc32c(buf[start:end])
        with memoryview(buf) as view:
            return crc32c(view[start:end])

    @property
    def is_valid(self) -> bool:
        """Kafka's ``isValid``: big enough for a header and the stored CRC-32C matches."""
        valid = self._valid
        if valid is None:
            # compute_crc inlined for the usual case: a shallow scan asks this of every batch
            pos = self.position
            if self.length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD:
                valid = False
            elif _c_crc_range is not None and pos >= 0:
                valid = self.crc == _c_crc_range(self._buf, pos + ATTRIBUTES_OFFSET,
                                                 pos + LOG_OVERHEAD + self.length)
            else:
                valid = self.crc == self.compute_crc()
            self._valid = valid
        return valid

    def ensure_valid(self) -> None:
        # attributes and the cached verdict first: recovery calls this once per batch
        if self.length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {self.size_in_bytes} is smaller than the "
                f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})", position=self.position)
        if not (self._valid or self.is_valid):
            raise CorruptRecordError(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {self.compute_crc()})",
                position=self.position)

    # -- records ----------------------------------------------------------------------------
    def raw_bytes(self) -> bytes:
        """The whole batch, offset and length prefix included."""
        return bytes(self._buf[self.position:self.position + LOG_OVERHEAD + self.length])

    def records(self) -> list[Record]:
        """Decode every record (decompressing if needed), with absolute offsets and timestamps."""
        if _c_batch_records is not None:
            # uncompressed: the C decoder reads the record area where it is (the mmap), as
            # decode_records would read a copy of it, and reads this batch's fields itself
            try:
                out = _c_batch_records(self, Record, Header)
            except PylogctlError as exc:
                exc.position = (self.position if exc.position is None
                                else exc.position + self.position + RECORD_BATCH_OVERHEAD)
                raise
            if out is not NotImplemented:
                return out
        lat = self.max_timestamp if self.attributes & TIMESTAMP_TYPE_FLAG else None
        data, at = self._record_area()
        try:
            return decode_records(data, self.records_count, self.base_offset,
                                  self.base_timestamp, self.base_sequence, lat)
        except PylogctlError as exc:
            if at is None or exc.position is None:
                exc.position = self.position
            else:
                exc.position += at
            raise

    def summary(self) -> RecordsSummary | None:
        """What a leader's validation needs of the records, read without building them
        (``_speedups.summarize_records``); None when only decoding them all can tell (the
        area is not one that decodes cleanly, or the extension is not built)."""
        if _c_summarize is None:
            return None
        data, _ = self._record_area()
        found = _c_summarize(data, self.records_count)
        if found is None:
            return None
        min_delta, max_delta, keyless, sequential, attributes = found
        return RecordsSummary(self.base_timestamp + min_delta, self.base_timestamp + max_delta,
                              keyless, sequential, attributes)

    def record_area(self) -> bytes:
        """The record area, decompressed: the bytes the records are decoded from."""
        return self._record_area()[0]

    def _record_area(self) -> tuple[bytes, int | None]:
        """The (decompressed) record area, and its position in the buffer when it is the
        stored bytes themselves."""
        start = self.position + RECORD_BATCH_OVERHEAD
        end = self.position + LOG_OVERHEAD + self.length
        if end < start:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {self.size_in_bytes} is smaller than the "
                f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})", position=self.position)
        codec = self.attributes & CODEC_MASK
        if not codec:
            return bytes(self._buf[start:end]), start
        try:
            return decompress(codec, self._buf[start:end], 2), None
        except PylogctlError as exc:
            exc.position = self.position
            raise

    def __iter__(self):
        return iter(self.records())

    def __repr__(self) -> str:
        return (f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
                f"count={self.records_count}, position={self.position}, "
                f"size={self.size_in_bytes}, codec={self.codec})")



def decode_records_py(data: bytes, count: int, base_offset: int, base_timestamp: int,
                      base_sequence: int, log_append_time: int | None) -> list[Record]:
    """Decode ``count`` v2 records from an (uncompressed) record area, in pure Python.

    Follows ``DefaultRecord.readFrom``: every record's declared size must match what was read,
    and nothing may be left after the last record. Error positions are relative to ``data``.

    This is the hot loop of every deep read. In CPython the cost is in function calls, so:

    * every varint has its one- and two-byte forms inlined (a ~1 KiB record's size and value
      length take two bytes each, which used to mean two :func:`read_varint` calls per record).
      The two-byte form is only taken when the second byte exists (``pos + 1 < end``); longer,
      truncated or malformed varints still go through :func:`read_varint`, so its errors
      ("Truncated varint", "Varint is too long", at the varint's start) are unchanged;
    * headers whose count and key/value lengths are one-byte varints (nearly all real ones)
      are decoded inline. On anything else -- a longer varint, a negative length, a length
      that runs to the end of ``data`` -- the header block is decoded again from its start by
      :func:`_read_headers`. That function is deterministic and has no side effects, so the
      headers, or the error and its position, are exactly the ones it would have produced.

    :func:`decode_records` calls the C version (``_speedups.c``) instead when it is built; this
    function stays the reference it is tested against (``tests/format/test_fmt_speedups.py``).
    """
    if count < 0:
        raise CorruptRecordError(f"Found invalid record count {count} in magic v2 batch", position=0)
    out: list[Record] = []
    append = out.append
    rv = read_varint
    read_headers = _read_headers
    Rec = Record
    Hdr = Header
    end = len(data)
    pos = 0
    start = 0
    has_seq = base_sequence >= 0
    try:
        for _ in range(count):
            if pos >= end:
                raise CorruptRecordError("Incorrect declared batch size, premature EOF reached",
                                         position=pos)
            # record size (varint)
            b = data[pos]
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and (c := data[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                size = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                size, pos = rv(data, pos)
            start = pos
            if size > end - pos or size < 0:
                raise CorruptRecordError(
                    f"Invalid record size: expected {size} bytes in record payload, but instead "
                    f"the buffer has only {end - pos} remaining bytes.", position=start)
            attributes = data[pos]
            pos += 1
            # timestamp delta (varlong)
            b = data[pos]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and (c := data[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                ts_delta, pos = rv(data, pos, 10)
            # offset delta (varint)
            b = data[pos]
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and (c := data[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                off_delta, pos = rv(data, pos)
            # key
            b = data[pos]
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and (c := data[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                n = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                n, pos = rv(data, pos)
            if n >= 0:
                key = data[pos:pos + n]
                pos += n
            elif n == -1:
                key = None
            else:
                raise CorruptRecordError(f"Found invalid record structure: key size {n}", position=pos)
            # value
            b = data[pos]
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and (c := data[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                n = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                n, pos = rv(data, pos)
            if n >= 0:
                value = data[pos:pos + n]
                pos += n
            elif n == -1:
                value = None
            else:
                raise CorruptRecordError(f"Found invalid record structure: value size {n}", position=pos)
            # headers
            b = data[pos]
            if b == 0:
                headers: tuple[Header, ...] = ()
                pos += 1
            elif b < 0x80 and not b & 1 and b >> 1 <= end - pos - 1:
                # small positive count that passes _read_headers' size check: inline fast path
                hpos = pos
                pos += 1
                hl = []
                for _ in range(b >> 1):
                    if pos >= end:
                        break
                    b = data[pos]
                    if b >= 0x80 or b & 1:  # multi-byte or negative key length
                        break
                    n = pos + 1 + (b >> 1)  # end of the key
                    if n >= end:  # no room for the value length
                        break
                    hkey = java_utf8(data[pos + 1:n])
                    b = data[n]
                    if b == 1:  # zig-zag -1: null value
                        pos = n + 1
                        hl.append(Hdr(hkey, None))
                    elif b < 0x80 and not b & 1 and n + 1 + (b >> 1) <= end:
                        pos = n + 1 + (b >> 1)
                        hl.append(Hdr(hkey, data[n + 1:pos]))
                    else:
                        break
                else:
                    hpos = -1
                if hpos >= 0:  # left the fast path: decode the block again, the general way
                    headers, pos = read_headers(data, hpos)
                else:
                    headers = tuple(hl)
            else:
                headers, pos = read_headers(data, pos)
            if pos - start != size:
                raise CorruptRecordError(
                    f"Invalid record size: expected to read {size} bytes in record payload, but "
                    f"instead read {pos - start}", position=start)
            if has_seq:
                seq = base_sequence + off_delta
                if seq > INT32_MAX:
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


# The C accelerator (pylogctl/format/_speedups.c, optional: see pylogctl/speedups.py): same
# records, same errors, several times faster.
#
# It builds Record, Header and RecordBatch objects without calling the classes (see
# register_classes in _speedups.c): the classes registered here, as long as their layout is the
# one it checks. Their constructors must stay plain slot assignments (record.py says so).
_c = accelerator("pylogctl.format._speedups")
if _c is not None:
    _c_crc_range, _c_batch_records, _c_decode, _c_register, _c_summarize = (
        _c.crc32c_range, _c.batch_records, _c.decode_records, _c.register_classes,
        _c.summarize_records)
else:  # not built (no compiler at install time), or switched off: pure Python it is
    _c_decode = _c_batch_records = _c_summarize = _c_crc_range = _c_register = None
# (record, header, batch): whether each class is built by the C loops, else called
C_BUILDS = (False, False, False) if _c_register is None else _c_register(Record, Header,
                                                                          RecordBatch)


if _c_decode is not None:
    def decode_records(data: bytes, count: int, base_offset: int, base_timestamp: int,
                       base_sequence: int, log_append_time: int | None) -> list[Record]:
        """Decode ``count`` v2 records from an (uncompressed) record area.

        Same results and errors as :func:`decode_records_py`, computed by the C extension.
        The extension only handles ``bytes`` and int64 values; for anything else (a
        bytearray, an int beyond int64, a corrupt varlong wider than 64 bits, a sum that
        overflows) it returns ``NotImplemented`` without side effects, and the Python
        version decodes the batch instead.
        """
        out = _c_decode(data, count, base_offset, base_timestamp, base_sequence,
                        log_append_time, Record, Header)
        if out is NotImplemented:
            return decode_records_py(data, count, base_offset, base_timestamp, base_sequence,
                                     log_append_time)
        return out
else:
    decode_records = decode_records_py


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
        key = java_utf8(data[pos:pos + klen])
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
                  value: bytes | None,
                  headers: Sequence[Header | tuple[str | bytes, bytes | None]] = (),
                  attributes: int = 0) -> bytes:
    """Encode one v2 record (length prefix included), exactly as ``DefaultRecord.writeTo``.

    A header key is text, written as UTF-8, or raw bytes written as they are (a producer that
    is not Java's can write keys that are not UTF-8; readers decode them as Java does).
    """
    parts = [bytes((attributes & 0xFF,)), encode_varint(timestamp_delta), encode_varint(offset_delta)]
    for blob in (key, value):
        if blob is None:
            parts.append(b"\x01")  # zig-zag -1
        else:
            parts.append(encode_varint(len(blob)))
            parts.append(bytes(blob))
    parts.append(encode_varint(len(headers)))
    for hkey, hvalue in headers:
        kb = bytes(hkey) if isinstance(hkey, (bytes, bytearray)) else hkey.encode("utf-8")
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


__all__ = ["RecordBatch", "decode_records", "encode_record", "encode_batch_header",
           "compute_attributes", "HEADER", "RECORD_BATCH_OVERHEAD", "LOG_OVERHEAD", "NO_TIMESTAMP"]
