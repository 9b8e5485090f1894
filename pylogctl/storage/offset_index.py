"""The offset index (``.index``): 8-byte entries ``relative offset int32 | position int32``.

An entry maps an offset to the byte position of a batch in the segment at or before the batch
holding it; lookups return the largest entry <= the target and the reader scans forward. The
entry offset is the last offset of an *append*, which for a follower's multi-batch append lies
in a later batch than the one at the position: still correct for lookups. Offsets strictly
increase (Kafka's ``OffsetIndex.append`` refuses anything else).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ..errors import InvalidOffsetError
from .index import INT32_MAX, AbstractIndex, CorruptIndexError

_ENTRY = struct.Struct(">ii")


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class OffsetIndex(AbstractIndex[OffsetPosition]):
    entry_size = 8

    def entry(self, n: int) -> OffsetPosition:
        self._check_slot(n)
        rel, pos = _ENTRY.unpack_from(self._data, n * 8)
        return OffsetPosition(self.base_offset + rel, pos)

    def _key(self, n: int) -> int:
        return self.base_offset + _ENTRY.unpack_from(self._data, n * 8)[0]

    _offset_of = _key

    def _position(self, n: int) -> int:
        return _ENTRY.unpack_from(self._data, n * 8)[1]

    @property
    def last_offset(self) -> int:
        """Offset of the last entry, or the base offset when empty."""
        return self._key(self.entries - 1) if self.entries else self.base_offset

    def lookup(self, target_offset: int) -> OffsetPosition:
        """Largest entry <= target, or ``(base offset, 0)``: where to start scanning."""
        slot = self.largest_lower_bound_slot(target_offset)
        return OffsetPosition(self.base_offset, 0) if slot < 0 else self.entry(slot)

    def fetch_upper_bound_offset(self, fetch_offset: OffsetPosition,
                                 fetch_size: int) -> OffsetPosition | None:
        """An entry at or past ``fetch_offset.position + fetch_size``: an offset surely outside
        the fetched bytes (read-committed fetches bound their aborted-txn search with it)."""
        slot = self.smallest_upper_bound_slot(fetch_offset.position + fetch_size, self._position)
        return None if slot < 0 else self.entry(slot)

    def append(self, offset: int, position: int) -> None:
        """Add ``offset -> position``; the offset must exceed the last one appended."""
        data = self._writable_map()
        entries = self.entries
        if self.is_full:
            raise ValueError(f"Attempt to append to a full index (size = {entries}).")
        # the last offset read straight from the map: recovery appends once per batch
        if entries and offset <= self.base_offset + _ENTRY.unpack_from(data, entries * 8 - 8)[0]:
            raise InvalidOffsetError(
                f"Attempt to append an offset {offset} to position {self.entries} no larger than "
                f"the last offset appended ({self.last_offset}) to {self._abs_path()}",
                path=self.path, position=self.size_in_bytes)
        if not 0 <= position <= INT32_MAX:
            raise ValueError(f"Invalid index position {position} for offset {offset}")
        _ENTRY.pack_into(data, entries * 8, self.relative_offset(offset), position)
        self.entries = entries + 1

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
