"""Batches and segments for the storage tests."""

from __future__ import annotations

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.log_stream import iter_batches
from pylogctl.storage.segment import LogSegment

TS = 1_700_000_000_000


def batch(base_offset: int, count: int = 3, timestamp: int = TS, value_size: int = 100,
          **options) -> bytes:
    """``count`` records from ``base_offset``, timestamps ``timestamp``, ``timestamp + 1``, ..."""
    builder = RecordBatchBuilder(base_offset=base_offset, **options)
    for i in range(count):
        builder.append(timestamp + i, b"k%d" % i, b"v" * value_size)
    return builder.build()


def append(segment: LogSegment, data: bytes) -> None:
    """Append ``data`` (one or more batches) as one append, as a leader or follower would."""
    batches = list(iter_batches(data))
    segment.append(batches[-1].last_offset, data)


class FakeClock:
    def __init__(self, now: int = TS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now
