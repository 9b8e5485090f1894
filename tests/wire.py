"""Byte builders for Kafka's generated-message encoding and the legacy (magic 0/1) message
format, written independently of ``pylogctl.format`` so tests that use them check the library
instead of echoing it."""

from __future__ import annotations

import gzip
import struct
import zlib

NO_TAGS = b"\x00"  # an empty tagged-field section
UUID = bytes.fromhex("fbffbf0123456789abcdeffedcba9876")
UUID_STR = "-_-_ASNFZ4mrze_-3LqYdg"  # Kafka's Uuid.toString(): URL-safe base64 without padding


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def compact_string(s: str | None) -> bytes:
    """A flexible-version string: uvarint length + 1 (0 = null), then UTF-8."""
    if s is None:
        return b"\x00"
    raw = s.encode("utf-8")
    return uvarint(len(raw) + 1) + raw


# -- legacy (magic 0/1) message sets: the log entries brokers before 0.11 wrote ------------------
def legacy_message(offset: int, magic: int, key: bytes | None, value: bytes | None,
                   timestamp: int = -1, attributes: int = 0) -> bytes:
    """One log entry: offset int64, size int32, then the message (crc32 of the rest, magic,
    attributes, the timestamp int64 for magic 1, key and value as int32-sized bytes)."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for blob in (key, value):
        body += struct.pack(">i", -1) if blob is None else struct.pack(">i", len(blob)) + blob
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def legacy_gzip_wrapper(offsets: list[int], magic: int, values: list[bytes | None],
                        timestamp: int = -1) -> bytes:
    """A gzip wrapper of one inner message per offset. Magic 1 inner offsets are relative
    (0, 1, ...) and the wrapper carries the last absolute offset (KIP-31); magic 0 inner
    offsets are absolute, as is the wrapper's (the last one)."""
    inner = b"".join(legacy_message(i if magic == 1 else o, magic, None, v, timestamp)
                     for i, (o, v) in enumerate(zip(offsets, values)))
    return legacy_message(offsets[-1], magic, None, gzip.compress(inner, mtime=0), timestamp,
                          attributes=1)
