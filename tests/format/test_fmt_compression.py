"""Codecs exactly as Kafka frames them (pylogctl.format.compression)."""

from __future__ import annotations

import gzip
import os
import random
import struct
import types
import zlib

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings, strategies as st

from pylogctl.errors import CompressionError, UnsupportedFormatError
from pylogctl.format.compression import (LZ4_FRAME_MAGIC, XERIAL_BLOCK_SIZE, XERIAL_HEADER, Codec, compress,
                                         decompress, fix_legacy_lz4_header_checksum, xxh32)

COMPRESSED = [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]
SETTINGS = settings(max_examples=100, deadline=None)


def payload(n: int, seed: int = 1) -> bytes:
    """Half-compressible deterministic bytes (random words from a small alphabet)."""
    rnd = random.Random(seed)
    words = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 9))) for _ in range(64)]
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(words)
    return bytes(out[:n])


def xxh32_oracle(data: bytes) -> int:
    """xxHash32 (seed 0) as computed by the lz4 C library: the frame's content checksum."""
    frame = lz4.frame.compress(data, content_checksum=True)
    return int.from_bytes(frame[-4:], "little")


# -- Codec enum ------------------------------------------------------------------------------

def test_codec_ids_and_names():
    assert [int(c) for c in Codec] == [0, 1, 2, 3, 4]
    assert [str(c) for c in Codec] == ["none", "gzip", "snappy", "lz4", "zstd"]
    assert Codec.from_name("ZSTD") is Codec.ZSTD
    with pytest.raises(UnsupportedFormatError, match="Unknown compression type id: 5"):
        Codec.from_id(5)
    with pytest.raises(UnsupportedFormatError, match="Unknown compression name: brotli"):
        Codec.from_name("brotli")
    with pytest.raises(UnsupportedFormatError, match="Unknown compression type id: 7"):
        decompress(7, b"")


# -- round trips -----------------------------------------------------------------------------

@SETTINGS
@given(st.sampled_from(list(Codec)), st.binary(max_size=3000))
def test_round_trip_every_codec(codec, data):
    out = decompress(codec, compress(codec, data))
    assert type(out) is bytes and out == data
    assert decompress(int(codec), memoryview(compress(codec, data))) == data


@pytest.mark.parametrize("codec", list(Codec))
@pytest.mark.parametrize("size", [0, 1, XERIAL_BLOCK_SIZE - 1, XERIAL_BLOCK_SIZE, 3 * XERIAL_BLOCK_SIZE + 7,
                                  200_000])
def test_round_trip_sizes(codec, size):
    data = payload(size, seed=size)
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", COMPRESSED)
def test_round_trip_with_levels(codec):
    data = payload(50_000)
    for level in (1, 9):
        assert decompress(codec, compress(codec, data, level)) == data


# -- gzip ------------------------------------------------------------------------------------

def test_gzip_is_rfc1952_and_multi_member():
    data = payload(10_000)
    frame = compress(Codec.GZIP, data)
    assert frame[:2] == b"\x1f\x8b"
    assert gzip.decompress(frame) == data
    two = gzip.compress(b"first member ") + gzip.compress(b"second member")
    assert decompress(Codec.GZIP, two) == b"first member second member"


def test_gzip_from_kafka_python_encoder():
    from kafka.codec import gzip_encode
    data = payload(70_000)
    assert decompress(Codec.GZIP, gzip_encode(data)) == data


# -- snappy ----------------------------------------------------------------------------------

def test_snappy_xerial_header_and_32k_blocks():
    data = payload(3 * XERIAL_BLOCK_SIZE + 1000, seed=7)
    frame = compress(Codec.SNAPPY, data)
    assert XERIAL_HEADER == bytes.fromhex("82534e415050590000000001" "00000001")
    assert frame[:16] == bytes.fromhex("82534e41505059000000000100000001")
    pos, blocks = 16, []
    while pos < len(frame):
        (n,) = struct.unpack_from(">i", frame, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(frame[pos + 4:pos + 4 + n])))
        pos += 4 + n
    assert pos == len(frame)
    assert [len(b) for b in blocks] == [XERIAL_BLOCK_SIZE] * 3 + [1000]
    assert b"".join(blocks) == data


def test_snappy_empty_payload_is_header_only():
    assert compress(Codec.SNAPPY, b"") == XERIAL_HEADER
    assert decompress(Codec.SNAPPY, XERIAL_HEADER) == b""


@SETTINGS
@given(st.binary(max_size=5000))
def test_snappy_raw_block_decodes(data):
    # librdkafka writes a single raw snappy block without xerial framing
    assert decompress(Codec.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data


def test_snappy_xerial_little_endian_version_and_compat():
    # some writers store version/compat little-endian; detection looks at the 8-byte magic only
    data = payload(5000)
    frame = compress(Codec.SNAPPY, data)
    le = frame[:8] + struct.pack("<ii", 1, 1) + frame[16:]
    assert decompress(Codec.SNAPPY, le) == data


def test_snappy_from_aiokafka_encoder():
    from aiokafka.codec import snappy_encode
    data = payload(100_000)
    assert decompress(Codec.SNAPPY, snappy_encode(data)) == data
    assert decompress(Codec.SNAPPY, snappy_encode(data, xerial_compatible=False)) == data


def test_snappy_from_kafka_python_encoder():
    kcodec = pytest.importorskip("kafka.codec")
    if not kcodec.has_snappy():
        pytest.skip("python-snappy is not installed, kafka-python cannot encode snappy "
                    "(its xerial framing is still checked by test_snappy_kafka_python_framing_with_shim)")
    data = payload(100_000)
    assert decompress(Codec.SNAPPY, kcodec.snappy_encode(data)) == data
    assert decompress(Codec.SNAPPY, kcodec.snappy_encode(data, xerial_compatible=False)) == data


def test_snappy_kafka_python_framing_with_shim(monkeypatch):
    """kafka-python's own xerial framing code, with cramjam standing in for python-snappy."""
    import kafka.codec as kcodec
    shim = types.SimpleNamespace(compress=lambda b: bytes(cramjam.snappy.compress_raw(b)),
                                 decompress=lambda b: bytes(cramjam.snappy.decompress_raw(b)))
    monkeypatch.setattr(kcodec, "snappy", shim)
    data = payload(3 * XERIAL_BLOCK_SIZE + 5, seed=3)
    frame = kcodec.snappy_encode(data)
    assert frame[:16] == compress(Codec.SNAPPY, data)[:16]
    assert decompress(Codec.SNAPPY, frame) == data
    # and kafka-python reads ours
    assert kcodec.snappy_decode(compress(Codec.SNAPPY, data)) == data


@pytest.mark.parametrize("cut", [8, 12, 15])
def test_snappy_truncated_xerial_header_raises(cut):
    frame = compress(Codec.SNAPPY, payload(1000))
    with pytest.raises(CompressionError):
        decompress(Codec.SNAPPY, frame[:cut])


def test_snappy_bad_block_length_raises():
    frame = bytearray(compress(Codec.SNAPPY, payload(1000)))
    struct.pack_into(">i", frame, 16, 10_000)
    with pytest.raises(CompressionError, match="xerial block length 10000 exceeds"):
        decompress(Codec.SNAPPY, bytes(frame))
    struct.pack_into(">i", frame, 16, -1)
    with pytest.raises(CompressionError):
        decompress(Codec.SNAPPY, bytes(frame))
    with pytest.raises(CompressionError, match="truncated xerial block header"):
        decompress(Codec.SNAPPY, XERIAL_HEADER + b"\x00\x00")


# -- lz4 -------------------------------------------------------------------------------------

def test_lz4_frame_descriptor():
    frame = compress(Codec.LZ4, payload(200_000))
    assert frame[:4] == LZ4_FRAME_MAGIC == b"\x04\x22\x4d\x18"
    assert frame[4] == 0x60  # version 01, independent blocks, no checksums, no content size
    assert frame[5] == 0x40  # 64 KiB max block size
    assert frame[6] == (xxh32(frame[4:6]) >> 8) & 0xFF
    assert lz4.frame.decompress(frame) == payload(200_000)


@pytest.mark.parametrize("encoder", ["kafka-python", "aiokafka", "lz4-with-size"])
def test_lz4_foreign_encoders(encoder):
    data = payload(150_000)
    if encoder == "kafka-python":
        from kafka.codec import lz4_encode
        frame = lz4_encode(data)
    elif encoder == "aiokafka":
        from aiokafka.codec import lz4_encode
        frame = lz4_encode(data)
    else:
        frame = lz4.frame.compress(data, store_size=True, content_checksum=True, block_checksum=True)
    assert decompress(Codec.LZ4, frame) == data
    assert decompress(Codec.LZ4, frame, magic=1) == data


def broken_hc(frame: bytes) -> bytes:
    """Rewrite the header checksum the way Kafka 0.8/0.9 computed it: over magic + descriptor."""
    hc_pos = 6 + (8 if frame[4] & 0x08 else 0)
    wrong = (xxh32_oracle(frame[0:hc_pos]) >> 8) & 0xFF
    assert wrong != frame[hc_pos], "pick other data: the broken checksum happens to be right"
    return frame[:hc_pos] + bytes((wrong,)) + frame[hc_pos + 1:]


@pytest.mark.parametrize("store_size", [False, True])
def test_lz4_magic0_broken_header_checksum(store_size):
    data = payload(100_000, seed=11)
    frame = lz4.frame.compress(data, block_linked=False, store_size=store_size)
    assert bool(frame[4] & 0x08) == store_size
    old = broken_hc(frame)
    assert decompress(Codec.LZ4, old, magic=0) == data
    assert fix_legacy_lz4_header_checksum(old) == frame
    for magic in (1, 2):
        with pytest.raises(CompressionError):
            decompress(Codec.LZ4, old, magic=magic)
    # a correct frame also decodes with magic 0
    assert decompress(Codec.LZ4, frame, magic=0) == data


def test_lz4_magic0_from_kafka_python_old_encoder():
    import kafka.codec as kcodec
    if kcodec.xxhash is None:
        pytest.skip("xxhash is not installed, kafka-python cannot write the 0.8/0.9 lz4 frame")
    data = payload(20_000)
    assert decompress(Codec.LZ4, kcodec.lz4_encode_old_kafka(data), magic=0) == data


def test_fix_legacy_lz4_header_checksum_leaves_other_input_alone():
    assert fix_legacy_lz4_header_checksum(b"") == b""
    assert fix_legacy_lz4_header_checksum(b"not an lz4 frame") == b"not an lz4 frame"
    assert fix_legacy_lz4_header_checksum(LZ4_FRAME_MAGIC + b"\x68\x40") == LZ4_FRAME_MAGIC + b"\x68\x40"


# -- zstd ------------------------------------------------------------------------------------

def test_zstd_frames_without_content_size():
    data = payload(300_000)
    frame = compress(Codec.ZSTD, data)
    assert zstandard.get_frame_parameters(frame).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(Codec.ZSTD, frame) == data
    foreign = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert decompress(Codec.ZSTD, foreign) == data
    streamed = zstandard.ZstdCompressor().compressobj()
    streamed_frame = streamed.compress(data) + streamed.flush()
    assert decompress(Codec.ZSTD, streamed_frame) == data


def test_zstd_concatenated_frames_and_foreign_encoders():
    from aiokafka.codec import zstd_encode as aio_zstd
    from kafka.codec import zstd_encode as kp_zstd
    data = payload(80_000)
    assert decompress(Codec.ZSTD, kp_zstd(data)) == data
    assert decompress(Codec.ZSTD, aio_zstd(data)) == data
    assert decompress(Codec.ZSTD, kp_zstd(b"one,") + compress(Codec.ZSTD, b"two")) == b"one,two"


# -- xxh32 -----------------------------------------------------------------------------------

def test_xxh32_known_vectors():
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF
    # published in the python-xxhash README
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


def test_xxh32_against_xxhash_package():
    xxhash = pytest.importorskip("xxhash", reason="xxhash package not installed; "
                                                  "lz4's content checksum is the oracle instead")
    for n in (0, 1, 15, 16, 17, 31, 32, 33, 100, 1000):
        data = payload(n, seed=n)
        assert xxh32(data) == xxhash.xxh32(data).intdigest()
        assert xxh32(data, seed=20) == xxhash.xxh32(data, seed=20).intdigest()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_xxh32_matches_lz4_content_checksum(data):
    assert xxh32(data) == xxh32_oracle(data)


# -- corrupt input ---------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.sampled_from(COMPRESSED), st.binary(max_size=300))
def test_garbage_raises_only_compression_error(codec, data):
    try:
        out = decompress(codec, data)
    except CompressionError as exc:
        assert exc.position is None  # the batch reader adds it
    else:
        assert isinstance(out, bytes)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(COMPRESSED), st.data())
def test_corrupted_valid_frames_raise_only_compression_error(codec, data):
    original = payload(2000, seed=5)
    frame = bytearray(compress(codec, original))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(frame) - 1))
        frame[i] ^= data.draw(st.integers(1, 255))
    try:
        decompress(codec, bytes(frame))
    except CompressionError:
        pass


@pytest.mark.parametrize("codec", COMPRESSED)
def test_every_truncation_of_a_frame_raises(codec):
    data = os.urandom(700) * 3
    frame = compress(codec, data)
    for cut in range(len(frame)):
        if codec is Codec.SNAPPY and cut == 16:
            continue  # a bare xerial header is a valid, empty stream
        with pytest.raises(CompressionError, match=f"Failed to decompress {codec} payload"):
            decompress(codec, frame[:cut])


def test_gzip_bad_crc_raises():
    frame = bytearray(compress(Codec.GZIP, payload(1000)))
    frame[-5] ^= 0xFF  # inside the CRC-32 trailer
    with pytest.raises(CompressionError):
        decompress(Codec.GZIP, bytes(frame))


def test_zstd_trailing_garbage_raises():
    with pytest.raises(CompressionError):
        decompress(Codec.ZSTD, compress(Codec.ZSTD, b"x" * 100) + b"\x00\x01\x02\x03")


def test_gzip_headerless_deflate_rejected():
    raw = zlib.compress(b"hello")[2:-4]  # bare RFC 1951 deflate, no gzip header
    with pytest.raises(CompressionError):
        decompress(Codec.GZIP, raw)
