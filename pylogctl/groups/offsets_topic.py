"""The ``__consumer_offsets`` topic across the given log dirs: where each group lives, and
loading the partitions that hold the groups asked for.

The partition count N of ``partitionFor`` is the topic's real partition count. Offline it is
what the caller knows (``partition_count``: ``--offsets-partitions``, else the partitions the
KRaft metadata image registers, which beats the dirs), else what the log dirs show: the
highest ``__consumer_offsets-{p}`` found, plus one. With the log dirs of only some brokers,
partitions may be missing; a gap below N is reported (``missing_partitions``), and a group
whose partition is absent is reported as such rather than looked for in the wrong place.

Each partition is read from one replica (:meth:`LogDirs.choose`). With group ids, only their
partitions are read, and within them only those groups are decoded. Partitions load in
parallel processes when there is much to read; a worker sends its partition back with the
committed offsets as plain tuples (:func:`_pack`), which pickle several times faster than
hundreds of thousands of named tuples, and the parent rebuilds them (:func:`_unpack`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Callable, Collection

from ..errors import PylogctlError
from ..format.group_coordinator_records import TOPIC
from ..storage.log_dir_layout import log_segments
from .group_loader import LoadedPartition, load_offsets_partition
from .group_metadata import Group
from .offset_commits import OffsetAndMetadata, TopicPartition
from .partitioner import partition_for
from .replicas import LogDirs, ReplicaChoice

if TYPE_CHECKING:
    import multiprocessing.context

Progress = Callable[[int], None]
PARALLEL_MIN_BYTES = 64 << 20  # below this, starting processes costs more than it saves


@dataclass
class GroupsLoad:
    """Every group found in the partitions read, and how they were read."""

    partition_count: int
    groups: dict[str, Group] = field(default_factory=dict)
    partitions: list[LoadedPartition] = field(default_factory=list)
    replicas: dict[int, ReplicaChoice] = field(default_factory=dict)
    absent: list[int] = field(default_factory=list)  # partitions asked for, in no log dir

    @property
    def bytes_read(self) -> int:
        return sum(p.bytes_read for p in self.partitions)


class OffsetsTopic:
    """``__consumer_offsets`` as the log dirs hold it."""

    def __init__(self, log_dirs: LogDirs, partition_count: int | None = None) -> None:
        self.log_dirs = log_dirs
        self.present = log_dirs.partitions(TOPIC)
        self.given_count = partition_count

    @property
    def partition_count(self) -> int:
        """The count given, else the highest partition found plus one (0: no offsets topic)."""
        if self.given_count is not None:
            return self.given_count
        return self.present[-1] + 1 if self.present else 0

    @property
    def missing_partitions(self) -> list[int]:
        have = set(self.present)
        return [p for p in range(self.partition_count) if p not in have]

    def partition_for(self, group_id: str) -> int | None:
        """The partition holding ``group_id`` (None without an offsets topic)."""
        n = self.partition_count
        return partition_for(group_id, n) if n else None

    def read_size(self, group_ids: Collection[str] | None = None) -> int:
        """The segment bytes :meth:`load` of ``group_ids`` reads: the total of a progress
        bar (replicas are chosen once, so loading afterwards reads the same ones)."""
        return sum(_size(t.path) for t in self._tasks(group_ids, GroupsLoad(0)))

    def load(self, group_ids: Collection[str] | None = None, *,
             workers: int | None = None, progress: Progress | None = None) -> GroupsLoad:
        """Load every partition, or only the partitions (and groups) of ``group_ids``.

        Partitions are independent, so a big load runs in ``workers`` processes (default:
        one per CPU once there are :data:`PARALLEL_MIN_BYTES` to read; 1 reads in-process).
        ``progress`` is called with each partition's segment bytes once it is loaded.
        """
        result = GroupsLoad(self.partition_count)
        tasks = self._tasks(group_ids, result)
        sizes = {t.partition: _size(t.path) for t in tasks}

        def done(loaded: LoadedPartition) -> LoadedPartition:
            if progress is not None:
                progress(sizes[loaded.partition])
            return loaded

        if workers is None:
            workers = (os.cpu_count() or 1) if sum(sizes.values()) >= PARALLEL_MIN_BYTES else 1
        workers = min(workers, len(tasks))
        if workers > 1:
            from concurrent.futures import ProcessPoolExecutor, as_completed  # big loads only

            with ProcessPoolExecutor(workers, mp_context=_context()) as pool:
                # biggest first, so that no worker is left with a big one at the end; each
                # reported as it completes, so a bar is not held back by the biggest
                order = sorted(tasks, key=lambda t: -sizes[t.partition])
                futures = [pool.submit(_load_packed, t) for t in order]
                loaded = {p.partition: done(p)
                          for p in (_unpack(f.result()) for f in as_completed(futures))}
            result.partitions = [loaded[t.partition] for t in tasks]
        else:
            result.partitions = [done(_load(t)) for t in tasks]
        for loaded_partition in result.partitions:
            result.groups.update(loaded_partition.groups)
        return result

    def _tasks(self, group_ids: Collection[str] | None, result: GroupsLoad) -> list[_Task]:
        """What loading ``group_ids`` reads; the replicas chosen and the partitions absent
        go into ``result``."""
        wanted: dict[int, set[str] | None] = {}
        if group_ids is None:
            wanted = {p: None for p in self.present if p < self.partition_count}
        else:
            for g in group_ids:
                p = self.partition_for(g)
                if p is not None:
                    wanted.setdefault(p, set()).add(g)  # type: ignore[union-attr]
        tasks = []
        for partition, groups in sorted(wanted.items()):
            choice = self.log_dirs.choose(TOPIC, partition)
            if choice is None:
                result.absent.append(partition)
                continue
            result.replicas[partition] = choice
            replica = choice.chosen
            tasks.append(_Task(replica.path, partition, replica.log_start_offset, groups,
                               self.log_dirs.topic_ids))
        return tasks


@dataclass(frozen=True)
class _Task:
    path: str
    partition: int
    log_start_offset: int
    group_ids: set[str] | None
    topic_name: Callable[[str], str | None]


def _load(task: _Task) -> LoadedPartition:
    return load_offsets_partition(task.path, task.partition,
                                  log_start_offset=task.log_start_offset,
                                  group_ids=task.group_ids, topic_name=task.topic_name)


_Offsets = dict[TopicPartition, OffsetAndMetadata]
_PackedOffsets = tuple[tuple[TopicPartition, ...], tuple[tuple, ...]]
_Packed = tuple[LoadedPartition, list[tuple[Group, _PackedOffsets, dict[int, _PackedOffsets]]]]


def _load_packed(task: _Task) -> _Packed:
    return _pack(_load(task))


def _pack(loaded: LoadedPartition) -> _Packed:
    """``loaded`` without its groups, and each group with its offsets apart, as partitions and
    plain tuples. (The loader shares one TopicPartition object per partition, so pickle writes
    each once.) Takes ``loaded`` apart: a worker has no further use for it."""
    groups = [(g, _pack_offsets(g.offsets),
               {pid: _pack_offsets(o) for pid, o in g.pending_offsets.items()})
              for g in loaded.groups.values()]
    for g, _, _ in groups:
        g.offsets, g.pending_offsets = {}, {}
    loaded.groups = {}
    return loaded, groups


def _pack_offsets(offsets: _Offsets) -> _PackedOffsets:
    return tuple(offsets), tuple(map(tuple, offsets.values()))


def _unpack(packed: _Packed) -> LoadedPartition:
    loaded, groups = packed
    for group, offsets, pending in groups:
        group.offsets = _unpack_offsets(offsets)
        group.pending_offsets = {pid: _unpack_offsets(o) for pid, o in pending.items()}
        loaded.groups[group.group_id] = group
    return loaded


def _unpack_offsets(packed: _PackedOffsets) -> _Offsets:
    partitions, rows = packed
    return dict(zip(partitions, map(tuple.__new__, repeat(OffsetAndMetadata), rows)))


def _size(partition_dir: str) -> int:
    try:
        return sum(os.path.getsize(p) for _, p in log_segments(partition_dir))
    except (OSError, PylogctlError):
        return 0


def _context() -> multiprocessing.context.BaseContext:
    """fork where there is one (workers start at once, with the modules loaded)."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)
