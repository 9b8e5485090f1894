"""Rebuilding segment indexes as Kafka's log recovery does (``pylogctl rebuild-index``).

For every segment of the given paths (a ``.log``, a partition dir, a log dir, a dir of log
dirs) the offset, time and transaction indexes are built by ``LogSegment.recover`` itself,
reading the ``.log`` read-only and writing into scratch files
(:mod:`pylogctl.storage.loader.recovery_dry_run`, as the loader's plan does), so the originals are
never touched while planning. Each is then compared with the file on disk
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
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal

from ..errors import (FileUnreadableError, InvalidOffsetError, LogSegmentOffsetOverflowError,
                      PylogctlError, UsageError)
from ..format.log_stream import LOG_OVERHEAD, MIN_RECORD_OVERHEAD
from ..storage.backup import Backup
from ..storage.checkpoint import TEMP_SUFFIX, write_file_atomically
from ..storage.file_records import FileRecords
from ..storage.files import read_bytes
from ..storage.lock import LogDirLock, ensure_unlocked
from ..storage.log_config import LogConfig
from ..storage.log_dir_layout import log_segments, not_a_kafka_dir, partition_dirs
from ..storage.naming import (INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
                              log_file_offset, parse_partition_dir_name, segment_file)
from ..storage.partition_paths import PathKind, resolve_path, select_partitions
from ..storage.producer_recovery import producer_state_before
from ..storage.producer_state import list_snapshot_files
from ..storage.loader.recovery_dry_run import (Progress, RecoveryScan, ScratchDir,
                                               TransactionReplay,
                                        recover_read_only, scratch_index_paths)
from ..storage.time_index import TimeIndex
from ..storage.kraft_configs import METADATA_PARTITION_DIR
from ..storage.log_dir import LogDir
from .config import ConfigOptions, TopicConfigs
from .index_comparison import IndexComparison, IndexKind, compare_index

DEFAULT_INDEX_INTERVAL_BYTES = LogConfig().index_interval_bytes
INDEX_FILES: tuple[tuple[IndexKind, str], ...] = (
    ("offset-index", INDEX_SUFFIX), ("time-index", TIME_INDEX_SUFFIX),
    ("txn-index", TXN_INDEX_SUFFIX))
INDEX_KINDS = tuple(kind for kind, _ in INDEX_FILES)
_MIN_BATCH_SIZE = LOG_OVERHEAD + MIN_RECORD_OVERHEAD  # a v0 message, no key, no value

Action = Literal["keep", "write", "replace"]


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
    def nothing_to_do(self) -> bool:
        """Every index kept, no error, no invalid bytes, nothing noted: what a long plan
        leaves out."""
        return (self.error is None and not self.invalid_bytes and not self.notes
                and all(r.action == "keep" for r in self.indexes))

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
def segments(partition_dir: str) -> list[tuple[int, str]]:
    """The partition dir's ``{base:020d}.log`` files as ``(base, path)``, ascending."""
    return [(b, path) for b, path in log_segments(partition_dir)
            if log_file_offset(path) is not None]


def segment_bases(partition_dir: str) -> list[int]:
    return [b for b, _ in segments(partition_dir)]


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
            raise not_a_kafka_dir(path)
        if arg.kind is PathKind.FILE:
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
def _max_index_size(log_size: int, interval: int) -> int:
    """Room for every entry recovery can append: Kafka's default, or more for a big segment
    rebuilt with a small interval (a broker would have rolled it; a rebuild must not fail)."""
    most_entries = log_size // max(interval + 1, _MIN_BATCH_SIZE) + 2
    return max(LogConfig().segment_index_bytes, most_entries * TimeIndex.entry_size)


def _tail_note(scan: RecoveryScan) -> str:
    """Why the batches stop being valid where they do (what a broker's recovery cuts)."""
    tail = scan.invalid_tail
    assert tail is not None
    if tail.kind == "incomplete-batch":
        return (f"{scan.size - tail.position} bytes at the end are not a whole batch (a write "
                f"the broker did not finish)")
    return tail.message


# -- producer state before the first segment rebuilt -------------------------------------------
def _producer_state(target: PartitionTarget, notes: list[str]) -> TransactionReplay:
    """Producer state just below the first target segment, as Kafka's loader rebuilds it but
    deleting nothing: the latest readable snapshot at or below that segment and above the log
    start (the loader discards the others), then the transactional batches in between."""
    logs = segments(target.partition_dir)
    manager = producer_state_before(
        target.partition_dir, logs, dict(list_snapshot_files(target.partition_dir)),
        target.bases[0], logs[0][0], None, transactional_only=True,
        skipped=lambda offset, exc: notes.append(f"skipped producer snapshot {offset}: {exc}"))
    return TransactionReplay(manager)


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
        self._scratch: ScratchDir | None = None

    def __enter__(self) -> "IndexRebuild":
        try:
            for log_dir in self.log_dirs:
                if self.options.execute:
                    self._locks.append(LogDirLock(log_dir).acquire())
                else:
                    ensure_unlocked(log_dir)
            self._scratch = ScratchDir()
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
            self._scratch.close()
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
            state: TransactionReplay | None = _producer_state(target, notes)
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

    def _segment(self, target: PartitionTarget, base: int, state: TransactionReplay | None,
                 progress: Progress | None) -> SegmentRebuild:
        assert self._scratch is not None
        log_path = segment_file(target.partition_dir, base, LOG_SUFFIX)
        result = SegmentRebuild(log_path, base, _size(log_path))
        try:
            interval = self._interval(target)
            scan = recover_read_only(log_path, base, interval,
                                     _max_index_size(_size(log_path), interval), self._scratch,
                                     state, progress)
            if scan.invalid_offset:
                raise InvalidOffsetError(scan.invalid_offset, path=log_path)
            result.valid_bytes = scan.valid_bytes
            rebuilt = dict(zip(INDEX_KINDS, scratch_index_paths(self._scratch.path, base)))
            with FileRecords(log_path) as log:
                if result.invalid_bytes:
                    result.notes.append(
                        f"{result.invalid_bytes} invalid bytes at the end from byte position "
                        f"{result.valid_bytes}: {_tail_note(scan)} (a broker's recovery "
                        f"truncates them; rebuild-index leaves the .log as it is)")
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
