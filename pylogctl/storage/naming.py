"""Kafka's file naming (``LogFileUtils``): segment files are named by base offset.

``00000000000000000042.log`` holds the batches from offset 42; its indexes share the stem.
KRaft snapshots are ``{endOffset:020d}-{epoch:010d}.checkpoint``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

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
_SNAPSHOT_RE = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_OFFSET_NAME_RE = re.compile(r"^(\d{20})[.-]")
# ``{topic}-{partition}.{uuid}-delete`` (deleted topic), ``-future`` (intra-broker move),
# ``-stray`` (KRaft: a replica the controller no longer assigns here)
_MARKED_DIR_RE = re.compile(r"^\S+-\S+\.\S+-(delete|future|stray)$")
_MARKERS = ("-delete", "-future", "-stray")


def filename_prefix(offset: int) -> str:
    """The 20-digit zero-padded stem Kafka gives a segment starting at ``offset``."""
    return f"{offset:020d}"


def log_filename(offset: int) -> str:
    return filename_prefix(offset) + LOG_SUFFIX


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


def offset_from_file(path: str | os.PathLike[str]) -> int:
    """Base offset from a file name: the name up to its first ``.``, parsed as a long."""
    name = Path(path).name
    return int(name.split(".", 1)[0])


def snapshot_id_from_file(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``(end offset, epoch)`` of a KRaft snapshot file name, or None if it is not one."""
    m = _SNAPSHOT_RE.match(Path(path).name)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2))


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


@dataclass(frozen=True)
class PartitionDirName:
    topic: str
    partition: int
    marker: str | None = None  # "delete", "future" or "stray"


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
    if not topic or not re.fullmatch(r"[0-9]{1,10}", partition) or int(partition) > 2**31 - 1:
        return None
    return PartitionDirName(topic, int(partition), marker)
