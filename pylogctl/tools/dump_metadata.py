"""Dumping the files kafka-dump-log cannot: checkpoints and a log dir's metadata files.

Zero-byte and malformed files are common in real dirs (a broker killed mid-write, a 0-byte
``cleaner-offset-checkpoint``); they are reported in the footer, never fatal.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

from ..errors import FileUnreadableError, PylogctlError
from ..storage.checkpoint import (LEADER_EPOCH_CHECKPOINT, OFFSET_CHECKPOINTS,
                                  read_leader_epoch_checkpoint, read_offset_checkpoint)
from ..storage.log_dir_layout import CLEAN_SHUTDOWN_FILE
from ..storage.metadata_files import read_json_file, read_partition_metadata, read_properties
from .file_dump import FileDump

CLEAN_SHUTDOWN = CLEAN_SHUTDOWN_FILE
METADATA_FILES = {
    **{name: "offset-checkpoint" for name in OFFSET_CHECKPOINTS},
    LEADER_EPOCH_CHECKPOINT: "leader-epoch-checkpoint",
    "partition.metadata": "partition-metadata",
    "meta.properties": "meta-properties",
    "quorum-state": "quorum-state",
    CLEAN_SHUTDOWN: "clean-shutdown",
}


def metadata_kind(path: str | os.PathLike[str]) -> str | None:
    return METADATA_FILES.get(os.path.basename(os.fspath(path)))


class MetadataDump(FileDump):
    """A checkpoint or metadata file; malformed content lands in ``footer["corrupt"]``."""

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        try:
            if os.path.getsize(self.path) == 0:
                self.footer["emptyFile"] = True
            yield from _READERS[self.kind](self)
        except FileNotFoundError:
            self.error = FileUnreadableError(f"No such file: {self.path}", path=self.path)
        except FileUnreadableError as exc:
            self.error = exc
        except PylogctlError as exc:
            self.footer["corrupt"] = {"message": str(exc), "position": exc.position}


def dump_metadata(path: str | os.PathLike[str]) -> MetadataDump:
    path = os.fspath(path)
    kind = metadata_kind(path)
    if kind is None:
        raise ValueError(f"not a metadata file: {path}")
    return MetadataDump(path=path, kind=kind, header={"file": path, "type": kind})


def _offset_checkpoint(d: MetadataDump) -> Iterator[dict[str, Any]]:
    cp = read_offset_checkpoint(d.path)
    d.footer["version"] = cp.version
    for e in cp.entries:
        yield {"topic": e.topic, "partition": e.partition, "offset": e.offset}


def _leader_epochs(d: MetadataDump) -> Iterator[dict[str, Any]]:
    cp = read_leader_epoch_checkpoint(d.path)
    d.footer["version"] = cp.version
    for e in cp.entries:
        yield {"epoch": e.epoch, "startOffset": e.start_offset}


def _partition_metadata(d: MetadataDump) -> Iterator[dict[str, Any]]:
    yield read_partition_metadata(d.path)


def _meta_properties(d: MetadataDump) -> Iterator[dict[str, Any]]:
    props = read_properties(d.path)
    mode = ("kraft" if props.get("version") == "1" or "node.id" in props else "zookeeper")
    d.footer["mode"] = mode
    for key, value in props.items():
        yield {"key": key, "value": value}


def _quorum_state(d: MetadataDump) -> Iterator[dict[str, Any]]:
    yield read_json_file(d.path)


def _clean_shutdown(d: MetadataDump) -> Iterator[dict[str, Any]]:
    doc = read_json_file(d.path, allow_empty=True)
    if doc is not None:
        yield doc


_READERS = {
    "offset-checkpoint": _offset_checkpoint,
    "leader-epoch-checkpoint": _leader_epochs,
    "partition-metadata": _partition_metadata,
    "meta-properties": _meta_properties,
    "quorum-state": _quorum_state,
    "clean-shutdown": _clean_shutdown,
}
