"""The producer workload the benchmarks write, and their shared floors and command-line
helpers.

Batches as a producer with ``batch.size``/``linger.ms`` makes them: 16 records (~17 KiB),
10-byte keys, values of 900-1150 bytes (1 KiB on average) cut from a pool of printable text,
two headers on about a quarter of the records, idempotent-producer fields.
"""

from __future__ import annotations

import mmap
import os
import random
import shutil
import struct
import sys
from pathlib import Path
from typing import Callable

RECORDS_PER_BATCH = 16
KEY_FORMAT = b"user-%05d"  # 10-byte keys
VALUE_SIZES = (900, 1150)  # inclusive range, 1 KiB on average
HEADER_SHARE = 0.25  # records that carry headers
PRODUCER_ID = 4242
BASE_TIMESTAMP = 1_700_000_000_000
_HEADER = struct.Struct(">qiibI")  # baseOffset, length, partitionLeaderEpoch, magic, crc


def value_pool(rng: random.Random) -> bytes:
    """Printable text that record values are windows into."""
    alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}:,\"-_."
    return bytes(rng.choice(alphabet) for _ in range(1 << 18))


def producer_batch(rng: random.Random, pool: bytes, offset: int, sequence: int,
                   ts: int) -> tuple[bytes, int, int, int]:
    """One batch of the workload: ``(bytes, next timestamp, value bytes, records with headers)``."""
    from pylogctl.format.builder import RecordBatchBuilder

    lo, hi = VALUE_SIZES
    value_bytes = with_headers = 0
    builder = RecordBatchBuilder(base_offset=offset, producer_id=PRODUCER_ID, producer_epoch=0,
                                 base_sequence=sequence, partition_leader_epoch=0)
    for _ in range(RECORDS_PER_BATCH):
        n = rng.randint(lo, hi)
        start = rng.randrange(len(pool) - n)
        headers: tuple = ()
        if rng.random() < HEADER_SHARE:
            headers = (("trace-id", b"%016x" % rng.getrandbits(64)),
                       ("content-type", b"application/json"))
            with_headers += 1
        builder.append(ts, KEY_FORMAT % rng.randrange(100_000), pool[start:start + n], headers)
        ts += rng.randint(0, 3)
        value_bytes += n
    return builder.build(), ts, value_bytes, with_headers


def pylogctl_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m pylogctl``."""
    exe = shutil.which("pylogctl", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "pylogctl"]


def verdict(ok: bool) -> str:
    return "TARGET MET" if ok else "TARGET MISSED"


def warm_page_cache(paths: list[str] | list[Path]) -> None:
    """Read the files once so every timed run starts from a warm page cache."""
    buf = bytearray(8 << 20)
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


def crc_floor(logs: list[str] | list[Path]) -> int:
    """Every v2 batch's CRC-32C over its CRC-covered bytes, in a plain Python header loop (the
    least any tool that validates batches must do); returns the batch count."""
    import crc32c

    crc, unpack, n = crc32c.crc32c, _HEADER.unpack_from, 0
    for path in logs:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            view = memoryview(m)
            pos, end = 0, len(m)
            while pos + 17 <= end:
                _, length, _, _, stored = unpack(view, pos)
                if crc(view[pos + 21:pos + 12 + length]) != stored:
                    raise SystemExit(f"bench: CRC mismatch in {os.fspath(path)} at {pos}")
                pos += 12 + length
                n += 1
            view.release()
    return n


class SegmentFiles:
    """The ``.log`` files of a partition dir, written batch by batch: a new file, named after
    its base offset, once the current one holds ``segment_bytes`` (what the benches build)."""

    def __init__(self, part: Path, segment_bytes: int) -> None:
        self.part = part
        self.segment_bytes = segment_bytes
        self.bases: list[int] = []
        self.written = 0
        self._file = None

    def write(self, base_offset: int, data: bytes) -> None:
        if self._file is None or self._file.tell() >= self.segment_bytes:
            self.close()
            self.bases.append(base_offset)
            self._file = open(self.part / f"{base_offset:020d}.log", "wb", buffering=1 << 20)
        self._file.write(data)
        self.written += len(data)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "SegmentFiles":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_in_new_dir(error: Callable[[str], object], root: Path, keep: bool,
                   run: Callable[[], int]) -> int:
    """Run a bench whose data lives in ``root``, which must not exist yet (``error`` is the
    argument parser's), and delete ``root`` afterwards unless ``keep``."""
    if root.exists():
        error(f"{root} exists: give a --dir this run may create and delete")
    try:
        return run()
    finally:
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
