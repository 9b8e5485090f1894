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

:meth:`SkimpyOffsetMap.put_batch` puts a plain v2 batch's keys without decoding its records,
in C (``_cleaner_scan.map_batch``, an optional extension): the same dict updates as
:meth:`~SkimpyOffsetMap.put_records`' bulk path, the digests of the new keys checked here.
:meth:`~SkimpyOffsetMap.lookup_table` is a read-only copy of the entries for the copy pass's
look-ups in C.
"""

from __future__ import annotations

import hashlib
from itertools import islice
from typing import Callable, Iterable

from ...errors import UsageError
from ...format.record import Record
from ...speedups import accelerator

OFFSET_BYTES = 8

# Switched off (pylogctl/speedups.py), or no extension: every batch is decoded and put by
# put_records.
_c = accelerator("pylogctl.storage.cleaner._cleaner_scan")
_key_table, _map_batch = (None, None) if _c is None else (_c.key_table, _c.map_batch)


class SkimpyOffsetMap:
    """At most :attr:`slots` key digests -> offsets, within ``memory`` bytes of Kafka's layout."""

    __slots__ = ("memory", "hash_algorithm", "hash_size", "bytes_per_entry", "slots",
                 "latest_offset", "_offsets", "_owners", "_hash", "_table")

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
        self._table: object = None  # lookup_table()'s, until the entries change
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
        self._table = None
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
        self._table = None
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
            self._own(list(islice(reversed(offsets), grew)))
        self.latest_offset = pairs[-1][1]
        return False

    def _own(self, new_keys: Iterable[bytes]) -> None:
        """Give keys just added to the offsets their digest's entry, newest first."""
        offsets = self._offsets
        for key in new_keys:
            owner = self._owners.setdefault(self._hash(key).digest(), key)
            if owner is not key:  # a digest collision: the keys share the owner's entry
                offsets[owner] = max(offsets[owner], offsets.pop(key))

    def put_batch(self, buf, position: int, start: int, max_entries: int) -> int | None:
        """:meth:`put_records` for the v2 batch at ``position`` of ``buf``, without decoding
        it; returns its record count. None, with nothing put, when the caller must decode the
        batch and call :meth:`put_records`: no extension, a compressed, legacy or malformed
        batch, one starting before ``start``, or a map that may fill up within it."""
        if _map_batch is None:
            return None
        self._table = None
        got = _map_batch(buf, position, self._offsets, start, max_entries)
        if got is NotImplemented:
            return None
        count, new_keys, last = got
        if last is not None:
            if new_keys:
                self._own(reversed(new_keys))
            self.latest_offset = last
        return count

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

    def lookup_table(self) -> object:
        """The entries by owner key for the C filter's look-ups, read only: a copy in the
        extension's table (``key_table``: one memory access per look-up where the dict takes
        three), made once per state of the map; the dict itself without the extension. A key
        found there is answered without hashing; any other goes to :meth:`get`."""
        if self._table is None:
            table = NotImplemented if _key_table is None else _key_table(self._offsets)
            self._table = self._offsets if table is NotImplemented else table
        return self._table

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
        self._table = None
        self._offsets.clear()
        self._owners.clear()
        self.latest_offset = -1

    def __repr__(self) -> str:
        return (f"SkimpyOffsetMap(slots={self.slots}, size={self.size}, "
                f"latest_offset={self.latest_offset}, hash={self.hash_algorithm})")
