"""The time index (``.timeindex``): 12-byte entries ``timestamp int64 | relative offset int32``.

Each entry records a new maximum timestamp and the offset it belongs to (the last offset of the
batch that carried it; brokers before 3.x wrote the offset of the *record* holding it for
uncompressed data); timestamps strictly increase and offsets never decrease. Lookups by time
give an offset, which the offset index turns into a file position. Kafka's append rule
(``maybeAppend``) silently skips an entry whose timestamp is not above the last one, and keeps
the last slot free for the max-timestamp entry written when the segment is rolled or closed.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ..errors import InvalidOffsetError
from ..format.record import NO_TIMESTAMP
from .index import AbstractIndex, CorruptIndexError

_ENTRY = struct.Struct(">qi")


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class TimeIndex(AbstractIndex[TimestampOffset]):
    entry_size = 12

    def entry(self, n: int) -> TimestampOffset:
        self._check_slot(n)
        ts, rel = _ENTRY.unpack_from(self._data, n * 12)
        return TimestampOffset(ts, self.base_offset + rel)

    def _key(self, n: int) -> int:
        return _ENTRY.unpack_from(self._data, n * 12)[0]

    def _offset_of(self, n: int) -> int:
        return self.base_offset + _ENTRY.unpack_from(self._data, n * 12)[1]

    @property
    def is_full(self) -> bool:
        """Full one entry early: the last slot is kept for the roll/close entry."""
        return self.entries >= self.max_entries - 1

    @property
    def last_entry(self) -> TimestampOffset:
        """The last entry, or ``(-1, base offset)`` when empty (so any timestamp >= 0 fits)."""
        return self.entry(self.entries - 1) if self.entries else TimestampOffset(NO_TIMESTAMP,
                                                                                 self.base_offset)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """Largest entry with timestamp <= target, or ``(-1, base offset)``."""
        slot = self.largest_lower_bound_slot(target_timestamp)
        return TimestampOffset(NO_TIMESTAMP, self.base_offset) if slot < 0 else self.entry(slot)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Append ``timestamp -> offset`` if the timestamp is above the last entry's.

        An older timestamp or offset is an error; an equal timestamp is skipped quietly (the
        roll and close paths re-offer the last entry). ``skip_full_check`` is for those paths.
        """
        entries = self.entries
        if not skip_full_check and self.is_full:
            raise ValueError(f"Attempt to append to a full time index (size = {entries}).")
        last_timestamp = NO_TIMESTAMP  # an empty index's last_entry
        if entries:  # read straight from the map (no TimestampOffset): once per recovered batch
            last_timestamp, last_relative = _ENTRY.unpack_from(self._data, entries * 12 - 12)
            last_offset = self.base_offset + last_relative
            if offset < last_offset:
                raise InvalidOffsetError(
                    f"Attempt to append an offset ({offset}) to slot {entries} no larger than "
                    f"the last offset appended ({last_offset}) to {self._abs_path()}",
                    path=self.path, position=self.size_in_bytes)
            if timestamp < last_timestamp:
                raise ValueError(
                    f"Attempt to append a timestamp ({timestamp}) to slot {entries} no larger "
                    f"than the last timestamp appended ({last_timestamp}) to {self._abs_path()}")
        if timestamp > last_timestamp:
            _ENTRY.pack_into(self._writable_map(), entries * 12, timestamp,
                             self.relative_offset(offset))
            self.entries = entries + 1

    def sanity_check(self) -> None:
        last = self.last_entry
        where = f"Corrupt time index found, time index file ({self._abs_path()}) has non-zero size"
        if self.entries and last.timestamp < self.entry(0).timestamp:
            raise CorruptIndexError(f"{where} but the last timestamp is {last.timestamp} which is "
                                    f"less than the first timestamp {self.entry(0).timestamp}",
                                    path=self.path)
        if self.entries and last.offset < self.base_offset:
            raise CorruptIndexError(f"{where} but the last offset is {last.offset} which is less "
                                    f"than the first offset {self.base_offset}", path=self.path)
        if self.length % self.entry_size:
            raise CorruptIndexError(
                f"Time index file {self._abs_path()} is corrupt, found {self.length} bytes which "
                f"is neither positive nor a multiple of {self.entry_size}", path=self.path)
