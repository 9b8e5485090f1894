"""A segment file's batches, read through a read-only mmap (Kafka's ``FileRecords``).

Mapping keeps memory bounded for multi-GB segments: pages come from the page cache and are
dropped again by the kernel, and nothing is copied until a batch's records are decoded.
"""

from __future__ import annotations

import mmap
import os
from typing import Iterator

from ..errors import FileUnreadableError
from ..format.log_stream import AnyBatch, iter_batches
from .files import open_for_read


RELEASE_EVERY = 64 * 1024 * 1024
_DONTNEED = getattr(mmap, "MADV_DONTNEED", 0)


class FileRecords:
    """Open a file for batch iteration; use as a context manager.

    ``end`` limits the view to the first ``end`` bytes, as Kafka's ``slice(0, maxBytes)``.
    """

    def __init__(self, path: str | os.PathLike[str], end: int | None = None) -> None:
        self.path = os.fspath(path)
        self._file = open_for_read(self.path)
        try:
            self.file_size = os.fstat(self._file.fileno()).st_size
            if self.file_size == 0:
                self._map: mmap.mmap | None = None
                self.view: memoryview = memoryview(b"")
            else:
                self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
                if hasattr(mmap, "MADV_SEQUENTIAL"):
                    self._map.madvise(mmap.MADV_SEQUENTIAL)
                self.view = memoryview(self._map)
        except OSError as exc:
            self._file.close()
            raise FileUnreadableError(f"Cannot read {self.path}: {exc.strerror}", path=self.path) from None
        self.end = self.file_size if end is None else max(0, min(end, self.file_size))
        self._released = 0

    @property
    def size_in_bytes(self) -> int:
        """Size of the (possibly sliced) view, as Kafka's ``sizeInBytes``."""
        return self.end

    def batches(self, start: int = 0) -> Iterator[AnyBatch]:
        """Iterate batches from byte ``start`` to the end of the view.

        Every ``RELEASE_EVERY`` bytes the pages already passed are dropped from this process's
        mapping (they stay in the page cache and fault back in if a caller revisits a batch),
        so scanning a multi-GB segment keeps the resident set bounded.
        """
        for batch in iter_batches(self.view, start, self.end, self.path):
            yield batch
            self.release(batch.position)

    def release(self, position: int) -> None:
        """Drop the mapped pages before ``position`` from the resident set, in steps of
        ``RELEASE_EVERY`` bytes, for scans that walk the view themselves."""
        if self._map is not None and _DONTNEED and position - self._released >= RELEASE_EVERY:
            upto = position - position % mmap.PAGESIZE
            self._map.madvise(_DONTNEED, self._released, upto - self._released)
            self._released = upto

    def read(self, position: int, size: int) -> bytes:
        return bytes(self.view[position:min(self.end, position + size)])

    def close(self) -> None:
        self.view.release()
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:
                pass  # a caller still holds a record view; the map goes with the last reference
        self._file.close()

    def __enter__(self) -> "FileRecords":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
