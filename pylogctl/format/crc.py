"""Checksums: CRC-32C for v2 batches and producer snapshots, CRC-32 for v0/v1 messages.

Both accept any buffer (bytes, mmap slices through memoryview) without copying, and are C
functions themselves (no Python wrapper), since every batch of every scan calls one. CRC-32C
comes from the C accelerator when it is built (``_crc32c.c``: the same function the shallow
dump's C loop uses, and no start-up cost), else from the ``crc32c`` package; both are
hardware accelerated on x86-64 and give the same values (tests/format/test_fmt_speedups.py).
"""

from __future__ import annotations

import os
import zlib

try:
    if os.environ.get("PYLOGCTL_NO_SPEEDUPS", "") not in ("", "0"):
        raise ImportError("PYLOGCTL_NO_SPEEDUPS is set")
    from ._speedups import crc32c
except ImportError:
    from crc32c import crc32c  # type: ignore[assignment,no-redef]

crc32 = zlib.crc32
"""CRC-32 (IEEE) of a buffer, ``crc32(data, value=0)``: the legacy (magic 0/1) checksum."""
