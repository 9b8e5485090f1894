"""Bad bytes at the format level: where iteration stops, what raises, messages and positions."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings, strategies as st

from pylogctl.errors import CompressionError, CorruptRecordError, UnsupportedFormatError
from pylogctl.format.builder import build_batch
from pylogctl.format.compression import Codec
from pylogctl.format.log_stream import iter_batches, valid_bytes_end
from pylogctl.format.record_batch import RecordBatch

PATH = "/data/kafka/topic-0/00000000000000000000.log"

# Two uncompressed records; record area (from byte 61 of the batch):
#   rel 0: 10 | 00 00 00 02 6b 02 76 00        (length 8: key b"k", value b"v")
#   rel 9: 10 | 00 02 02 01 04 76 76 00        (length 8: null key, value b"vv")
B1 = build_batch([(5, b"k", b"v"), (6, None, b"vv")], base_offset=0)
B2 = build_batch([(7, b"key", b"value" * 10)], base_offset=2)
P = len(B1)  # B2 (or the batch under test) starts here


def patched(batch: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(batch)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def second(data: bytes, path=None):
    """Iterate B1 + data; return the second batch."""
    batches = list(iter_batches(B1 + data, path=path))
    assert len(batches) == 2 and batches[1].position == P
    return batches[1]


def test_sanity_of_the_fixture_bytes():
    assert B1[61:].hex() == "10000000026b027600" "100002020104767600"
    assert len(B1) == 79


# -- where iteration ends --------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(B1) + len(B2) - 1))
def test_truncated_tail_stops_quietly(cut):
    data = (B1 + B2)[:cut]
    batches = list(iter_batches(data, path=PATH))
    expected = [0] if cut >= len(B1) else []
    assert [b.position for b in batches] == expected
    assert valid_bytes_end(data) == (len(B1) if cut >= len(B1) else 0)
    for b in batches:
        assert b.is_valid and len(b.records()) == 2


def test_end_argument_bounds_iteration():
    data = B1 + B2 + B1
    assert [b.position for b in iter_batches(data, 0, len(B1) + len(B2))] == [0, P]
    assert [b.position for b in iter_batches(data, P, len(data))] == [P, P + len(B2)]
    assert [b.position for b in iter_batches(data, 0, len(B1) + len(B2) - 1)] == [0]


@pytest.mark.parametrize("size", [len(B2), 1 << 20, 0x7FFFFFFF])
def test_length_larger_than_remaining_stops_quietly(size):
    data = B1 + patched(B2, 8, ">i", size)
    assert [b.position for b in iter_batches(data)] == [0]
    assert valid_bytes_end(data) == P


@pytest.mark.parametrize("tail", [b"", b"\x00", b"\x00" * 17, b"\xff" * 17])
def test_seventeen_bytes_or_fewer_after_last_batch_are_ignored(tail):
    assert [b.position for b in iter_batches(B1 + tail)] == [0]


def test_zero_padding_after_last_batch_raises():
    # 18+ zero bytes have a size field 0: Kafka reports it as corruption
    with pytest.raises(CorruptRecordError) as info:
        list(iter_batches(B1 + b"\x00" * 18))
    assert info.value.position == P


# -- size field below the minimum ------------------------------------------------------------

@pytest.mark.parametrize("size", [13, 0, -1, -(1 << 31)])
def test_size_below_minimum_record_overhead(size):
    data = B1 + patched(B2, 8, ">i", size)
    it = iter_batches(data, path=PATH)
    assert next(it).position == 0
    with pytest.raises(CorruptRecordError) as info:
        next(it)
    exc = info.value
    assert exc.message == (f"Found record size {size} smaller than minimum record overhead (14) "
                           f"in file {PATH}.")
    assert exc.position == P
    assert exc.path == PATH
    assert str(exc) == f"{exc.message} (byte position {P})"

    with pytest.raises(CorruptRecordError) as info:
        list(iter_batches(data))
    assert info.value.message == f"Found record size {size} smaller than minimum record overhead (14)."
    assert info.value.position == P and info.value.path is None
    with pytest.raises(CorruptRecordError):
        valid_bytes_end(data)


@pytest.mark.parametrize("size", [14, 30, 48])
def test_v2_size_below_batch_overhead(size):
    data = B1 + patched(B2, 8, ">i", size)
    with pytest.raises(CorruptRecordError) as info:
        list(iter_batches(data, path=PATH))
    assert info.value.message == (f"Record batch is corrupt (the size {size + 12} is smaller than the "
                                  f"minimum allowed overhead 61)")
    assert info.value.position == P and info.value.path == PATH


# -- magic -----------------------------------------------------------------------------------

@pytest.mark.parametrize("magic, shown", [(3, 3), (0x7F, 127), (0xFF, -1), (0x80, -128)])
def test_unknown_magic(magic, shown):
    data = B1 + patched(B2, 16, ">B", magic)
    it = iter_batches(data, path=PATH)
    next(it)
    with pytest.raises(UnsupportedFormatError) as info:
        next(it)
    assert info.value.message == f"Unknown magic value {shown} in batch header"
    assert info.value.position == P and info.value.path == PATH
    assert str(info.value) == f"Unknown magic value {shown} in batch header ({PATH}, byte position {P})"


# -- CRC -------------------------------------------------------------------------------------

@pytest.mark.parametrize("index", [17, 45, len(B2) - 2])  # crc field, producer id, a value byte
def test_crc_mismatch_is_reported_but_records_decode(index):
    bad = bytearray(B2)
    bad[index] ^= 0x01
    batch = second(bytes(bad))
    assert not batch.is_valid
    (rec,) = batch.records()
    assert rec.offset == 2 and rec.key == b"key" and len(rec.value) == 50
    stored, computed = batch.crc, batch.compute_crc()
    assert stored != computed
    with pytest.raises(CorruptRecordError) as info:
        batch.ensure_valid()
    assert info.value.message == f"Record is corrupt (stored crc = {stored}, computed crc = {computed})"
    assert info.value.position == P


def test_leader_epoch_and_base_offset_are_outside_the_crc():
    batch = second(patched(patched(B2, 12, ">i", 99), 0, ">q", 12345))
    assert batch.is_valid and batch.partition_leader_epoch == 99
    assert [r.offset for r in batch.records()] == [12345]


# -- codec -----------------------------------------------------------------------------------

@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_id(codec_id):
    data = patched(B2, 21, ">h", codec_id)
    batch = second(data)  # iteration itself does not look at the codec
    assert not batch.is_valid  # attributes are covered by the CRC
    with pytest.raises(UnsupportedFormatError) as info:
        _ = batch.codec
    assert info.value.message == f"Unknown compression type id: {codec_id}"
    with pytest.raises(UnsupportedFormatError) as info:
        batch.records()
    assert info.value.message == f"Unknown compression type id: {codec_id}"
    assert info.value.position == P


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_corrupt_compressed_payload(codec):
    good = build_batch([(1, None, b"payload " * 100)] * 3, codec=codec, base_offset=2)
    bad = bytearray(good)
    bad[61:] = bytes([0xAA]) * (len(good) - 61)
    batch = second(bytes(bad))
    with pytest.raises(CompressionError) as info:
        batch.records()
    assert info.value.message.startswith(f"Failed to decompress {codec} payload")
    assert info.value.position == P


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_truncated_compressed_payload(codec):
    good = build_batch([(1, None, b"payload " * 100)] * 3, codec=codec, base_offset=2)
    cut = good[:-5]
    bad = patched(cut, 8, ">i", len(cut) - 12)
    batch = second(bad)
    with pytest.raises(CompressionError) as info:
        batch.records()
    assert info.value.position == P


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.ZSTD])
def test_errors_inside_compressed_records_point_at_the_batch(codec):
    good = build_batch([(1, None, b"a"), (2, None, b"b")], codec=codec, base_offset=2)
    batch = second(patched(good, 57, ">i", 1))  # records count 1, two records inside
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == "Incorrect declared batch size, records still remaining in file"
    assert info.value.position == P


# -- records inside an uncompressed batch: positions are absolute ----------------------------

def test_record_length_beyond_the_batch():
    batch = second(patched(B1, 61, ">B", 0x7E))  # first record claims 63 bytes
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == ("Invalid record size: expected 63 bytes in record payload, but instead "
                                  "the buffer has only 17 remaining bytes.")
    assert info.value.position == P + 62


def test_second_record_length_beyond_the_batch():
    batch = second(patched(B1, 70, ">B", 0x12))  # second record claims 9 bytes, 8 remain
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == ("Invalid record size: expected 9 bytes in record payload, but instead "
                                  "the buffer has only 8 remaining bytes.")
    assert info.value.position == P + 71


def test_record_length_shorter_than_its_fields():
    batch = second(patched(B1, 61, ">B", 0x0E))  # first record claims 7 bytes, its fields take 8
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == ("Invalid record size: expected to read 7 bytes in record payload, but "
                                  "instead read 8")
    assert info.value.position == P + 62


def test_negative_record_length():
    batch = second(patched(B1, 61, ">B", 0x03))  # zig-zag -2
    with pytest.raises(CorruptRecordError, match="expected -2 bytes in record payload") as info:
        batch.records()
    assert info.value.position == P + 62


def test_key_running_past_the_record():
    batch = second(patched(B1, 70 + 4, ">B", 0x7E))  # second record: key length 63 instead of null
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    # Kafka turns the buffer underflow into "Found invalid record structure"
    assert info.value.message == "Found invalid record structure"
    assert info.value.position == P + 71  # the start of that record's body


def test_invalid_key_and_value_sizes():
    batch = second(patched(B1, 61 + 4, ">B", 0x03))  # first record: key length -2
    with pytest.raises(CorruptRecordError, match="Found invalid record structure: key size -2") as info:
        batch.records()
    assert info.value.position == P + 66  # just after the key length
    batch = second(patched(B1, 70 + 5, ">B", 0x05))  # second record: value length -3
    with pytest.raises(CorruptRecordError, match="Found invalid record structure: value size -3") as info:
        batch.records()
    assert info.value.position == P + 76  # just after the value length


def test_too_few_records_declared():
    batch = second(patched(B1, 57, ">i", 1))
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == "Incorrect declared batch size, records still remaining in file"
    assert info.value.position == P + 70


def test_too_many_records_declared():
    batch = second(patched(B1, 57, ">i", 3))
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == "Incorrect declared batch size, premature EOF reached"
    assert info.value.position == P + 79  # where the missing third record should begin


def test_negative_record_count():
    batch = second(patched(B1, 57, ">i", -1))
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == "Found invalid record count -1 in magic v2 batch"
    assert info.value.position == P + 61


def test_header_count_larger_than_remaining():
    data = build_batch([(1, None, None, [("a", b"b")])])
    # record area: 14 | 00 00 00 01 01 | 02 | 02 61 02 62 ; set the header count 1 -> 50
    assert data[61:].hex() == "1400000001010202610262"
    batch = second(patched(data, 67, ">B", 100))
    with pytest.raises(CorruptRecordError) as info:
        batch.records()
    assert info.value.message == ("Found invalid number of record headers. 50 is larger than the "
                                  "remaining size of the buffer")
    assert info.value.position == P + 68


def test_negative_header_count_and_key_size():
    data = build_batch([(1, None, None, [("a", b"b")])])
    batch = second(patched(data, 67, ">B", 0x03))
    with pytest.raises(CorruptRecordError, match="Found invalid number of record headers -2"):
        batch.records()
    batch = second(patched(data, 68, ">B", 0x03))
    with pytest.raises(CorruptRecordError, match="Invalid negative header key size -2"):
        batch.records()


@settings(max_examples=150, deadline=None)
@given(st.integers(61, len(B1) - 1), st.integers(1, 255))
def test_any_flipped_record_byte_raises_corrupt_or_decodes(index, xor):
    """Damage in the record area gives a CorruptRecordError with a position inside the batch, never
    another exception type."""
    bad = bytearray(B1)
    bad[index] ^= xor
    batch = second(bytes(bad))
    assert not batch.is_valid
    try:
        recs = batch.records()
    except CorruptRecordError as exc:
        assert P + 61 <= exc.position <= P + len(B1)
    else:
        assert len(recs) == 2


# -- legacy entries --------------------------------------------------------------------------

def legacy(offset: int, magic: int, body_tail: bytes) -> bytes:
    body = struct.pack(">bb", magic, 0) + body_tail
    msg = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(msg)) + msg


def test_legacy_v1_message_too_small_for_timestamp():
    bad = legacy(2, 1, struct.pack(">ii", -1, -1))  # no timestamp: 14 bytes
    with pytest.raises(CorruptRecordError) as info:
        list(iter_batches(B1 + bad, path=PATH))
    assert info.value.message == "Magic v1 message too small for its timestamp (size = 14)"
    assert info.value.path == PATH
    assert info.value.position == P + 12  # the message itself, after offset and size


def test_legacy_value_longer_than_message():
    bad = legacy(2, 0, struct.pack(">ii", -1, 100) + b"x" * 4)
    with pytest.raises(CorruptRecordError) as info:
        list(iter_batches(B1 + bad))
    assert info.value.message == "Legacy message value of 100 bytes exceeds the message (4 bytes left)"
    assert info.value.position == P + 12 + 14


def test_legacy_unknown_message_magic_in_wrapper():
    import gzip
    inner = struct.pack(">qi", 0, 14) + struct.pack(">Ibbii", 0, 5, 0, -1, -1)  # magic 5
    value = gzip.compress(inner)
    body = struct.pack(">bbqii", 1, 1, 1, -1, len(value)) + value  # v1 gzip wrapper, null key
    msg = struct.pack(">I", zlib.crc32(body)) + body
    batch = second(struct.pack(">qi", 0, len(msg)) + msg)
    with pytest.raises(UnsupportedFormatError) as info:
        batch.records()
    assert info.value.message == "Unknown magic value 5 in legacy message"
    assert info.value.position == P


def test_v2_batches_are_record_batches():
    assert isinstance(second(B2), RecordBatch)
