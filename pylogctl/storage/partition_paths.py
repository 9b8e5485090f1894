"""What PATH arguments name: a file (a segment, an index, ...), a partition dir, a log dir, or a
dir holding log dirs (a copied cluster, one per broker); and the partitions they stand for.

Names alone cannot tell a log dir from a partition dir (:mod:`.log_dir_layout`), so a dir is
judged by its contents. Commands accept different kinds and word their own refusals:
:func:`resolve_path` only says what a path is, :func:`select_partitions` merges the accepted
ones per log dir (whose checkpoints and ``.lock`` each partition needs).
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import Iterable

from .files import require_path
from .log_dir_layout import child_log_dirs, is_log_dir, is_partition_dir
from .naming import PartitionDirName, log_file_offset, parse_partition_dir_name


class PathKind(enum.Enum):
    FILE = "file"
    PARTITION_DIR = "partition dir"
    LOG_DIR = "log dir"
    LOG_DIRS = "dir of log dirs"
    OTHER_DIR = "directory"  # none of Kafka's


@dataclass(frozen=True)
class PathArgument:
    """A path as given, what it is, and for a dir of log dirs the log dirs inside it."""

    path: str
    kind: PathKind
    children: tuple[str, ...] = ()

    @property
    def abspath(self) -> str:
        return os.path.abspath(self.path)

    @property
    def parent(self) -> str:
        """The dir holding it: a partition dir's log dir, a segment's partition dir."""
        return os.path.dirname(self.abspath)

    @property
    def log_dirs(self) -> list[str]:
        """The log dirs it names: itself, or those a dir of log dirs holds."""
        if self.kind is PathKind.LOG_DIR:
            return [self.path]
        return list(self.children)

    @property
    def partition(self) -> PartitionDirName | None:
        """A partition dir's topic, partition and marker, from its name."""
        return parse_partition_dir_name(os.path.basename(self.abspath))

    @property
    def segment_base(self) -> int | None:
        """A file's base offset when it is named as a segment (``{base:020d}.log``)."""
        return log_file_offset(self.path)


def resolve_path(path: str | os.PathLike[str]) -> PathArgument:
    """What ``path`` names; a log dir wins over a partition dir, and both over a dir of log
    dirs. A missing or unreadable path is said first, before what its name would mean
    (:func:`~pylogctl.storage.files.require_path`, exit 3), for every command alike."""
    path = require_path(path)
    if not os.path.isdir(path):
        return PathArgument(path, PathKind.FILE)
    if is_log_dir(path):
        return PathArgument(path, PathKind.LOG_DIR)
    if is_partition_dir(path):
        return PathArgument(path, PathKind.PARTITION_DIR)
    children = tuple(child_log_dirs(path))
    return PathArgument(path, PathKind.LOG_DIRS if children else PathKind.OTHER_DIR, children)


@dataclass
class LogDirSelection:
    """One log dir and what of it is wanted: ``partitions`` None for every partition, else
    partition dir (absolute) -> the segment bases wanted (None: all of them)."""

    log_dir: str
    partitions: dict[str, set[int] | None] | None


def select_partitions(arguments: Iterable[PathArgument]) -> list[LogDirSelection]:
    """The log dirs the arguments name, in argument order, each with the partitions (and
    segments) wanted, merged: a log dir named whole covers its partition dirs named too.
    Files must be segments and no argument missing or a non-Kafka dir (the command refuses
    those first, in its own words)."""
    wanted: dict[str, dict[str, set[int] | None] | None] = {}

    def add(partition_dir: str, base: int | None) -> None:
        parts = wanted.setdefault(os.path.dirname(partition_dir), {})
        if parts is None:
            return
        bases = parts.setdefault(partition_dir, None if base is None else set())
        if bases is not None and base is not None:
            bases.add(base)
        elif base is None:
            parts[partition_dir] = None

    for arg in arguments:
        if arg.kind in (PathKind.LOG_DIR, PathKind.LOG_DIRS):
            for log_dir in arg.log_dirs:
                wanted[os.path.abspath(log_dir)] = None
        elif arg.kind is PathKind.PARTITION_DIR:
            add(arg.abspath, None)
        elif arg.segment_base is not None:
            add(arg.parent, arg.segment_base)
        else:
            raise ValueError(f"{arg.path} names no partition ({arg.kind.value})")
    return [LogDirSelection(d, parts) for d, parts in wanted.items()]
