"""The offset index (``.index``): 8-byte entries ``relative offset int32 | position int32``.

An entry maps an offset to the byte position of a batch in the segment at or before the batch
holding it; lookups return the largest entry <= the target and the reader scans forward. The
entry offset is the last offset of an *append*, which for a follower's multi-batch append lies
in a later batch than the one at the position: still correct for lookups.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from .index import AbstractIndex, CorruptIndexError

_ENTRY = struct.Struct(">ii")


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class OffsetIndex(AbstractIndex[OffsetPosition]):
    entry_size = 8

    def entry(self, n: int) -> OffsetPosition:
        rel, pos = _ENTRY.unpack_from(self._data, n * 8)
        return OffsetPosition(self.base_offset + rel, pos)

    def _key(self, n: int) -> int:
        return self.base_offset + _ENTRY.unpack_from(self._data, n * 8)[0]

    @property
    def last_offset(self) -> int:
        return self.entry(self.entries - 1).offset if self.entries else self.base_offset

    def lookup(self, target_offset: int) -> OffsetPosition:
        """Largest entry <= target, or ``(base offset, 0)``: where to start scanning."""
        slot = self.largest_lower_bound_slot(target_offset)
        return OffsetPosition(self.base_offset, 0) if slot < 0 else self.entry(slot)

    def sanity_check(self) -> None:
        """Kafka's check that decides whether a broker rebuilds the index at start-up."""
        if self.entries and self.last_offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self._abs_path()} has non-zero size but the "
                f"last offset is {self.last_offset} which is less than the base offset "
                f"{self.base_offset}", path=self.path)
        if self.length % self.entry_size:
            raise CorruptIndexError(
                f"Index file {self._abs_path()} is corrupt, found {self.length} bytes which is "
                f"neither positive nor a multiple of {self.entry_size}", path=self.path)
