"""The producer workload both benchmarks write, and their shared command-line helpers.

Batches as a producer with ``batch.size``/``linger.ms`` makes them: 16 records (~17 KiB),
10-byte keys, values of 900-1150 bytes (1 KiB on average) cut from a pool of printable text,
two headers on about a quarter of the records, idempotent-producer fields.
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

RECORDS_PER_BATCH = 16
KEY_FORMAT = b"user-%05d"  # 10-byte keys
VALUE_SIZES = (900, 1150)  # inclusive range, 1 KiB on average
HEADER_SHARE = 0.25  # records that carry headers
PRODUCER_ID = 4242
BASE_TIMESTAMP = 1_700_000_000_000


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
