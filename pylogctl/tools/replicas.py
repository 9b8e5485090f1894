"""``pylogctl replicas``: every broker's copy of each partition compared, and an election's cost.

The comparison is :mod:`pylogctl.groups.replica_divergence`. With ``elect``, the broker named
leads every partition it holds a replica of, and each other replica's truncation (what Kafka's
follower would do when it starts fetching from it) becomes a ``truncate`` plan
(:mod:`.truncate`); ``execute`` runs those plans, each under its log dir's ``.lock`` through
:meth:`~pylogctl.storage.log_dir.LogDir.truncate`, which keeps the checkpoints, the
leader-epoch cache and producer state consistent. Every log dir is checked for a running
broker's lock before anything is planned. A run cut short leaves some replicas truncated and
others not; a rerun finds the truncated ones in step and finishes the rest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from ..errors import UsageError
from ..groups.replica_divergence import (PartitionReplicas, broker_ids, check_log_dirs,
                                         compare_all, multi_replica_partitions)
from ..groups.replicas import LogDirs
from ..storage.lock import ensure_unlocked
from .truncate import TruncateRequest, TruncationSection, truncate


@dataclass(frozen=True)
class ReplicasRequest:
    log_dirs: tuple[str, ...]
    topics: tuple[str, ...] = ()
    partitions: tuple[int, ...] = ()
    elect: int | None = None
    execute: bool = False
    backup_dir: str | None = None
    verbose: bool = False


@dataclass
class ReplicasSection:
    """A formatter section: one partition, its replicas as items, the truncations as footer."""

    found: PartitionReplicas
    elect: int | None = None
    truncations: list[TruncationSection] = field(default_factory=list)
    kind: str = "replicas"
    items_key: str = "replicas"

    @property
    def header(self) -> dict[str, Any]:
        f = self.found
        return {"partition": f"{f.topic}-{f.partition}", "topic": f.topic,
                "partitionId": f.partition, "leaderBrokerId": f.leader.replica.broker_id,
                "leaderReason": f.leader_reason, "leaderEpoch": f.leader_epoch,
                "elect": self.elect, "notes": list(f.notes)}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        """The replicas, each with its truncate plan (with ``elect``), so ndjson has it."""
        plans = {t.entry.path: _truncation(t) for t in self.truncations}
        for r in self.found.replicas:
            yield {**r.to_dict(), "truncate": plans.get(r.replica.path)}

    @property
    def footer(self) -> dict[str, Any]:
        f = self.found
        return {"agree": f.agrees, "singleCopies": f.single_copies,
                "topicIdMismatch": f.topic_id_mismatch,
                "mismatches": [r.mismatch for r in f.replicas if r.mismatch],
                "truncate": [_truncation(t) for t in self.truncations],
                "executed": any(t.outcome is not None for t in self.truncations),
                "planMismatches": self.plan_mismatches}

    @property
    def plan_mismatches(self) -> list[str]:
        """Replicas whose executed truncation differs from its plan or the divergence point
        (a bug if any)."""
        out = [f"{t.entry}: {name}" for t in self.truncations for name in t.mismatches]
        for t, r in zip(self.truncations, self._truncated_replicas):
            if t.outcome is not None and t.plan.truncation.log_end_offset != r.divergence_point:
                out.append(f"{t.entry}: log end {t.plan.truncation.log_end_offset}, not the "
                           f"divergence point {r.divergence_point}")
        return out

    @property
    def _truncated_replicas(self):
        return [r for r in self.found.replicas[1:] if r.truncation and r.truncation.changed]


@dataclass
class ReplicasRun:
    """The comparison of the log dirs given, streamed partition by partition."""

    request: ReplicasRequest
    log_dirs: LogDirs = field(init=False)
    compared: int = 0
    agreeing: int = 0
    single_copies: int = 0
    sections: list[ReplicasSection] = field(default_factory=list)

    def __post_init__(self) -> None:
        r = self.request
        self.log_dirs = LogDirs(list(r.log_dirs))
        check_log_dirs(self.log_dirs)
        if r.elect is not None:
            known = broker_ids(self.log_dirs)
            if r.elect not in known:
                raise UsageError(f"unknown broker id {r.elect}: the log dirs given are brokers "
                                 f"{', '.join(map(str, known)) or '(none with a node.id)'}")
            for d in self.log_dirs.log_dirs:  # truncate refuses a running broker's dirs
                ensure_unlocked(d.path)

    @property
    def total(self) -> int:
        return len(self._partitions)

    @property
    def _partitions(self) -> list[tuple[str, int]]:
        r = self.request
        return multi_replica_partitions(self.log_dirs, r.topics or None, r.partitions or None)

    @property
    def not_on_elected(self) -> list[str]:
        """The partitions with several replicas, none of them on the elected broker."""
        e = self.request.elect
        return [f"{t}-{p}" for t, p in self._partitions if e is not None and all(
            rep.broker_id != e for rep in self.log_dirs.replicas(t, p))]

    def sections_for(self, advance: Optional[Callable[[int], None]] = None
                     ) -> Iterator[ReplicasSection]:
        """A section per partition with several replicas; agreeing ones only when verbose."""
        r = self.request
        for found in compare_all(self.log_dirs, r.topics or None, r.partitions or None,
                                 elect=r.elect):
            self.compared += 1
            section = ReplicasSection(found, r.elect)
            if r.elect is not None:
                section.truncations = [self._truncate(rep) for rep in
                                       section._truncated_replicas]
            self.sections.append(section)
            self.agreeing += found.agrees
            self.single_copies += found.single_copies
            if advance is not None:
                advance(1)
            if r.verbose or not found.agrees or found.single_copies:
                yield section

    def _truncate(self, replica) -> TruncationSection:
        t, backup = replica.truncation, self.request.backup_dir
        if backup is not None:  # one mirror per log dir: brokers hold the same partitions
            r = replica.replica
            backup = os.path.join(backup, f"broker{r.broker_id}-{os.path.basename(r.log_dir)}")
        return truncate(TruncateRequest(replica.replica.path, t.mode, t.offset,
                                        execute=self.request.execute, backup_dir=backup))

    def summary(self) -> str:
        diverging = self.compared - self.agreeing
        what = (f"{self.compared} partition{'' if self.compared == 1 else 's'} with several "
                f"replicas: {self.agreeing} agree, {diverging} diverge, "
                f"{self.single_copies} with records only one replica holds")
        if self.request.elect is not None:
            n = sum(len(s.truncations) for s in self.sections)
            verb = "truncated" if self.request.execute else "to truncate"
            what += f"; electing broker {self.request.elect}: {n} replica" \
                    f"{'' if n == 1 else 's'} {verb}"
            away = self.not_on_elected
            if away:
                what += (f"; {len(away)} partition{'' if len(away) == 1 else 's'} without a "
                         f"replica on broker {self.request.elect} left alone ("
                         + ", ".join(away[:5]) + (", ..." if len(away) > 5 else "") + ")")
        return what


def _truncation(t: TruncationSection) -> dict[str, Any]:
    p = t.plan.truncation
    return {"partitionDir": t.entry.path, "mode": t.request.mode, "offset": t.request.offset,
            "logEndOffsetBefore": p.log_end_offset_before, "logEndOffset": p.log_end_offset,
            "changes": p.describe() if p.changed else [], "executed": t.outcome is not None,
            "backups": list(t.outcome.backups) if t.outcome else [],
            "strandedCommits": [c.to_dict() for c in t.stranded]}
