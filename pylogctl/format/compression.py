"""Compression codecs exactly as Kafka frames them on disk.

Attribute bits 0-2 of a batch (or of a v0/v1 wrapper message) select the codec. The framing
details that matter for compatibility:

* gzip: an RFC 1952 stream (possibly several members, as Java's GZIPInputStream accepts).
* snappy: Java clients write the *xerial* stream (``\\x82SNAPPY\\x00`` + version + compat, then
  ``[int32 length][raw snappy block]...`` with 32 KiB blocks); librdkafka writes one raw block.
  Readers detect the framing on the first 8 bytes only, as kafka-python does, because some
  writers store version/compat little-endian.
* lz4: the LZ4 *frame* format with independent 64 KiB blocks and no content size (FLG 0x60).
  Magic 0 producers computed the frame header checksum over the magic bytes too; Kafka ignores
  that checksum for magic 0, so we rewrite it before decoding.
* zstd: a zstd frame, often without a content size (librdkafka, zstd-jni streams).
"""

from __future__ import annotations

import enum
import struct
import threading
import zlib

from ..errors import CompressionError, UnsupportedFormatError


class Codec(enum.IntEnum):
    """Kafka's CompressionType ids; ``str()`` gives the name kafka-dump-log prints."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def from_id(cls, codec_id: int) -> "Codec":
        try:
            return cls(codec_id)
        except ValueError:
            raise UnsupportedFormatError(f"Unknown compression type id: {codec_id}") from None

    @classmethod
    def from_name(cls, name: str) -> "Codec":
        try:
            return cls[name.upper()]
        except KeyError:
            raise UnsupportedFormatError(f"Unknown compression name: {name}") from None


XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
XERIAL_BLOCK_SIZE = 32 * 1024
LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"

# one per thread, created on first use: the codec libraries load lazily (CLI start-up time),
# and a ZstdDecompressor must not be shared by threads (recover --threads)
_ZSTD = threading.local()


def _zstd_dctx():
    dctx = getattr(_ZSTD, "dctx", None)
    if dctx is None:
        import zstandard
        dctx = _ZSTD.dctx = zstandard.ZstdDecompressor()
    return dctx


def decompress(codec: Codec | int, data: bytes | memoryview, magic: int = 2) -> bytes:
    """Decompress a batch's record area (or a legacy wrapper's value).

    Raises :class:`CompressionError` (no position: the caller adds it) on any corrupt payload.
    """
    codec = Codec.from_id(int(codec))
    try:
        if codec is Codec.NONE:
            return bytes(data)
        if codec is Codec.GZIP:
            return _gunzip(data)
        if codec is Codec.SNAPPY:
            return _unsnappy(data)
        if codec is Codec.LZ4:
            return _unlz4(data, magic)
        return _unzstd(data)
    except CompressionError:
        raise
    except Exception as exc:  # every codec library has its own exception types
        raise CompressionError(f"Failed to decompress {codec} payload: {exc}") from None


def compress(codec: Codec | int, data: bytes, level: int | None = None) -> bytes:
    """Compress with the framing Kafka's Java client writes for this codec."""
    codec = Codec.from_id(int(codec))
    if codec is Codec.NONE:
        return bytes(data)
    if codec is Codec.GZIP:
        co = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, 31)
        return co.compress(data) + co.flush()
    if codec is Codec.SNAPPY:
        import cramjam
        out = [XERIAL_HEADER]
        for start in range(0, len(data), XERIAL_BLOCK_SIZE):
            block = bytes(cramjam.snappy.compress_raw(data[start:start + XERIAL_BLOCK_SIZE]))
            out.append(struct.pack(">i", len(block)))
            out.append(block)
        return b"".join(out)
    if codec is Codec.LZ4:
        import lz4.frame
        return lz4.frame.compress(
            data, compression_level=0 if level is None else level,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
            content_checksum=False, block_checksum=False, store_size=False)
    import zstandard
    cctx = zstandard.ZstdCompressor(level=3 if level is None else level, write_content_size=False)
    return cctx.compress(data)


def _gunzip(data: bytes | memoryview) -> bytes:
    out = []
    rest = bytes(data)
    while True:
        d = zlib.decompressobj(47)
        out.append(d.decompress(rest))
        if not d.eof:
            raise CompressionError("Failed to decompress gzip payload: truncated stream")
        rest = d.unused_data
        if not rest:
            return b"".join(out)


def _unsnappy(data: bytes | memoryview) -> bytes:
    import cramjam
    data = bytes(data)
    if data[:8] != XERIAL_MAGIC or len(data) < len(XERIAL_HEADER):
        # a cut-short xerial header is not a stream: decoding it raw fails, as in Java
        return bytes(cramjam.snappy.decompress_raw(data))
    out = []
    pos = 16
    end = len(data)
    while pos < end:
        if pos + 4 > end:
            raise CompressionError("Failed to decompress snappy payload: truncated xerial block header")
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise CompressionError(f"Failed to decompress snappy payload: xerial block length {n} "
                                   f"exceeds the {end - pos} bytes left")
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos:pos + n])))
        pos += n
    return b"".join(out)


def _unlz4(data: bytes | memoryview, magic: int) -> bytes:
    import lz4.frame
    data = bytes(data)
    if magic == 0:
        data = fix_legacy_lz4_header_checksum(data)
    return lz4.frame.decompress(data)


def _unzstd(data: bytes | memoryview) -> bytes:
    out = []
    rest = bytes(data)
    while True:
        dobj = _zstd_dctx().decompressobj()
        out.append(dobj.decompress(rest))
        if not dobj.eof:
            raise CompressionError("Failed to decompress zstd payload: truncated frame")
        rest = dobj.unused_data
        if not rest:
            return b"".join(out)


def fix_legacy_lz4_header_checksum(frame: bytes) -> bytes:
    """Rewrite the frame header checksum that magic-0 era producers computed wrongly.

    Kafka 0.8/0.9 hashed the frame magic as well as the descriptor; a standard decoder rejects
    that, while Kafka skips the check for magic 0. The correct byte is the second byte of
    xxh32 over the descriptor (FLG, BD and the optional 8-byte content size).
    """
    if len(frame) < 7 or frame[:4] != LZ4_FRAME_MAGIC:
        return frame
    hc_pos = 6 + (8 if frame[4] & 0x08 else 0)
    if len(frame) <= hc_pos:
        return frame
    hc = (xxh32(frame[4:hc_pos]) >> 8) & 0xFF
    return frame[:hc_pos] + bytes((hc,)) + frame[hc_pos + 1:]


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32; only ever used on a few header bytes, so pure Python is plenty."""
    n = len(data)
    pos = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while pos <= n - 16:
            for i in range(4):
                (w,) = struct.unpack_from("<I", data, pos)
                v[i] = (_rotl((v[i] + w * _P2) & _M32, 13) * _P1) & _M32
                pos += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        (w,) = struct.unpack_from("<I", data, pos)
        h = (_rotl((h + w * _P3) & _M32, 17) * _P4) & _M32
        pos += 4
    while pos < n:
        h = (_rotl((h + data[pos] * _P5) & _M32, 11) * _P1) & _M32
        pos += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h
