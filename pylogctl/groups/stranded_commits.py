"""Committed offsets that fall outside their partition's log: before or after a change.

When ``truncate`` lowers a log end or ``retention`` raises a log start, a group's committed
offset for that partition can end up outside ``[log start, log end]``. A consumer resuming there
gets ``OFFSET_OUT_OF_RANGE`` and its ``auto.offset.reset`` decides: ``earliest`` re-reads,
``latest`` skips, ``none`` fails. Operators want that list before they run the change, and
``consumer-groups --describe`` marks such rows (a negative lag is one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Mapping

from .offsets_topic import OffsetsTopic
from .replicas import LogDirs


@dataclass(frozen=True)
class StrandedCommit:
    """A group's committed offset outside ``[log_start, log_end]`` of its partition."""

    group: str
    topic: str
    partition: int
    offset: int
    log_start: int
    log_end: int

    @property
    def side(self) -> str:
        return "below the log start" if self.offset < self.log_start else "above the log end"

    def describe(self) -> str:
        return (f"group {self.group}: {self.topic}-{self.partition} committed at {self.offset}, "
                f"{self.side} ({self.log_start}..{self.log_end})")

    def to_dict(self) -> dict:
        return {"group": self.group, "topic": self.topic, "partition": self.partition,
                "offset": self.offset, "logStartOffset": self.log_start,
                "logEndOffset": self.log_end}


def outside(offset: int, log_start: int, log_end: int) -> bool:
    """Whether a committed offset lies outside the log (the log end itself is in range)."""
    return offset < log_start or offset > log_end


def stranded_commits(log_dirs: Iterable[str | os.PathLike[str]],
                     ranges: Mapping[tuple[str, int], tuple[int, int]]) -> list[StrandedCommit]:
    """The commits of every group in the ``__consumer_offsets`` of ``log_dirs`` that fall
    outside ``ranges`` (``(topic, partition) -> (log start, log end)``), by group then
    partition. No offsets topic in those dirs: an empty list."""
    if not ranges:
        return []
    topic = OffsetsTopic(LogDirs(list(log_dirs)))
    if topic.partition_count == 0:
        return []
    found = []
    for group in topic.load(None).groups.values():
        for tp, commit in group.offsets.items():
            bounds = ranges.get((tp.topic, tp.partition))
            if bounds is not None and outside(commit.offset, *bounds):
                found.append(StrandedCommit(group.group_id, tp.topic, tp.partition,
                                            commit.offset, *bounds))
    return sorted(found, key=lambda c: (c.group, c.topic, c.partition))
