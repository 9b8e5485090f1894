"""Copies of files taken before pylogctl changes or deletes them.

A backup dir mirrors the log dir: ``{backup}/{topic}-{partition}/{file}`` for a partition's
files, ``{backup}/{file}`` for the log dir's own. An existing backup is never overwritten: after
an interrupted run and a second one, the backup still holds the state before the first. A file
about to be deleted is hard-linked when the backup dir is on the same file system (its bytes
never change again); one about to change in place is copied. Either way the copy is fsynced
before the caller touches the original.
"""

from __future__ import annotations

import logging
import os
import shutil

from .files import fsync_dir

logger = logging.getLogger(__name__)


class Backup:
    def __init__(self, backup_dir: str | os.PathLike[str], root: str | os.PathLike[str]) -> None:
        self.dir = os.path.abspath(os.fspath(backup_dir))
        self.root = os.path.abspath(os.fspath(root))
        self.saved: list[str] = []

    def target(self, path: str | os.PathLike[str]) -> str:
        rel = os.path.relpath(os.path.abspath(os.fspath(path)), self.root)
        if rel.startswith(os.pardir):
            raise ValueError(f"{path} is not inside {self.root}")
        return os.path.join(self.dir, rel)

    def save(self, path: str | os.PathLike[str], *, will_delete: bool = False) -> str | None:
        """Back ``path`` up unless a backup of it exists; returns the backup's path (None when
        ``path`` does not exist or was backed up before)."""
        path = os.fspath(path)
        if not os.path.exists(path):
            return None
        dest = self.target(path)
        if os.path.lexists(dest):
            logger.info("Keeping the existing backup %s of %s", dest, path)
            return None
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if not (will_delete and _link(path, dest)):
            tmp = dest + ".partial"
            shutil.copyfile(path, tmp)
            shutil.copystat(path, tmp)
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(tmp, dest)
        fsync_dir(os.path.dirname(dest))
        self.saved.append(dest)
        return dest


def _link(path: str, dest: str) -> bool:
    try:
        os.link(path, dest)
    except OSError:
        return False
    return True
