"""Opening files for reading, with one mapping of OS errors to :class:`FileUnreadableError`."""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from typing import BinaryIO

from ..errors import FileUnreadableError
from .remote_mirror import materialize


def require_path(path: str | os.PathLike[str]) -> str:
    """``path`` if it exists and can be read (a directory: listed), else exit 3 -- the first
    thing to say about a path argument, before what its name or contents would mean."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise FileUnreadableError(f"{exc.strerror or 'Cannot read'}: {path}", path=path) from None
    if not os.access(path, os.R_OK | (os.X_OK if stat.S_ISDIR(mode) else 0)):
        raise FileUnreadableError(f"Permission denied: {path}", path=path)
    return path


def open_for_read(path: str | os.PathLike[str]) -> BinaryIO:
    """Open read-only; a missing file, a directory or a permission problem becomes exit 3."""
    path = os.fspath(path)
    materialize(path)
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


def delete_if_exists(path: str | os.PathLike[str]) -> bool:
    """Remove a file; False if it was already gone (every delete in a crash-safe repair must
    tolerate a previous run having got there first)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make renames, creations and deletions inside directory ``path`` durable (Kafka's
    ``Utils.flushDir``); a directory that no longer exists is skipped."""
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_file_system(path: str | os.PathLike[str]) -> bool:
    """Flush every file of the file system holding ``path`` (Linux ``syncfs``): one journal
    commit instead of one per file, for a log dir of thousands of partitions whose every file
    must be durable at once. False where ``syncfs`` is missing (then fsync file by file)."""
    libc = _libc()
    if libc is None:
        return False
    fd = os.open(os.fspath(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        if libc.syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"syncfs failed: {os.strerror(err)}", os.fspath(path))
    finally:
        os.close(fd)
    return True


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syncfs.argtypes = [ctypes.c_int]
        return libc
    except (OSError, AttributeError):
        return None


def match_dir_owner(directory: str | os.PathLike[str]) -> None:
    """Give every file in ``directory`` the directory's owner and group (when run as root), so
    that files a root-run repair creates or replaces stay writable for the broker's user."""
    directory = os.fspath(directory)
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    owner = os.stat(directory)
    with os.scandir(directory) as it:
        for entry in it:
            if entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                if (st.st_uid, st.st_gid) != (owner.st_uid, owner.st_gid):
                    os.chown(entry.path, owner.st_uid, owner.st_gid, follow_symlinks=False)
