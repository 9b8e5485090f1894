"""Checksums: CRC-32C for v2 batches and producer snapshots, CRC-32 for v0/v1 messages.

Both accept any buffer (bytes, mmap slices through memoryview) without copying.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c


def crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    """CRC-32C (Castagnoli), hardware accelerated where the CPU has it."""
    return _crc32c.crc32c(data, value)


def crc32(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    """CRC-32 (IEEE), the checksum of the legacy (magic 0/1) message format."""
    return zlib.crc32(data, value)
