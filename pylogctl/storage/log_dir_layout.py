"""Kafka's directory layout: what a log dir and a partition dir look like, and the order of a
partition's files.

A log dir (one entry of ``log.dirs``) holds ``meta.properties``, the offset checkpoints and one
``{topic}-{partition}`` dir per replica; a partition dir holds files named by offset plus
``leader-epoch-checkpoint`` and ``partition.metadata``. Names alone cannot tell them apart (a
log dir called ``kafka-logs-1`` parses as partition 1 of topic ``kafka-logs``), so the tests
look at the contents.
"""

from __future__ import annotations

import os

from ..errors import FileUnreadableError, UsageError
from .checkpoint import LEADER_EPOCH_CHECKPOINT, OFFSET_CHECKPOINTS
from .naming import (INDEX_SUFFIX, LOG_SUFFIX, PRODUCER_SNAPSHOT_SUFFIX, TIME_INDEX_SUFFIX,
                     TXN_INDEX_SUFFIX, PartitionDirName, file_offset, parse_partition_dir_name,
                     suffix_of)

# what the commands taking log dirs accept, for their errors
ANY_LOG_DIR_PATH = "a partition dir, a log dir nor a dir holding log dirs"
LOG_DIR_PATH = "a log dir nor a dir holding log dirs"

META_PROPERTIES = "meta.properties"
LOCK_FILE = ".lock"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"  # Kafka's CleanShutdownFileHandler
PARTITION_METADATA = "partition.metadata"
LOG_DIR_FILES = (META_PROPERTIES, *OFFSET_CHECKPOINTS)
PARTITION_FILES = (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA)
# within one offset: the segment, its indexes, then the producer snapshot taken at that offset
_SUFFIX_RANK = {LOG_SUFFIX: 0, INDEX_SUFFIX: 1, TIME_INDEX_SUFFIX: 2, TXN_INDEX_SUFFIX: 3,
                PRODUCER_SNAPSHOT_SUFFIX: 4}


def list_dir(path: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """The entries of a directory, by name; an unlistable one is a :class:`FileUnreadableError`."""
    path = os.fspath(path)
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        raise FileUnreadableError(f"No such directory: {path}", path=path) from None
    except OSError as exc:
        raise FileUnreadableError(f"Cannot list {path}: {exc.strerror}", path=path) from None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _names(path: str | os.PathLike[str]) -> tuple[set[str], list[os.DirEntry[str]]]:
    entries = list_dir(path)
    return {e.name for e in entries if not _is_dir(e)}, [e for e in entries if _is_dir(e)]


def is_partition_dir(path: str | os.PathLike[str]) -> bool:
    """Holds files named by offset or a partition's metadata files, and no log-dir files."""
    files, _ = _names(path)
    if files.intersection(LOG_DIR_FILES):
        return False
    return bool(files.intersection(PARTITION_FILES)) or any(file_offset(n) is not None
                                                            for n in files)


def is_log_dir(path: str | os.PathLike[str]) -> bool:
    """Holds ``meta.properties`` or an offset checkpoint, or partition dirs."""
    files, dirs = _names(path)
    if files.intersection(LOG_DIR_FILES):
        return True
    return any(parse_partition_dir_name(d.name) is not None and is_partition_dir(d.path)
               for d in dirs)


def child_log_dirs(path: str | os.PathLike[str]) -> list[str]:
    """The log dirs directly inside ``path`` (one per broker in a copied cluster), by name."""
    _, dirs = _names(path)
    return [d.path for d in dirs if is_log_dir(d.path)]


def not_a_kafka_dir(path: str | os.PathLike[str], expected: str = ANY_LOG_DIR_PATH
                    ) -> UsageError:
    """The error for a directory that is none of what a command takes: what is expected and
    what is missing and found instead, so the operator sees which of Kafka's marks is absent."""
    path = os.fspath(path)
    if expected == LOG_DIR_PATH and is_partition_dir(path):
        return UsageError(f"{path} is a partition dir, not a log dir: give its log dir "
                          f"({os.path.dirname(os.path.abspath(path))})", path=path)
    files, dirs = _names(path)
    found = sorted(files) + [f"{d.name}/" for d in dirs]
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return UsageError(f"{path} is neither {expected}: no {META_PROPERTIES} or offset checkpoint, "
                      f"no {{topic}}-{{partition}} dirs with segments, no segment files "
                      f"({f'found {shown}' if found else 'it is empty'})", path=path)


def live_partition_name(path: str | os.PathLike[str]) -> PartitionDirName:
    """The topic and partition of a dir holding a partition's files, which Kafka reads only
    under its live name ``{topic}-{partition}`` (``LocalLog.parseTopicPartitionName``)."""
    path = os.fspath(path)
    name = parse_partition_dir_name(os.path.basename(os.path.abspath(path)))
    if name is None:
        raise UsageError(f"{path} holds a partition's files but is not named as a partition dir "
                         f"({{topic}}-{{partition}})", path=path)
    if name.marker is not None:
        raise UsageError(f"{path} is not a live partition dir: marked {name.marker} "
                         f"({{topic}}-{{partition}}.{{uuid}}-{name.marker})", path=path)
    return name


def partition_dirs(log_dir: str | os.PathLike[str]
                   ) -> tuple[list[tuple[PartitionDirName, str]], list[str]]:
    """``([(name, path)] by topic, partition, live dir first; [other subdir names])``."""
    found = []
    others = []
    for d in _names(log_dir)[1]:
        parsed = parse_partition_dir_name(d.name)
        if parsed is None:
            others.append(d.name)
        else:
            found.append((parsed, d.path))
    found.sort(key=lambda p: (p[0].topic, p[0].partition, p[0].marker or "", p[1]))
    return found, others


def _file_order(name: str) -> tuple:
    offset = file_offset(name)
    if offset is not None:
        return (0, offset, _SUFFIX_RANK.get(suffix_of(name), len(_SUFFIX_RANK)), name)
    if name in PARTITION_FILES:
        return (1, PARTITION_FILES.index(name), name)
    return (2, 0, name)


def partition_dir_files(path: str | os.PathLike[str]) -> list[str]:
    """A partition dir's files in offset order: for each offset the ``.log``, ``.index``,
    ``.timeindex``, ``.txnindex``, ``.snapshot`` (then other offset-named files, such as KRaft
    snapshots or ``.deleted`` ones), then ``leader-epoch-checkpoint``, ``partition.metadata``
    and anything else by name."""
    files, _ = _names(path)
    return [os.path.join(os.fspath(path), name) for name in sorted(files, key=_file_order)]


def log_segments(path: str | os.PathLike[str]) -> list[tuple[int, str]]:
    """A partition dir's ``.log`` segments as ``(base offset, path)``, by base offset."""
    files, _ = _names(path)
    return sorted((offset, os.path.join(os.fspath(path), name)) for name in files
                  if suffix_of(name) == LOG_SUFFIX and (offset := file_offset(name)) is not None)
