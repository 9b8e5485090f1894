"""Legacy v0/v1 message sets (pylogctl.format.legacy) against kafka-python's legacy builder/reader."""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import pytest
from hypothesis import given, settings, strategies as st

from pylogctl.errors import CorruptRecordError, UnsupportedFormatError
from pylogctl.format.builder import build_batch
from pylogctl.format.compression import Codec
from pylogctl.format.legacy import LegacyBatch
from pylogctl.format.log_stream import iter_batches
from pylogctl.format.record import LegacyRecord, TimestampType
from pylogctl.format.record_batch import RecordBatch

SETTINGS = settings(max_examples=150, deadline=None)
blobs = st.none() | st.binary(max_size=40)
legacy_records_st = st.lists(st.tuples(st.integers(0, 1 << 45), blobs, blobs), min_size=1, max_size=12)


# -- independent helpers ---------------------------------------------------------------------

def kp_message_set(magic: int, records, offsets) -> bytes:
    """An uncompressed message set written by kafka-python's LegacyRecordBatchBuilder."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 24)
    for off, (ts, key, value) in zip(offsets, records):
        assert b.append(off, ts, key, value) is not None
    return bytes(b.build())


def message(offset: int, magic: int, attributes: int, timestamp: int | None, key, value) -> bytes:
    """One log entry (offset, size, message) assembled from the protocol description."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for blob in (key, value):
        body += struct.pack(">i", -1) if blob is None else struct.pack(">i", len(blob)) + blob
    msg = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(msg)) + msg


def xxh32_oracle(data: bytes) -> int:
    return int.from_bytes(lz4.frame.compress(data, content_checksum=True)[-4:], "little")


def legacy_compress(codec: int, magic: int, data: bytes) -> bytes:
    """Compress an inner message set the way 0.8-0.10 producers did."""
    if codec == 1:
        from kafka.codec import gzip_encode
        return gzip_encode(data)
    if codec == 2:
        from aiokafka.codec import snappy_encode  # xerial framing, as the Java client wrote
        return snappy_encode(data)
    frame = lz4.frame.compress(data, block_linked=False, store_size=False)
    if magic == 0:  # Kafka 0.8/0.9 hashed the frame magic into the header checksum
        frame = frame[:6] + bytes(((xxh32_oracle(frame[0:6]) >> 8) & 0xFF,)) + frame[7:]
    return frame


def flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes((data[index] ^ 0xFF,)) + data[index + 1:]


# -- uncompressed message sets ---------------------------------------------------------------

@SETTINGS
@given(st.sampled_from([0, 1]), legacy_records_st, st.integers(0, 1 << 40),
       st.lists(st.integers(0, 5), min_size=12, max_size=12))
def test_plain_message_sets(magic, records, base, gaps):
    from kafka.record import MemoryRecords
    offsets, cur = [], base
    for i in range(len(records)):
        cur += gaps[i] if i else 0
        offsets.append(cur)
        cur += 1
    data = kp_message_set(magic, records, offsets)
    assert data == b"".join(message(o, magic, 0, ts, k, v) for o, (ts, k, v) in zip(offsets, records))
    batches = list(iter_batches(data))
    kbatches = list(MemoryRecords(data))
    assert len(batches) == len(kbatches) == len(records)
    pos = 0
    for batch, kbatch, off, (ts, key, value) in zip(batches, kbatches, offsets, records):
        assert isinstance(batch, LegacyBatch)
        assert batch.position == pos
        pos += batch.size_in_bytes
        assert (batch.magic, batch.codec, batch.offset, batch.base_offset, batch.last_offset,
                batch.next_offset) == (magic, Codec.NONE, off, off, off, off + 1)
        assert batch.is_valid
        assert batch.records_count is None and batch.producer_id == -1 and not batch.is_control
        (rec,) = batch.records()
        (krec,) = list(kbatch)
        assert isinstance(rec, LegacyRecord)
        assert (rec.offset, rec.key, rec.value) == (off, key, value) == (krec.offset, krec.key, krec.value)
        assert rec.crc == batch.crc == krec.checksum
        assert rec.is_valid and rec.magic == magic
        assert rec.headers == () and rec.sequence == -1
        if magic == 0:
            assert rec.timestamp == -1 and krec.timestamp is None
            assert rec.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE
        else:
            assert rec.timestamp == ts == krec.timestamp == batch.max_timestamp
            assert rec.timestamp_type is TimestampType.CREATE_TIME
    assert pos == len(data)


@pytest.mark.parametrize("magic", [0, 1])
def test_flipped_byte_makes_message_invalid_but_readable(magic):
    data = message(7, magic, 0, 1234, b"key", b"value")
    for index in (12, 17 + 8 * magic + 4 + 1, len(data) - 1):  # crc field, a key byte, a value byte
        bad = flip(data, index)
        (batch,) = iter_batches(bad)
        assert not batch.is_valid
        (rec,) = batch.records()
        assert not rec.is_valid
        assert rec.offset == 7 and len(rec.key) == 3 and len(rec.value) == 5


def test_log_append_time_plain_message():
    (batch,) = iter_batches(message(3, 1, 0x08, 999, None, b"v"))
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    (rec,) = batch.records()
    assert rec.timestamp == 999 and rec.timestamp_type is TimestampType.LOG_APPEND_TIME


# -- compressed wrappers ---------------------------------------------------------------------

@SETTINGS
@given(st.sampled_from([0, 1]), st.sampled_from([1, 2, 3]), legacy_records_st, st.integers(0, 1 << 40),
       st.booleans(), st.integers(0, 1 << 45))
def test_compressed_wrappers(magic, codec, records, base, log_append, wrapper_ts):
    from kafka.record import MemoryRecords
    n = len(records)
    last = base + n - 1
    # magic 1: inner offsets relative, the wrapper carries the absolute last offset;
    # magic 0: inner offsets are absolute already
    inner_offsets = list(range(n)) if magic == 1 else list(range(base, base + n))
    inner = kp_message_set(magic, records, inner_offsets)
    attrs = codec | (0x08 if (log_append and magic == 1) else 0)
    if magic == 1 and not log_append:
        wrapper_ts = max(ts for ts, _, _ in records)  # a CreateTime wrapper carries the max timestamp
    data = message(last, magic, attrs, wrapper_ts, None, legacy_compress(codec, magic, inner))

    (batch,) = iter_batches(data)
    assert isinstance(batch, LegacyBatch)
    assert (batch.magic, batch.codec, batch.offset, batch.last_offset) == (magic, Codec(codec), last, last)
    assert batch.base_offset == base
    assert batch.is_valid and batch.crc == zlib.crc32(data[16:])
    recs = batch.records()
    assert [r.offset for r in recs] == list(range(base, base + n))
    assert [(r.key, r.value) for r in recs] == [(k, v) for _, k, v in records]
    assert all(r.is_valid for r in recs)
    assert all(r.magic == magic for r in recs)
    if magic == 0:
        assert all(r.timestamp == -1 for r in recs)
        assert all(r.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE for r in recs)
    elif log_append:
        assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
        assert batch.max_timestamp == wrapper_ts
        assert all(r.timestamp == wrapper_ts for r in recs)
        assert all(r.timestamp_type is TimestampType.LOG_APPEND_TIME for r in recs)
    else:
        assert [r.timestamp for r in recs] == [ts for ts, _, _ in records]
        assert all(r.timestamp_type is TimestampType.CREATE_TIME for r in recs)
    # every inner CRC is the one kafka-python's builder wrote
    kinner = [r for b in MemoryRecords(inner) for r in b]
    assert [r.crc for r in recs] == [k.checksum for k in kinner]

    # kafka-python agrees (its snappy codec needs python-snappy; lz4 magic 0 needs xxhash)
    import kafka.codec as kcodec
    if (codec == 2 and not kcodec.has_snappy()) or (codec == 3 and magic == 0 and kcodec.xxhash is None):
        return
    (kbatch,) = list(MemoryRecords(data))
    assert kbatch.validate_crc()
    krecs = list(kbatch)
    assert [(r.offset, r.key, r.value, r.checksum) for r in krecs] == [
        (r.offset, r.key, r.value, r.crc) for r in recs]
    if magic == 1:
        assert [r.timestamp for r in krecs] == [r.timestamp for r in recs]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [1, 3])
def test_kafka_python_compressed_builder_output(magic, codec):
    """kafka-python writes the wrapper with offset 0 and timestamp 0, as a producer does."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    if codec == 3 and magic == 0:
        pytest.importorskip("xxhash", reason="kafka-python needs xxhash to write magic-0 lz4")
    records = [(1000 + i, f"k{i}".encode(), b"value" * i) for i in range(5)]
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i, (ts, key, value) in enumerate(records):
        b.append(i, ts, key, value)
    data = bytearray(b.build())
    assert struct.unpack_from(">q", data, 0)[0] == 0
    (batch,) = iter_batches(bytes(data))
    # produce data: a magic-1 wrapper offset of 0 means the inner offsets are used as they are
    assert [r.offset for r in batch.records()] == [0, 1, 2, 3, 4]
    assert [(r.key, r.value) for r in batch.records()] == [(k, v) for _, k, v in records]
    if magic == 1:
        assert [r.timestamp for r in batch.records()] == [ts for ts, _, _ in records]
    # as the broker stores it: the wrapper offset is the absolute offset of the last message
    struct.pack_into(">q", data, 0, 504)
    (batch,) = iter_batches(bytes(data))
    assert batch.is_valid  # the offset is not covered by the CRC
    expected = [500, 501, 502, 503, 504] if magic == 1 else [0, 1, 2, 3, 4]
    assert [r.offset for r in batch.records()] == expected


def test_corrupt_inner_message_is_invalid_but_readable():
    records = [(10, b"a", b"first"), (11, b"b", b"second")]
    inner = bytearray(kp_message_set(1, records, [0, 1]))
    inner[-1] ^= 0x01  # last byte of the second message's value
    data = message(101, 1, 1, 11, None, legacy_compress(1, 1, bytes(inner)))
    (batch,) = iter_batches(data)
    assert batch.is_valid
    first, second = batch.records()
    assert first.is_valid and not second.is_valid
    assert (second.offset, second.value) == (101, b"secone")  # "d" ^ 1 == "e"


def test_flipped_wrapper_crc_keeps_inner_records():
    inner = kp_message_set(1, [(5, None, b"x"), (6, None, b"y")], [0, 1])
    data = flip(message(9, 1, 2, 6, None, legacy_compress(2, 1, inner)), 13)
    (batch,) = iter_batches(data)
    assert not batch.is_valid
    assert [(r.offset, r.value, r.is_valid) for r in batch.records()] == [(8, b"x", True), (9, b"y", True)]


def test_raw_snappy_wrapper():
    inner = kp_message_set(1, [(5, None, b"x" * 100)], [0])
    data = message(3, 1, 2, 5, None, bytes(cramjam.snappy.compress_raw(inner)))
    (batch,) = iter_batches(data)
    assert [(r.offset, r.value) for r in batch.records()] == [(3, b"x" * 100)]


# -- wrapper errors, all reported at the wrapper's position ----------------------------------

PREFIX = message(0, 1, 0, 1, None, b"plain")  # a valid entry before the bad one


def only_bad(data: bytes) -> LegacyBatch:
    first, bad = iter_batches(PREFIX + data)
    assert bad.position == len(PREFIX)
    return bad


def test_zstd_wrapper_is_unsupported():
    inner = kp_message_set(1, [(1, None, b"v")], [0])
    import zstandard
    bad = only_bad(message(1, 1, 4, 1, None, zstandard.ZstdCompressor().compress(inner)))
    with pytest.raises(UnsupportedFormatError) as info:
        bad.records()
    assert info.value.message == "Invalid wrapper compressionType found in legacy deep record iterator 1"
    assert info.value.position == len(PREFIX)


def test_wrapper_offset_below_last_inner_offset():
    inner = kp_message_set(1, [(1, None, b"v")] * 5, [0, 1, 2, 3, 4])
    bad = only_bad(message(2, 1, 1, 1, None, legacy_compress(1, 1, inner)))
    with pytest.raises(CorruptRecordError) as info:
        bad.records()
    assert info.value.message == ("Found invalid wrapper offset in compressed v1 message set, wrapper "
                                  "offset '2' is less than the last inner message offset '4' and it is "
                                  "not zero.")
    assert info.value.position == len(PREFIX)


def test_wrapper_with_null_value():
    bad = only_bad(message(2, 1, 1, 1, None, None))
    with pytest.raises(CorruptRecordError) as info:
        bad.records()
    assert info.value.message == "Found invalid compressed record set with null value (magic = 1)"
    assert info.value.position == len(PREFIX)


def test_wrapper_with_corrupt_payload():
    from pylogctl.errors import CompressionError
    bad = only_bad(message(2, 1, 1, 1, None, b"\x1f\x8b not really gzip"))
    with pytest.raises(CompressionError, match="Failed to decompress gzip payload") as info:
        bad.records()
    assert info.value.position == len(PREFIX)


def test_wrapper_with_no_inner_messages():
    bad = only_bad(message(2, 0, 1, None, None, legacy_compress(1, 0, b"")))
    with pytest.raises(CorruptRecordError, match="no inner records") as info:
        bad.records()
    assert info.value.position == len(PREFIX)


def test_wrapper_with_partial_trailing_inner_message():
    inner = kp_message_set(1, [(1, None, b"a"), (2, None, b"bb")], [0, 1])
    (batch,) = iter_batches(message(1, 1, 1, 2, None, legacy_compress(1, 1, inner[:-3])))
    # Kafka stops quietly at a partial inner message; the last complete one is relative offset 0
    assert [(r.offset, r.value) for r in batch.records()] == [(1, b"a")]


def test_nested_compression_rejected():
    inner = message(0, 1, 1, 1, None, b"whatever")
    bad = only_bad(message(0, 1, 1, 1, None, legacy_compress(1, 1, inner)))
    with pytest.raises(CorruptRecordError, match="Inner messages must not be compressed"):
        bad.records()


# -- mixed formats in one segment ------------------------------------------------------------

def test_mixed_magic_segment():
    v0 = message(0, 0, 0, None, b"k0", b"v0")
    v1 = message(1, 1, 1, 50, None, legacy_compress(1, 1, kp_message_set(1, [(50, None, b"v1")], [0])))
    v2 = build_batch([(60, None, b"v2"), (61, None, b"v3")], base_offset=2)
    batches = list(iter_batches(v0 + v1 + v2))
    assert [type(b) for b in batches] == [LegacyBatch, LegacyBatch, RecordBatch]
    assert [b.position for b in batches] == [0, len(v0), len(v0) + len(v1)]
    assert [(r.offset, r.value) for b in batches for r in b.records()] == [
        (0, b"v0"), (1, b"v1"), (2, b"v2"), (3, b"v3")]
