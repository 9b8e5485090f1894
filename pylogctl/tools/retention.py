"""``pylogctl retention``: Kafka's log retention (``deleteOldSegments``), offline.

For each partition of the paths, the topic's effective configuration
(:mod:`pylogctl.tools.config`) decides: partitions whose ``cleanup.policy`` lacks ``delete`` are
left to the cleaner, the KRaft metadata log follows its own snapshots, and a tiered-storage
topic's local retention depends on uploads this disk does not show; all three are skipped. The
others are planned by reading only (:meth:`LogDir.plan_retention`) and, with ``execute`` and
something to delete, loaded and cut through the Log engine (:meth:`LogDir.delete_old_segments`),
whose report is compared with the plan field by field (a difference is a bug, exit 70). A run
takes ``now`` once, so the plan and the deletion judge ages against the same clock.

Each deletion is crash-safe: the log start offset checkpoint is written before any file goes and
segments go oldest first (renamed ``.deleted``, then removed), so a kill at any point leaves a
log that ``pylogctl recover`` loads with no data at or above the new log start lost, and a
second run finishes the job. A log dir whose ``.lock`` a broker holds is refused (exit 4).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..errors import ExitCode, LogDirLockedError, PylogctlError
from ..groups.stranded_commits import StrandedCommit, stranded_commits
from ..storage.clock import wall_clock_ms
from ..storage.loader.plan import plain_data, step_to_dict
from ..storage.lock import LogDirLock
from ..storage.log_dir import LogDir, PartitionEntry
from ..storage.retention_plan import RetentionOutcome, RetentionPlan
from ..storage.topic_config import TopicConfig
from .config import ConfigOptions, TopicConfigs, selected_entries
from .log_dir_run import LogDirRun, Target

_SHOWN_CONFIGS = ("cleanup.policy", "retention.ms", "retention.bytes")


@dataclass(frozen=True)
class RetentionOptions:
    execute: bool = False
    backup_dir: str | None = None
    now_ms: int | None = None  # default: the wall clock when the run starts
    topics: tuple[str, ...] = ()
    partitions: tuple[int, ...] = ()
    config: ConfigOptions = field(default_factory=ConfigOptions)


@dataclass
class RetentionSection:
    """A formatter section: one partition, a deleted segment per item, the rest as footer."""

    entry: PartitionEntry
    log_dir: str
    topic_config: TopicConfig | None = None
    plan: RetentionPlan | None = None
    outcome: RetentionOutcome | None = None
    skipped: str | None = None
    error: PylogctlError | None = None
    kind: str = "retention"
    items_key: str = "deletions"

    @property
    def changes(self) -> bool:
        return self.plan is not None and self.plan.retention.changed

    @property
    def nothing_to_do(self) -> bool:
        """No deletion, no error, nothing noted: what a long plan leaves out."""
        if self.error is not None or self.changes or self.mismatches:
            return False
        return not (self.plan and (self.plan.load.notes or self.plan.retention.notes
                                   or self.plan.checkpoint_updates)) \
            and not (self.outcome and self.outcome.notes)

    @property
    def mismatches(self) -> list[str]:
        """Fields where the deletion did not do what was planned (a bug if any)."""
        if self.outcome is None or self.plan is None:
            return []
        done, planned = self.outcome.retention, self.plan.retention
        out = [f.name for f in dataclasses.fields(done)
               if getattr(planned, f.name) != getattr(done, f.name)]
        if self.outcome.checkpoint_updates != self.plan.checkpoint_updates:
            out.append("checkpoint_updates")
        return out

    @property
    def header(self) -> dict[str, Any]:
        configs = {}
        for name in _SHOWN_CONFIGS:
            v = self.topic_config.get(name) if self.topic_config else None
            if v is not None:
                configs[name] = {"value": v.value, "source": v.source}
        return {"partition": str(self.entry), "partitionDir": self.entry.path,
                "logDir": self.log_dir, "config": configs}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        r = self.plan.retention if self.plan else None
        for d in r.deleted if r else ():
            yield {"baseOffset": d.base_offset, "size": d.size, "rule": d.rule,
                   "reason": d.reason}

    @property
    def footer(self) -> dict[str, Any]:
        r = self.plan.retention if self.plan else None
        o = self.outcome
        notes = list(self.plan.load.notes) if self.plan else []
        notes += list(r.notes) if r else []
        notes += [n for n in (o.notes if o else ()) if n not in notes]
        error = None if self.error is None else {"message": str(self.error),
                                                 "path": self.error.path,
                                                 "position": self.error.position}
        updates = o.checkpoint_updates if o else (self.plan.checkpoint_updates
                                                  if self.plan else ())
        return {
            "skipped": self.skipped,
            "passes": [{"rule": p.rule, "limit": p.limit, "deleted": len(p.deleted),
                        "skippedBecause": p.skipped, "stoppedAt": p.stopped_at,
                        "stopReason": p.stop_reason} for p in (r.passes if r else ())],
            "segmentsBefore": len(r.segments_before) if r else None,
            "sizeBefore": r.size_before if r else None,
            "logStartOffsetBefore": r.log_start_offset_before if r else None,
            "logStartOffset": r.log_start_offset if r else None,
            "logEndOffset": r.log_end_offset if r else None,
            "highWatermark": r.high_watermark if r else None,
            "segmentsAfter": len(r.segments) if r else None,
            "createdSegment": r.created_segment if r else None,
            "bytesFreed": r.bytes_freed if r else 0,
            "snapshotsDeleted": list(r.snapshots_deleted) if r else [],
            "leaderEpochsBefore": _epochs(r.leader_epochs_before) if r else [],
            "leaderEpochs": _epochs(r.leader_epochs) if r else [],
            "recoverFirst": ([step_to_dict(s) for s in self.plan.load.steps]
                             if self.plan and self.changes else []),
            "checkpointUpdates": plain_data(updates),
            "changes": self.changes,
            "executed": o is not None,
            "backups": list(o.backups) if o else [],
            "notes": notes,
            "mismatches": self.mismatches,
            "error": error,
        }


@dataclass
class RetentionRun(LogDirRun[RetentionSection]):
    """A retention run over ``paths``; iterate :meth:`partitions` to plan (and delete)."""

    paths: list[str]
    options: RetentionOptions = field(default_factory=RetentionOptions)
    notes: list[str] = field(default_factory=list)
    command = "retention"

    def __post_init__(self) -> None:
        self.now_ms = wall_clock_ms() if self.options.now_ms is None else self.options.now_ms
        self.resolve(self.paths, self.options.execute)
        self.configs = TopicConfigs([t.log_dir for t in self.targets], self.options.config)
        for target in self.targets:  # a bad config file or metadata log fails here, up front
            self.configs.sources(LogDir(target.log_dir))

    def entries(self, log_dir: LogDir, target: Target) -> list[PartitionEntry]:
        return selected_entries(log_dir, target, self.options.topics,
                                self.options.partitions)

    def open_log_dir(self, log_dir: LogDir, target: Target) -> None:
        super().open_log_dir(log_dir, target)
        self.notes += [f"{log_dir.path}: {n}" for n in self.configs.sources(log_dir).notes]

    def partition(self, log_dir: LogDir, entry: PartitionEntry,
                  lock: LogDirLock | None) -> RetentionSection:
        section = RetentionSection(entry, log_dir.path)
        o = self.options
        try:
            if entry.is_metadata_log:
                section.skipped = ("the KRaft metadata log: its retention follows its snapshots "
                                   "(metadata.max.retention.ms/bytes), not topic configs")
                return section
            section.topic_config = topic = self.configs.sources(log_dir).topic(entry.topic)
            section.skipped = _skip_reason(topic)
            if section.skipped is not None:
                return section
            section.plan = log_dir.plan_retention(entry, topic.log_config, self.now_ms)
            if o.execute and section.changes:
                section.outcome = log_dir.delete_old_segments(
                    entry, topic.log_config, self.now_ms, backup_dir=o.backup_dir, lock=lock)
        except LogDirLockedError:
            raise
        except PylogctlError as exc:
            section.error = exc
        return section


def stranded(sections: list[RetentionSection]) -> list[StrandedCommit]:
    """Committed offsets that the new log starts of ``sections`` leave below the log, from the
    ``__consumer_offsets`` of each section's log dir."""
    by_dir: dict[str, dict[tuple[str, int], tuple[int, int]]] = {}
    for s in sections:
        r = s.plan.retention if s.plan and s.changes else None
        if r is not None and r.log_start_offset > r.log_start_offset_before:
            by_dir.setdefault(s.log_dir, {})[s.entry.key] = (r.log_start_offset,
                                                             r.log_end_offset)
    return [c for d, ranges in by_dir.items() for c in stranded_commits([d], ranges)]


def _epochs(entries) -> list[list[int]]:
    return [[e.epoch, e.start_offset] for e in entries]


def _skip_reason(topic: TopicConfig) -> str | None:
    if not topic.log_config.delete:
        policy = ",".join(topic.log_config.cleanup_policy)
        return (f"cleanup.policy={policy}: retention runs only where cleanup.policy contains "
                f"delete (a compacted log's old data is the cleaner's: pylogctl compact)")
    remote = topic.get("remote.storage.enable")
    if remote is not None and remote.value.strip().lower() == "true":
        return ("remote.storage.enable=true: local retention of a tiered topic depends on "
                "which segments were uploaded, which this disk does not show")
    return None


def exit_code(sections: list[RetentionSection]) -> int:
    """70 when a deletion differed from its plan, else the worst partition error (0 if none)."""
    if any(s.mismatches for s in sections):
        return int(ExitCode.INTERNAL)
    return max((int(s.error.exit_code) for s in sections if s.error is not None),
               default=int(ExitCode.OK))
