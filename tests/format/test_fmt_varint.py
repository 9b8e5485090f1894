"""Zig-zag varints (pylogctl.format.varint) against Kafka's ByteUtils rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pylogctl.errors import CorruptRecordError
from pylogctl.format.varint import (INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, encode_unsigned_varint,
                                    encode_varint, read_unsigned_varint, read_varint, read_varlong,
                                    size_of_varint)

int32s = st.integers(min_value=INT32_MIN, max_value=INT32_MAX)
int64s = st.integers(min_value=INT64_MIN, max_value=INT64_MAX)
SETTINGS = settings(max_examples=300, deadline=None)


def reference_zigzag(value: int) -> bytes:
    """Independent encoder: zig-zag over 64 bits, then LEB128."""
    raw = ((value << 1) ^ (value >> 63)) & ((1 << 64) - 1)
    out = bytearray()
    while True:
        byte = raw & 0x7F
        raw >>= 7
        if raw:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


@pytest.mark.parametrize("value, encoded", [
    (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (2, "04"),
    (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"), (8191, "fe7f"), (8192, "808001"),
    (INT32_MAX, "feffffff0f"), (INT32_MIN, "ffffffff0f"),
    (INT64_MAX, "feffffffffffffffff01"), (INT64_MIN, "ffffffffffffffffff01"),
])
def test_known_vectors(value, encoded):
    assert encode_varint(value).hex() == encoded
    assert size_of_varint(value) == len(encoded) // 2
    assert read_varlong(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)
    if INT32_MIN <= value <= INT32_MAX:
        assert read_varint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


@SETTINGS
@given(int32s, st.binary(max_size=4), st.binary(max_size=4))
def test_varint_round_trip_int32(value, prefix, suffix):
    enc = encode_varint(value)
    assert enc == reference_zigzag(value)
    assert 1 <= len(enc) <= 5
    buf = prefix + enc + suffix
    assert read_varint(buf, len(prefix)) == (value, len(prefix) + len(enc))
    assert read_varint(memoryview(buf), len(prefix)) == (value, len(prefix) + len(enc))
    assert read_varlong(buf, len(prefix)) == (value, len(prefix) + len(enc))


@SETTINGS
@given(int64s, st.binary(max_size=4))
def test_varlong_round_trip_int64(value, suffix):
    enc = encode_varint(value)
    assert enc == reference_zigzag(value)
    assert 1 <= len(enc) <= 10
    assert size_of_varint(value) == len(enc)
    assert read_varlong(enc + suffix, 0) == (value, len(enc))


@SETTINGS
@given(int64s)
def test_matches_kafka_python_encoder(value):
    from kafka.record.util import decode_varint, encode_varint as kp_encode
    out = bytearray()
    kp_encode(value, out.append)
    assert encode_varint(value) == bytes(out)
    assert decode_varint(bytearray(encode_varint(value)), 0) == (value, len(out))


@SETTINGS
@given(st.integers(min_value=0, max_value=(1 << 31) - 1))
def test_unsigned_varint_round_trip(value):
    enc = encode_unsigned_varint(value)
    assert read_unsigned_varint(b"\xaa" + enc, 1) == (value, 1 + len(enc))


@pytest.mark.parametrize("value, encoded", [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"),
                                            (300, "ac02"), (16384, "808001")])
def test_unsigned_varint_vectors(value, encoded):
    assert encode_unsigned_varint(value).hex() == encoded
    assert read_unsigned_varint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


@SETTINGS
@given(int64s)
def test_every_truncation_raises(value):
    enc = encode_varint(value)
    for cut in range(len(enc)):
        with pytest.raises(CorruptRecordError) as info:
            read_varlong(b"\x00\x00" + enc[:cut], 2)
        assert info.value.position == 2
        assert "Truncated varint" in info.value.message


def test_empty_buffer_is_truncated():
    with pytest.raises(CorruptRecordError, match="Truncated varint"):
        read_varint(b"", 0)
    with pytest.raises(CorruptRecordError, match="Truncated unsigned varint"):
        read_unsigned_varint(b"\x80\x80", 0)


def test_varint_over_long_raises():
    # 5 bytes is the most a varint may take; a continuation bit in the 5th byte is corruption
    read_varint(b"\xff\xff\xff\xff\x0f", 0)  # the longest legal encoding
    with pytest.raises(CorruptRecordError) as info:
        read_varint(b"\x07" + b"\x80\x80\x80\x80\x80\x00", 1)
    assert info.value.position == 1
    assert info.value.message.startswith("Varint is too long, the most significant bit in the 5th byte is set")


def test_varlong_over_long_raises():
    assert read_varlong(b"\xff" * 9 + b"\x01", 0) == (INT64_MIN, 10)
    with pytest.raises(CorruptRecordError) as info:
        read_varlong(b"\x80" * 10 + b"\x00", 0)
    assert info.value.position == 0
    assert "10th byte is set" in info.value.message


def test_int64_value_as_int32_varint_is_too_long():
    with pytest.raises(CorruptRecordError):
        read_varint(encode_varint(INT64_MAX), 0)


def test_unsigned_varint_over_long_raises():
    with pytest.raises(CorruptRecordError, match="Unsigned varint is too long") as info:
        read_unsigned_varint(b"\x00\x80\x80\x80\x80\x80\x01", 1)
    assert info.value.position == 1
