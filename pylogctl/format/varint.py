"""Zig-zag variable-length integers, as used by the v2 record format (Protobuf style).

One decoder for the whole project. Kafka's ``varint`` is a zig-zag encoded int32 that may take
up to 5 bytes, ``varlong`` a zig-zag int64 of up to 10 bytes. Hot loops in
:mod:`pylogctl.format.record_batch` inline the one-byte case and fall back to these functions.
"""

from __future__ import annotations

from ..errors import CorruptRecordError

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def read_varint(buf: bytes | bytearray | memoryview, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Decode a zig-zag varint at ``pos``; return ``(value, next_pos)``.

    ``max_bytes`` is 5 for a varint and 10 for a varlong. Raises :class:`CorruptRecordError`
    on a truncated or over-long encoding, as Kafka's ``ByteUtils.readVarint`` does.
    """
    raw = 0
    shift = 0
    start = pos
    try:
        while True:
            b = buf[pos]
            pos += 1
            raw |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
            if pos - start >= max_bytes:
                raise CorruptRecordError(f"Varint is too long, the most significant bit in the "
                                         f"{max_bytes}th byte is set", position=start)
    except IndexError:
        raise CorruptRecordError("Truncated varint", position=start) from None
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Decode a zig-zag varlong (up to 10 bytes); return ``(value, next_pos)``."""
    return read_varint(buf, pos, 10)


def read_unsigned_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Decode an unsigned (not zig-zag) varint, as flexible message versions use for lengths."""
    raw = 0
    shift = 0
    start = pos
    try:
        while True:
            b = buf[pos]
            pos += 1
            raw |= (b & 0x7F) << shift
            if b < 0x80:
                return raw, pos
            shift += 7
            if shift > 28:
                raise CorruptRecordError("Unsigned varint is too long", position=start)
    except IndexError:
        raise CorruptRecordError("Truncated unsigned varint", position=start) from None


def encode_varint(value: int) -> bytes:
    """Zig-zag encode a signed integer (varint or varlong, depending on its range)."""
    raw = (value << 1) ^ (value >> 63) if value < 0 else value << 1
    raw &= (1 << 64) - 1
    return encode_unsigned_varint(raw)


def encode_unsigned_varint(value: int) -> bytes:
    """Encode a non-negative integer as an unsigned varint."""
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def size_of_varint(value: int) -> int:
    """Encoded length in bytes of ``value`` as a zig-zag varint."""
    return len(encode_varint(value))
