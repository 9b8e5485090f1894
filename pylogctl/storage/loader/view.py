"""The partition dir as load planning sees it: planning only reads, so each planned step is
played on this view instead of on the files, and later steps read the dir the earlier ones leave.

Names are parsed as Kafka's loader parses them (:func:`naming.offset_from_name`: any long before
the first ``.``), not by :func:`naming.file_offset`'s 20-digit rule, so that planning skips and
keeps exactly the files Kafka's loader would.
"""

from __future__ import annotations

import os

from ...errors import FileUnreadableError
from .plan import FileState


class DirView:
    """The partition dir as it will look after the steps planned so far: visible name -> the
    file that will carry it (a ``.swap`` file until renamed, a split's scratch copy until
    written)."""

    def __init__(self, directory: str, files: dict[str, FileState]) -> None:
        self.dir = directory
        self._source = {name: os.path.join(directory, name) for name in files}
        self._size = {name: st.size for name, st in files.items()}

    def names(self) -> list[str]:
        return sorted(self._source)

    def __contains__(self, name: str) -> bool:
        return name in self._source

    def path(self, name: str) -> str | None:
        return self._source.get(name)

    def size(self, name: str) -> int:
        return self._size[name]

    def delete(self, name: str) -> None:
        self._source.pop(name, None)
        self._size.pop(name, None)

    def rename(self, source: str, target: str) -> None:
        self._source[target] = self._source.pop(source)
        self._size[target] = self._size.pop(source)

    def add(self, name: str, path: str, size: int) -> None:
        self._source[name] = path
        self._size[name] = size


def list_files(directory: str) -> dict[str, FileState]:
    """Every regular file of the partition dir; an unreadable one stops the load, as in Kafka
    ("Could not read file")."""
    files = {}
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError:
        raise FileUnreadableError(f"No such directory: {directory}", path=directory) from None
    for entry in entries:
        if not entry.is_file():
            continue
        if not os.access(entry.path, os.R_OK):
            raise FileUnreadableError(f"Could not read file {entry.path}", path=entry.path)
        st = entry.stat()
        files[entry.name] = FileState(entry.name, st.st_size, st.st_mtime_ns)
    return files
