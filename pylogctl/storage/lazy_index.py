"""Deferred opening of a segment's offset and time indexes (Kafka's ``LazyIndex``).

Opening an index writable creates and preallocates a missing file and maps it; a log dir can
hold thousands of segments of which only a few are ever looked up. A lazy index opens on first
``get()``; renaming, deleting and closing work on the bare file until then.
"""

from __future__ import annotations

import os
from typing import Callable, Generic, TypeVar

from .files import delete_if_exists
from .index import AbstractIndex
from .offset_index import OffsetIndex
from .time_index import TimeIndex

IndexT = TypeVar("IndexT", bound=AbstractIndex)


class LazyIndex(Generic[IndexT]):
    def __init__(self, path: str | os.PathLike[str], load: Callable[[str], IndexT]) -> None:
        self._path = os.fspath(path)
        self._load = load
        self._index: IndexT | None = None

    @classmethod
    def for_offset(cls, path: str | os.PathLike[str], base_offset: int,
                   max_index_size: int) -> "LazyIndex[OffsetIndex]":
        return LazyIndex(path, lambda p: OffsetIndex(p, base_offset, max_index_size, writable=True))

    @classmethod
    def for_time(cls, path: str | os.PathLike[str], base_offset: int,
                 max_index_size: int) -> "LazyIndex[TimeIndex]":
        return LazyIndex(path, lambda p: TimeIndex(p, base_offset, max_index_size, writable=True))

    @property
    def path(self) -> str:
        return self._index.path if self._index is not None else self._path

    @property
    def is_loaded(self) -> bool:
        return self._index is not None

    def get(self) -> IndexT:
        """The index, opened (and created if missing) on first use."""
        if self._index is None:
            self._index = self._load(self._path)
        return self._index

    def rename_to(self, path: str | os.PathLike[str]) -> None:
        if self._index is not None:
            self._index.rename_to(path)
            self._path = self._index.path
            return
        try:
            os.replace(self._path, path)
        except FileNotFoundError:
            if os.path.exists(self._path):
                raise
        finally:
            self._path = os.fspath(path)

    def update_parent_dir(self, directory: str | os.PathLike[str]) -> None:
        if self._index is not None:
            self._index.update_parent_dir(directory)
        self._path = os.path.join(os.fspath(directory), os.path.basename(self._path))

    def delete_if_exists(self) -> bool:
        if self._index is not None:
            return self._index.delete_if_exists()
        return delete_if_exists(self._path)

    def close(self) -> None:
        """Trim and unmap an opened index; nothing to do for one never opened."""
        if self._index is not None:
            self._index.close()

    def close_handler(self) -> None:
        if self._index is not None:
            self._index.close_handler()
