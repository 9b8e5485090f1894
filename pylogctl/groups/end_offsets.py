"""End offsets of data partitions, from their files: what LOG-END-OFFSET and LAG use.

``kafka-consumer-groups.sh`` asks the leaders for the latest offset as a read-uncommitted
consumer sees it: the high watermark. On disk that is the ``replication-offset-checkpoint``
entry, which the broker writes every few seconds, so a broker's loader clamps it: ``min(max(
checkpoint, log start), log end)`` (an absent entry counts as 0). ``lag_from="leo"`` takes the
log end offset instead: what the leader had appended, including records never replicated.

The log end offset is the active (last) segment's next offset, as Kafka's
``LogSegment.readNextOffset`` finds it: from the last entry of the ``.index`` (when it points at a
batch) scan forward to the last valid batch, stopping at the first batch whose CRC fails or at
trailing bytes, where recovery would cut. A crashed broker's active index is missing or has a
zero-filled tail; its valid entries are found by binary search, else the scan starts at 0.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..errors import CorruptRecordError, PylogctlError
from ..storage.file_records import FileRecords
from ..storage.log_dir_layout import log_segments
from ..storage.naming import INDEX_SUFFIX, LOG_SUFFIX, replace_suffix
from ..storage.offset_index import OffsetIndex

if TYPE_CHECKING:
    from .replicas import LogDirs, Replica

LagFrom = Literal["hw", "leo"]


@dataclass(frozen=True)
class LogEnd:
    """A partition's log end offset and where its valid data ends; ``problem`` describes what
    was cut (invalid trailing bytes, a corrupt batch)."""

    offset: int
    segment: str | None
    valid_bytes: int
    problem: str | None = None


def _index_hint(index_path: str, base_offset: int, log_size: int) -> int:
    """The byte position of the last usable ``.index`` entry, 0 when there is none."""
    if not os.path.exists(index_path):
        return 0
    try:
        with OffsetIndex(index_path, base_offset) as index:
            lo, hi = 0, index.entries  # real entries have position > 0; a crash leaves zeros
            while lo < hi:
                mid = (lo + hi) // 2
                if index.entry(mid).position > 0:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == 0:
                return 0
            entry = index.entry(lo - 1)
    except (PylogctlError, OSError):
        return 0
    return entry.position if entry.offset >= base_offset and entry.position < log_size else 0


def read_log_end(partition_dir: str | os.PathLike[str]) -> LogEnd:
    """The log end offset of a partition dir (0 when it has no segment)."""
    logs = log_segments(partition_dir)
    if not logs:
        return LogEnd(0, None, 0)
    base, path = logs[-1]
    try:
        with FileRecords(path) as records:
            size = records.file_size
            hint = _index_hint(replace_suffix(path, LOG_SUFFIX, INDEX_SUFFIX), base, size)
            end = _scan(records, base, hint)
            if end is None:  # the hint did not point at a batch
                end = _scan(records, base, 0)
    except PylogctlError as exc:
        return LogEnd(base, path, 0, str(exc))
    assert end is not None
    offset, valid, problem = end
    if problem is None and valid < size:
        problem = f"{size - valid} invalid bytes at the end (byte position {valid})"
    return LogEnd(offset, path, valid, problem)


def _scan(records: FileRecords, base: int, start: int) -> tuple[int, int, str | None] | None:
    """``(next offset, valid end, problem)`` scanning from ``start``; None if ``start`` is
    not a batch of this segment."""
    offset, valid = base, start
    batches = records.batches(start)
    try:
        for batch in batches:
            if start and batch.position == start and not (base <= batch.base_offset
                                                          and batch.is_valid):
                return None  # the index entry does not lead to a batch of this segment
            if not batch.is_valid:
                return offset, valid, (f"batch at byte position {batch.position} fails its CRC "
                                       f"check")
            offset, valid = batch.next_offset, batch.position + batch.size_in_bytes
    except CorruptRecordError as exc:
        if start and valid == start:
            return None
        return offset, valid, f"{exc.message} (byte position {exc.position})"
    finally:
        batches = None
    return offset, valid, None


@dataclass(frozen=True)
class EndOffset:
    """The end offset of one data partition and the replica it was read from (None: no
    replica in the log dirs)."""

    offset: int | None
    replica: Replica | None
    log_end_offset: int | None = None
    high_watermark_checkpoint: int | None = None


class EndOffsets:
    """End offsets of data partitions, read once each from the replica :class:`LogDirs`
    picks."""

    def __init__(self, log_dirs: LogDirs, lag_from: LagFrom = "hw") -> None:
        if lag_from not in ("hw", "leo"):
            raise ValueError(f"lag_from is 'hw' or 'leo', not {lag_from!r}")
        self.log_dirs = log_dirs
        self.lag_from = lag_from
        self._cache: dict[tuple[str, int], EndOffset] = {}

    def get(self, topic: str, partition: int) -> EndOffset:
        key = (topic, partition)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._read(topic, partition)
        return found

    def _read(self, topic: str, partition: int) -> EndOffset:
        choice = self.log_dirs.choose(topic, partition)
        if choice is None:
            return EndOffset(None, None)
        replica = choice.chosen
        leo = replica.log_end.offset
        hw = replica.high_watermark_checkpoint
        if self.lag_from == "leo":
            return EndOffset(leo, replica, leo, hw)
        return EndOffset(min(max(hw or 0, replica.log_start_offset), leo), replica, leo, hw)
