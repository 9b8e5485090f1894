"""``pylogctl truncate``: Kafka's ``truncateTo`` and ``truncateFullyAndStartAt``, offline.

The partition is loaded as a broker would load it (so a damaged log is recovered first, and
that recovery is part of the plan), then truncated through
:class:`~pylogctl.storage.log.Log`, which updates the segments, indexes, leader-epoch cache and
producer state, and the log dir's checkpoint entries are rewritten. Without ``execute`` the
same is predicted by reading only (:mod:`pylogctl.storage.truncation_plan`). The log dir's
``.lock`` is held from planning to the end, and refused when a broker holds it.

The groups whose committed offset for the partition the truncation leaves above the new log
end (or below its start) are listed (:mod:`pylogctl.groups.stranded_commits`), read from the
``__consumer_offsets`` of the same log dir.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import UsageError
from ..groups.stranded_commits import StrandedCommit, stranded_commits
from ..storage.files import require_path
from ..storage.loader.plan import plain_data, step_to_dict
from ..storage.lock import LogDirLock, ensure_unlocked
from ..storage.log_config import LogConfig
from ..storage.log_dir_layout import is_partition_dir, live_partition_name
from ..storage.log_dir import LogDir, PartitionEntry, TruncationOutcome, TruncationPlan
from ..storage.truncation_plan import Mode


@dataclass(frozen=True)
class TruncateRequest:
    partition_dir: str
    mode: Mode
    offset: int
    log_start_offset: int | None = None  # start-at only: Kafka's truncateFullyAndStartAt(n, ls)
    execute: bool = False
    backup_dir: str | None = None
    config: LogConfig = LogConfig()


@dataclass
class TruncationSection:
    """A formatter section: the load steps the truncation runs on as items, the truncation
    and its outcome as footer."""

    entry: PartitionEntry
    request: TruncateRequest
    plan: TruncationPlan
    outcome: TruncationOutcome | None = None
    stranded: list[StrandedCommit] = dataclasses.field(default_factory=list)
    kind: str = "truncate"
    items_key: str = "recoverFirst"

    @property
    def header(self) -> dict[str, Any]:
        return {"partition": str(self.entry), "partitionDir": self.entry.path,
                "mode": self.request.mode, "offset": self.request.offset}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        return (step_to_dict(s) for s in self.plan.load.steps)

    @property
    def mismatches(self) -> list[str]:
        """Fields where the truncation did not do what was predicted (a bug if any)."""
        if self.outcome is None:
            return []
        done = self.outcome.truncation
        return [f.name for f in dataclasses.fields(done)
                if getattr(self.plan.truncation, f.name, None) != getattr(done, f.name)]

    @property
    def footer(self) -> dict[str, Any]:
        t = self.plan.truncation
        updates = self.outcome.checkpoint_updates if self.outcome else self.plan.checkpoint_updates
        return {"truncation": t.to_dict(), "changes": t.describe() if t.changed else [],
                "checkpointUpdates": plain_data(updates),
                "changed": not self.plan.is_empty,
                "executed": self.outcome is not None,
                "backups": list(self.outcome.backups) if self.outcome else [],
                "notes": list(self.plan.load.notes) + (list(self.outcome.notes)
                                                       if self.outcome else []),
                "mismatches": self.mismatches,
                "strandedCommits": [c.to_dict() for c in self.stranded]}


def truncate(request: TruncateRequest) -> TruncationSection:
    """Plan, and with ``request.execute`` carry out, one truncation."""
    part = os.path.abspath(require_path(request.partition_dir))
    if not os.path.isdir(part) or not is_partition_dir(part):
        raise UsageError(f"{request.partition_dir} is not a partition dir (truncate takes one "
                         f"partition: {{log dir}}/{{topic}}-{{partition}})",
                         path=request.partition_dir)
    live_partition_name(part)
    if request.offset < 0:
        raise UsageError(f"Cannot truncate to a negative offset ({request.offset})", path=part)
    log_dir_path = os.path.dirname(part)
    if not request.execute:
        ensure_unlocked(log_dir_path)
        return _plan(LogDir(log_dir_path), part, request)
    with LogDirLock(log_dir_path) as lock:
        log_dir = LogDir(log_dir_path)
        section = _plan(log_dir, part, request)
        r = request
        if r.mode == "start-at":
            section.outcome = log_dir.truncate_fully_and_start_at(
                section.entry, r.offset, r.config, log_start_offset=r.log_start_offset,
                backup_dir=r.backup_dir, lock=lock)
        else:
            section.outcome = log_dir.truncate(section.entry, r.offset, r.config,
                                               backup_dir=r.backup_dir, lock=lock)
        return section


def _plan(log_dir: LogDir, part: str, r: TruncateRequest) -> TruncationSection:
    entry = log_dir.entry_for_dir(part)
    plan = log_dir.plan_truncation(entry, r.offset, start_at=r.mode == "start-at",
                                   log_start_offset=r.log_start_offset, config=r.config)
    t = plan.truncation
    stranded = stranded_commits([log_dir.path], {entry.key: (t.log_start_offset,
                                                             t.log_end_offset)})
    return TruncationSection(entry, r, plan, stranded=stranded)
