"""Opening files for reading, with one mapping of OS errors to :class:`FileUnreadableError`."""

from __future__ import annotations

import os
from typing import BinaryIO

from ..errors import FileUnreadableError


def open_for_read(path: str | os.PathLike[str]) -> BinaryIO:
    """Open read-only; a missing file, a directory or a permission problem becomes exit 3."""
    path = os.fspath(path)
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise FileUnreadableError(f"No such file: {path}", path=path) from None
    except IsADirectoryError:
        raise FileUnreadableError(f"Is a directory: {path}", path=path) from None
    except OSError as exc:
        raise FileUnreadableError(f"Cannot open {path}: {exc.strerror}", path=path) from None


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The whole (small) file: checkpoints, snapshots, metadata files."""
    with open_for_read(path) as f:
        try:
            return f.read()
        except OSError as exc:
            raise FileUnreadableError(f"Cannot read {os.fspath(path)}: {exc.strerror}",
                                      path=path) from None
