"""What Kafka's offset and time indexes share (``AbstractIndex``): a file of fixed-size entries.

An index is sparse and sorted; lookups are a binary search for the largest entry <= target.
Kafka splits the search into a *warm* tail (the last 8192 bytes of entries, where almost every
lookup lands) and the cold rest, so that tail lookups keep touching the same few pages however
the index grows. An existing file is taken to hold ``length // entry_size`` entries: a crashed,
preallocated index therefore shows a zero-filled tail, which readers stop at.
"""

from __future__ import annotations

import mmap
import os
from typing import Generic, TypeVar

from ..errors import FileUnreadableError, PylogctlError
from .files import open_for_read
from .naming import offset_from_file

WARM_BYTES = 8192
T = TypeVar("T")


class CorruptIndexError(PylogctlError):
    """An index fails Kafka's sanity check (a broker would rebuild it)."""


class AbstractIndex(Generic[T]):
    """Read-only view of an index file; subclasses define the entry layout."""

    entry_size: int = 0

    def __init__(self, path: str | os.PathLike[str], base_offset: int | None = None) -> None:
        self.path = os.fspath(path)
        self.base_offset = offset_from_file(self.path) if base_offset is None else base_offset
        try:
            with open_for_read(self.path) as f:
                self.length = os.fstat(f.fileno()).st_size
                self._data: bytes | mmap.mmap = (
                    mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if self.length else b"")
        except OSError as exc:
            raise FileUnreadableError(f"Cannot read {self.path}: {exc.strerror}",
                                      path=self.path) from None
        self.entries = self.length // self.entry_size

    def close(self) -> None:
        if isinstance(self._data, mmap.mmap):
            self._data.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self.entries

    def entry(self, n: int) -> T:
        raise NotImplementedError

    def _key(self, n: int) -> int:
        """The search key of entry ``n`` (offset or timestamp)."""
        raise NotImplementedError

    def largest_lower_bound_slot(self, target: int) -> int:
        """Slot of the largest entry whose key is <= ``target``, or -1 (warm/cold search)."""
        entries = self.entries
        if entries == 0:
            return -1
        first_hot = max(0, entries - 1 - WARM_BYTES // self.entry_size)
        if self._key(first_hot) < target:
            return self._bsearch(target, first_hot, entries - 1)
        if self._key(0) > target:
            return -1
        return self._bsearch(target, 0, first_hot)

    def _bsearch(self, target: int, lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            key = self._key(mid)
            if key > target:
                hi = mid - 1
            elif key < target:
                lo = mid
            else:
                return mid
        return lo

    def _abs_path(self) -> str:
        return os.path.abspath(self.path)
