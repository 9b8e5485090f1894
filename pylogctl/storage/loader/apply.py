"""Carrying out a :class:`~pylogctl.storage.loader.plan.LoadPlan` (the writing half of Kafka's
``LogLoader``), crash-safely.

Which records go: only those Kafka's loader drops too. Bytes cut from a segment are invalid
(no broker could serve them); segments deleted after a cut, or because the log end is below the
checkpointed log start, are what Kafka deletes (a follower fetches them again; the backup dir
keeps them); ``.deleted``, ``.cleaned`` and invalid ``.swap`` files duplicate data that still
exists; segments replaced by a ``.swap`` only go once the swap holding their records is
complete. So no record below the checkpointed high watermark is lost that the broker would have
kept, and the argument below shows a crash never loses more.

Why a SIGKILL at any point leaves a dir that ``plan_load`` + ``apply_load`` repair, reaching the
files an uninterrupted run reaches (``test_a_crash_after_any_step_is_repaired_by_planning_again``
stops after every step of three scenarios):

* Every step is atomic or idempotent, and none removes the evidence for a later step before that
  step is done. Deleting a file (``.deleted`` leftovers, ``.cleaned`` output, orphaned indexes,
  stray snapshots) is idempotent. Invalid ``.swap`` files go before the ``.cleaned`` files that
  prove them invalid; old segment files go before the ``.swap`` file that replaces them is
  renamed (each rename is atomic), so a crash leaves the swap to be installed next time.
* A split (Kafka's ``replaceSegments``) writes the new segments as ``.cleaned`` files, renames
  them ``.swap`` newest first, fsyncs the dir, renames the old segment's files ``.deleted``,
  the ``.swap`` files to their final names (oldest first), fsyncs, and removes the ``.deleted``
  files. Killed while any ``.cleaned`` file remains, planning deletes every ``.swap`` at or
  above the lowest ``.cleaned`` offset (the renaming order puts every renamed one there) and
  the ``.cleaned`` files; the old segment is intact and is split again. Once all are ``.swap``,
  the split is complete: planning deletes the old segment's remaining files (by Kafka's range
  rule, or pylogctl's ``split_source`` rule when the first new segment starts above the old
  name) and renames the ``.swap`` files; a ``.deleted`` file or orphaned index left by the
  later renames goes as any other. A snapshot the split condemns but leaves is a stray the
  producer-state step removes. ``test_segment_split.py`` kills the apply before each of its
  file operations.
* A recovery rebuilds indexes in place: until it finishes, the index is preallocated with a
  zero-filled tail, which the plan's structural index check rejects, so an interrupted rebuild
  is redone (the ``.txnindex`` is rebuilt within the same window). A cut (``ftruncate``) is
  atomic; the segments a cut condemns are deleted *before* the cut, from the newest down, so
  until the cut lands the corrupt tail is still there to condemn them again, and the remaining
  segments are always a prefix of the log. (Kafka cuts first; the outcome is the same.)
* Deleting a segment renames its files to ``.deleted`` (the ``.log`` first) and then removes
  them; a half-renamed segment leaves an orphaned index or a ``.deleted`` file, both removed by
  the next plan. When the log end is below the checkpointed log start, the leader-epoch cache
  and the producer snapshots are cleared *before* the segments go (Kafka clears them after), as
  a log emptied by a crash would otherwise keep an epoch entry that the uninterrupted run drops.
* The leader-epoch checkpoint and producer snapshots are written atomically (temp file, fsync,
  rename); snapshots are caches that the next plan re-derives. Offsets live in the log dir's
  checkpoints, which :class:`~pylogctl.storage.log_dir.LogDir` writes after this returns: a
  crash before that leaves the old checkpoints, from which the next plan computes the same
  offsets.

Before anything is changed the dir must be exactly as planned (names, sizes, mtimes), and the
log dir's ``.lock`` is held for the whole run. With a backup dir, every file is copied (or, if
it is about to be deleted, hard-linked) there first. Files created or replaced get the partition
dir's owner and group, so a repair run as root leaves a dir the broker's user can still write.

Choices that differ from a broker: the active segment's indexes are left trimmed to their
entries (Kafka grows them back to ``segment.index.bytes`` when it loads the log, and will do so
itself; an offline tool should not leave 10 MiB of preallocated zeros behind). Segment recovery
replays producer state in memory instead of taking a snapshot after each segment and deleting
the later ones; only the final rebuild at the log end writes snapshot files, and it runs twice
(this start's and the next one's, see :mod:`~pylogctl.storage.producer_recovery`).
"""

from __future__ import annotations

import logging
import os
from typing import Iterable

from ...errors import InvalidOffsetError, PylogctlError
from ..backup import Backup
from ..file_records import FileRecords
from ..files import delete_if_exists, fsync_dir, match_dir_owner
from ..leader_epoch_cache import LeaderEpochFileCache
from .plan import (SEGMENT_FILE_SUFFIXES, CreateSegment, DeleteFile, DeleteSegment,
                        DeleteSnapshot, FileState, LoadPlan, LoadResult, RebuildProducerState,
                        RecoverSegment, RenameFile, SplitSegment, Step, WriteLeaderEpochs)
from ..lock import LogDirLock
from ..naming import (CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, LOG_SUFFIX, SWAP_FILE_SUFFIX,
                     offset_from_name, segment_file)
from ..producer_recovery import producer_state_before
from ..producer_state import ProducerStateManager, list_snapshot_files, rebuild_producer_state
from ..segment import LogSegment
from .segment_split import rename_segment_files, write_split

logger = logging.getLogger(__name__)


class PlanOutdatedError(PylogctlError):
    """The partition dir changed after it was planned: plan again."""


def apply_load(plan: LoadPlan, *, backup_dir: str | os.PathLike[str] | None = None,
               lock: LogDirLock | None = None) -> LoadResult:
    """Carry out ``plan``: every step in order, after checking the dir is as planned.

    ``lock``: the log dir's lock when the caller already holds it; otherwise the ``.lock`` of
    the partition dir's parent is taken for the duration (:class:`LogDirLockedError` if a
    broker holds it). ``backup_dir`` receives a copy of every file changed or deleted.
    """
    directory = plan.partition_dir
    own_lock = None
    if lock is None:
        own_lock = lock = LogDirLock(os.path.dirname(directory)).acquire()
    elif not lock.locked:
        raise ValueError(f"{lock} is not held")
    try:
        check_unchanged(plan)
        backup = None if backup_dir is None else Backup(backup_dir, os.path.dirname(directory))
        applier = _Applier(plan, backup)
        for step in plan.steps:
            logger.info("%s: %s", directory, step.describe())
            applier.apply(step)
        if plan.steps:
            match_dir_owner(directory)
            fsync_dir(directory)
        return LoadResult(plan, plan.steps, tuple(backup.saved if backup else ()),
                          tuple(applier.notes))
    finally:
        if own_lock is not None:
            own_lock.release()


def check_unchanged(plan: LoadPlan) -> None:
    """Refuse to act on a dir that is not exactly as it was planned."""
    now = {}
    with os.scandir(plan.partition_dir) as it:
        for entry in it:
            if entry.is_file():
                st = entry.stat()
                now[entry.name] = FileState(entry.name, st.st_size, st.st_mtime_ns)
    then = {f.name: f for f in plan.files}
    changed = sorted(n for n in now.keys() | then.keys() if now.get(n) != then.get(n))
    if changed:
        shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
        raise PlanOutdatedError(f"{plan.partition_dir} changed since it was planned ({shown}): "
                                f"plan again", path=plan.partition_dir)


class _Applier:
    def __init__(self, plan: LoadPlan, backup: Backup | None) -> None:
        self.plan = plan
        self.dir = plan.partition_dir
        self.backup = backup
        self.notes: list[str] = []

    def save(self, path: str, will_delete: bool = False) -> None:
        if self.backup is not None:
            self.backup.save(path, will_delete=will_delete)

    def apply(self, step: Step) -> None:
        getattr(self, "_" + step.kind.replace("-", "_"))(step)

    def _delete_file(self, step: DeleteFile) -> None:
        self.save(step.path, will_delete=True)
        _unlink(step.path)

    def _rename_file(self, step: RenameFile) -> None:
        self.save(step.target, will_delete=True)
        self.save(step.source)
        os.replace(step.source, step.target)

    def _delete_snapshot(self, step: DeleteSnapshot) -> None:
        self.save(step.path, will_delete=True)
        _unlink(step.path)

    def _delete_segment(self, step: DeleteSegment) -> None:
        for path in step.files:
            self.save(path, will_delete=True)
        renamed = _mark_deleted(step.files)
        fsync_dir(self.dir)
        for path in renamed:
            _unlink(path)

    def _split_segment(self, step: SplitSegment) -> None:
        """Kafka's ``splitOverflowedSegment`` and ``replaceSegments`` (see the module docstring
        for what an interruption at each point leaves)."""
        old = [p for p in _segment_paths(self.dir, step.base_offset) if os.path.exists(p)]
        for path in old:
            self.save(path, will_delete=True)
        parts = write_split(step.path, self.dir, self.plan.config, CLEANED_FILE_SUFFIX)
        if parts != step.segments:  # (the dir was checked: only a changed writer gets here)
            for part in parts:
                LogSegment.delete_files_if_exist(self.dir, part.base_offset, CLEANED_FILE_SUFFIX)
            raise PlanOutdatedError(f"splitting {step.path} gave segments {parts}, the plan "
                                    f"said {step.segments}: plan again", path=step.path)
        for part in reversed(parts):  # the newest first: see remove_temp_files_and_collect_swaps
            rename_segment_files(self.dir, part.base_offset, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        fsync_dir(self.dir)  # every .swap is durable before the old segment goes
        renamed = _mark_deleted(old)
        for part in parts:
            rename_segment_files(self.dir, part.base_offset, SWAP_FILE_SUFFIX, "")
        fsync_dir(self.dir)
        for path in renamed:
            _unlink(path)

    def _create_segment(self, step: CreateSegment) -> None:
        segment = LogSegment.create(self.dir, step.base_offset, self.plan.config)
        segment.resize_indexes(self.plan.config.segment_index_bytes)  # creates both indexes
        segment.flush()
        segment.close()

    def _recover_segment(self, step: RecoverSegment) -> None:
        base = step.base_offset
        for suffix_path in _segment_paths(self.dir, base):
            if suffix_path != step.path or step.truncated_bytes:
                self.save(suffix_path)
        producers = None
        if step.replay_producers:
            producers = producer_state_before(
                self.dir, self._segment_logs(below=base), dict(list_snapshot_files(self.dir)),
                base, self.plan.inputs.log_start_offset_checkpoint, self.plan.now_ms)
        segment = LogSegment.open(self.dir, base, self.plan.config)
        try:
            try:
                truncated = segment.recover(producers)
            except InvalidOffsetError as exc:
                logger.warning("Found invalid offset during recovery of %s (%s). Deleting the "
                               "corrupt segment and creating an empty one with starting offset "
                               "%d", step.path, exc.message, base)
                truncated = segment.truncate_to(base)
            # no fsync here (Kafka's recovery takes none either): nothing later relies on
            # these bytes being durable, as the recovery point does not move past them; a
            # crash that loses a rebuilt index or a cut leaves what the next plan repairs
            # again, and --mark-clean flushes every file before its marker
        finally:
            segment.close()
        if truncated != step.truncated_bytes:
            self.note(f"segment {base}: recovery cut {truncated} bytes, the plan said "
                      f"{step.truncated_bytes}")

    def _write_leader_epochs(self, step: WriteLeaderEpochs) -> None:
        self.save(step.path)
        cache = LeaderEpochFileCache(step.path)
        cache.clear()
        if step.after:
            cache.assign_all(step.after)
        else:
            cache.clear_and_flush()

    def _rebuild_producer_state(self, step: RebuildProducerState) -> None:
        """Kafka's producer-state load, twice: this start's and the next one's (see
        :mod:`~pylogctl.storage.producer_recovery`)."""
        before = dict(list_snapshot_files(self.dir))
        for offset, _ in step.deleted:
            if offset in before:
                self.save(before[offset], will_delete=True)
        logs = dict(self._segment_logs())
        for _ in range(2):
            manager = ProducerStateManager(self.dir)
            manager.remove_stray_snapshots(logs)
            rebuild_producer_state(manager, logs, lambda base: _read_batches(logs[base]),
                                   self.plan.log_start_offset, step.end_offset,
                                   reload_from_clean_shutdown=self.plan.inputs.had_clean_shutdown,
                                   now_ms=self.plan.now_ms)
        after = {o for o, _ in list_snapshot_files(self.dir)}
        expected = (set(before) - {o for o, _ in step.deleted}) | set(step.written)
        if after != expected:
            self.note(f"producer snapshots ended as {sorted(after)}, the plan said "
                      f"{sorted(expected)}")

    def _segment_logs(self, below: int | None = None) -> list[tuple[int, str]]:
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(LOG_SUFFIX):
                base = offset_from_name(name)
                if base is None:
                    continue
                if below is None or base < below:
                    out.append((base, os.path.join(self.dir, name)))
        return out

    def note(self, text: str) -> None:
        logger.warning("%s: %s", self.dir, text)
        self.notes.append(text)


def _mark_deleted(paths: Iterable[str]) -> list[str]:
    """Rename each existing file to ``.deleted`` (in order: the ``.log`` first, so that a
    half-renamed segment is no segment at all); returns the new names."""
    renamed = []
    for path in paths:
        if os.path.exists(path):
            os.replace(path, path + DELETED_FILE_SUFFIX)
            renamed.append(path + DELETED_FILE_SUFFIX)
    return renamed


def _segment_paths(directory: str, base: int) -> list[str]:
    return [segment_file(directory, base, suffix) for suffix in SEGMENT_FILE_SUFFIXES]


def _read_batches(path: str):
    with FileRecords(path) as records:
        yield from records.batches()


def _unlink(path: str) -> None:
    delete_if_exists(path)
