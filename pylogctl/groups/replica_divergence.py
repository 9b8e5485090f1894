"""Every broker's copy of a partition compared, as replication would settle them.

The leader is the best replica (:meth:`~.replicas.LogDirs.choose`: highest latest leader epoch,
then highest log end, then the first log dir given -- the one rule of :mod:`.replicas`), or the
broker named for an election. Each other replica follows it as Kafka's follower would
(:mod:`.follower_truncation`, on the log as its broker would load it, with Kafka's
``truncateTo`` predicted by :mod:`pylogctl.storage.truncation_plan`): the divergence point is
where its log ends after that truncation, and what lies above it is lost.

The point is then checked against the bytes: below it the follower must hold the leader's
batches (same base and last offsets, leader epoch and CRC, which covers everything after the
epoch field); a batch that differs there is reported. Records no other replica holds (above
every other replica's end, or diverging) and replicas whose ``partition.metadata`` topic ids
disagree (a topic deleted and re-created while a broker was down) are flagged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable, Iterator, NamedTuple

from ..errors import PylogctlError, UsageError
from ..storage.file_records import FileRecords
from ..storage.loader.plan import LoadPlan
from ..storage.log_config import LogConfig
from ..storage.log_dir_layout import PARTITION_METADATA
from ..storage.metadata_files import read_partition_metadata
from ..storage.truncation_plan import Mode, predict_truncation, segment_bytes_after_load
from .follower_truncation import (FollowerTruncation, ReplicaLog, elected_leader_epoch,
                                  follower_truncation)
from .replicas import LogDirs, Replica


class BatchKey(NamedTuple):
    """What makes two batches the same: offsets, leader epoch and CRC."""

    base_offset: int
    last_offset: int
    leader_epoch: int
    crc: int


class BatchInfo(NamedTuple):
    key: BatchKey
    records: int | None
    first_timestamp: int
    max_timestamp: int


def loaded_batches(plan: LoadPlan) -> Iterator[BatchInfo]:
    """The batch headers of the log ``plan`` loads (after any recovery it runs)."""
    for base in plan.segments:
        path, start, size = segment_bytes_after_load(plan, base)
        if size <= 0:
            continue
        with FileRecords(path, end=start + size) as records:
            for b in records.batches(start):
                first = getattr(b, "base_timestamp", None)
                yield BatchInfo(BatchKey(b.base_offset, b.last_offset, b.partition_leader_epoch,
                                         b.crc), b.count,
                                b.max_timestamp if first is None else first, b.max_timestamp)


@dataclass(frozen=True)
class RecordRange:
    """Batches of one replica: offsets ``[first_offset, end_offset)``, records, times."""

    first_offset: int
    end_offset: int
    batches: int
    records: int
    first_timestamp: int | None
    last_timestamp: int | None

    @classmethod
    def of(cls, batches: list[BatchInfo]) -> RecordRange | None:
        if not batches:
            return None
        times = [t for b in batches for t in (b.first_timestamp, b.max_timestamp) if t >= 0]
        return cls(batches[0].key.base_offset, batches[-1].key.last_offset + 1, len(batches),
                   sum(b.records or (b.key.last_offset - b.key.base_offset + 1)
                       for b in batches),
                   min(times, default=None), max(times, default=None))

    def to_dict(self) -> dict:
        return {"firstOffset": self.first_offset, "endOffset": self.end_offset,
                "batches": self.batches, "records": self.records,
                "firstTimestamp": self.first_timestamp, "lastTimestamp": self.last_timestamp}


@dataclass
class ReplicaReport:
    """One replica of a partition against the leader's."""

    replica: Replica
    plan: LoadPlan
    topic_id: str | None
    batches: list[BatchInfo]
    is_leader: bool = False
    truncation: FollowerTruncation | None = None
    lost: RecordRange | None = None
    unique: RecordRange | None = None
    mismatch: str | None = None  # a batch below the divergence point unlike the leader's

    @property
    def log(self) -> ReplicaLog:
        p = self.plan
        return ReplicaLog(p.log_start_offset, p.log_end_offset, p.high_watermark,
                          tuple(p.leader_epochs))

    @property
    def divergence_point(self) -> int | None:
        return None if self.truncation is None else self.truncation.divergence_point

    @property
    def agrees(self) -> bool:
        """Nothing to truncate, nothing unlike the leader's (a follower may lag)."""
        return self.mismatch is None and (self.truncation is None
                                          or not self.truncation.changed)

    def to_dict(self) -> dict:
        r, log, t = self.replica, self.log, self.truncation
        topic, partition = r.entry.key
        return {"topic": topic, "partition": partition, "brokerId": r.broker_id,
                "logDir": r.log_dir, "partitionDir": r.path,
                "leader": self.is_leader, "topicId": self.topic_id,
                "logStartOffset": log.log_start_offset, "logEndOffset": log.log_end_offset,
                "highWatermark": log.high_watermark,
                "leaderEpochs": [[e.epoch, e.start_offset] for e in log.epochs],
                "divergencePoint": self.divergence_point,
                "truncation": None if t is None or not t.changed else
                {"mode": t.mode, "offset": t.offset, "steps": [s.to_dict() for s in t.steps]},
                "lost": self.lost.to_dict() if self.lost else None,
                "unique": self.unique.to_dict() if self.unique else None,
                "mismatch": self.mismatch, "notes": list(r.notes) + list(self.plan.notes)}


@dataclass
class PartitionReplicas:
    """A partition's replicas, the leader first."""

    topic: str
    partition: int
    leader_reason: str
    leader_epoch: int  # the new leader's epoch the followers are compared under
    replicas: list[ReplicaReport]
    notes: list[str] = field(default_factory=list)

    @property
    def leader(self) -> ReplicaReport:
        return self.replicas[0]

    @property
    def topic_id_mismatch(self) -> bool:
        return len({r.topic_id for r in self.replicas if r.topic_id}) > 1

    @property
    def agrees(self) -> bool:
        return not self.topic_id_mismatch and all(r.agrees for r in self.replicas)

    @property
    def single_copies(self) -> bool:
        """Some records are held by one replica only."""
        return any(r.unique for r in self.replicas)

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition,
                "leaderBrokerId": self.leader.replica.broker_id,
                "leaderReason": self.leader_reason, "agree": self.agrees,
                "singleCopies": self.single_copies,
                "topicIdMismatch": self.topic_id_mismatch, "notes": self.notes}


def check_log_dirs(log_dirs: LogDirs) -> None:
    """One cluster, each broker's log dir once: else a one-line usage error."""
    clusters: dict[str, str] = {}
    dirs: dict[tuple[str, str], str] = {}
    for d in log_dirs.log_dirs:
        meta = d.meta or {}
        if meta.get("cluster.id"):
            clusters.setdefault(meta["cluster.id"], d.path)
        node, directory = meta.get("node.id", meta.get("broker.id")), meta.get("directory.id")
        if node is not None and directory:
            first = dirs.setdefault((node, directory), d.path)
            if first != d.path:
                raise UsageError(f"broker {node} given twice: {first} and {d.path} are the same "
                                 f"log dir (directory.id {directory})", path=d.path)
    if len(clusters) > 1:
        raise UsageError("log dirs from different clusters: " + ", ".join(
            f"{path} (cluster.id {cid})" for cid, path in clusters.items()))


def broker_ids(log_dirs: LogDirs) -> list[int]:
    return sorted({r.broker_id for t in log_dirs.topics() for p in log_dirs.partitions(t)
                   for r in log_dirs.replicas(t, p) if r.broker_id is not None})


def compare_partition(log_dirs: LogDirs, topic: str, partition: int, *,
                      elect: int | None = None, config: LogConfig = LogConfig()
                      ) -> PartitionReplicas | None:
    """The partition's replicas compared (None: fewer than two, or ``elect`` holds none)."""
    replicas = log_dirs.replicas(topic, partition)
    if len(replicas) < 2:
        return None
    seen: dict[int, str] = {}
    for r in replicas:
        if r.broker_id is not None and seen.setdefault(r.broker_id, r.path) != r.path:
            raise UsageError(f"broker {r.broker_id} given twice: {seen[r.broker_id]} and "
                             f"{r.path} are both its {topic}-{partition}", path=r.path)
    if elect is None:
        choice = log_dirs.choose(topic, partition)
        assert choice is not None
        leader, reason = choice.chosen, f"best replica: {choice.reason}"
    else:
        leader = next((r for r in replicas if r.broker_id == elect), None)
        if leader is None:
            return None
        reason = f"broker {elect} elected"
    ordered = [leader] + [r for r in replicas if r is not leader]
    reports = [_report(log_dirs, r, config) for r in ordered]
    reports[0].is_leader = True
    epoch = elected_leader_epoch([r.log.latest_epoch for r in reports])
    out = PartitionReplicas(topic, partition, reason, epoch, reports)
    lead = reports[0]
    for f in reports[1:]:
        if lead.topic_id and f.topic_id and f.topic_id != lead.topic_id:
            out.notes.append(f"broker {f.replica.broker_id}'s replica has topic id "
                             f"{f.topic_id}, not the leader's {lead.topic_id}: another "
                             f"incarnation of the topic, which Kafka never makes a follower "
                             f"(nothing compared or planned for it)")
            continue
        f.truncation = follower_truncation(lead.log, f.log, _truncate(f), epoch)
        point = f.truncation.divergence_point
        start_at = f.truncation.mode == "start-at"
        f.lost = RecordRange.of([b for b in f.batches
                                 if start_at or b.key.last_offset >= point])
        f.mismatch = _mismatch_below(f, lead, 0 if start_at else point)
    for r in reports:
        r.unique = _unique(r, [o for o in reports if o is not r])
    return out


def compare_all(log_dirs: LogDirs, topics: Iterable[str] | None = None,
                partitions: Iterable[int] | None = None, *, elect: int | None = None,
                config: LogConfig = LogConfig()) -> Iterator[PartitionReplicas]:
    """:func:`compare_partition` for every partition with several replicas (and, with
    ``elect``, one on that broker), in order."""
    for topic, p in multi_replica_partitions(log_dirs, topics, partitions):
        found = compare_partition(log_dirs, topic, p, elect=elect, config=config)
        if found is not None:
            yield found


def multi_replica_partitions(log_dirs: LogDirs, topics: Iterable[str] | None = None,
                             partitions: Iterable[int] | None = None
                             ) -> list[tuple[str, int]]:
    """The partitions with several replicas, limited to ``topics`` and ``partitions``."""
    wanted_topics = None if topics is None else set(topics)
    wanted = None if partitions is None else set(partitions)
    return [(t, p) for t in log_dirs.topics()
            if wanted_topics is None or t in wanted_topics
            for p in log_dirs.partitions(t)
            if (wanted is None or p in wanted) and len(log_dirs.replicas(t, p)) > 1]


def _report(log_dirs: LogDirs, replica: Replica, config: LogConfig) -> ReplicaReport:
    log_dir = next(d for d in log_dirs.log_dirs if d.path == replica.log_dir)
    plan = log_dir.plan(replica.entry, config)
    return ReplicaReport(replica, plan, _topic_id(replica), list(loaded_batches(plan)))


def _topic_id(replica: Replica) -> str | None:
    path = os.path.join(replica.path, PARTITION_METADATA)
    if not os.path.exists(path):
        return None
    try:
        return read_partition_metadata(path)["topicId"]
    except (PylogctlError, KeyError) as exc:
        replica.notes.append(f"{path}: {exc}")
        return None


def _truncate(report: ReplicaReport):
    """The replica's log after one ``truncateTo``/``truncateFullyAndStartAt`` (predicted)."""
    plan, epochs = report.plan, tuple(report.plan.leader_epochs)

    def truncate(offset: int, mode: Mode) -> ReplicaLog:
        p = predict_truncation(plan, offset, mode)
        kept = () if mode == "start-at" else tuple(e for e in epochs
                                                   if e.start_offset < p.log_end_offset)
        return ReplicaLog(p.log_start_offset, p.log_end_offset, p.high_watermark, kept)
    return truncate


def _mismatch_below(follower: ReplicaReport, leader: ReplicaReport, point: int) -> str | None:
    """The first batch below ``point`` (and above both log starts) the leader lacks."""
    lead = {b.key.base_offset: b.key for b in leader.batches if b.key.base_offset < point}
    floor = max(follower.log.log_start_offset, leader.log.log_start_offset,
                min(lead, default=point))
    for b in follower.batches:
        k = b.key
        if k.base_offset >= point:
            break
        if k.base_offset < floor:
            continue
        theirs = lead.get(k.base_offset)
        if theirs != k:
            what = ("no batch there" if theirs is None else
                    f"last offset {theirs.last_offset}, epoch {theirs.leader_epoch}, "
                    f"CRC {theirs.crc & 0xffffffff:#010x}")
            return (f"the batch at offset {k.base_offset} (last offset {k.last_offset}, epoch "
                    f"{k.leader_epoch}, CRC {k.crc & 0xffffffff:#010x}) differs from the "
                    f"leader's ({what}) below the divergence point {point}")
    return None


def _unique(report: ReplicaReport, others: list[ReplicaReport]) -> RecordRange | None:
    """This replica's batches that no other replica holds, above the others' log starts."""
    floor = min(o.log.log_start_offset for o in others)
    held = set().union(*({b.key for b in o.batches if b.key.last_offset >= floor}
                         for o in others))
    mine = [b for b in report.batches if b.key.last_offset >= floor and b.key not in held]
    return RecordRange.of(mine)
