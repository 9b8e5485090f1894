"""Rebuilding segment indexes as Kafka's log recovery does (``pylogctl rebuild-index``).

For every segment of the given paths (a ``.log``, a partition dir, a log dir, a dir of log
dirs) the offset, time and transaction indexes are built by ``LogSegment.recover`` itself,
reading the ``.log`` read-only and writing into scratch files, so the originals are never
touched while planning. Each is then compared with the file on disk
(:mod:`pylogctl.tools.index_comparison`: identical, missing, or different and then benign or
corrupt) and, when asked, written over it.

The rules kept here:

- The ``.txnindex`` needs the partition's transactions open at the segment's start: producer
  state is seeded from the latest readable ``.snapshot`` at or below the first segment rebuilt
  (as Kafka's loader does, but read-only) and replayed forward through the partition's
  segments, so each segment sees the transactions its predecessors left open.
- A ``.log`` is never changed. Invalid bytes at its end (which a broker's recovery truncates)
  are reported; the indexes cover the valid batches, as Kafka's would after the truncation.
- Writing replaces each changed index atomically (temp file, fsync, rename, fsync of the
  dir), after keeping a copy of the old one under ``backup_dir`` when asked, with every log
  dir's ``.lock`` held for the whole run. A SIGKILL leaves every index old or new, and at
  worst a ``.tmp`` beside one; a rerun removes those and finishes the job. Planning and
  verifying only check that no broker holds a lock, and create nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Literal

from ..errors import (CorruptRecordError, FileUnreadableError, LogSegmentOffsetOverflowError,
                      PylogctlError, UsageError)
from ..format.log_stream import LOG_OVERHEAD, MIN_RECORD_OVERHEAD, iter_batches
from ..format.producer_snapshot import CorruptSnapshotError
from ..storage.backup import Backup
from ..storage.checkpoint import TEMP_SUFFIX, write_file_atomically
from ..storage.file_records import FileRecords
from ..storage.files import read_bytes
from ..storage.lazy_index import LazyIndex
from ..storage.lock import LogDirLock, ensure_unlocked
from ..storage.log_config import LogConfig
from ..storage.log_dir import log_segments, partition_dirs
from ..storage.naming import (INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
                              log_file_offset, parse_partition_dir_name, segment_file)
from ..storage.partition_paths import PathKind, resolve_path, select_partitions
from ..storage.producer_append import CompletedTxn, ProducerBatch
from ..storage.producer_state import (ProducerStateManager, load_producers_from_batches,
                                      read_snapshot)
from ..storage.segment import LogSegment
from ..storage.time_index import TimeIndex
from ..storage.transaction_index import TransactionIndex
from ..storage.kraft_configs import METADATA_PARTITION_DIR
from ..storage.log_manager import LogDir
from .config import ConfigOptions, TopicConfigs
from .index_comparison import IndexComparison, IndexKind, compare_index

DEFAULT_INDEX_INTERVAL_BYTES = LogConfig().index_interval_bytes
INDEX_FILES: tuple[tuple[IndexKind, str], ...] = (
    ("offset-index", INDEX_SUFFIX), ("time-index", TIME_INDEX_SUFFIX),
    ("txn-index", TXN_INDEX_SUFFIX))
_MIN_BATCH_SIZE = LOG_OVERHEAD + MIN_RECORD_OVERHEAD  # a v0 message, no key, no value
PROGRESS_STEP = 8 * 1024 * 1024

Action = Literal["keep", "write", "replace"]
Progress = Callable[[int], None]


@dataclass(frozen=True)
class RebuildOptions:
    # None: each topic's own index.interval.bytes, as `pylogctl config` resolves it
    index_interval_bytes: int | None = None
    execute: bool = False  # False: plan (or verify) only
    backup_dir: str | None = None
    config: ConfigOptions = ConfigOptions()


@dataclass(frozen=True)
class PartitionTarget:
    """A partition dir, its log dir (whose ``.lock`` guards it) and the segments to rebuild."""

    log_dir: str
    partition_dir: str
    bases: tuple[int, ...]


@dataclass
class IndexResult:
    """One index file of one segment: the comparison, and what was (or would be) done."""

    path: str
    comparison: IndexComparison
    action: Action
    done: bool = False
    backup: str | None = None

    def to_dict(self) -> dict[str, Any]:
        c = self.comparison
        return {"kind": c.kind, "indexFile": self.path, "status": c.status,
                "existingEntries": c.existing_entries, "rebuiltEntries": c.rebuilt_entries,
                "firstDifference": c.first_difference, "verdict": c.verdict,
                "explanation": c.explanation, "problem": c.problem, "action": self.action,
                "done": self.done, "backup": self.backup}


@dataclass
class SegmentRebuild:
    """A formatter section: one segment, its indexes as items, its log's state as footer."""

    path: str
    base_offset: int
    size: int
    valid_bytes: int | None = None
    indexes: list[IndexResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: PylogctlError | None = None
    kind: str = "rebuild-index"
    items_key: str = "indexes"

    @property
    def header(self) -> dict[str, Any]:
        return {"file": self.path, "type": "segment", "baseOffset": self.base_offset,
                "size": self.size}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        return (r.to_dict() for r in self.indexes)

    @property
    def invalid_bytes(self) -> int:
        return 0 if self.valid_bytes is None else self.size - self.valid_bytes

    @property
    def footer(self) -> dict[str, Any]:
        error = None if self.error is None else {"message": str(self.error),
                                                 "position": self.error.position}
        return {"validBytes": self.valid_bytes, "invalidBytes": self.invalid_bytes,
                "notes": self.notes, "error": error}


# -- which segments ----------------------------------------------------------------------------
def segment_bases(partition_dir: str) -> list[int]:
    """Base offsets of the partition dir's ``{base:020d}.log`` files, ascending."""
    return [b for b, path in log_segments(partition_dir) if log_file_offset(path) is not None]


def is_metadata_log(target: PartitionTarget) -> bool:
    """The KRaft metadata log, whose active segment is the last of the partition's."""
    return (os.path.basename(target.partition_dir) == METADATA_PARTITION_DIR
            and target.bases[-1] == max(segment_bases(target.partition_dir)))


def resolve_targets(paths: list[str]) -> list[PartitionTarget]:
    """The partitions and segments ``paths`` name, merged and in order. A deleted
    partition's dir (``-delete``) is left out: the broker removes it at start-up."""
    arguments = []
    for path in paths:
        arg = resolve_path(path)
        if arg.kind is PathKind.OTHER_DIR:
            raise UsageError(f"{path} is a directory, but neither a partition dir, a log dir "
                             f"nor a dir of log dirs", path=path)
        if arg.kind in (PathKind.FILE, PathKind.MISSING):
            if arg.segment_base is None:
                raise UsageError(f"{path} is not a segment: rebuild-index takes .log files named "
                                 f"by their base offset (00000000000000000000.log), partition "
                                 f"dirs and log dirs", path=path)
            if not os.path.isfile(path):
                raise FileUnreadableError(f"No such file: {path}", path=path)
        arguments.append(arg)
    targets = []
    for selection in select_partitions(arguments):
        parts = selection.partitions
        if parts is None:
            parts = {p: None for name, p in partition_dirs(selection.log_dir)[0]
                     if name.marker != "delete"}
        for part, bases in parts.items():
            bases = segment_bases(part) if bases is None else sorted(bases)
            if bases:
                targets.append(PartitionTarget(selection.log_dir, part, tuple(bases)))
    return sorted(targets, key=lambda t: t.partition_dir)


# -- rebuilding one segment --------------------------------------------------------------------
class _ReadOnlyLog(FileRecords):
    """A segment's ``.log`` opened read-only for ``LogSegment.recover``: the truncation that
    recovery ends with only reports what a broker would cut, and the scan reports progress
    (recovery's Python and C loops both ``release`` the pages they have passed)."""

    def __init__(self, path: str, progress: Progress | None) -> None:
        super().__init__(path)
        self._progress = progress
        self.reported = 0

    def truncate_to(self, target_size: int) -> int:
        return self.end - target_size

    def release(self, position: int) -> None:
        super().release(position)
        if self._progress is not None and position - self.reported >= PROGRESS_STEP:
            self._progress(position - self.reported)
            self.reported = position


class _TransactionState:
    """Producer state as far as a ``.txnindex`` depends on it, for ``LogSegment.recover``.

    Only transactional batches (data and markers) open and close transactions; a plain batch
    matters only from a producer inside one (Kafka refuses it). The others change sequence
    numbers and epochs, which recovery never rejects, so they are skipped: the index comes out
    the same. ``open_txn_producers`` tells recovery so, and its C loop then hands over only
    the batches that matter: a plain batch costs no Python at all.
    """

    def __init__(self, manager: ProducerStateManager) -> None:
        self.manager = manager
        # producers with a transaction open (kept in step with the manager after each update)
        self.open_txn_producers = {pid for pid, e in manager.active_producers.items()
                                   if e.current_txn_first_offset is not None}
        self.last_stable_offset = manager.last_stable_offset
        self.complete_txn = manager.complete_txn
        self.update_map_end_offset = manager.update_map_end_offset

    def update(self, batch: ProducerBatch) -> CompletedTxn | None:
        producer_id = batch.producer_id
        open_txn = self.open_txn_producers
        if not (batch.is_transactional or producer_id in open_txn):
            return None
        completed = self.manager.update(batch)
        entry = self.manager.last_entry(producer_id)
        if entry is not None and entry.current_txn_first_offset is not None:
            open_txn.add(producer_id)
        else:
            open_txn.discard(producer_id)
        return completed


def _max_index_size(log_size: int, interval: int) -> int:
    """Room for every entry recovery can append: Kafka's default, or more for a big segment
    rebuilt with a small interval (a broker would have rolled it; a rebuild must not fail)."""
    most_entries = log_size // max(interval + 1, _MIN_BATCH_SIZE) + 2
    return max(LogConfig().segment_index_bytes, most_entries * TimeIndex.entry_size)


def _scratch_paths(scratch: str, base: int) -> dict[IndexKind, str]:
    return {kind: segment_file(scratch, base, suffix) for kind, suffix in INDEX_FILES}


def build_indexes(log_path: str, base: int, scratch: str, interval: int,
                  producer_state: _TransactionState | None,
                  progress: Progress | None = None) -> tuple[dict[IndexKind, str], int]:
    """Run ``LogSegment.recover`` over the ``.log`` (read-only) with indexes in ``scratch``;
    returns the rebuilt index paths and the valid bytes of the log."""
    paths = _scratch_paths(scratch, base)
    for p in paths.values():
        if os.path.exists(p):
            os.unlink(p)
    log = _ReadOnlyLog(log_path, progress)
    max_index = _max_index_size(log.size_in_bytes, interval)
    segment = LogSegment(log, LazyIndex.for_offset(paths["offset-index"], base, max_index),
                         LazyIndex.for_time(paths["time-index"], base, max_index),
                         TransactionIndex(base, paths["txn-index"]), base, interval)
    try:
        truncated = segment.recover(producer_state)
    finally:
        segment.close()
    if progress is not None:
        progress(log.size_in_bytes - log.reported)
    return paths, log.size_in_bytes - truncated


def describe_invalid_tail(log: FileRecords, position: int) -> str:
    """Why the batches of ``log`` stop being valid at ``position`` (what recovery cuts)."""
    size = log.size_in_bytes
    try:
        batch = next(iter_batches(log.view, position, size, log.path), None)
        if batch is None:
            return (f"{size - position} bytes at the end are not a whole batch (a write the "
                    f"broker did not finish)")
        batch.ensure_valid()
    except CorruptRecordError as exc:
        return exc.message
    return "the batch there is not valid"


# -- producer state before the first segment rebuilt -------------------------------------------
def _seed_producer_state(target: PartitionTarget, all_bases: list[int],
                         notes: list[str]) -> ProducerStateManager:
    """Producer state just below the first target segment, as Kafka's loader rebuilds it but
    deleting nothing: the latest readable snapshot at or below that segment and above the log
    start (the loader discards the others), then the batches in between."""
    first = target.bases[0]
    manager = ProducerStateManager(target.partition_dir)
    start = all_bases[0]
    for offset in reversed(manager.snapshot_offsets()):
        if not all_bases[0] < offset <= first:
            continue
        try:
            entries = read_snapshot(manager.fetch_snapshot(offset))
        except (CorruptSnapshotError, FileUnreadableError) as exc:
            notes.append(f"skipped producer snapshot {offset}: {exc}")
            continue
        for entry in entries:
            manager.load_producer_entry(entry)
        start = offset
        break
    manager.update_map_end_offset(start)
    for i, base in enumerate(all_bases):
        following = all_bases[i + 1] if i + 1 < len(all_bases) else None
        if base >= first:
            break
        if following is not None and following <= start:
            continue
        with FileRecords(segment_file(target.partition_dir, base, LOG_SUFFIX)) as records:
            load_producers_from_batches(manager, _transactional(records, start))
    manager.update_map_end_offset(first)
    return manager


def _transactional(records: FileRecords, start: int) -> Iterator[ProducerBatch]:
    """The transactional v2 batches from offset ``start`` on (what a ``.txnindex`` needs)."""
    for batch in records.batches():
        if batch.magic >= 2 and batch.last_offset >= start and batch.is_transactional:
            yield batch  # type: ignore[misc]


# -- the run -------------------------------------------------------------------------------------
class IndexRebuild:
    """One ``rebuild-index`` run: use as a context manager, iterate :meth:`segments`.

    Entering takes every log dir's lock (executing) or checks that no broker holds one
    (planning); either way :class:`LogDirLockedError` (exit 4) before anything is read.
    """

    def __init__(self, paths: list[str], options: RebuildOptions = RebuildOptions()) -> None:
        self.options = options
        self.targets = resolve_targets(paths)
        self.log_dirs = sorted({t.log_dir for t in self.targets})
        self.configs = TopicConfigs(self.log_dirs, options.config)
        self._intervals: dict[tuple[str, str], int] = {}
        self.total_bytes = sum(_size(segment_file(t.partition_dir, b, LOG_SUFFIX))
                               for t in self.targets for b in t.bases)
        self.backup: Backup | None = None
        if options.backup_dir is not None and self.log_dirs:
            backup_dir = os.path.abspath(options.backup_dir)
            for log_dir in self.log_dirs:
                if os.path.commonpath([backup_dir, log_dir]) == log_dir:
                    raise UsageError(f"The backup dir {backup_dir} is inside the log dir "
                                     f"{log_dir}: a broker refuses to start with a dir there "
                                     f"that is not a partition", path=backup_dir)
            # it mirrors the log dir, or the dir holding several (whose partitions may share names)
            self.backup = Backup(backup_dir, os.path.commonpath(self.log_dirs))
        self._locks: list[LogDirLock] = []
        self._scratch: str | None = None

    def __enter__(self) -> "IndexRebuild":
        try:
            for log_dir in self.log_dirs:
                if self.options.execute:
                    self._locks.append(LogDirLock(log_dir).acquire())
                else:
                    ensure_unlocked(log_dir)
            self._scratch = tempfile.mkdtemp(prefix="pylogctl-rebuild-index-")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks.clear()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def segments(self, progress: Progress | None = None) -> Iterator[SegmentRebuild]:
        """Rebuild, compare (and, executing, write) segment by segment, in partition order."""
        if self._scratch is None:
            raise RuntimeError("IndexRebuild.segments() needs the run entered (with ...)")
        for target in self.targets:
            yield from self._partition(target, progress)

    def _interval(self, target: PartitionTarget) -> int:
        """The bytes between index entries: the option, else the topic's
        ``index.interval.bytes`` (Kafka rebuilds a segment's indexes with its topic's)."""
        if self.options.index_interval_bytes is not None:
            return self.options.index_interval_bytes
        name = parse_partition_dir_name(os.path.basename(target.partition_dir))
        if name is None:
            return DEFAULT_INDEX_INTERVAL_BYTES
        key = (target.log_dir, name.topic)
        if key not in self._intervals:
            sources = self.configs.sources(LogDir(target.log_dir))
            self._intervals[key] = sources.topic(name.topic).log_config.index_interval_bytes
        return self._intervals[key]

    def _partition(self, target: PartitionTarget,
                   progress: Progress | None) -> Iterator[SegmentRebuild]:
        notes: list[str] = []
        try:
            state: _TransactionState | None = _TransactionState(
                _seed_producer_state(target, segment_bases(target.partition_dir), notes))
        except PylogctlError as exc:
            notes.append(f"transaction indexes not checked: cannot replay producer state "
                         f"before segment {target.bases[0]}: {exc}")
            state = None
        for base in target.bases:
            result = self._segment(target, base, state, progress)
            result.notes[:0] = notes
            notes = []
            if result.error is not None and state is not None:
                state = None  # the replay stopped inside this segment: later ones would be off
                notes.append(f"transaction indexes not checked: producer state could not be "
                             f"replayed past segment {base}")
            yield result

    def _segment(self, target: PartitionTarget, base: int, state: _TransactionState | None,
                 progress: Progress | None) -> SegmentRebuild:
        assert self._scratch is not None
        log_path = segment_file(target.partition_dir, base, LOG_SUFFIX)
        result = SegmentRebuild(log_path, base, _size(log_path))
        try:
            rebuilt, result.valid_bytes = build_indexes(
                log_path, base, self._scratch, self._interval(target), state, progress)
            with FileRecords(log_path) as log:
                if result.invalid_bytes:
                    result.notes.append(
                        f"{result.invalid_bytes} invalid bytes at the end from byte position "
                        f"{result.valid_bytes}: {describe_invalid_tail(log, result.valid_bytes)} "
                        f"(a broker's recovery truncates them; rebuild-index leaves the .log "
                        f"as it is)")
                for kind, suffix in INDEX_FILES:
                    if kind == "txn-index" and state is None:
                        continue
                    path = segment_file(target.partition_dir, base, suffix)
                    comparison = compare_index(
                        kind, path, rebuilt[kind], base, log, result.valid_bytes,
                        preallocated=base == target.bases[-1] and is_metadata_log(target))
                    result.indexes.append(IndexResult(path, comparison, _action(comparison)))
        except LogSegmentOffsetOverflowError as exc:
            result.error = exc.at(log_path)
            result.notes.append("Kafka's loader splits a segment whose offsets overflow its "
                                "base; its indexes are left alone")
            return result
        except PylogctlError as exc:
            result.error = exc.at(log_path)
            return result
        for r in result.indexes:
            stale = r.path + TEMP_SUFFIX
            if os.path.exists(stale):
                result.notes.append(f"{stale} is left from an interrupted run: "
                                    f"{'removed' if self.options.execute else 'would be removed'}")
                if self.options.execute:
                    os.unlink(stale)
        if self.options.execute:
            self._apply(result, rebuilt, log_path)
        return result

    def _apply(self, result: SegmentRebuild, rebuilt: dict[IndexKind, str],
               log_path: str) -> None:
        for r in result.indexes:
            if r.action == "keep":
                continue
            data = read_bytes(rebuilt[r.comparison.kind]) if os.path.exists(
                rebuilt[r.comparison.kind]) else b""
            try:
                if r.action == "replace" and self.backup is not None:
                    # an older copy (from an interrupted run) is kept: it is the original
                    r.backup = self.backup.save(r.path) or self.backup.target(r.path)
                write_file_atomically(r.path, data, like=r.path if os.path.exists(r.path)
                                      else log_path)
            except OSError as exc:
                raise FileUnreadableError(f"Cannot write {exc.filename or r.path}: "
                                          f"{exc.strerror}", path=r.path) from None
            r.done = True


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _action(comparison: IndexComparison) -> Action:
    if comparison.status == "identical":
        return "keep"
    return "write" if comparison.status == "missing" else "replace"
