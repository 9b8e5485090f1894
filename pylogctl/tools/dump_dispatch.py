"""Which dump a file gets: kafka-dump-log's dispatch on the suffix, widened to the files an
operator also needs (checkpoints and metadata files, which Kafka's tool cannot read), and to
directories: a partition dir stands for its files, a log dir gets a per-partition summary."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Union

from ..errors import PylogctlError, UsageError
from ..storage.log_dir_layout import not_a_kafka_dir, partition_dir_files
from ..storage.naming import (CHECKPOINT_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX,
                              PRODUCER_SNAPSHOT_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
                              suffix_of)
from ..storage.partition_paths import PathArgument, PathKind, resolve_path
from .dump_metadata import metadata_kind
from .dump_options import DumpOptions, IndexDumpOptions

if TYPE_CHECKING:  # the dumps load on first use: a .log dump needs none of the others
    from .dump_index import IndexDump
    from .dump_segment import LogDump
    from .dump_metadata import MetadataDump
    from .dump_state import StateDump
    from .log_dir_summary import LogDirSummaryDump


@dataclass
class UnknownFile:
    """A file no dump handles: Kafka prints ``Dumping`` and ``Ignoring unknown file``."""

    path: str
    kind: str = "unknown"
    items_key: str = "entries"
    header: dict[str, Any] = field(default_factory=dict)
    footer: dict[str, Any] = field(default_factory=lambda: {"ignored": True})
    error: PylogctlError | None = None
    items: tuple = ()

    def __post_init__(self) -> None:
        self.header = {"file": self.path, "type": "unknown"}


AnyDump = Union["LogDump", "IndexDump", "StateDump", "MetadataDump", UnknownFile,
                "LogDirSummaryDump"]


def _resolve(path: str) -> PathArgument:
    """What a path argument names. A missing or unreadable path is said first (exit 3);
    anything but a directory is a file; a directory that is none of Kafka's is a usage error."""
    arg = resolve_path(path)
    if arg.kind is PathKind.OTHER_DIR:
        raise not_a_kafka_dir(path)
    return arg


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Arguments in order, with a partition dir replaced by its files in offset order and a dir
    of log dirs by its log dirs; files and log dirs stay as they are."""
    out: list[str] = []
    for path in map(os.fspath, paths):
        arg = _resolve(path)
        if arg.kind is PathKind.PARTITION_DIR:
            out += partition_dir_files(path)
        elif arg.kind is PathKind.LOG_DIRS:
            out += arg.log_dirs
        else:
            out.append(path)
    return out


def dump_file(path: str | os.PathLike[str], options: DumpOptions = DumpOptions(),
              index_options: IndexDumpOptions = IndexDumpOptions(),
              progress: Callable[[int], None] | None = None) -> AnyDump:
    """The dump for ``path`` (a log dir gets its summary); raises only for a KRaft snapshot
    name it cannot parse and for a directory that is not a log dir (:func:`expand_paths`
    expands the others). ``progress`` gets the bytes of a segment or snapshot as they are
    dumped (the other files are small, or quick to verify)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        if _resolve(path).kind is not PathKind.LOG_DIR:
            raise UsageError(f"{path} is not a log dir; expand it with expand_paths", path=path)
        from .log_dir_summary import dump_log_dir
        return dump_log_dir(path, options.problems_only)
    if metadata_kind(path) is not None:
        from .dump_metadata import dump_metadata
        return dump_metadata(path)
    suffix = suffix_of(path)
    if suffix in (LOG_SUFFIX, CHECKPOINT_SUFFIX):
        from .dump_segment import dump_log
        return dump_log(path, options, progress)
    if suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
        from .dump_index import dump_index
        return dump_index(path, index_options)
    if suffix in (TXN_INDEX_SUFFIX, PRODUCER_SNAPSHOT_SUFFIX):
        from .dump_state import dump_state
        return dump_state(path)
    return UnknownFile(path)
