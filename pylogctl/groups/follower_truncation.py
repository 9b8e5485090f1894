"""Where a follower truncates its log when it starts following a leader (KIP-101, KIP-279).

Kafka 4's follower (``AbstractFetcherThread``, truncation on fetch) starts fetching at its log
end offset with its latest leader epoch, or, with no epoch at all, truncates to its high
watermark first (``ReplicaManager.initialFetchOffset``, ``truncateToHighWatermark``). The
leader checks each fetch (``Partition.readRecords``):

- its ``endOffsetFor(epoch)`` (:meth:`~pylogctl.storage.leader_epoch_cache.LeaderEpochFileCache.
  end_offset_for`: the largest epoch <= the follower's, and where the next one starts) undefined,
  or a fetch offset below the leader's log start: OFFSET_OUT_OF_RANGE, and the follower truncates
  to the leader's log end when that is below its own, or starts over empty at the leader's log
  start when its whole log is below it (``fetchOffsetAndTruncate``);
- an epoch below the follower's, or an end offset below the fetch offset: a diverging epoch. The
  follower looks the epoch up in its own cache (``getOffsetTruncationState``): an epoch it does
  not have means an intermediate truncation to the end of its largest epoch below it and
  another round; otherwise it truncates to the smaller of the two end offsets and is done.

The leader is modelled as a newly elected one: the controller's new epoch (above every epoch
the replicas have seen) starts at its log end (``Partition.makeLeader`` assigns it). The model
needs the follower's log only through ``truncate``, which says what its log looks like after
Kafka's ``truncateTo`` or ``truncateFullyAndStartAt`` (batches go whole, so the log may end
below the target).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from ..storage.checkpoint import EpochEntry
from ..storage.leader_epoch_cache import (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET,
                                          LeaderEpochFileCache)
from ..storage.truncation_plan import Mode

StepKind = Literal["high-watermark", "diverging-epoch", "intermediate", "out-of-range"]


@dataclass(frozen=True)
class ReplicaLog:
    """A replica's loaded log as replication sees it."""

    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    epochs: tuple[EpochEntry, ...]

    @property
    def latest_epoch(self) -> int | None:
        return self.epochs[-1].epoch if self.epochs else None

    def cache(self) -> LeaderEpochFileCache:
        return LeaderEpochFileCache.in_memory(self.epochs)


@dataclass(frozen=True)
class TruncationStep:
    """One truncation the follower runs: ``truncateTo(offset)`` or, for ``start-at``,
    ``truncateFullyAndStartAt(offset)``; ``log_end_offset`` is where its log then ends."""

    kind: StepKind
    mode: Mode
    offset: int
    log_end_offset: int
    reason: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "mode": self.mode, "offset": self.offset,
                "logEndOffset": self.log_end_offset, "reason": self.reason}


@dataclass(frozen=True)
class FollowerTruncation:
    """The truncations a follower runs before it appends the leader's records again."""

    log_end_offset_before: int
    steps: tuple[TruncationStep, ...]
    log: ReplicaLog  # the follower's log after them

    @property
    def changed(self) -> bool:
        return bool(self.steps)  # a step is kept only when it changed the log

    @property
    def mode(self) -> Mode:
        """One truncation that leaves the log as all the steps do (truncations compose)."""
        return "start-at" if any(s.mode == "start-at" for s in self.steps) else "to-offset"

    @property
    def offset(self) -> int:
        """The target of that one truncation (``mode``)."""
        if self.mode == "start-at":
            return next(s.offset for s in reversed(self.steps) if s.mode == "start-at")
        return min((s.offset for s in self.steps), default=self.log_end_offset_before)

    @property
    def divergence_point(self) -> int:
        """The first offset the follower gives up: its log end after the truncation."""
        return self.log.log_end_offset


Truncate = Callable[[int, Mode], ReplicaLog]


def elected_leader_epoch(latest_epochs: list[int | None]) -> int:
    """The epoch a new leader gets: above every epoch any replica has seen."""
    return max((e for e in latest_epochs if e is not None), default=-1) + 1


def follower_truncation(leader: ReplicaLog, follower: ReplicaLog, truncate: Truncate,
                        leader_epoch: int) -> FollowerTruncation:
    """What ``follower`` truncates when it follows ``leader`` (elected at ``leader_epoch``).
    ``truncate(offset, mode)`` is the follower's original log after that one truncation
    (truncations compose, so each step is taken from the original); a ``truncateTo`` at or
    past the log end still drops the epochs starting there, as Kafka's does."""
    leader_cache = leader.cache()
    if leader_epoch > (leader.latest_epoch if leader.latest_epoch is not None else -1):
        leader_cache.assign(leader_epoch, leader.log_end_offset)
    steps: list[TruncationStep] = []
    state = follower

    def step(kind: StepKind, offset: int, reason: str, mode: Mode = "to-offset") -> bool:
        """Run one truncation; False when it changes nothing."""
        nonlocal state
        after = truncate(offset, mode)
        if mode == "to-offset" and after == state:
            return False
        state = after
        steps.append(TruncationStep(kind, mode, offset, state.log_end_offset, reason))
        return True

    def in_range(fetch: int, why: str) -> None:
        """The leader reads at ``fetch``, or answers OFFSET_OUT_OF_RANGE
        (``fetchOffsetAndTruncate``)."""
        if leader.log_start_offset <= fetch <= leader.log_end_offset and not why:
            return
        why = why or f"fetch offset {fetch} out of range"
        if leader.log_end_offset < state.log_end_offset:
            step("out-of-range", leader.log_end_offset,
                 f"{why}: the leader's log ends at {leader.log_end_offset}")
        elif leader.log_start_offset > state.log_end_offset:
            step("out-of-range", leader.log_start_offset,
                 f"{why}: the leader's log starts at {leader.log_start_offset}, after this "
                 f"log's end", "start-at")

    if state.latest_epoch is None:
        step("high-watermark", state.high_watermark,
             "no leader epoch: the follower truncates to its high watermark")
        in_range(state.high_watermark, "")
        return FollowerTruncation(follower.log_end_offset, tuple(steps), state)

    fetch = state.log_end_offset
    for _ in range(2 * len(follower.epochs) + 2):  # each round drops an epoch or ends
        epoch = state.latest_epoch
        if epoch is None:  # every epoch gone: the fetch carries none
            in_range(fetch, "")
            break
        found, end = leader_cache.end_offset_for(epoch, leader.log_end_offset)
        if end == UNDEFINED_EPOCH_OFFSET or found == UNDEFINED_EPOCH:
            in_range(fetch, f"the leader has no end offset for epoch {epoch}")
            break
        if fetch < leader.log_start_offset:
            in_range(fetch, f"fetch offset {fetch} below the leader's log start")
            break
        if found >= epoch and end >= fetch:
            break  # in step: the follower appends from ``fetch``
        target, done, reason = _diverging(state, found, end)
        changed = step("intermediate" if not done else "diverging-epoch", target, reason)
        fetch = target
        if done or not changed:
            break
    return FollowerTruncation(follower.log_end_offset, tuple(steps), state)


def _diverging(state: ReplicaLog, epoch: int, end: int) -> tuple[int, bool, str]:
    """``getOffsetTruncationState`` for the leader's answer ``(epoch, end)``: the offset to
    truncate to, whether truncation is complete, and why."""
    answer = f"the leader's epoch {epoch} ends at {end}"
    own_epoch, own_end = state.cache().end_offset_for(epoch, state.log_end_offset)
    if own_end == UNDEFINED_EPOCH_OFFSET:
        return (min(end, state.log_end_offset), True,
                f"{answer}, below every epoch of this log")
    if own_epoch != epoch:
        return (min(own_end, state.log_end_offset), False,
                f"{answer}; this log lacks epoch {epoch}: to the end of its epoch {own_epoch}, "
                f"then ask again")
    return (min(own_end, end, state.log_end_offset), True,
            f"{answer}; in this log it ends at {own_end}")
