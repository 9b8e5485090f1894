"""The time index (``.timeindex``): 12-byte entries ``timestamp int64 | relative offset int32``.

Each entry records a new maximum timestamp and the offset of the batch that carried it (its
last offset); timestamps and offsets never decrease. Lookups by time give an offset, which the
offset index turns into a file position.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ..format.record import NO_TIMESTAMP
from .index import AbstractIndex, CorruptIndexError

_ENTRY = struct.Struct(">qi")


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class TimeIndex(AbstractIndex[TimestampOffset]):
    entry_size = 12

    def entry(self, n: int) -> TimestampOffset:
        ts, rel = _ENTRY.unpack_from(self._data, n * 12)
        return TimestampOffset(ts, self.base_offset + rel)

    def _key(self, n: int) -> int:
        return _ENTRY.unpack_from(self._data, n * 12)[0]

    @property
    def last_entry(self) -> TimestampOffset:
        return self.entry(self.entries - 1) if self.entries else TimestampOffset(NO_TIMESTAMP,
                                                                                 self.base_offset)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """Largest entry with timestamp <= target, or ``(-1, base offset)``."""
        slot = self.largest_lower_bound_slot(target_timestamp)
        return TimestampOffset(NO_TIMESTAMP, self.base_offset) if slot < 0 else self.entry(slot)

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
