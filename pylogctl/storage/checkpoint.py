"""Kafka's text checkpoint files: the one reader and writer for all of them.

Layout: a version line (``0``), an entry-count line, then one whitespace-separated entry per
line. Log-dir checkpoints (``recovery-point-offset-checkpoint``,
``replication-offset-checkpoint``, ``log-start-offset-checkpoint``,
``cleaner-offset-checkpoint``) hold ``topic partition offset`` entries; a partition's
``leader-epoch-checkpoint`` holds ``epoch startOffset`` entries. A zero-byte file reads as no
entries, as in Kafka. Writes are atomic: temp file, fsync, rename, fsync of the directory.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, TypeVar

from ..errors import CorruptRecordError
from .files import read_bytes

T = TypeVar("T")
CURRENT_VERSION = 0
_WS = re.compile(r"\s+")

# the log-dir checkpoints (LogManager's and ReplicaManager's file names)
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINTS = (RECOVERY_POINT_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT,
                      LOG_START_OFFSET_CHECKPOINT, CLEANER_OFFSET_CHECKPOINT)
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
TEMP_SUFFIX = ".tmp"  # beside the file an atomic write replaces, until the rename


def keeps_log_start(log_start_offset: int, first_segment_base: int | None) -> bool:
    """Whether a log has a ``log-start-offset-checkpoint`` entry: only a log start above its
    first segment's base offset (``LogManager.checkpointLogStartOffsetsInDir``); an entry at
    or below it would fold the leader-epoch cache at a stale offset on the next load."""
    return first_segment_base is not None and log_start_offset > first_segment_base


class CorruptCheckpointError(CorruptRecordError):
    """A checkpoint file a broker would refuse to read."""


@dataclass(frozen=True)
class TopicPartitionOffset:
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class CheckpointUpdate:
    """One entry of a log-dir checkpoint file to write (``old`` None: the entry is new;
    ``new`` None: the entry goes)."""

    checkpoint: str
    topic: str
    partition: int
    old: int | None
    new: int | None

    def describe(self) -> str:
        old = "absent" if self.old is None else self.old
        new = "removed" if self.new is None else self.new
        return f"{self.checkpoint}: {self.topic}-{self.partition} {old} -> {new}"


@dataclass(frozen=True)
class EpochEntry:
    epoch: int
    start_offset: int


@dataclass(frozen=True)
class Checkpoint(Generic[T]):
    version: int | None  # None for a zero-byte file
    entries: list[T]


def _parse_tpo(fields: list[str]) -> TopicPartitionOffset:
    topic, partition, offset = fields
    return TopicPartitionOffset(topic, int(partition), int(offset))


def _parse_epoch(fields: list[str]) -> EpochEntry:
    epoch, offset = fields
    return EpochEntry(int(epoch), int(offset))


def read_checkpoint(path: str | os.PathLike[str], parse: Callable[[list[str]], T]) -> Checkpoint[T]:
    """Read any checkpoint file with ``parse`` for its entries, with Kafka's error messages."""
    path = os.fspath(path)
    text = read_bytes(path).decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return Checkpoint(None, [])
    position = 0

    def bad(line: str) -> CorruptCheckpointError:
        return CorruptCheckpointError(f"Malformed line in checkpoint file ({path}): '{line}'",
                                      path=path, position=position)

    try:
        version = int(lines[0].strip())
    except ValueError:
        raise bad(lines[0]) from None
    if version != CURRENT_VERSION:
        raise CorruptCheckpointError(f"Unrecognized version of the checkpoint file ({path}): "
                                     f"{version}", path=path, position=0)
    position = len(lines[0]) + 1
    if len(lines) < 2:
        raise CorruptCheckpointError(f"Expected an entry count in checkpoint file ({path})",
                                     path=path, position=position)
    try:
        expected = int(lines[1].strip())
    except ValueError:
        raise bad(lines[1]) from None
    position += len(lines[1]) + 1
    entries = []
    for line in lines[2:]:
        fields = [f for f in _WS.split(line.strip()) if f]
        try:
            entries.append(parse(fields))
        except (ValueError, TypeError):
            raise bad(line) from None
        position += len(line) + 1
    if len(entries) != expected:
        raise CorruptCheckpointError(f"Expected {expected} entries in checkpoint file ({path}), "
                                     f"but found only {len(entries)}", path=path, position=position)
    return Checkpoint(version, entries)


def read_offset_checkpoint(path: str | os.PathLike[str]) -> Checkpoint[TopicPartitionOffset]:
    return read_checkpoint(path, _parse_tpo)


def read_leader_epoch_checkpoint(path: str | os.PathLike[str]) -> Checkpoint[EpochEntry]:
    return read_checkpoint(path, _parse_epoch)


def format_checkpoint(lines: Iterable[str]) -> str:
    body = list(lines)
    return f"{CURRENT_VERSION}\n{len(body)}\n" + "".join(f"{line}\n" for line in body)


def write_checkpoint_atomically(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Replace ``path`` so that a crash leaves either the old file or the new one."""
    write_file_atomically(path, format_checkpoint(lines).encode())


def write_file_atomically(path: str | os.PathLike[str], data: bytes, *,
                          like: str | os.PathLike[str] | None = None) -> None:
    """Write ``data`` to ``path + TEMP_SUFFIX``, fsync it, rename it over ``path``, fsync the
    dir: a crash leaves the old file or the new one (and at worst the temp file, which the
    next write reuses). ``like`` names a file whose permission bits and owner the new file
    takes, so a file replaced by root stays writable for the broker's user."""
    path = os.fspath(path)
    tmp = path + TEMP_SUFFIX
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        if like is not None:
            _copy_mode_and_owner(like, f.fileno())
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _copy_mode_and_owner(source: str | os.PathLike[str], fd: int) -> None:
    st = os.stat(source)
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:  # not root: the file stays ours, as any file we create would
        pass
