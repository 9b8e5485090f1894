"""Checksums: CRC-32C for v2 batches and producer snapshots, CRC-32 for v0/v1 messages.

Both accept any buffer (bytes, mmap slices through memoryview) without copying, and are C
functions themselves (no Python wrapper), since every batch of every scan calls one. CRC-32C
comes from the C accelerator when it is built (``_crc32c.c``: the same function the shallow
dump's C loop uses, and no start-up cost), else from the ``crc32c`` package; both are
hardware accelerated on x86-64 and give the same values (tests/format/test_fmt_speedups.py).
"""

from __future__ import annotations

import zlib

from ..speedups import accelerator

_c = accelerator("pylogctl.format._speedups")
if _c is None:
    from crc32c import crc32c
else:
    crc32c = _c.crc32c

crc32 = zlib.crc32
"""CRC-32 (IEEE) of a buffer, ``crc32(data, value=0)``: the legacy (magic 0/1) checksum."""
