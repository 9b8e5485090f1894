"""Checksums: CRC-32C for v2 batches and producer snapshots, CRC-32 for v0/v1 messages.

Both accept any buffer (bytes, mmap slices through memoryview) without copying, and are the
C functions themselves (no Python wrapper), since every batch of every scan calls one.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c

crc32c = _crc32c.crc32c
"""CRC-32C (Castagnoli) of a buffer, ``crc32c(data, value=0)``; hardware accelerated where the
CPU has it."""

crc32 = zlib.crc32
"""CRC-32 (IEEE) of a buffer, ``crc32(data, value=0)``: the legacy (magic 0/1) checksum."""
