"""``java.util.HashMap``'s iteration order, for output and files Kafka writes by iterating one
(producer snapshots, ``DescribeProducers``, the plans of Kafka's tools).

A key's bucket is ``(h ^ (h >>> 16)) & (capacity - 1)`` for its ``hashCode`` h; the capacity
starts at 16 and doubles whenever the size passes 3/4 of it, and never shrinks; iteration walks
the buckets in index order, each bucket in insertion order (a resize splits a bucket without
reordering it). Buckets of 8 or more keys turn into trees in a big enough table, which this
does not model: with Kafka's key counts that never happens in practice. The Kafka key hashes
and ``TimelineHashMap``'s order are :mod:`pylogctl.groups.java_hash_map`'s.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, TypeVar

K = TypeVar("K", bound=Hashable)

_INT32 = 0xFFFFFFFF


def java_int(n: int) -> int:
    """``n`` wrapped to a Java ``int`` (two's complement, 32 bits)."""
    n &= _INT32
    return n - (1 << 32) if n & 0x80000000 else n


def long_hash_code(value: int) -> int:
    """``Long.hashCode``: the two halves of the 64-bit value xor-ed."""
    u = value & 0xFFFF_FFFF_FFFF_FFFF
    return java_int(u ^ (u >> 32))


def spread(h: int) -> int:
    """``HashMap.hash``: the high half of a hash code folded into the low one (Scala 2.13's
    mutable hash tables spread theirs the same way)."""
    u = h & _INT32
    return java_int(u ^ (u >> 16))


def capacity_for(size: int) -> int:
    """The table size a ``HashMap`` filled with ``size`` puts (from empty) ends up with."""
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def hash_map_order(keys: Iterable[K], hash_code: Callable[[K], int],
                   capacity: int | None = None) -> list[K]:
    """``keys`` (in insertion order, duplicates ignored) in ``HashMap`` iteration order, in a
    table of ``capacity`` buckets (default: what putting the keys into an empty map gives)."""
    unique = list(dict.fromkeys(keys))
    mask = (capacity_for(len(unique)) if capacity is None else capacity) - 1

    def bucket(key: K) -> int:
        return spread(hash_code(key)) & mask

    # sorted() is stable: keys of one bucket keep their insertion order
    return sorted(unique, key=bucket)
