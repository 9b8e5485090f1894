"""Which segments the load recovers, and what recovering them changes (phases 5 to 7: Kafka's
``loadSegmentFiles``, ``recoverLog`` and ``deleteSegmentsIfLogStartGreaterThanLogEnd``).

Phases 5 and 6 only decide which segments Kafka would recover and why, recovering each once
read-only; the recovery steps are planned last (:func:`recovery_steps`), for the segments still
there, by comparing what recovery would write with the files as they are, so a recovery that
rewrites the same bytes is only verified. Rebuilding a ``.txnindex`` needs the producer state
below its segment, which :mod:`pylogctl.storage.producer_recovery` computes in memory: a segment
with transaction markers is recovered read-only again with it.
"""

from __future__ import annotations

import os

from .plan import DeleteSnapshot, RecoverSegment
from .planner import LoadPlanner, SegmentRecovery
from .swaps import retry_on_offset_overflow
from ..log_config import LONG_MAX
from ..log_segments import bases_in_range
from ..naming import (INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
                     offset_from_name, segment_name)
from ..producer_recovery import producer_state_before
from .recovery_dry_run import TransactionReplay, recover_read_only
from ..segment_check import check_indexes, read_next_offset

INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)


# -- phase 5: load segment files ---------------------------------------------------------------
def load_segment_files(p: LoadPlanner) -> None:
    """Load by name; a segment that overflows while recovered is split and loading starts
    over (Kafka's ``retryOnOffsetOverflow``)."""
    def attempt() -> None:
        p.segments.clear()
        _load_segment_files(p)
    retry_on_offset_overflow(p, attempt)


def _load_segment_files(p: LoadPlanner) -> None:
    for name in p.view.names():
        if name.endswith(INDEX_SUFFIXES):
            offset = offset_from_name(name)
            if offset is not None and segment_name(offset, LOG_SUFFIX) not in p.view:
                p.delete_file(name, "an orphaned index file, with no corresponding log file")
        elif name.endswith(LOG_SUFFIX):
            base = offset_from_name(name)
            if base is None:
                p.note(f"{name} is not named by an offset: ignored")
                continue
            p.segments[base] = p.view.size(name)
            problem = check_indexes(base, p.view.size(name), p.locate(base))
            if problem is not None:
                who = "Kafka" if problem.kafka else "pylogctl"
                p.recover(base, f"{who} finds {segment_name(base, problem.suffix)} unusable: "
                          f"{problem.message}", index_problem=True)


# -- phase 6: recover unflushed segments -------------------------------------------------------
def recover_log(p: LoadPlanner) -> None:
    """Recover from the recovery point on; a segment that overflows is split and recovery
    starts over on the new layout (segments recovered before cut nothing, so recovering
    them again, as Kafka does, changes nothing)."""
    if p.inputs.had_clean_shutdown:
        return
    retry_on_offset_overflow(p, lambda: _recover_log(p))


def _recover_log(p: LoadPlanner) -> None:
    bases = sorted(p.segments)
    recovery_point = p.inputs.recovery_point_checkpoint
    unflushed = bases_in_range(bases, recovery_point, LONG_MAX)
    for i, base in enumerate(unflushed):
        already = base in p.recoveries
        recovery = p.recover(base, f"at or above the recovery point {recovery_point} after an "
                             f"unclean shutdown")
        if already:
            continue  # recovered while loading: Kafka's second pass cuts nothing
        scan = recovery.scan
        if scan.truncated_bytes > 0:
            later = unflushed[i + 1:]
            message = (f"invalid offset during recovery ({scan.invalid_offset}): Kafka deletes "
                       f"the segment's data" if scan.invalid_offset else
                       f"corruption found in segment {base}, truncating to offset "
                       f"{scan.next_offset}")
            for later_base in reversed(later):
                p.delete_segment(later_base, f"{message}: every later segment is deleted (done "
                                 f"before the cut, so that a crash in between cannot hide the "
                                 f"reason)")
            return


# -- phase 7 -------------------------------------------------------------------------------------
def log_end_offset(p: LoadPlanner) -> int:
    base = max(p.segments)
    recovery = p.recoveries.get(base)
    if recovery is not None:
        scan = recovery.scan
        return base if scan.invalid_offset else scan.next_offset
    log = p.view.path(segment_name(base, LOG_SUFFIX))
    next_offset, _, problem = read_next_offset(log, base)
    if problem:
        p.notes.append(f"the active segment {base} ends with bytes that are not a batch "
                       f"({problem}); Kafka does not re-validate it (clean shutdown, or below "
                       f"the recovery point), so they stay; plan as after an unclean shutdown "
                       f"with a recovery point <= {base} to cut them")
    return next_offset


def delete_segments_if_log_start_above_log_end(p: LoadPlanner) -> int | None:
    """The log end offset, or None when every segment goes (Kafka's
    ``deleteSegmentsIfLogStartGreaterThanLogEnd``)."""
    if not p.segments:
        return None
    log_end = log_end_offset(p)
    start = p.inputs.log_start_offset_checkpoint
    if log_end >= start:
        return log_end
    reason = (f"the log end offset {log_end} is below the checkpointed log start offset "
              f"{start} (this could happen if segment files were deleted from the file system)")
    p.epochs.clear()  # (with whatever recovery would have assigned)
    if p.epochs_before:
        p.write_epochs(f"{reason}: the leader-epoch cache is cleared (before the segments go, "
                       f"so that a crash in between cannot leave a stale entry)",
                       removed_from_end=p.epochs_before)
    for offset, path in p.snapshots().items():
        p.steps.append(DeleteSnapshot(offset, path, f"{reason}: producer state starts over at "
                                      f"{start}"))
        p.view.delete(os.path.basename(path))
    for base in sorted(p.segments, reverse=True):
        p.delete_segment(base, reason)
    return None


# -- the recovery steps --------------------------------------------------------------------------
def recovery_steps(p: LoadPlanner) -> tuple[list[RecoverSegment], list[RecoverSegment]]:
    """``(changing, verifying)`` recoveries of the segments that remain."""
    changing, verifying = [], []
    bases = sorted(p.segments)
    for base, recovery in sorted(p.recoveries.items()):
        step = _recovery_step(p, base, recovery, bases)
        (changing if step.changes else verifying).append(step)
    return changing, verifying


def _recovery_step(p: LoadPlanner, base: int, recovery: SegmentRecovery,
                   bases: list[int]) -> RecoverSegment:
    scan = recovery.scan
    changes = []
    if scan.invalid_offset:
        changes.append("empty the segment")
    elif scan.truncated_bytes:
        changes.append(f"cut {scan.truncated_bytes} bytes")
    aborted: tuple = ()
    if scan.txn_markers and not scan.invalid_offset:  # recovered again, replaying producers
        segments = [(b, p.log_path(b)) for b in bases if b < base]
        manager = producer_state_before(p.dir, segments, p.snapshots(), base,
                                        p.inputs.log_start_offset_checkpoint, p.now_ms)
        aborted = recover_read_only(p.log_path(base), base, p.config.index_interval_bytes,
                                    p.config.segment_index_bytes, p.recovery_scratch,
                                    TransactionReplay(manager)).aborted_txns
    expected = {INDEX_SUFFIX: scan.offset_index, TIME_INDEX_SUFFIX: scan.time_index,
                TXN_INDEX_SUFFIX: b"".join(t.to_bytes() for t in aborted)}
    if scan.invalid_offset:
        expected = {suffix: b"" for suffix in expected}
    for suffix, data in expected.items():
        current = p.view.path(segment_name(base, suffix))
        if suffix == TXN_INDEX_SUFFIX and current is None and not data:
            continue
        if current is None or _read(current) != data:
            changes.append(f"the {suffix} ({'missing' if current is None else 'differs'})")
    if recovery.index_problem and len(changes) == 0:
        changes.append("the indexes")
    tail = scan.invalid_tail
    reason = "; ".join(recovery.triggers)
    if tail is not None and not scan.invalid_offset:
        reason += f"; valid data ends at byte {tail.position}: {tail.kind} ({tail.message})"
    return RecoverSegment(
        base, p.path(segment_name(base, LOG_SUFFIX)), scan.size, scan.valid_bytes,
        base if scan.invalid_offset else scan.next_offset, tuple(recovery.triggers),
        scan.invalid_tail, scan.invalid_offset, tuple(changes), scan.txn_markers, aborted,
        reason)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()
