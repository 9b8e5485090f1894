"""A partition's segments by base offset (Kafka's ``LogSegments``).

Kafka keeps them in a concurrent skip list; a partition log here is single-threaded, so a
sorted list of base offsets beside a dict is enough. The one rule worth naming is the range
query (``values(from, to)``): it starts at the segment *holding* ``from`` (the floor entry),
not at the first segment based at or after it, and stops before the first segment based at or
after ``to``. Recovery from a recovery point, flushing and producer-state replay all use it.
"""

from __future__ import annotations

import bisect
from typing import Generic, Iterator, Protocol, Sequence, TypeVar


class _HasBaseOffset(Protocol):
    base_offset: int


S = TypeVar("S", bound=_HasBaseOffset)


def bases_in_range(bases: Sequence[int], start: int, end: int) -> list[int]:
    """The sorted ``bases`` whose segments can hold offsets in ``[start, end)``: from the floor
    of ``start`` (or the first) up to, excluding, the first base >= ``end``."""
    if start == end:
        return []
    if end < start:
        raise ValueError(f"Invalid log segment range: requested segments from offset {start} "
                         f"which is greater than limit offset {end}")
    first = max(bisect.bisect_right(bases, start) - 1, 0)
    return [b for b in bases[first:bisect.bisect_left(bases, end)]]


class LogSegments(Generic[S]):
    """Segments sorted by base offset; adding one under an existing base replaces it."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._by_base: dict[int, S] = {}

    def add(self, segment: S) -> S | None:
        """Insert ``segment``; returns the one it replaced, if any."""
        base = segment.base_offset
        previous = self._by_base.get(base)
        if previous is None:
            bisect.insort(self._bases, base)
        self._by_base[base] = segment
        return previous

    def remove(self, base_offset: int) -> S | None:
        segment = self._by_base.pop(base_offset, None)
        if segment is not None:
            self._bases.pop(bisect.bisect_left(self._bases, base_offset))
        return segment

    def clear(self) -> None:
        self._bases.clear()
        self._by_base.clear()

    def get(self, base_offset: int) -> S | None:
        return self._by_base.get(base_offset)

    def __contains__(self, base_offset: object) -> bool:
        return base_offset in self._by_base

    def __len__(self) -> int:
        return len(self._bases)

    def __iter__(self) -> Iterator[S]:
        return (self._by_base[b] for b in list(self._bases))

    @property
    def base_offsets(self) -> list[int]:
        return list(self._bases)

    @property
    def first(self) -> S | None:
        return self._by_base[self._bases[0]] if self._bases else None

    @property
    def last(self) -> S | None:
        """The active segment (the one with the largest base offset)."""
        return self._by_base[self._bases[-1]] if self._bases else None

    def floor(self, offset: int) -> S | None:
        """The segment with the greatest base offset <= ``offset``."""
        i = bisect.bisect_right(self._bases, offset)
        return self._by_base[self._bases[i - 1]] if i else None

    def higher(self, offset: int) -> S | None:
        """The segment with the smallest base offset strictly above ``offset``."""
        i = bisect.bisect_right(self._bases, offset)
        return self._by_base[self._bases[i]] if i < len(self._bases) else None

    def lower(self, offset: int) -> S | None:
        """The segment with the greatest base offset strictly below ``offset``."""
        i = bisect.bisect_left(self._bases, offset)
        return self._by_base[self._bases[i - 1]] if i else None

    def values(self, start: int, end: int) -> list[S]:
        """The segments that can hold offsets in ``[start, end)`` (see the module docstring)."""
        return [self._by_base[b] for b in bases_in_range(self._bases, start, end)]
