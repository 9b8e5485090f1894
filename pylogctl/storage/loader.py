"""Loading a partition dir the way a broker starts it (Kafka's ``LogLoader.load``), split in two:
:func:`plan_load` decides every step by reading only, :func:`apply_load` carries them out.

The plan follows Kafka's order (``kafka-tools-reference.md`` §4.2):

1. Delete ``*.deleted`` files (not KRaft ``.checkpoint.deleted`` ones) and, unlike Kafka,
   ``*.tmp`` files (atomic writes interrupted before their rename); delete every ``.swap``
   whose base offset is >= the smallest ``.cleaned`` one (an unfinished split, KAFKA-6264),
   then every ``.cleaned`` file.
2. For the remaining ``.swap`` log files, take the range [min base offset, max next offset).
3. Delete every non-swap file whose name's offset lies in that range (segments compacted or
   split whose old files were not yet renamed away). pylogctl also deletes a split's source
   that the range misses (named below its first batch: see ``segment_split.split_source``).
4. Rename every ``.swap`` file to its final name.
5. Load segments by name: delete index files without a ``.log`` ("Found an orphaned index
   file"); recover at once a segment whose ``.index`` is missing or whose ``.txnindex`` fails
   its sanity check. pylogctl adds a structural check of the offset and time indexes (Kafka
   skips it, relying on step 6 above the recovery point): a missing time index, entries not
   strictly increasing, or positions past the segment also mean a rebuild. A recovery that
   meets an offset beyond base offset + 2^31-1 (KAFKA-6264) splits the segment
   (:class:`SplitSegment`, the producer snapshot at its base going with it unless a new
   segment keeps that base) and loading starts over (``retryOnOffsetOverflow``), as in step 6.
6. Without a clean shutdown, recover every segment from the one holding the recovery point on;
   the first that loses bytes ("Corruption found in segment {base}, truncating to offset
   {next}") or hits an invalid offset (emptied) ends recovery and every later segment is
   deleted. A segment already recovered in step 5 finds nothing to cut here, so, as in Kafka,
   later segments survive a corrupt tail found in step 5.
7. If the log end offset is below the checkpointed log start offset, delete every segment
   ("This could happen if segment files were deleted from the file system").
8. If no segment is left, create an empty one at the checkpointed log start offset.
9. Offsets: log start = max(checkpoint, first base offset); recovery point = the log end after
   a clean shutdown, else min(checkpoint, log end); the high watermark checkpoint clamped into
   [log start, log end] (``UnifiedLog.updateHighWatermark``); the leader-epoch cache gets the
   epochs recovery found, then is truncated at the log end and the checkpointed log start.
10. Producer state: remove stray snapshots, then rebuild to the log end.

A recovery that would rewrite the same bytes (same indexes, nothing to cut) is listed under
``verified`` instead of ``steps``, so a plan made right after :func:`apply_load` is empty.
Segments that step 6 or 7 deletes are not recovered first (Kafka does, to no effect), and
deleted segments take the producer snapshot at their base offset with them, as in Kafka.
Where the steps run in a different order from Kafka's, and why any interruption is repaired by
planning again, is explained in :mod:`pylogctl.storage.load_apply` (which also notes that the
active segment's indexes are left trimmed). What the producer-state steps plan is explained in
:mod:`pylogctl.storage.producer_recovery`.

A split is only found where Kafka finds it, by a recovery: a segment below the recovery point
with an ``.index`` is loaded as it is, overflow and all. The plan goes on as if the split had
happened: its segments are written to scratch files (:mod:`pylogctl.storage.segment_split`),
which the rest of planning reads (recovery, offsets, producer state) and which are removed when
planning ends; the plan itself only names files in the partition dir.
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import Sequence

from ..errors import FileUnreadableError, LogSegmentOffsetOverflowError, PylogctlError, UsageError
from .checkpoint import TEMP_SUFFIX, EpochEntry
from .leader_epoch_cache import LeaderEpochFileCache
from .load_apply import apply_load
from .load_plan import (SEGMENT_FILE_SUFFIXES, CreateSegment, DeleteFile, DeleteSegment,
                        DeleteSnapshot, FileState, LoadInputs, LoadPlan, RebuildProducerState,
                        RecoverSegment, RenameFile, SplitSegment, Step, WriteLeaderEpochs)
from .log_config import LONG_MAX, LogConfig
from .log_segments import bases_in_range
from .naming import (CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX,
                     PRODUCER_SNAPSHOT_SUFFIX, SWAP_FILE_SUFFIX, TIME_INDEX_SUFFIX,
                     TXN_INDEX_SUFFIX, filename_prefix)
from .producer_recovery import (predict_rebuild, producer_state_before, replay_aborted_txns,
                                snapshot_entries)
from .segment_check import RecoveryScan, check_indexes, read_next_offset, scan_for_recovery
from .segment_split import SegmentSplitError, SplitScratch, overflow_text, split_source

__all__ = ["plan_load", "apply_load", "LoadError"]

logger = logging.getLogger(__name__)

INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
KRAFT_SNAPSHOT_DELETED = ".checkpoint.deleted"
DELETE_DIR_SUFFIX = "-delete"
_LONG = re.compile(r"[+-]?\d+")


class LoadError(PylogctlError):
    """The partition dir cannot be loaded the way Kafka would (Kafka would fail too)."""


def _name_offset(name: str) -> int | None:
    """Kafka's ``offsetFromFileName``: the text before the first ``.`` as a long, or None where
    Kafka's parse fails (such files are skipped)."""
    head, dot, _ = name.partition(".")
    if not dot or not _LONG.fullmatch(head) or not -LONG_MAX - 1 <= int(head) <= LONG_MAX:
        return None
    return int(head)


def _segment_name(base: int, suffix: str) -> str:
    return filename_prefix(base) + suffix


class _DirView:
    """The partition dir as it will look after the steps planned so far: visible name -> the
    file that will carry it (a ``.swap`` file until renamed, a split's scratch copy until
    written)."""

    def __init__(self, directory: str, files: dict[str, FileState]) -> None:
        self.dir = directory
        self._source = {name: os.path.join(directory, name) for name in files}
        self._size = {name: st.size for name, st in files.items()}

    def names(self) -> list[str]:
        return sorted(self._source)

    def __contains__(self, name: str) -> bool:
        return name in self._source

    def path(self, name: str) -> str | None:
        return self._source.get(name)

    def size(self, name: str) -> int:
        return self._size[name]

    def delete(self, name: str) -> None:
        self._source.pop(name, None)
        self._size.pop(name, None)

    def rename(self, source: str, target: str) -> None:
        self._source[target] = self._source.pop(source)
        self._size[target] = self._size.pop(source)

    def add(self, name: str, path: str, size: int) -> None:
        self._source[name] = path
        self._size[name] = size


@dataclass
class _Recovery:
    """A segment Kafka recovers: why, and what the read-only scan found."""

    scan: RecoveryScan
    triggers: list[str] = field(default_factory=list)
    index_problem: bool = False


class _Overflow(Exception):
    """A recovery met an offset beyond the segment's range: split it, then load again
    (Kafka's ``retryOnOffsetOverflow``)."""

    def __init__(self, error: LogSegmentOffsetOverflowError, trigger: str) -> None:
        super().__init__(error.message)
        self.error = error
        self.trigger = trigger


class _Planner:
    def __init__(self, directory: str, inputs: LoadInputs, config: LogConfig,
                 now_ms: int) -> None:
        self.dir = directory
        self.inputs = inputs
        self.config = config
        self.now_ms = now_ms
        self.files = _list_files(directory)
        self.view = _DirView(directory, self.files)
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self.segments: dict[int, int] = {}  # base offset -> .log size, once loaded
        self.recoveries: dict[int, _Recovery] = {}
        self.epochs = LeaderEpochFileCache.for_partition_dir(directory, persist=False)
        self.epochs_before = tuple(self.epochs.epoch_entries())
        self.epochs_assigned: list[EpochEntry] = []  # by the recoveries, in Kafka's order
        self.scratch = SplitScratch(config)

    # -- helpers ---------------------------------------------------------------------------
    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def delete_file(self, name: str, reason: str) -> None:
        self.steps.append(DeleteFile(self.path(name), self.view.size(name), reason))
        self.view.delete(name)

    def log_path(self, base: int) -> str:
        path = self.view.path(_segment_name(base, LOG_SUFFIX))
        assert path is not None
        return path

    def locate(self, base: int):
        return lambda suffix: self.view.path(_segment_name(base, suffix))

    def note(self, text: str) -> None:
        if text not in self.notes:  # (loading starts over after a split)
            self.notes.append(text)

    def recover(self, base: int, trigger: str, index_problem: bool = False) -> _Recovery:
        """Kafka's ``recoverSegment``: the epochs the segment's batches start are assigned.
        Raises :class:`_Overflow` for a segment to split."""
        recovery = self.recoveries.get(base)
        if recovery is None:
            try:
                scan = scan_for_recovery(self.log_path(base), base,
                                         self.config.index_interval_bytes,
                                         self.config.segment_index_bytes)
            except LogSegmentOffsetOverflowError as exc:
                raise _Overflow(exc, trigger) from None
            recovery = self.recoveries[base] = _Recovery(scan)
        if trigger not in recovery.triggers:  # (loading starts over after a split)
            recovery.triggers.append(trigger)
        recovery.index_problem |= index_problem
        for epoch, start in recovery.scan.epoch_starts:
            latest = self.epochs.latest_epoch()
            if latest is None or epoch > latest:
                self.epochs.assign(epoch, start)
                self.epochs_assigned.append(EpochEntry(epoch, start))
        return recovery

    def delete_segment(self, base: int, reason: str) -> None:
        suffixes = (*SEGMENT_FILE_SUFFIXES, PRODUCER_SNAPSHOT_SUFFIX)
        names = [_segment_name(base, s) for s in suffixes]
        files = tuple(self.path(n) for n in names if n in self.view)
        for name in names:
            self.view.delete(name)
        self.segments.pop(base, None)
        self.recoveries.pop(base, None)
        self.steps.append(DeleteSegment(base, files, reason))

    def split(self, overflow: _Overflow) -> None:
        """Kafka's ``splitOverflowedSegment``, then ``deleteProducerSnapshotsAsync`` of the old
        segment if no new one takes its base offset: the new segments are written to scratch
        files that stand in for them until apply writes them (see :mod:`segment_split`)."""
        error = overflow.error
        base = error.base_offset
        name = _segment_name(base, LOG_SUFFIX)
        source = self.log_path(base)
        if self.scratch.holds(source):  # each split segment fits its range by construction
            raise AssertionError(f"a segment written by a split overflows: {error.message}")
        try:
            parts, files = self.scratch.split(source)
        except SegmentSplitError as exc:
            raise LoadError(f"Segment {base}: {overflow_text(error)}, and it cannot be split "
                            f"as Kafka splits it: {exc.message}", path=source,
                            position=exc.position) from None
        size = self.view.size(name)
        for suffix in SEGMENT_FILE_SUFFIXES:
            self.view.delete(_segment_name(base, suffix))
        self.segments.pop(base, None)
        self.segments.update((p.base_offset, p.size) for p in parts)  # (replaceSegments)
        for written, (path, written_size) in files.items():
            self.view.add(written, path, written_size)
        self.steps.append(SplitSegment(
            base, self.path(name), size, error.offset, error.position, parts,
            f"{overflow_text(error)}, found while recovering the segment ({overflow.trigger}); "
            f"Kafka splits it, each new segment starting at the first batch the previous one "
            f"cannot index, and loads again (retryOnOffsetOverflow)"))
        snapshot = _segment_name(base, PRODUCER_SNAPSHOT_SUFFIX)
        if snapshot in self.view and all(p.base_offset != base for p in parts):
            self.steps.append(DeleteSnapshot(base, self.path(snapshot), "the split segment's "
                                             "producer snapshot goes with it (Kafka's "
                                             "deleteProducerSnapshotsAsync after a split)"))
            self.view.delete(snapshot)

    # -- phases 1 to 4: temporary files and interrupted swaps --------------------------------
    def remove_temp_files_and_collect_swaps(self) -> list[str]:
        cleaned, swaps = [], []
        for name in self.view.names():
            if name.endswith(DELETED_FILE_SUFFIX) and not name.endswith(KRAFT_SNAPSHOT_DELETED):
                self.delete_file(name, "a stray .deleted file (a deletion the broker did not "
                                 "finish)")
            elif name.endswith(TEMP_SUFFIX):
                # pylogctl's addition: Kafka leaves these (its next write of the file reuses
                # them); the lock is held, so no writer is behind one
                self.delete_file(name, "a stray .tmp file (an atomic write of a checkpoint, "
                                 "snapshot or index interrupted before its rename; the file it "
                                 "would have replaced is intact)")
            elif name.endswith(CLEANED_FILE_SUFFIX):
                cleaned.append(name)
            elif name.endswith(SWAP_FILE_SUFFIX):
                swaps.append(name)
        cleaned_offsets = [o for o in map(_name_offset, cleaned) if o is not None]
        min_cleaned = min(cleaned_offsets, default=LONG_MAX)
        valid = []
        for name in swaps:
            offset = _name_offset(name)
            if offset is not None and offset >= min_cleaned:
                self.delete_file(name, f"an invalid swap file: its offset is at or above the "
                                 f"smallest .cleaned offset {min_cleaned}, so it belongs to an "
                                 f"unfinished split or clean (KAFKA-6264)")
            else:
                valid.append(name)
        for name in cleaned:
            self.delete_file(name, "a stray .cleaned file (a compaction or split the broker did "
                             "not finish; the segments it would replace are intact)")
        return valid

    def complete_swaps(self, swaps: list[str]) -> None:
        low, high = LONG_MAX, -LONG_MAX - 1
        for name in swaps:
            base = _name_offset(name)
            if base is None or not name[:-len(SWAP_FILE_SUFFIX)].endswith(LOG_SUFFIX):
                continue
            next_offset, _, problem = read_next_offset(self.path(name), base)
            if problem:
                self.notes.append(f"{name}: {problem}")
            low, high = min(low, base), max(high, next_offset)
        for name in self.view.names():
            offset = _name_offset(name)
            if (not name.endswith(SWAP_FILE_SUFFIX) and offset is not None
                    and low <= offset < high):
                self.delete_file(name, f"compacted or split into the swap files covering "
                                 f"offsets [{low}, {high}) but not yet deleted")
        if low <= high:
            self.delete_split_source(low, high)
        for name in self.view.names():
            if name.endswith(SWAP_FILE_SUFFIX):
                target = name[:-len(SWAP_FILE_SUFFIX)]
                self.steps.append(RenameFile(self.path(name), self.path(target),
                                             self.view.size(name),
                                             "the swap operation completed before the crash: "
                                             "install its result"))
                self.view.rename(name, target)

    def delete_split_source(self, low: int, high: int) -> None:
        """pylogctl's rule beside Kafka's range (see :func:`segment_split.split_source`)."""
        logs = {_name_offset(n): self.path(n) for n in self.view.names() if n.endswith(LOG_SUFFIX)}
        base = split_source({o: path for o, path in logs.items() if o is not None}, low, high)
        if base is None:
            return
        for name in self.view.names():
            if _name_offset(name) == base and not name.endswith(SWAP_FILE_SUFFIX):
                self.delete_file(name, f"split into the swap files covering offsets [{low}, "
                                 f"{high}), which hold every batch of segment {base}, but not "
                                 f"yet deleted (pylogctl's rule: Kafka's range starts at the "
                                 f"first split segment, above {base})")

    # -- phase 5: load segment files ---------------------------------------------------------
    def load_segment_files(self) -> None:
        """Load by name; a segment that overflows while recovered is split and loading starts
        over (Kafka's ``retryOnOffsetOverflow``)."""
        while True:
            self.segments.clear()
            try:
                return self._load_segment_files()
            except _Overflow as overflow:
                self.split(overflow)

    def _load_segment_files(self) -> None:
        for name in self.view.names():
            if name.endswith(INDEX_SUFFIXES):
                offset = _name_offset(name)
                if offset is not None and _segment_name(offset, LOG_SUFFIX) not in self.view:
                    self.delete_file(name, "an orphaned index file, with no corresponding log "
                                     "file")
            elif name.endswith(LOG_SUFFIX):
                base = _name_offset(name)
                if base is None:
                    self.note(f"{name} is not named by an offset: ignored")
                    continue
                self.segments[base] = self.view.size(name)
                problem = check_indexes(base, self.view.size(name), self.locate(base))
                if problem is not None:
                    who = "Kafka" if problem.kafka else "pylogctl"
                    self.recover(base, f"{who} finds {_segment_name(base, problem.suffix)} "
                                 f"unusable: {problem.message}", index_problem=True)

    # -- phase 6: recover unflushed segments -------------------------------------------------
    def recover_log(self) -> None:
        """Recover from the recovery point on; a segment that overflows is split and recovery
        starts over on the new layout (segments recovered before cut nothing, so recovering
        them again, as Kafka does, changes nothing)."""
        if self.inputs.had_clean_shutdown:
            return
        while True:
            try:
                return self._recover_log()
            except _Overflow as overflow:
                self.split(overflow)

    def _recover_log(self) -> None:
        bases = sorted(self.segments)
        unflushed = bases_in_range(bases, self.inputs.recovery_point_checkpoint, LONG_MAX)
        for i, base in enumerate(unflushed):
            already = base in self.recoveries
            recovery = self.recover(base, f"at or above the recovery point "
                                    f"{self.inputs.recovery_point_checkpoint} after an unclean "
                                    f"shutdown")
            if already:
                continue  # recovered while loading: Kafka's second pass cuts nothing
            scan = recovery.scan
            if scan.truncated_bytes > 0:
                later = unflushed[i + 1:]
                message = (f"invalid offset during recovery ({scan.invalid_offset}): Kafka "
                           f"deletes the segment's data" if scan.invalid_offset else
                           f"corruption found in segment {base}, truncating to offset "
                           f"{scan.next_offset}")
                for later_base in reversed(later):
                    self.delete_segment(later_base, f"{message}: every later segment is deleted "
                                        f"(done before the cut, so that a crash in between "
                                        f"cannot hide the reason)")
                return

    # -- phases 7 and 8 ------------------------------------------------------------------------
    def log_end_offset(self) -> int:
        base = max(self.segments)
        recovery = self.recoveries.get(base)
        if recovery is not None:
            scan = recovery.scan
            return base if scan.invalid_offset else scan.next_offset
        log = self.view.path(_segment_name(base, LOG_SUFFIX))
        next_offset, _, problem = read_next_offset(log, base)
        if problem:
            self.notes.append(f"the active segment {base} ends with bytes that are not a batch "
                              f"({problem}); Kafka does not re-validate it (clean shutdown, or "
                              f"below the recovery point), so they stay; plan as after an "
                              f"unclean shutdown with a recovery point <= {base} to cut them")
        return next_offset

    def delete_segments_if_log_start_above_log_end(self) -> int | None:
        """The log end offset, or None when every segment goes (Kafka's
        ``deleteSegmentsIfLogStartGreaterThanLogEnd``)."""
        if not self.segments:
            return None
        log_end = self.log_end_offset()
        start = self.inputs.log_start_offset_checkpoint
        if log_end >= start:
            return log_end
        reason = (f"the log end offset {log_end} is below the checkpointed log start offset "
                  f"{start} (this could happen if segment files were deleted from the file "
                  f"system)")
        self.epochs.clear()  # (with whatever recovery would have assigned)
        if self.epochs_before:
            self.write_epochs(f"{reason}: the leader-epoch cache is cleared (before the segments "
                              f"go, so that a crash in between cannot leave a stale entry)",
                              removed_from_end=self.epochs_before)
        for offset, path in self.snapshots().items():
            self.steps.append(DeleteSnapshot(offset, path, f"{reason}: producer state starts "
                                             f"over at {start}"))
            self.view.delete(os.path.basename(path))
        for base in sorted(self.segments, reverse=True):
            self.delete_segment(base, reason)
        return None

    def snapshots(self) -> dict[int, str]:
        out = {}
        for name in self.view.names():
            offset = _name_offset(name)
            if name.endswith(PRODUCER_SNAPSHOT_SUFFIX) and offset is not None:
                out[offset] = self.view.path(name)
        return out

    def write_epochs(self, reason: str, assigned: Sequence[EpochEntry] = (),
                     removed_from_end: Sequence[EpochEntry] = (),
                     removed_from_start: Sequence[EpochEntry] = ()) -> None:
        before = self.epochs_before
        after = tuple(self.epochs.epoch_entries())
        self.steps.append(WriteLeaderEpochs(self.epochs.path, before, after, tuple(assigned),
                                            tuple(removed_from_end), tuple(removed_from_start),
                                            reason))
        self.epochs_before = after

    # -- the recovery steps ----------------------------------------------------------------------
    def recovery_steps(self) -> tuple[list[RecoverSegment], list[RecoverSegment]]:
        """``(changing, verifying)`` recoveries of the segments that remain."""
        changing, verifying = [], []
        bases = sorted(self.segments)
        for base, recovery in sorted(self.recoveries.items()):
            step = self.recovery_step(base, recovery, bases)
            (changing if step.changes else verifying).append(step)
        return changing, verifying

    def recovery_step(self, base: int, recovery: _Recovery, bases: list[int]) -> RecoverSegment:
        scan = recovery.scan
        changes = []
        if scan.invalid_offset:
            changes.append("empty the segment")
        elif scan.truncated_bytes:
            changes.append(f"cut {scan.truncated_bytes} bytes")
        aborted: tuple = ()
        if scan.txn_markers and not scan.invalid_offset:
            segments = [(b, self.log_path(b)) for b in bases if b < base]
            manager = producer_state_before(self.dir, segments, self.snapshots(), base,
                                            self.inputs.log_start_offset_checkpoint, self.now_ms)
            aborted = replay_aborted_txns(manager, self.log_path(base), scan.valid_bytes)
        expected = {INDEX_SUFFIX: scan.offset_index, TIME_INDEX_SUFFIX: scan.time_index,
                    TXN_INDEX_SUFFIX: b"".join(t.to_bytes() for t in aborted)}
        if scan.invalid_offset:
            expected = {suffix: b"" for suffix in expected}
        for suffix, data in expected.items():
            current = self.view.path(_segment_name(base, suffix))
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
            base, self.path(_segment_name(base, LOG_SUFFIX)), scan.size, scan.valid_bytes,
            base if scan.invalid_offset else scan.next_offset, tuple(recovery.triggers),
            scan.invalid_tail, scan.invalid_offset, tuple(changes), scan.txn_markers, aborted,
            reason)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _list_files(directory: str) -> dict[str, FileState]:
    """Every regular file of the partition dir; an unreadable one stops the load, as in Kafka
    ("Could not read file")."""
    files = {}
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError:
        raise FileUnreadableError(f"No such directory: {directory}", path=directory) from None
    for entry in entries:
        if not entry.is_file():
            continue
        if not os.access(entry.path, os.R_OK):
            raise FileUnreadableError(f"Could not read file {entry.path}", path=entry.path)
        st = entry.stat()
        files[entry.name] = FileState(entry.name, st.st_size, st.st_mtime_ns)
    return files


def plan_load(partition_dir: str | os.PathLike[str], *, log_start_offset_checkpoint: int = 0,
              recovery_point_checkpoint: int = 0, high_watermark_checkpoint: int | None = None,
              had_clean_shutdown: bool = False, config: LogConfig = LogConfig(),
              now_ms: int | None = None) -> LoadPlan:
    """Decide everything loading ``partition_dir`` does, reading files only.

    The checkpoints are the partition's entries in the log dir's checkpoint files (Kafka's
    defaults when absent: 0, 0 and 0); ``had_clean_shutdown`` is whether the log dir holds
    ``.kafka_cleanshutdown``. ``now_ms`` decides which producers count as expired.
    """
    directory = os.path.abspath(os.fspath(partition_dir))
    if os.path.basename(directory).endswith(DELETE_DIR_SUFFIX):
        raise UsageError(f"{directory} belongs to a deleted topic and awaits deletion: Kafka "
                         f"does not recover it", path=directory)
    inputs = LoadInputs(log_start_offset_checkpoint, recovery_point_checkpoint,
                        high_watermark_checkpoint, had_clean_shutdown)
    now_ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    p = _Planner(directory, inputs, config, now_ms)
    try:
        return _plan(p, inputs)
    finally:
        p.scratch.close()


def _plan(p: _Planner, inputs: LoadInputs) -> LoadPlan:
    """The phases in Kafka's order (see the module docstring)."""
    p.complete_swaps(p.remove_temp_files_and_collect_swaps())
    p.load_segment_files()
    p.recover_log()
    log_start_ckpt = inputs.log_start_offset_checkpoint
    log_end = p.delete_segments_if_log_start_above_log_end()
    changing: list[RecoverSegment] = []
    verifying: list[RecoverSegment] = []
    if log_end is not None:  # (when every segment goes, recovering them first is moot)
        changing, verifying = p.recovery_steps()
        p.steps.extend(changing)
    if not p.segments:
        path = p.path(_segment_name(log_start_ckpt, LOG_SUFFIX))
        p.steps.append(CreateSegment(log_start_ckpt, path, "the log has no segment: an empty "
                                     "one starts at the checkpointed log start offset"))
        p.segments[log_start_ckpt] = 0
    next_offset = log_start_ckpt if log_end is None else log_end
    bases = sorted(p.segments)
    removed_end = p.epochs.truncate_from_end(next_offset)
    log_start = max(log_start_ckpt, bases[0])
    removed_start = p.epochs.truncate_from_start(log_start_ckpt)
    if tuple(p.epochs.epoch_entries()) != p.epochs_before:
        p.write_epochs(_epoch_reason(p.epochs_assigned, removed_end, removed_start, next_offset,
                                     log_start_ckpt),
                       p.epochs_assigned, removed_end, removed_start)
    if inputs.had_clean_shutdown and log_end is not None:
        recovery_point = next_offset
    else:
        recovery_point = min(inputs.recovery_point_checkpoint, next_offset)
    hw = inputs.high_watermark_checkpoint or 0
    high_watermark = min(max(hw, log_start), next_offset)
    _plan_producer_state(p, bases, log_start, next_offset)
    plan = LoadPlan(p.dir, p.config, inputs, p.now_ms, tuple(p.files.values()), tuple(p.steps),
                    tuple(verifying), tuple(bases), log_start, next_offset, recovery_point,
                    high_watermark, tuple(p.epochs.epoch_entries()), tuple(p.notes))
    logger.debug("Planned the load of %s: %d steps", p.dir, len(plan.steps))
    return plan


def _epoch_reason(assigned: list[EpochEntry], removed_end: list[EpochEntry],
                  removed_start: list[EpochEntry], log_end: int, log_start: int) -> str:
    parts = []
    if assigned:
        parts.append("recovery assigns the leader epochs its batches start "
                     "(LogSegment.recover)")
    if removed_end:
        parts.append(f"entries at or above the log end offset {log_end} are removed "
                     f"(truncateFromEnd)")
    if removed_start:
        parts.append(f"entries up to the checkpointed log start offset {log_start} are "
                     f"folded into one starting there (truncateFromStart)")
    return "; ".join(parts) or "the cache is normalised"


def _plan_producer_state(p: _Planner, bases: list[int], log_start: int, log_end: int) -> None:
    """Step 10 of this load and of the next one (see :mod:`producer_recovery`): what differs
    from the snapshot files now, by content (a file replaced by an identical empty snapshot is
    no change; one replacing an unreadable file is)."""
    snapshots = p.snapshots()
    producers = {o: snapshot_entries(path) for o, path in snapshots.items()}
    state = {o: "on disk" for o in snapshots}  # offset -> "on disk", "empty" or "replayed"
    why: dict[int, str] = {}
    passes = []
    for n in range(2):
        prediction = predict_rebuild(state, lambda o: state[o] != "on disk" or
                                     producers[o] is not None, bases, log_start, log_end,
                                     p.inputs.had_clean_shutdown)
        for offset in prediction.stray:
            why.setdefault(offset, "a stray snapshot: no segment starts at its offset and it is "
                           "not the newest one above every segment (removeStraySnapshots)"
                           + (" once the log-end snapshot exists (Kafka's next start)" if n else ""))
        for offset, reason in prediction.deleted:
            why.setdefault(offset, reason)
        made = "empty" if prediction.upgrade else "replayed"
        state = {o: made if o in prediction.written else state[o] for o in prediction.final}
        passes.append(prediction)
    written = tuple(sorted(o for o, how in state.items() if how != "on disk" and not (
        how == "empty" and producers.get(o) == 0)))
    gone = sorted(o for o in snapshots if o not in state or o in written)
    if not gone and not written:
        return
    for offset in passes[0].stray:
        if offset in gone:
            p.steps.append(DeleteSnapshot(offset, snapshots[offset], why[offset]))
            p.view.delete(os.path.basename(snapshots[offset]))
    deleted = tuple((o, why.get(o, "replaced")) for o in gone if o not in passes[0].stray)
    first = passes[0]
    if first.replay_from is None:
        how = ("no snapshot to load" if first.loaded is None else
               f"the snapshot at {first.loaded} is current")
    else:
        loaded = "nothing" if first.loaded is None else f"the snapshot at {first.loaded}"
        how = f"load {loaded} and replay the batches from {first.replay_from}"
    if passes[1].written or passes[1].stray or passes[1].deleted:
        how += "; the next start's pass is included (Kafka would change these files again then)"
    if deleted or written:
        p.steps.append(RebuildProducerState(log_end, first.loaded, first.replay_from, deleted,
                                            written, f"rebuildProducerState: {how}"))
