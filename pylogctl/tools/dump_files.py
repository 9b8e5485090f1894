"""Which dump a file gets: kafka-dump-log's dispatch on the suffix, widened to the files an
operator also needs (checkpoints and metadata files, which Kafka's tool cannot read)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Union

from ..errors import PylogctlError
from ..storage.naming import (CHECKPOINT_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX,
                              PRODUCER_SNAPSHOT_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
                              suffix_of)
from .dump_index import IndexDump, IndexDumpOptions, dump_index
from .dump_log_segments import DumpOptions, LogDump, dump_log
from .dump_metadata import MetadataDump, dump_metadata, metadata_kind
from .dump_state import StateDump, dump_state


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


AnyDump = Union[LogDump, IndexDump, StateDump, MetadataDump, UnknownFile]


def dump_file(path: str | os.PathLike[str], options: DumpOptions = DumpOptions(),
              index_options: IndexDumpOptions = IndexDumpOptions()) -> AnyDump:
    """The dump for ``path``; raises only for a KRaft snapshot name it cannot parse."""
    path = os.fspath(path)
    if metadata_kind(path) is not None:
        return dump_metadata(path)
    suffix = suffix_of(path)
    if suffix in (LOG_SUFFIX, CHECKPOINT_SUFFIX):
        return dump_log(path, options)
    if suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
        return dump_index(path, index_options)
    if suffix in (TXN_INDEX_SUFFIX, PRODUCER_SNAPSHOT_SUFFIX):
        return dump_state(path)
    return UnknownFile(path)
