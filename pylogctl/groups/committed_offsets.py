"""Consumer groups' committed offsets measured against their partitions' end offsets: the lag.

``kafka-consumer-groups --describe`` (``ConsumerGroupService.collectGroupOffsets``) pairs every
partition a group's members own or the group has committed to with the partition's end offset;
``pylogctl stats`` sums those lags per group. Both read them here: the groups from
``__consumer_offsets`` (:mod:`.offsets_topic`, with as many partitions as the KRaft metadata
registers), the end offsets from the data partitions (:mod:`.end_offsets`). A commit outside
its partition's log (:mod:`.stranded_commits`) is kept apart: a consumer resuming there gets
``OFFSET_OUT_OF_RANGE``, so its lag means nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from ..format.group_coordinator_records import TOPIC
from ..storage.kraft_configs import KraftConfigs, find_metadata_dir, read_kraft_configs
from .end_offsets import EndOffsets, LagFrom
from .group_metadata import Group, Member
from .offset_commits import OffsetAndMetadata, TopicPartition
from .offsets_topic import GroupsLoad, OffsetsTopic
from .replicas import LogDirs, choices_summary
from .stranded_commits import StrandedCommit, outside



@dataclass(frozen=True)
class PartitionLag:
    """One partition of a group: the member owning it (None: nobody), the commit (None: none),
    the offset a consumer resumes at (None: none; the Admin client hands a committed -1 over as
    none), the partition's end offset (None: in no log dir) and whether the offset is outside
    the log."""

    topic: str
    partition: int
    member: Member | None
    commit: OffsetAndMetadata | None
    offset: int | None
    end: int | None
    stranded: bool = False

    @property
    def lag(self) -> int | None:
        """The end offset minus the committed offset, when both are known."""
        return None if self.offset is None or self.end is None else self.end - self.offset


@dataclass
class Provenance:
    """Where the answers came from: the lines of the note on stderr, and whether reading met
    invalid data (exit code 1)."""

    lines: list[str]
    problem: bool


class CommittedOffsets:
    """The groups of the given log dirs, their commits and the lag of each."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]], lag_from: LagFrom = "hw",
                 partition_count: int | None = None,
                 progress: Callable[[int], None] | None = None) -> None:
        self.log_dirs = LogDirs(paths)
        self._kraft: list[KraftConfigs] | None = None
        if partition_count is None:  # --offsets-partitions wins, then the metadata image
            partition_count = self.registered_offsets_partitions()
        self.topic = OffsetsTopic(self.log_dirs, partition_count)
        self.end_offsets = EndOffsets(self.log_dirs, lag_from)
        self.lag_from = lag_from
        self.load: GroupsLoad | None = None
        # partitions measured whose committed offset lies outside the partition's log (a
        # truncation or retention since the commit)
        self.stranded: list[StrandedCommit] = []
        # called with the segment bytes of each __consumer_offsets partition loaded; may be
        # set after construction, once read_size() has given a progress bar its total
        self.progress = progress

    def read_size(self, group_ids: Iterable[str] | None) -> int:
        """The __consumer_offsets bytes loading ``group_ids`` (None: every group) reads."""
        return self.topic.read_size(None if group_ids is None else set(group_ids))

    def load_groups(self, group_ids: Iterable[str] | None) -> dict[str, Group]:
        """Load ``group_ids`` (None: every group) and keep how they were read in ``load``."""
        self.load = self.topic.load(None if group_ids is None else set(group_ids),
                                    progress=self.progress)
        return self.load.groups

    def partition_lags(self, group: Group) -> list[PartitionLag]:
        """Kafka's offsets view of ``group``: each member's partitions (most partitions first,
        each sorted by topic then partition), then the committed partitions nobody owns."""
        lags = []
        assigned: set[TopicPartition] = set()
        for m in sorted((m for m in group.members if m.assignment),
                        key=lambda m: -len(m.assignment)):
            assigned.update(m.assignment)
            lags += [self._lag(group, tp, m) for tp in sorted(m.assignment)]
        unowned = sorted(tp for tp in group.offsets if tp not in assigned)
        return lags + [self._lag(group, tp, None) for tp in unowned]

    def _lag(self, group: Group, tp: TopicPartition, member: Member | None) -> PartitionLag:
        commit = group.offsets.get(tp)
        offset = None if commit is None or commit.offset == -1 else commit.offset
        found = self.end_offsets.get(tp.topic, tp.partition)
        stranded = (offset is not None and found.replica is not None and outside(
            offset, found.replica.log_start_offset, found.log_end_offset))
        if stranded:
            self.stranded.append(StrandedCommit(group.group_id, tp.topic, tp.partition, offset,
                                                found.replica.log_start_offset,
                                                found.log_end_offset))
        return PartitionLag(tp.topic, tp.partition, member, commit, offset, found.offset,
                            stranded)

    def reading_provenance(self, meaning: Sequence[str] = (), verbose: bool = False,
                           list_hint: str = " (--verbose lists them)") -> Provenance:
        """What the last load read: the offsets partitions and replicas, and what they said;
        ``meaning``: the caller's lines on what its columns mean, put after the first. The
        replicas chosen among several are summed up in one line (``list_hint`` says how to see
        them), or with ``verbose`` listed one per partition."""
        load = self.load
        assert load is not None, "load_groups first"
        lines = []
        if not self.topic.present:
            lines.append(f"no {TOPIC} partitions in the log dirs: no group can be shown")
        lines += meaning
        by_dir: dict[str, int] = {}
        for choice in sorted(load.replicas.values(), key=lambda c: c.chosen.log_dir):
            r = choice.chosen
            name = r.log_dir + ("" if r.broker_id is None else f" (broker {r.broker_id})")
            by_dir[name] = by_dir.get(name, 0) + 1
        if self.topic.present:
            lines.append(f"read {len(load.partitions)} of {load.partition_count} {TOPIC} "
                         f"partitions ({_size(load.bytes_read)}) from "
                         + (", ".join(f"{d}: {n}" for d, n in by_dir.items()) or "none"))
        if self.topic.missing_partitions:
            counted = ("as given" if self.topic.given_count is not None
                       else "the highest found plus one")
            lines.append(f"{TOPIC} partitions {_ranges(self.topic.missing_partitions)} are in "
                         f"none of the log dirs: groups stored there are not shown, and the "
                         f"partition count ({load.partition_count}, {counted}) may be wrong; "
                         f"give every broker's log dir, or --offsets-partitions N")
        choices = self.log_dirs.choices
        if choices:
            lines += ([c.line() for c in choices] if verbose
                      else [choices_summary(choices) + list_hint])
        notes = [n for p in load.partitions for n in p.notes]
        replica_notes = [n for c in self.log_dirs.made
                         for r in (c.chosen, *c.others) for n in r.notes]
        problem = (any(n.problem for n in notes) or bool(replica_notes)
                   or bool(self.log_dirs.notes))
        lines += [str(n) for n in notes] + replica_notes + self.log_dirs.notes
        return Provenance(lines, problem)

    def kraft_configs(self) -> list[KraftConfigs]:
        """The KRaft metadata state replayed from each log dir that holds a metadata log."""
        if self._kraft is None:
            self._kraft = [read_kraft_configs(metadata_dir) for log_dir in self.log_dirs.log_dirs
                           if (metadata_dir := find_metadata_dir(log_dir.path)) is not None]
        return self._kraft

    def registered_offsets_partitions(self) -> int | None:
        """How many partitions the KRaft metadata registers for ``__consumer_offsets`` (the
        most any metadata log given says), None without a metadata log that has the topic."""
        counts = []
        for configs in self.kraft_configs():
            ids = [i for i, name in configs.topic_names.items() if name == TOPIC]
            if ids:
                counts.append(sum(1 for topic_id, _ in configs.partitions if topic_id == ids[0]))
        return max(counts) if counts else None


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    scaled, unit = next((n / 1024 ** k, u) for k, u in ((3, "GiB"), (2, "MiB"), (1, "KiB"))
                        if n >= 1024 ** k)
    return f"{scaled:.1f} {unit}"


def _ranges(numbers: list[int]) -> str:
    """``1, 3-5, 9``."""
    out: list[str] = []
    for n in numbers:
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = out[-1].split("-")[0] + f"-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)
