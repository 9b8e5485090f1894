"""``pylogctl move``: replicas moved between two log dirs of one broker (JBOD), offline, or a
future replica a crashed reassignment left finished or cancelled.

Every partition named is planned before anything changes (so a bad name, a partition already
in the target or too little room stops the run with nothing done), under both dirs' ``.lock``
when executing, which is refused while a broker holds either; then each move is carried out by
:mod:`pylogctl.storage.replica_move`, crash-safe on its own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..errors import UsageError
from ..storage.files import require_path
from ..storage.loader.plan import plain_data
from ..storage.lock import LogDirLock, ensure_unlocked
from ..storage.log_dir import LogDir
from ..storage.naming import parse_partition_dir_name
from ..storage.replica_move import (MovePlan, MoveRefusedError, MoveResult, execute, plan_future,
                                    plan_move)

_PARTITION_RE = re.compile(r"^(.+)-(\d{1,10})$")


@dataclass(frozen=True)
class MoveRequest:
    partitions: tuple[str, ...]  # topic-partition or topic names; none: every future (finish)
    source: str
    target: str
    future: str | None = None  # "finish" or "cancel": settle future replicas in target
    execute: bool = False
    backup_dir: str | None = None
    same_disk: bool = False


@dataclass
class MoveSection:
    """A formatter section: one replica, the steps as items, the outcome as footer."""

    plan: MovePlan
    result: MoveResult | None = None
    kind: str = "move"
    items_key: str = "steps"

    @property
    def header(self) -> dict[str, Any]:
        p = self.plan
        return {"partition": f"{p.topic}-{p.partition}", "action": p.action, "from": p.source,
                "to": p.target}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        return ({"step": i, "description": s} for i, s in enumerate(self.plan.steps, 1))

    @property
    def footer(self) -> dict[str, Any]:
        p = self.plan
        return {"bytes": p.size, "files": len(p.files), "sourceLogEnd": p.source_log_end,
                "futureLogEnd": p.future_log_end,
                "checkpointUpdates": plain_data(p.target_updates + p.source_updates),
                "executed": self.result is not None,
                "backups": list(self.result.backups) if self.result else [],
                "notes": p.notes + (self.result.notes if self.result else [])}


def _wanted(log_dir: LogDir, names: tuple[str, ...], *, futures: bool) -> list[tuple[str, int]]:
    """``topic-partition`` names and topic names as partitions of ``log_dir`` (its future
    replicas when ``futures``), in order, once each."""
    if futures:
        present = {(n.topic, n.partition) for n in map(parse_partition_dir_name,
                                                       os.listdir(log_dir.path))
                   if n is not None and n.marker == "future"}
    else:
        present = {e.key for e in log_dir.partitions}
    if not names:
        if not futures:
            raise UsageError("name the partitions to move (topic-partition, or a topic)")
        return sorted(present)
    out: list[tuple[str, int]] = []
    for name in names:
        m = _PARTITION_RE.match(name)
        if m and (m.group(1), int(m.group(2))) in present:
            found = [(m.group(1), int(m.group(2)))]
        else:
            found = sorted(k for k in present if k[0] == name)
        if not found:
            what = "future replica" if futures else "partition"
            raise UsageError(f"No {what} {name} in {log_dir.path}", path=log_dir.path)
        out += [k for k in found if k not in out]
    return out


def _plans(r: MoveRequest, source: LogDir, target: LogDir) -> list[MovePlan]:
    if r.future is not None:
        return [plan_future(source, target, t, p, finish=r.future == "finish")
                for t, p in _wanted(target, r.partitions, futures=True)]
    plans = [plan_move(source, target, t, p, same_disk=r.same_disk)
             for t, p in _wanted(source, r.partitions, futures=False)]
    st = os.statvfs(target.path)
    need, free = sum(p.size for p in plans), st.f_bavail * st.f_frsize
    if need > free:
        raise MoveRefusedError(f"Not enough space in {target.path}: the {len(plans)} partitions "
                               f"need {need} bytes, {free} are free", path=target.path)
    return plans


def move(r: MoveRequest) -> tuple[list[MoveSection], Callable[..., Iterator[MoveSection]]]:
    """The sections planned, and a generator that yields them (carried out when executing;
    ``progress(n)`` is told of each ``n`` bytes copied)."""
    for d in (r.source, r.target):
        if not os.path.isdir(require_path(d)):
            raise UsageError(f"{d} is a file, not a log dir", path=d)
    if not r.execute:
        ensure_unlocked(r.source)
        ensure_unlocked(r.target)
        sections = [MoveSection(p) for p in _plans(r, LogDir(r.source), LogDir(r.target))]
        return sections, lambda progress=None: iter(sections)
    locks = [LogDirLock(r.source).acquire()]
    try:
        locks.append(LogDirLock(r.target).acquire())
        source, target = LogDir(r.source), LogDir(r.target)
        sections = [MoveSection(p) for p in _plans(r, source, target)]
    except BaseException:
        for lock in locks:
            lock.release()
        raise

    def run(progress: Callable[[int], None] | None = None) -> Iterator[MoveSection]:
        try:
            for section in sections:
                section.result = execute(section.plan, source.refreshed(), target.refreshed(),
                                         backup_dir=r.backup_dir, progress=progress)
                yield section
        finally:
            for lock in locks:
                lock.release()

    return sections, run
