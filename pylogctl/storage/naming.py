"""Kafka's file naming (``LogFileUtils``): segment files are named by base offset.

``00000000000000000042.log`` holds the batches from offset 42; its indexes share the stem.
KRaft snapshots are ``{endOffset:020d}-{epoch:010d}.checkpoint``.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..format.varint import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"
CHECKPOINT_SUFFIX = ".checkpoint"
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
# stacked on a segment's file names while it is being deleted, compacted or swapped in
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
_OFFSET_NAME_RE = re.compile(r"^(\d{20})[.-]")
_JAVA_INT = re.compile(r"[+-]?\d+")  # what Long.parseLong and Integer.parseInt accept
# ``{topic}-{partition}.{uuid}-delete`` (deleted topic), ``-future`` (intra-broker move),
# ``-stray`` (KRaft: a replica the controller no longer assigns here)
_MARKED_DIR_RE = re.compile(r"^\S+-\S+\.\S+-(delete|future|stray)$")
_MARKERS = ("-delete", "-future", "-stray")


def filename_prefix(offset: int) -> str:
    """The 20-digit zero-padded stem Kafka gives a segment starting at ``offset``."""
    return f"{offset:020d}"


def segment_name(offset: int, suffix: str) -> str:
    """``{offset:020d}{suffix}``: a segment's file (``.log``), an index, a snapshot."""
    return filename_prefix(offset) + suffix


def log_filename(offset: int) -> str:
    return segment_name(offset, LOG_SUFFIX)


def segment_file(directory: str | os.PathLike[str], base_offset: int, suffix: str,
                 file_suffix: str = "") -> str:
    """``{dir}/{base:020d}{suffix}{file_suffix}``, e.g. ``.log`` + ``.swap`` (``LogFileUtils``)."""
    return os.path.join(os.fspath(directory), filename_prefix(base_offset) + suffix + file_suffix)


def replace_suffix(path: str | os.PathLike[str], old_suffix: str, new_suffix: str) -> str:
    """Swap the trailing ``old_suffix`` of ``path`` for ``new_suffix`` (Kafka's
    ``Utils.replaceSuffix``); ``path`` must end with ``old_suffix``."""
    path = os.fspath(path)
    if not path.endswith(old_suffix):
        raise ValueError(f"Expected string to end with '{old_suffix}' but string is '{path}'")
    return path[:len(path) - len(old_suffix)] + new_suffix


def offset_from_name(name: str) -> int | None:
    """Kafka's ``LogFileUtils.offsetFromFileName``: the text before the first ``.`` as a long,
    or None where Kafka's ``Long.parseLong`` throws (the loader skips such files)."""
    head, dot, _ = name.partition(".")
    if not dot or not _JAVA_INT.fullmatch(head) or not -2**63 <= int(head) < 2**63:
        return None
    return int(head)


def offset_from_file(path: str | os.PathLike[str]) -> int:
    """:func:`offset_from_name` of a path's file name; ValueError where Kafka's parse throws."""
    name = Path(path).name
    offset = offset_from_name(name)
    if offset is None:
        raise ValueError(f"{name} is not named by an offset")
    return offset


def snapshot_id_from_file(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``(end offset, epoch)`` of a complete KRaft snapshot's file name, as Kafka's
    ``Snapshots.parse`` reads it, or None if it is not one."""
    try:
        snapshot = parse_raft_snapshot_name(Path(path).name)
    except ValueError:
        return None
    if snapshot is None or snapshot.partial or snapshot.deleted:
        return None
    return snapshot.offset, snapshot.epoch


# KRaft snapshot files as Kafka's ``Snapshots.parse`` names them: complete, being written
# (``{offset}-{epoch}-{random}.checkpoint.part``), or marked for deletion
RAFT_SNAPSHOT_PARTIAL_SUFFIX = ".checkpoint.part"
RAFT_SNAPSHOT_DELETED_SUFFIX = ".checkpoint.deleted"


@dataclass(frozen=True)
class RaftSnapshotName:
    offset: int
    epoch: int
    partial: bool
    deleted: bool


def parse_raft_snapshot_name(name: str) -> RaftSnapshotName | None:
    """Kafka's ``Snapshots.parse``: None for a name not ending in ``.checkpoint``,
    ``.checkpoint.part`` or ``.checkpoint.deleted``; ValueError where Kafka's parse throws
    (its offset and epoch are read from fixed columns, unchecked, so a short or non-numeric
    name fails the metadata log's load and the broker exits)."""
    partial = name.endswith(RAFT_SNAPSHOT_PARTIAL_SUFFIX)
    deleted = name.endswith(RAFT_SNAPSHOT_DELETED_SUFFIX)
    if not (partial or deleted or name.endswith(CHECKPOINT_SUFFIX)):
        return None
    offset, epoch = name[:20], name[21:31]
    if len(epoch) != 10 or not _JAVA_INT.fullmatch(offset) or not _JAVA_INT.fullmatch(epoch):
        raise ValueError(f"{name} is not a snapshot name Kafka's Snapshots.parse reads "
                         f"({{offset:020d}}-{{epoch:010d}}.checkpoint)")
    offset_value, epoch_value = int(offset), int(epoch)
    if not (INT64_MIN <= offset_value <= INT64_MAX and INT32_MIN <= epoch_value <= INT32_MAX):
        raise ValueError(f"{name}: offset or epoch out of range for Kafka's Snapshots.parse")
    return RaftSnapshotName(offset_value, epoch_value, partial, deleted)


def suffix_of(path: str | os.PathLike[str]) -> str:
    """The text from the last ``.`` of the file name (``""`` when there is none)."""
    name = Path(path).name
    i = name.rfind(".")
    return name[i:] if i >= 0 else ""


def file_offset(path: str | os.PathLike[str]) -> int | None:
    """The offset a segment, index, producer-snapshot or KRaft-snapshot file is named by
    (whatever follows the 20 digits), or None for a file not named by an offset."""
    m = _OFFSET_NAME_RE.match(Path(path).name)
    return int(m.group(1)) if m else None


def log_file_offset(path: str | os.PathLike[str]) -> int | None:
    """The base offset of a file named exactly as Kafka names a segment
    (``{base:020d}.log``), or None."""
    offset = file_offset(path)
    return offset if offset is not None and Path(path).name == log_filename(offset) else None


@dataclass(frozen=True)
class PartitionDirName:
    topic: str
    partition: int
    marker: str | None = None  # "delete", "future" or "stray"


def partition_dir_name(topic: str, partition: int) -> str:
    """``{topic}-{partition}``: a live replica's dir (``LocalLog.logDirName``)."""
    return f"{topic}-{partition}"


def marked_dir_name(topic: str, partition: int, marker: str) -> str:
    """``{topic}-{partition}.{uuid}-{marker}`` with a fresh uuid: a replica's dir renamed for
    deletion or as a future replica (``LocalLog.logDirNameWithSuffix``); a ``-delete`` or
    ``-stray`` name cuts the topic so that it fits in 255 characters
    (``logDirNameWithSuffixCappedLength``)."""
    tail = f"-{partition}.{uuid.uuid4().hex}-{marker}"
    if marker == "future":
        return topic + tail
    return topic[:max(0, min(len(topic), 255 - len(tail)))] + tail


def parse_partition_dir_name(name: str) -> PartitionDirName | None:
    """Kafka's ``parseTopicPartitionName``, returning None where Kafka throws.

    The partition is the text after the last ``-``; a marked dir drops its ``.{uuid}-marker``
    tail first, so ``orders-3.1f0e...-delete`` is orders-3.
    """
    marker = None
    if name.endswith(_MARKERS):
        m = _MARKED_DIR_RE.match(name)
        if m is None:
            return None
        marker = m.group(1)
        name = name[:name.rindex(".")]
    topic, _, partition = name.rpartition("-")
    if not topic or not re.fullmatch(r"[0-9]{1,10}", partition) or int(partition) > INT32_MAX:
        return None
    return PartitionDirName(topic, int(partition), marker)
