"""Byte builders for Kafka's generated-message encoding, written independently of
``pylogctl.format`` so tests that use them check the library instead of echoing it."""

from __future__ import annotations

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
