"""Kafka's log retention (``UnifiedLog.deleteOldSegments``): which old segments go, and why.

Three passes run in Kafka's order (since KAFKA-12177 the log start offset first: it is the
cheapest, and it can unblock the others), each deleting a prefix of the segments:

1. log start offset: a segment whose successor starts at or below the log start offset (a
   DeleteRecords request raised it past the whole segment);
2. ``retention.bytes``, when it is >= 0 and the log is at least that big: with
   ``diff = size - retention.bytes``, segments go oldest first while ``diff - segment size >= 0``,
   each subtracting its size, so the log never drops below the limit and may stay up to a
   segment above it;
3. ``retention.ms``, when it is >= 0: segments go while ``now - largest timestamp >
   retention.ms``, the largest timestamp being the segment's largest record timestamp or,
   when no record has one, the ``.log`` file's mtime. A segment holding a timestamp in the
   future never qualifies, and so holds back every later one: newer Kafka (KAFKA-18929) warns
   about it and still keeps it (KAFKA-20609's mtime anchor is for tiered storage only); the
   plan says so too.

Common to all passes (``deletableSegments``): walk oldest first and stop at the first segment
that does not qualify; never take a segment holding offsets at or above the high watermark (its
successor's base offset, or the log end for the last one, must be <= the high watermark), nor
an empty last segment. When every segment goes, the log first rolls a new empty segment at the
log end, so one always remains. The log start offset becomes the first kept segment's base.
A log whose ``cleanup.policy`` lacks ``delete`` only gets the first pass.

The rules are pure functions over :class:`LogState`, so the read-only prediction
(:mod:`.retention_plan`) and the deletion (:func:`delete_old_segments`, through
:meth:`~pylogctl.storage.log.Log.delete_oldest_segments`) run the same code.
"""

from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass
from typing import Callable

from .checkpoint import EpochEntry
from .leader_epoch_cache import LeaderEpochFileCache
from .log import Log
from .log_config import LogConfig
from .segment import LogSegment

LOG_START_RULE = "log-start-offset"
SIZE_RULE = "retention.bytes"
TIME_RULE = "retention.ms"


@dataclass(frozen=True)
class SegmentInfo:
    """What retention looks at in a segment."""

    base_offset: int
    size: int
    max_timestamp: int  # the largest record timestamp, -1 when no record has one
    last_modified: int  # the .log's mtime, ms

    @property
    def largest_timestamp(self) -> int:
        """Kafka's ``LogSegment.largestTimestamp``: the max timestamp, or else the mtime."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.last_modified


@dataclass(frozen=True)
class LogState:
    segments: tuple[SegmentInfo, ...]
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    recovery_point: int
    snapshots: tuple[int, ...] = ()  # producer snapshot offsets
    leader_epochs: tuple[EpochEntry, ...] = ()

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)


@dataclass(frozen=True)
class DeletedSegment:
    base_offset: int
    size: int
    rule: str
    reason: str


@dataclass(frozen=True)
class RetentionPass:
    """One pass: what it deleted, or why it did not run, and the segment it stopped at."""

    rule: str
    limit: str
    deleted: tuple[DeletedSegment, ...] = ()
    skipped: str | None = None
    stopped_at: int | None = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class RetentionResult:
    """Every pass, and the log before and after them (what the plan predicts and what the
    deletion reports, compared field by field)."""

    now_ms: int
    passes: tuple[RetentionPass, ...]
    segments_before: tuple[int, ...]
    size_before: int
    log_start_offset_before: int
    segments: tuple[int, ...]
    created_segment: int | None  # the empty segment rolled when every segment went
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    recovery_point: int
    snapshots_deleted: tuple[int, ...]  # producer snapshots: the deleted segments' and the
    # ones at or below the new log start offset (which the next load would delete)
    leader_epochs_before: tuple[EpochEntry, ...]
    leader_epochs: tuple[EpochEntry, ...]  # truncated from the start (and from the log end)
    notes: tuple[str, ...] = ()

    @property
    def deleted(self) -> tuple[DeletedSegment, ...]:
        return tuple(d for p in self.passes for d in p.deleted)

    @property
    def deleted_segments(self) -> tuple[int, ...]:
        return tuple(d.base_offset for d in self.deleted)

    @property
    def bytes_freed(self) -> int:
        return sum(d.size for d in self.deleted)

    @property
    def changed(self) -> bool:
        return bool(self.passes and self.deleted)


def rules_for(config: LogConfig) -> tuple[str, ...]:
    """The passes Kafka runs for a log with this config, in order."""
    return (LOG_START_RULE, SIZE_RULE, TIME_RULE) if config.delete else (LOG_START_RULE,)


def run_pass(state: LogState, rule: str, config: LogConfig, now_ms: int) -> RetentionPass:
    """The segments one pass deletes from ``state`` (a prefix), with the reason for each."""
    if rule == LOG_START_RULE:
        limit = f"log start offset {state.log_start_offset}"
        return _deletable(state, rule, limit, _log_start_predicate(state.log_start_offset))
    if rule == SIZE_RULE:
        limit_bytes = config.retention_bytes
        limit = f"retention.bytes={limit_bytes}"
        if limit_bytes < 0:
            return RetentionPass(rule, limit, skipped="no size limit")
        if state.size < limit_bytes:
            return RetentionPass(rule, limit, skipped=f"the log's {state.size} bytes are below "
                                                      f"the limit")
        return _deletable(state, rule, limit, _size_predicate(state.size, limit_bytes))
    limit = f"retention.ms={config.retention_ms}"
    if config.retention_ms < 0:
        return RetentionPass(rule, limit, skipped="no time limit")
    return _deletable(state, rule, limit, _time_predicate(config.retention_ms, now_ms))


def simulate(state: LogState, config: LogConfig, now_ms: int,
             rules: tuple[str, ...] | None = None) -> RetentionResult:
    """Kafka's passes over ``state`` (``rules``, else all those of ``config``), each seeing
    what the previous one left."""
    before = state
    passes = []
    created = None
    for rule in rules_for(config) if rules is None else rules:
        p = run_pass(state, rule, config, now_ms)
        passes.append(p)
        if p.deleted:
            if len(p.deleted) == len(state.segments):  # roll first: one segment must remain
                created = state.log_end_offset
                state = dataclasses.replace(state, segments=state.segments + (
                    SegmentInfo(created, 0, -1, now_ms),))
            kept = state.segments[len(p.deleted):]
            start = max(state.log_start_offset, kept[0].base_offset)
            state = dataclasses.replace(
                state, segments=kept, log_start_offset=start,
                recovery_point=max(state.recovery_point, start),
                snapshots=tuple(o for o in state.snapshots
                                if start < o <= state.log_end_offset),
                leader_epochs=_epochs_after(state.leader_epochs, start, state.log_end_offset))
    return result(before, passes, state, created, now_ms)


def result(before: LogState, passes: list[RetentionPass], after: LogState,
           created: int | None, now_ms: int) -> RetentionResult:
    notes = tuple(f"segment {p.stopped_at} {p.stop_reason}" for p in passes
                  if p.stop_reason and "in the future" in p.stop_reason)
    return RetentionResult(now_ms, tuple(passes), tuple(s.base_offset for s in before.segments),
                           before.size, before.log_start_offset,
                           tuple(s.base_offset for s in after.segments), created,
                           after.log_start_offset, after.log_end_offset, after.high_watermark,
                           after.recovery_point,
                           tuple(sorted(set(before.snapshots) - set(after.snapshots))),
                           before.leader_epochs, after.leader_epochs, notes)


def _epochs_after(epochs: tuple[EpochEntry, ...], log_start: int, log_end: int
                  ) -> tuple[EpochEntry, ...]:
    """The epochs left once the log start moves up (none when it reaches the log end, see
    ``Log.maybe_increment_log_start_offset``): an in-memory cache (no file, not persisted)."""
    if log_start >= log_end:
        return ()
    cache = LeaderEpochFileCache("", persist=False)
    cache.assign_all(epochs)
    cache.truncate_from_start(log_start)
    return tuple(cache.epoch_entries())


# -- on a loaded log ------------------------------------------------------------------------------
def segment_info(segment: LogSegment) -> SegmentInfo:
    return SegmentInfo(segment.base_offset, segment.size, segment.max_timestamp_so_far,
                       segment.last_modified)


def log_state(log: Log) -> LogState:
    return LogState(tuple(segment_info(s) for s in log.segments), log.log_start_offset,
                    log.log_end_offset, log.high_watermark, log.recovery_point,
                    tuple(log.producer_state.snapshot_offsets()),
                    tuple(log.leader_epoch_cache.epoch_entries()))


def delete_old_segments(log: Log, now_ms: int,
                        before_delete: Callable[[], None] | None = None,
                        rules: tuple[str, ...] | None = None) -> RetentionResult:
    """Run the passes on ``log`` (``rules``, else all those of its config), deleting as each
    pass decides (``Log.deleteOldSegments``). ``before_delete`` runs once the log start offset
    has moved and before any file goes (the caller writes the log start offset checkpoint
    there)."""
    before = state = log_state(log)
    passes = []
    created = None
    for rule in rules_for(log.config) if rules is None else rules:
        p = run_pass(state, rule, log.config, now_ms)
        passes.append(p)
        if p.deleted:
            rolled = log.delete_oldest_segments(len(p.deleted), f"{p.limit} breached",
                                                before_delete)
            created = rolled if rolled is not None else created
            state = log_state(log)
    return result(before, passes, state, created, now_ms)


# -- the predicates -------------------------------------------------------------------------------
Predicate = Callable[[SegmentInfo, "SegmentInfo | None"], "tuple[bool, str]"]


def _deletable(state: LogState, rule: str, limit: str, predicate: Predicate) -> RetentionPass:
    """Kafka's ``deletableSegments``: the prefix of segments the predicate accepts, below the
    high watermark, never an empty last segment."""
    deleted: list[DeletedSegment] = []
    segments = state.segments
    for i, segment in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        upper = nxt.base_offset if nxt is not None else state.log_end_offset
        if state.high_watermark < upper:
            stop = (f"is kept: it holds offsets up to {upper - 1}, not below the high watermark "
                    f"{state.high_watermark}")
            return RetentionPass(rule, limit, tuple(deleted), None, segment.base_offset, stop)
        if nxt is None and segment.size == 0:  # Kafka asks the predicate first: same outcome
            ok, reason = False, "is kept: it is the empty active segment"
        else:
            ok, reason = predicate(segment, nxt)
        if not ok:
            return RetentionPass(rule, limit, tuple(deleted), None, segment.base_offset, reason)
        deleted.append(DeletedSegment(segment.base_offset, segment.size, rule, reason))
    return RetentionPass(rule, limit, tuple(deleted))


def _log_start_predicate(log_start: int) -> Predicate:
    def predicate(segment: SegmentInfo, nxt: SegmentInfo | None) -> tuple[bool, str]:
        if nxt is not None and nxt.base_offset <= log_start:
            return True, (f"every offset in it is below the log start offset {log_start} (the "
                          f"next segment starts at {nxt.base_offset})")
        return False, f"is kept: it holds the log start offset {log_start} or later offsets"
    return predicate


def _size_predicate(size: int, limit: int) -> Predicate:
    diff = size - limit

    def predicate(segment: SegmentInfo, nxt: SegmentInfo | None) -> tuple[bool, str]:
        nonlocal diff
        if diff - segment.size >= 0:
            diff -= segment.size
            return True, (f"the log ({size} bytes) is over retention.bytes {limit} by "
                          f"{diff + segment.size} bytes; without this segment by {diff}")
        return False, (f"is kept: deleting its {segment.size} bytes would take the log "
                       f"{segment.size - diff} bytes below retention.bytes {limit}")
    return predicate


def _time_predicate(retention_ms: int, now_ms: int) -> Predicate:
    def predicate(segment: SegmentInfo, nxt: SegmentInfo | None) -> tuple[bool, str]:
        ts = segment.largest_timestamp
        what = ("its largest timestamp" if segment.max_timestamp >= 0
                else "it has no record timestamp; its .log was last modified at")
        if now_ms < ts:
            return False, (f"is kept: {what} {_iso(ts)} ({ts}) is in the future (now is "
                           f"{_iso(now_ms)}): Kafka never deletes it by time, and it holds back "
                           f"every later segment")
        age = now_ms - ts
        if age > retention_ms:
            return True, (f"{what} {_iso(ts)} is {_duration(age)} old, more than retention.ms "
                          f"{retention_ms} ({_duration(retention_ms)})")
        return False, (f"is kept: {what} {_iso(ts)} is {_duration(age)} old, not more than "
                       f"retention.ms {retention_ms} ({_duration(retention_ms)})")
    return predicate


def _iso(ms: int) -> str:
    try:
        moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _duration(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = f"{hours:02d}:{minutes:02d}:{seconds:02d}" + (f".{millis:03d}" if millis else "")
    return f"{days}d {text}" if days else text
