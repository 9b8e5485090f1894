"""Moves between log dirs that a kill interrupted, found across one broker's log dirs.

What an interrupted :mod:`.replica_move` leaves, and what is done with it (``recover``):

- a ``-future`` replica that is a byte prefix of the live replica in another log dir of the
  broker: a copy cut short, deleted (the source is whole);
- a ``-future`` replica identical to the live one: the copy was complete, the move finished;
- a ``-delete`` dir of a partition live in another log dir, whose own dir's checkpoints still
  list it (killed after the source was renamed, before its entries were dropped): the
  entries are dropped and the dir deleted, as the rest of the move would have;
- a partition live in two log dirs with identical files (killed after the future replica went
  live, before the source was renamed ``-delete``; Kafka refuses to start so): the source, the
  copy whose dir changed first (the destination's was written after it), is retired.

Anything else is left alone with a note: a future replica with Kafka's own bytes (the broker
resumes that move at start, or ``move --finish-future`` / ``--cancel-future`` settle it), or
two different live copies (Kafka's advice: delete the one of the dir that failed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .log_dir_layout import list_dir
from .checkpoint import OFFSET_CHECKPOINTS, CheckpointUpdate
from .log_dir import LogDir
from .naming import parse_partition_dir_name
from .replica_move import MovePlan, broker_of, plan_future

_CHUNK = 1 << 20


def compare_copy(source_dir: str, copy_dir: str) -> str:
    """``"identical"``, ``"prefix"`` (every file of the copy starts the same file of the
    source, none extra) or ``"different"``."""
    src = {e.name: e for e in list_dir(source_dir)}
    dst = {e.name: e for e in list_dir(copy_dir)}
    if set(dst) - set(src):
        return "different"
    same = set(dst) == set(src)
    for name, entry in dst.items():
        size, full = entry.stat().st_size, src[name].stat().st_size
        if size > full or not _same_bytes(src[name].path, entry.path, size):
            return "different"
        same = same and size == full
    return "identical" if same else "prefix"


def _same_bytes(a: str, b: str, size: int) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        left = size
        while left > 0:
            n = min(_CHUNK, left)
            if fa.read(n) != fb.read(n):
                return False
            left -= n
    return True


@dataclass
class LeftoverMove:
    """``plan`` is None when the leftover is only reported (``note`` says why)."""

    note: str
    plan: MovePlan | None = None


def leftover_moves(log_dirs: list[LogDir]) -> list[LeftoverMove]:
    """The interrupted moves among ``log_dirs`` (grouped by broker: ``meta.properties``'
    cluster.id and node.id; dirs without them are never compared), with what to do."""
    found: list[LeftoverMove] = []
    brokers: dict[tuple[str | None, str | None], list[LogDir]] = {}
    for d in log_dirs:
        if None not in broker_of(d):  # dirs without meta.properties may be any broker's
            brokers.setdefault(broker_of(d), []).append(d)
    for dirs in brokers.values():
        ids = [(d.meta or {}).get("directory.id") for d in dirs]
        if len(dirs) > 1 and len({i for i in ids if i}) < len([i for i in ids if i]):
            found.append(LeftoverMove(f"{', '.join(d.path for d in dirs)}: copies of one log "
                                      f"dir (the same directory.id), not compared"))
            continue
        live: dict[tuple[str, int], list[tuple[LogDir, str]]] = {}
        for d in dirs:
            for e in d.partitions:
                live.setdefault(e.key, []).append((d, e.path))
        for d in dirs:
            for e in list_dir(d.path):
                name = parse_partition_dir_name(e.name)
                key = None if name is None else (name.topic, name.partition)
                if name is not None and name.marker == "future":
                    found.append(_future(d, e.path, live.get(key, [])))
                elif name is not None and name.marker == "delete" and any(
                        o is not d for o, _ in live.get(key, [])) and _entries(d, *key):
                    found.append(_retired(d, e.path, *key))
        for (topic, partition), copies in live.items():
            if len(copies) == 2:
                found.append(_duplicate(topic, partition, copies))
            elif len(copies) > 2:
                found.append(LeftoverMove(f"{topic}-{partition} is live in {len(copies)} log "
                                          f"dirs of one broker: left alone"))
    return found


def _future(target: LogDir, future: str, current: list[tuple[LogDir, str]]) -> LeftoverMove:
    name = parse_partition_dir_name(os.path.basename(future))
    assert name is not None
    others = [(d, p) for d, p in current if d is not target]
    if len(others) != 1:
        return LeftoverMove(f"{future}: a future replica whose current replica is not in "
                            f"exactly one other log dir given: left alone")
    source, path = others[0]
    how = compare_copy(path, future)
    if how == "different":
        return LeftoverMove(f"{future}: a future replica Kafka was writing (not a copy of "
                            f"{path}): left for the broker, which resumes the move, or for "
                            f"`pylogctl move --finish-future/--cancel-future`")
    plan = plan_future(source, target, name.topic, name.partition, finish=how == "identical",
                       byte_copy=True)
    what = "finished" if how == "identical" else "cancelled (the copy was cut short)"
    return LeftoverMove(f"{future}: an interrupted move from {path}, {what}", plan)


def _entries(log_dir: LogDir, topic: str, partition: int) -> tuple[CheckpointUpdate, ...]:
    """Removals of every checkpoint entry of ``topic-partition`` in ``log_dir``."""
    return tuple(CheckpointUpdate(n, topic, partition, v, None) for n in OFFSET_CHECKPOINTS
                 if (v := log_dir.checkpoints[n].get((topic, partition))) is not None)


def _retired(log_dir: LogDir, doomed: str, topic: str, partition: int) -> LeftoverMove:
    plan = MovePlan("retire-source", topic, partition, log_dir.path, log_dir.path, doomed, None)
    plan.source_updates = _entries(log_dir, topic, partition)
    return LeftoverMove(f"{doomed}: the source of a finished move, its checkpoint entries "
                        f"dropped and the dir deleted", plan)


def _duplicate(topic: str, partition: int, copies: list[tuple[LogDir, str]]) -> LeftoverMove:
    (d1, p1), (d2, p2) = copies
    if compare_copy(p1, p2) != "identical":
        return LeftoverMove(f"{topic}-{partition} is live in {p1} and {p2} with different "
                            f"files: Kafka refuses to start; keep one (`pylogctl replicas` "
                            f"compares them) and delete the other")
    # the copy's dir was filled after the source last changed
    if os.stat(p1).st_mtime_ns > os.stat(p2).st_mtime_ns:
        (d1, p1), (d2, p2) = (d2, p2), (d1, p1)
    plan = MovePlan("retire-source", topic, partition, d1.path, d2.path, p1, None)
    plan.source_updates = _entries(d1, topic, partition)
    return LeftoverMove(f"{topic}-{partition} is live in {p1} and {p2} with identical files "
                        f"(a move killed before its source was renamed): {p1} retired", plan)
