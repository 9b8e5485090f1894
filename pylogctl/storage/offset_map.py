"""The log cleaner's key -> latest offset map (Kafka's ``SkimpyOffsetMap``).

Kafka stores, per key, only a digest of the key (MD5 by default: 16 bytes) and the offset (8
bytes) in a fixed buffer of ``memory`` bytes: ``slots = memory // (digest size + 8)`` entries,
open addressing (the probe sequence reads successive 4-byte words of the digest, then goes on
linearly), an all-zero entry meaning empty. Two keys with the same digest are one key to the
cleaner. The cleaner fills the map up to ``slots * load factor`` entries and stops there: that
budget, not the size of the dirty section, decides how many offsets one cleaning covers.

Here each entry is a ``dict`` item from the first key seen with a digest (the digest's
*owner*) to the offset, beside a ``dict`` from digest to owner. A key already in the map is
found in one lookup, without hashing it; a new or absent key is hashed once, and a key whose
digest another key owns shares that key's entry, as it does in Kafka. So every answer --
``get``, ``put``, ``size``, the latest offset -- is a function of the digests, as in Kafka (its
probe sequence only decides *where* an entry sits in its buffer, and the cleaner never lets the
map get full enough for probing to fail), and so is every cleaning decision made from them.
``slots`` and the load factor are counted in Kafka's 24 bytes per entry; the Python objects cost
more (about 150 bytes plus the key per entry: a full default map of 5 million keys is ~0.8 GiB).
A Python loop over Kafka's probe sequence would keep the 24 bytes but cost several times the
time of every lookup, and the cleaner's throughput is made of lookups.
"""

from __future__ import annotations

import hashlib
from itertools import islice
from typing import Callable

from ..errors import UsageError
from ..format.record import Record

OFFSET_BYTES = 8


class SkimpyOffsetMap:
    """At most :attr:`slots` key digests -> offsets, within ``memory`` bytes of Kafka's layout."""

    __slots__ = ("memory", "hash_algorithm", "hash_size", "bytes_per_entry", "slots",
                 "latest_offset", "_offsets", "_owners", "_hash")

    def __init__(self, memory: int, hash_algorithm: str = "MD5") -> None:
        name = hash_algorithm.replace("-", "").lower()
        try:
            size = hashlib.new(name).digest_size
        except ValueError:
            raise UsageError(f"{hash_algorithm} MessageDigest not available") from None
        self.memory = memory
        self.hash_algorithm = hash_algorithm
        self.hash_size = size
        self.bytes_per_entry = size + OFFSET_BYTES
        self.slots = memory // self.bytes_per_entry
        self.latest_offset = -1
        self._offsets: dict[bytes, int] = {}  # owner key -> offset
        self._owners: dict[bytes, bytes] = {}  # digest -> owner key
        self._hash: Callable[[bytes], "hashlib._Hash"] = (
            getattr(hashlib, name) if name in hashlib.algorithms_guaranteed
            else lambda data: hashlib.new(name, data))

    def digest(self, key: bytes) -> bytes:
        """The hash the map stores for ``key``."""
        return self._hash(key).digest()

    @property
    def size(self) -> int:
        """Distinct digests put since the last :meth:`clear`."""
        return len(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def utilization(self) -> float:
        return len(self._offsets) / self.slots if self.slots else 0.0

    def put(self, key: bytes, offset: int) -> None:
        """Map ``key`` to ``offset`` (a later offset for the same key replaces the earlier)."""
        if len(self._offsets) >= self.slots:  # Kafka refuses even an update once all are used
            raise ValueError(f"Attempted to add a new entry to a full offset map, entries: "
                             f"{len(self._offsets)}, slots: {self.slots}")
        if key in self._offsets:
            self._offsets[key] = offset
        else:
            self._put_new(key, offset)
        self.latest_offset = offset

    def _put_new(self, key: bytes, offset: int) -> None:
        digest = self._hash(key).digest()
        owner = self._owners.setdefault(digest, key)
        self._offsets[owner] = offset

    def put_records(self, records: list[Record], start: int, max_entries: int) -> bool:
        """:meth:`put` every keyed record at or after ``start`` (the per-record loop of Kafka's
        ``buildOffsetMapForSegment``); stop and return True when the map already holds
        ``max_entries`` keys and another keyed record comes."""
        offsets = self._offsets
        if (len(offsets) + len(records) > max_entries
                or (records and records[0].offset < start)):
            return self._put_records_one_by_one(records, start, max_entries)
        # the whole batch fits and is past ``start``: the same puts, in bulk; the keys new to
        # the map are the last ones the update inserted (a dict keeps insertion order)
        pairs = [(r.key, r.offset) for r in records if r.key is not None]
        if not pairs:
            return False
        before = len(offsets)
        offsets.update(pairs)
        grew = len(offsets) - before
        if grew:
            for key in list(islice(reversed(offsets), grew)):
                owner = self._owners.setdefault(self._hash(key).digest(), key)
                if owner is not key:  # a digest collision: the keys share the owner's entry
                    offsets[owner] = max(offsets[owner], offsets.pop(key))
        self.latest_offset = pairs[-1][1]
        return False

    def _put_records_one_by_one(self, records: list[Record], start: int,
                                max_entries: int) -> bool:
        offsets = self._offsets
        for record in records:
            key = record.key
            if key is not None and record.offset >= start:
                if len(offsets) >= max_entries:
                    return True
                if key in offsets:
                    offsets[key] = record.offset
                else:
                    self._put_new(key, record.offset)
                self.latest_offset = record.offset
        return False

    def present(self) -> Callable[[bytes], int | None]:
        """A lookup for the hot loop: the offset of a key already in the map, None for any
        other key (whose offset :meth:`get` then finds, hashing it)."""
        return self._offsets.get

    def get(self, key: bytes) -> int:
        """The offset mapped for ``key``, or -1."""
        offset = self._offsets.get(key)
        if offset is None:
            owner = self._owners.get(self._hash(key).digest())
            return -1 if owner is None else self._offsets[owner]
        return offset

    def update_latest_offset(self, offset: int) -> None:
        """Extend the range the map speaks for (through batches without keys, offset gaps)."""
        self.latest_offset = offset

    def clear(self) -> None:
        self._offsets.clear()
        self._owners.clear()
        self.latest_offset = -1

    def __repr__(self) -> str:
        return (f"SkimpyOffsetMap(slots={self.slots}, size={self.size}, "
                f"latest_offset={self.latest_offset}, hash={self.hash_algorithm})")
