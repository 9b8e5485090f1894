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
    """Append ``data`` (one or more batches) as one append, as a leader or follower would:
    indexed by its largest offset, its time entry naming the last offset of the (first) batch
    holding the max timestamp."""
    batches = list(iter_batches(data))
    best = batches[0]
    for b in batches:
        if b.max_timestamp > best.max_timestamp:
            best = b
    segment.append(batches[-1].last_offset, best.max_timestamp, best.last_offset, data)


class FakeClock:
    def __init__(self, now: int = TS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now
