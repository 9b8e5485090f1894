"""What Kafka's offset and time indexes share (``AbstractIndex``): a file of fixed-size entries.

An index is sparse and sorted; lookups are a binary search for the largest entry <= target.
Kafka splits the search into a *warm* tail (the last 8192 bytes of entries, where almost every
lookup lands) and the cold rest, so that tail lookups keep touching the same few pages however
the index grows.

Opening follows Kafka's rules. Read-only (the dump tools, KAFKA-5104) never creates or changes
the file. Writable creates a missing file preallocated to ``max_index_size`` rounded down to
whole entries, and maps it read-write. Either way an existing file is taken to hold
``length // entry_size`` entries, so a crashed, preallocated index shows a zero-filled tail
(readers stop at it; the loader rebuilds it). ``trim_to_valid_size`` shrinks the file to its
entries when the segment stops being active; ``resize`` grows it back. Not thread-safe.
"""

from __future__ import annotations

import mmap
import os
from typing import Callable, ClassVar, Generic, TypeVar

from ..errors import FileUnreadableError, IndexOffsetOverflowError, PylogctlError
from ..format.varint import INT32_MAX
from .files import delete_if_exists, open_for_read
from .naming import offset_from_file
from .remote_mirror import materialize

WARM_BYTES = 8192
T = TypeVar("T")


class CorruptIndexError(PylogctlError):
    """An index fails Kafka's sanity check (a broker would rebuild it)."""


def round_down_to_multiple(number: int, factor: int) -> int:
    """Largest multiple of ``factor`` that is <= ``number`` (67, 8 -> 64)."""
    return factor * (number // factor)


class AbstractIndex(Generic[T]):
    """An index file; subclasses define the entry layout and the append rule."""

    entry_size: ClassVar[int] = 0

    def __init__(self, path: str | os.PathLike[str], base_offset: int | None = None,
                 max_index_size: int = -1, writable: bool = False) -> None:
        self.path = os.fspath(path)
        self.base_offset = offset_from_file(self.path) if base_offset is None else base_offset
        self.max_index_size = max_index_size
        self.writable = writable
        self._data: bytes | mmap.mmap = b""
        if writable:
            self._open_writable()
        else:
            self._open_read_only()

    @classmethod
    def from_bytes(cls, path: str, data: bytes, base_offset: int | None = None):
        """A read-only index over ``data``, the whole file read elsewhere (a remote store)."""
        self = cls.__new__(cls)
        self.path = path
        self.base_offset = offset_from_file(path) if base_offset is None else base_offset
        self.max_index_size, self.writable = -1, False
        self._data, self.length = data, len(data)
        self.entries = self.max_entries = self.length // self.entry_size
        return self

    # -- opening and mapping ----------------------------------------------------------------
    def _open_read_only(self) -> None:
        try:
            with open_for_read(self.path) as f:
                self.length = os.fstat(f.fileno()).st_size
                if self.length:
                    self._data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise FileUnreadableError(f"Cannot read {self.path}: {exc.strerror}",
                                      path=self.path) from None
        self.entries = self.length // self.entry_size
        self.max_entries = self.entries

    def _open_writable(self) -> None:
        materialize(self.path)
        newly_created = not os.path.exists(self.path)
        if newly_created and self.max_index_size < self.entry_size:
            raise ValueError(f"Invalid max index size: {self.max_index_size}")
        try:
            with open(self.path, "a+b") as f:
                if newly_created:
                    f.truncate(round_down_to_multiple(self.max_index_size, self.entry_size))
                self._map(f)
        except OSError as exc:
            raise FileUnreadableError(f"Cannot open {self.path} for writing: {exc.strerror}",
                                      path=self.path) from None
        # a new file starts empty; an existing one is assumed valid up to its last whole entry
        self.entries = 0 if newly_created else self.length // self.entry_size

    def _map(self, f) -> None:
        self.length = os.fstat(f.fileno()).st_size
        self._data = (mmap.mmap(f.fileno(), self.length, access=mmap.ACCESS_WRITE)
                      if self.length else b"")
        self.max_entries = self.length // self.entry_size

    def close_handler(self) -> None:
        """Unmap without trimming (Kafka's ``closeHandler``)."""
        if isinstance(self._data, mmap.mmap):
            self._data.close()
        self._data = b""

    def close(self) -> None:
        """A writable index is trimmed to its entries first, as Kafka closes one."""
        if self.writable and isinstance(self._data, mmap.mmap):
            self.trim_to_valid_size()
        self.close_handler()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self.entries

    # -- entries ----------------------------------------------------------------------------
    def entry(self, n: int) -> T:
        raise NotImplementedError

    def _key(self, n: int) -> int:
        """The search key of entry ``n`` (offset or timestamp)."""
        raise NotImplementedError

    def _offset_of(self, n: int) -> int:
        """The absolute offset entry ``n`` names (its key or its value)."""
        raise NotImplementedError

    def _check_slot(self, n: int) -> None:
        if not 0 <= n < self.entries:
            raise IndexError(f"Attempt to fetch the {n}th entry from index {self._abs_path()}, "
                             f"which has size {self.entries}")

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    @property
    def size_in_bytes(self) -> int:
        """Bytes used by entries (the file may be longer while preallocated)."""
        return self.entries * self.entry_size

    def relative_offset(self, offset: int) -> int:
        """``offset - base_offset`` as stored, or :class:`IndexOffsetOverflowError`."""
        if not self.can_append_offset(offset):
            raise IndexOffsetOverflowError(f"Integer overflow for offset: {offset} "
                                           f"({self._abs_path()})", path=self.path)
        return offset - self.base_offset

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    # -- search -----------------------------------------------------------------------------
    def largest_lower_bound_slot(self, target: int,
                                 field: Callable[[int], int] | None = None) -> int:
        """Slot of the largest entry whose ``field`` (default: key) is <= ``target``, or -1."""
        return self._slot_range(target, field or self._key, upper=False)

    def smallest_upper_bound_slot(self, target: int,
                                  field: Callable[[int], int] | None = None) -> int:
        """Slot of the smallest entry whose ``field`` is >= ``target``, or -1."""
        return self._slot_range(target, field or self._key, upper=True)

    def _slot_range(self, target: int, field: Callable[[int], int], upper: bool) -> int:
        entries = self.entries
        if entries == 0:
            return -1
        first_hot = max(0, entries - 1 - WARM_BYTES // self.entry_size)
        if field(first_hot) < target:  # the warm tail, where nearly every lookup lands
            return self._bsearch(target, field, upper, first_hot, entries - 1)
        if field(0) > target:
            return 0 if upper else -1
        return self._bsearch(target, field, upper, 0, first_hot)

    def _bsearch(self, target: int, field: Callable[[int], int], upper: bool,
                 lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            value = field(mid)
            if value > target:
                hi = mid - 1
            elif value < target:
                lo = mid
            else:
                return mid
        if not upper:
            return lo
        return -1 if lo == self.entries - 1 else lo + 1

    # -- writing ----------------------------------------------------------------------------
    def _writable_map(self) -> mmap.mmap:
        if not self.writable or not isinstance(self._data, mmap.mmap):
            raise ValueError(f"Index {self._abs_path()} is not open for writing")
        return self._data

    def append_entries(self, packed: bytes) -> None:
        """Append whole entries packed in the file's layout, in one copy.

        For the C recovery loop, which checks for each entry what ``append`` or
        ``maybe_append`` would (order, offset range, room); only the room is checked again.
        """
        if not packed:
            return
        size = len(packed)
        count, rest = divmod(size, self.entry_size)
        if rest or self.entries + count > self.max_entries:
            raise ValueError(f"Cannot append {size} bytes of entries to index "
                             f"{self._abs_path()} (size = {self.entries}).")
        self._writable_map()
        # write(2), not the mapping: the first store into a page of a fresh, sparse index
        # faults it in through the file system (~15 ms a page on ext4 here, 100x a pwrite),
        # and recovery rebuilds thousands of such indexes; the shared mapping sees the bytes
        fd = os.open(self.path, os.O_WRONLY)
        try:
            os.pwrite(fd, packed, self.entries * self.entry_size)
        finally:
            os.close(fd)
        self.entries += count

    def truncate_to(self, offset: int) -> None:
        """Drop every entry naming an offset >= ``offset`` (none if all are below it)."""
        slot = self.largest_lower_bound_slot(offset, self._offset_of)
        if slot < 0:
            self._truncate_to_entries(0)
        elif self._offset_of(slot) == offset:
            self._truncate_to_entries(slot)
        else:
            self._truncate_to_entries(slot + 1)

    def truncate(self) -> None:
        """Drop every entry (the file keeps its length)."""
        self._truncate_to_entries(0)

    def _truncate_to_entries(self, entries: int) -> None:
        self.entries = entries

    def reset(self) -> None:
        """Empty the index and grow it back to ``max_index_size``, as recovery starts."""
        self.truncate()
        self.resize(self.max_index_size)

    def resize(self, new_size: int) -> bool:
        """Set the file length to ``new_size`` rounded down to whole entries and remap it.

        False when the length is already that. Entries are kept, so the new size must hold
        them; Kafka uses this to trim an inactive segment's index and to regrow an active one.
        """
        rounded = round_down_to_multiple(new_size, self.entry_size)
        if rounded == self.length:
            return False
        if not self.writable:
            raise ValueError(f"Index {self._abs_path()} is not open for writing")
        if rounded < self.size_in_bytes:
            raise ValueError(f"Cannot resize index {self._abs_path()} to {rounded} bytes: it "
                             f"holds {self.entries} entries")
        self.close_handler()
        with open(self.path, "r+b") as f:
            f.truncate(rounded)
            self._map(f)
        return True

    def trim_to_valid_size(self) -> None:
        """Shrink the file to exactly its entries (segment rolled, closed or recovered)."""
        self.resize(self.size_in_bytes)

    def flush(self) -> None:
        """Write the mapped entries to disk (msync)."""
        if self.writable and isinstance(self._data, mmap.mmap):
            self._data.flush()

    def delete_if_exists(self) -> bool:
        """Unmap and delete the file; False if it was already gone."""
        self.close_handler()
        return delete_if_exists(self.path)

    def rename_to(self, path: str | os.PathLike[str]) -> None:
        """Move the file (the mapping stays valid); the new name is kept even on failure."""
        try:
            os.replace(self.path, path)
        finally:
            self.path = os.fspath(path)

    def update_parent_dir(self, directory: str | os.PathLike[str]) -> None:
        self.path = os.path.join(os.fspath(directory), os.path.basename(self.path))

    def _abs_path(self) -> str:
        return os.path.abspath(self.path)
