"""A remote segment's batches read by byte ranges: :class:`FileRecords`' counterpart in a store.

The ranges asked for are fetched (one ranged GET each) into an anonymous map as long as the
file, at their own positions: batch positions stay the file's, so the readers that walk a
:class:`FileRecords` view walk this one unchanged, and the bytes never fetched cost no memory
(untouched pages of an anonymous map are never allocated).
"""

from __future__ import annotations

import mmap

from . import filesystems


class RemoteFileRecords:
    """The segment at ``url`` (``file_size`` bytes, as listed): ``fetch`` the byte ranges to
    read, then walk :attr:`view` from their start."""

    def __init__(self, url: str, file_size: int) -> None:
        self.path = url
        self.file_size = self.end = file_size
        self._map = mmap.mmap(-1, max(file_size, 1))
        self.view = memoryview(self._map)[:file_size]
        self.fetched: list[tuple[int, int]] = []
        self.bytes_fetched = 0

    def fetch(self, start: int, stop: int | None = None) -> None:
        """Fetch ``[start, stop)`` (None: to the end of the file)."""
        stop = self.file_size if stop is None else min(stop, self.file_size)
        if stop <= start:
            return
        data = filesystems.read_range(self.path, start, stop - start)
        self.view[start:start + len(data)] = data
        self.fetched.append((start, start + len(data)))
        self.bytes_fetched += len(data)

    def release(self, position: int) -> None:
        """Nothing to drop early: the map holds only what was fetched."""

    def close(self) -> None:
        self.view.release()
        try:
            self._map.close()
        except BufferError:
            pass  # a caller still holds a record view; the map goes with the last reference

    def __enter__(self) -> "RemoteFileRecords":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
