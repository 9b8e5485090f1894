"""ListOffsets by time over a partition's segments: Kafka's ``UnifiedLog.fetchOffsetByTimestamp``
for the targets that search the log, and the clamp ``ReplicaManager.fetchOffset`` applies.

The special targets (KIP-734, KIP-1005, KIP-1023): -1 latest, -2 earliest, -3 max timestamp,
-4 earliest local, -5 latest tiered, -6 earliest pending upload. Earliest and latest are the
log start offset and the last fetchable offset, which the caller knows; the rest search:

- a timestamp ``T >= 0``: the first segment whose largest timestamp (its time index's last
  entry, else the ``.log``'s mtime) is ``>= T``; in it, the time index entry at or below ``T``,
  the offset index entry for that offset (not below the log start), then a scan for the first
  record with ``timestamp >= T`` and ``offset >= log start``. Only that segment is searched.
- max timestamp: the first segment with the largest max-timestamp-so-far; from the offset
  index entry for its time index's last offset, the first batch whose max timestamp equals it,
  and in it the first record with that timestamp (``RecordBatch.offsetOfMaxTimestamp``; none
  for magic 0). Unlike a timestamp, this ignores the log start offset.

``ReplicaManager`` answers "no offset" (-1) when what was found is at or past the last
fetchable offset (the high watermark for a read_uncommitted client).
"""

from __future__ import annotations

from typing import Iterable, Protocol

from .file_records import FileRecords, TimestampAndOffset
from .offset_index import OffsetIndex
from .time_index import TimestampOffset

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6

# Kafka's OffsetSpec names for the special targets (GetOffsetShell's --time words)
SPEC_NAMES = {LATEST_TIMESTAMP: "latest", EARLIEST_TIMESTAMP: "earliest",
              MAX_TIMESTAMP: "max-timestamp", EARLIEST_LOCAL_TIMESTAMP: "earliest-local",
              LATEST_TIERED_TIMESTAMP: "latest-tiered",
              EARLIEST_PENDING_UPLOAD_TIMESTAMP: "earliest-pending-upload"}


class Segment(Protocol):
    """What the search reads of a :class:`~pylogctl.storage.segment.LogSegment`."""

    base_offset: int
    log: FileRecords

    @property
    def max_timestamp_so_far(self) -> int: ...

    @property
    def largest_timestamp(self) -> int: ...

    @property
    def offset_index(self) -> OffsetIndex: ...

    def max_timestamp_and_offset_so_far(self) -> TimestampOffset: ...

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int | None = None
                                 ) -> TimestampAndOffset | None: ...


def search_offset_in_local_log(segments: Iterable[Segment], timestamp: int,
                               log_start_offset: int) -> TimestampAndOffset | None:
    """``searchOffsetInLocalLog``: the first record at or after ``timestamp`` (>= 0)."""
    for segment in segments:
        if segment.largest_timestamp >= timestamp:
            return segment.find_offset_by_timestamp(timestamp, log_start_offset)
    return None


def offset_of_max_timestamp(segments: Iterable[Segment]) -> TimestampAndOffset | None:
    """``fetchOffsetByTimestamp(MAX_TIMESTAMP)``: the first record holding the largest
    timestamp of the log, found through the segment's time and offset indexes."""
    best: Segment | None = None
    for segment in segments:
        if best is None or segment.max_timestamp_so_far > best.max_timestamp_so_far:
            best = segment
    if best is None:
        return None
    target = best.max_timestamp_and_offset_so_far()
    position = best.offset_index.lookup(target.offset).position
    for batch in best.log.batches(position):
        if batch.max_timestamp != target.timestamp:
            continue
        if batch.magic == 0:
            return None
        for record in batch.records():
            if record.timestamp == target.timestamp:
                epoch = getattr(batch, "partition_leader_epoch", -1)
                return TimestampAndOffset(batch.max_timestamp, record.offset,
                                          epoch if epoch >= 0 else None)
        return None
    return None


def fetch_offset_by_timestamp(segments: Iterable[Segment], timestamp: int,
                              log_start_offset: int, last_fetchable_offset: int
                              ) -> TimestampAndOffset | None:
    """The answer for a searching target (max timestamp, or a timestamp >= 0), None where
    ListOffsets answers offset -1: nothing found, or found at or past the last fetchable
    offset."""
    if timestamp == MAX_TIMESTAMP:
        found = offset_of_max_timestamp(segments)
    elif timestamp >= 0:
        found = search_offset_in_local_log(segments, timestamp, log_start_offset)
    else:
        raise ValueError(f"timestamp {timestamp} does not search the log")
    if found is None or found.offset >= last_fetchable_offset:
        return None
    return found
