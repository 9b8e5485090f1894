"""Several brokers' log dirs read together, and which replica of a partition to believe.

Offline there is no controller to say who leads a partition. Given the log dirs of several
brokers (or several copies), each partition may have a replica in more than one of them; the
one read is the replica with the highest leader epoch (the latest entry of its
``leader-epoch-checkpoint``: a replica that saw a later leader holds that leader's log), then
the highest log end offset (a follower that fell behind has less), then the first log dir
given. Each choice among several replicas is kept with its reasons, so the command can say
which broker's data it shows.

A path that is not itself a log dir but holds log dirs (a copied cluster, one dir per broker)
stands for those log dirs. ``-delete``, ``-future`` and ``-stray`` dirs are never read
(:class:`~pylogctl.storage.log_dir.LogDir` skips them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

from ..errors import PylogctlError, UsageError
from ..storage.checkpoint import (HIGH_WATERMARK_CHECKPOINT, LEADER_EPOCH_CHECKPOINT,
                                  LOG_START_OFFSET_CHECKPOINT, read_leader_epoch_checkpoint)
from ..storage.log_dir_layout import LOG_DIR_PATH, PARTITION_METADATA, log_segments, not_a_kafka_dir
from ..storage.log_dir import LogDir, PartitionEntry
from ..storage.metadata_files import read_partition_metadata
from ..storage.partition_paths import PathKind, resolve_path
from .end_offsets import LogEnd, read_log_end


@dataclass
class Replica:
    """One log dir's copy of a partition; the log end is read on first use."""

    log_dir: str
    broker_id: int | None
    entry: PartitionEntry
    high_watermark_checkpoint: int | None
    log_start_checkpoint: int | None
    notes: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.entry.path

    @cached_property
    def leader_epoch(self) -> int | None:
        """The latest epoch of ``leader-epoch-checkpoint`` (None: absent, empty, unreadable)."""
        path = os.path.join(self.path, LEADER_EPOCH_CHECKPOINT)
        if not os.path.exists(path):
            return None
        try:
            entries = read_leader_epoch_checkpoint(path).entries
        except PylogctlError as exc:
            self.notes.append(str(exc))
            return None
        return max((e.epoch for e in entries), default=None)

    @cached_property
    def log_end(self) -> LogEnd:
        end = read_log_end(self.path)
        if end.problem:
            self.notes.append(f"{end.segment}: {end.problem}; the log end offset is that of "
                              f"the last valid batch")
        return end

    @cached_property
    def log_start_offset(self) -> int:
        """The larger of the first segment's base offset and the checkpointed log start."""
        segments = log_segments(self.path)
        first = segments[0][0] if segments else 0
        return max(first, self.log_start_checkpoint or 0)

    @property
    def where(self) -> str:
        return self.log_dir + ("" if self.broker_id is None else f" (broker {self.broker_id})")

    def describe(self) -> str:
        epoch = "-" if self.leader_epoch is None else self.leader_epoch
        return f"{self.where}: leader epoch {epoch}, log end {self.log_end.offset}"


@dataclass(frozen=True)
class ReplicaChoice:
    """The replica read for a partition, and the others it was preferred to."""

    topic: str
    partition: int
    chosen: Replica
    others: tuple[Replica, ...] = ()

    @property
    def reason(self) -> str:
        if not self.others:
            return "the only replica"
        if any(r.leader_epoch != self.chosen.leader_epoch for r in self.others):
            return "highest leader epoch"
        if any(r.log_end.offset != self.chosen.log_end.offset for r in self.others):
            return "same leader epoch, highest log end offset"
        return TIE

    @property
    def tie(self) -> bool:
        return bool(self.others) and self.reason == TIE

    def line(self) -> str:
        """The choice, and the replicas passed over, on one line."""
        return (f"{self.topic}-{self.partition}: read {self.chosen.describe()} ({self.reason}); "
                f"not " + "; ".join(o.describe() for o in self.others))


TIE = "identical epochs and log ends: the first log dir given"


def choices_summary(choices: Sequence[ReplicaChoice]) -> str:
    """One line for the partitions read from one of several replicas, however many: how many,
    from which log dirs, how many ties (:meth:`ReplicaChoice.line` tells each)."""
    by_dir: dict[str, int] = {}
    for c in sorted(choices, key=lambda c: c.chosen.log_dir):
        by_dir[c.chosen.where] = by_dir.get(c.chosen.where, 0) + 1
    ties = sum(c.tie for c in choices)
    n = len(choices)
    return (f"{n} partition{'' if n == 1 else 's'} with replicas in several log dirs, each read "
            f"from the replica with the highest leader epoch, then log end: "
            + ", ".join(f"{d}: {k}" for d, k in by_dir.items())
            + f"; {ties} tie{'' if ties == 1 else 's'} (the first log dir given)")


def expand_log_dirs(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Log dirs, with a dir holding log dirs (one per broker) replaced by those log dirs."""
    out: list[str] = []
    for p in map(os.fspath, paths):
        arg = resolve_path(p)
        if arg.kind is PathKind.FILE:
            raise UsageError(f"{p} is a file, not a log dir: give log dirs (one per broker) or a "
                             f"dir holding log dirs", path=p)
        if arg.kind not in (PathKind.LOG_DIR, PathKind.LOG_DIRS):
            raise not_a_kafka_dir(p, LOG_DIR_PATH)
        out += arg.log_dirs
    return list(dict.fromkeys(os.path.abspath(p) for p in out))


class LogDirs:
    """The given log dirs as one cluster: partitions, replicas, choices, topic ids."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        self.log_dirs = [LogDir(p) for p in expand_log_dirs(paths)]
        self._replicas: dict[tuple[str, int], list[Replica]] = {}
        for log_dir in self.log_dirs:
            hw = _entries(log_dir, HIGH_WATERMARK_CHECKPOINT)
            start = _entries(log_dir, LOG_START_OFFSET_CHECKPOINT)
            broker = _broker_id(log_dir)
            for entry in log_dir.partitions:
                if entry.is_metadata_log:
                    continue
                self._replicas.setdefault(entry.key, []).append(
                    Replica(log_dir.path, broker, entry, hw.get(entry.key), start.get(entry.key)))
        self._choices: dict[tuple[str, int], ReplicaChoice | None] = {}

    @property
    def notes(self) -> list[str]:
        """Problems with the log dirs' own files (malformed checkpoints)."""
        return [f"{d.path}: {n}" for d in self.log_dirs for n in d.notes]

    def topics(self) -> list[str]:
        """The topics with a replica in the log dirs."""
        return sorted({t for t, _ in self._replicas})

    def partitions(self, topic: str) -> list[int]:
        return sorted(p for t, p in self._replicas if t == topic)

    def replicas(self, topic: str, partition: int) -> list[Replica]:
        return self._replicas.get((topic, partition), [])

    def choose(self, topic: str, partition: int) -> ReplicaChoice | None:
        """The replica to read (None when no log dir holds the partition)."""
        key = (topic, partition)
        if key not in self._choices:
            self._choices[key] = choose_replica(topic, partition,
                                                 self.replicas(topic, partition))
        return self._choices[key]

    @property
    def made(self) -> list[ReplicaChoice]:
        """The replicas chosen so far."""
        return [c for c in self._choices.values() if c is not None]

    @property
    def choices(self) -> list[ReplicaChoice]:
        """The choices made so far among several replicas."""
        return [c for c in self.made if c.others]

    @cached_property
    def topic_ids(self) -> TopicIds:
        """Names for the topic ids of KIP-848 assignments."""
        by_topic: dict[str, list[str]] = {}
        for (topic, _), replicas in self._replicas.items():
            by_topic.setdefault(topic, []).extend(r.path for r in replicas)
        return TopicIds(by_topic)


class TopicIds:
    """Topic id -> name, from the ``partition.metadata`` files of the partition dirs, read on
    first use (one readable file per topic). A plain, picklable callable, so that the worker
    processes of a parallel load can name topics themselves."""

    def __init__(self, dirs_by_topic: dict[str, list[str]]) -> None:
        self._dirs = dirs_by_topic
        self._names: dict[str, str] | None = None

    def __call__(self, topic_id: str) -> str | None:
        if self._names is None:
            self._names = {}
            for topic, dirs in self._dirs.items():
                for d in dirs:
                    path = os.path.join(d, PARTITION_METADATA)
                    try:
                        if os.path.exists(path):
                            self._names[read_partition_metadata(path)["topicId"]] = topic
                            break
                    except PylogctlError:
                        continue
        return self._names.get(topic_id)


def choose_replica(topic: str, partition: int, replicas: list[Replica]) -> ReplicaChoice | None:
    """The copy to read: the highest leader epoch, then the highest log end, then the first."""
    if not replicas:
        return None
    if len(replicas) == 1:
        return ReplicaChoice(topic, partition, replicas[0])
    best = max(range(len(replicas)), key=lambda i: (
        -1 if replicas[i].leader_epoch is None else replicas[i].leader_epoch,
        replicas[i].log_end.offset, -i))
    return ReplicaChoice(topic, partition, replicas[best],
                         tuple(r for i, r in enumerate(replicas) if i != best))


def _entries(log_dir: LogDir, checkpoint: str) -> dict[tuple[str, int], int]:
    entries = log_dir.checkpoints[checkpoint].entries or ()
    return {(e.topic, e.partition): e.offset for e in entries}


def _broker_id(log_dir: LogDir) -> int | None:
    meta = log_dir.meta or {}
    raw = meta.get("node.id", meta.get("broker.id"))
    try:
        return None if raw is None else int(raw)
    except ValueError:
        return None
