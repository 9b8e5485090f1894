"""Planning a scan: which segment bytes to read, cut into splits that tasks read in parallel.

A split is a byte range of one ``.log`` file that starts and ends on batch boundaries. A
segment up to ``split_bytes`` long is one split; a longer one is cut at positions of its
offset index (every entry names the start of a batch, ``index.interval.bytes`` apart), each
verified by reading the batch header there. A segment without a usable index stays whole:
nothing else tells where its batches start short of reading them all.

Skipping uses only facts that hold for every Kafka log, not the indexes' word alone:

- offsets increase through a partition's segments, so segment ``i`` holds offsets in
  ``[base_i, base_{i+1})`` (file names), and a split starting at a v2 batch holds none below
  that batch's base offset (its header);
- the time index records each new maximum timestamp with an offset: every record below the
  offset of an entry whose timestamp is below ``from`` is older than ``from`` and can be
  skipped, and a rolled segment (not the last) whose last entry is below ``from`` holds no
  record at or after it (Kafka writes the segment's maximum there when it rolls).

The reader still tests every record it decodes, so a wrong index can only cost time. An index
that fails a sanity check (a crashed broker's zero-filled tail) is not used at all.

Several log dirs may hold replicas of one partition (the log dirs of several brokers): by
default one replica is read, chosen as ``consumer-groups`` chooses
(:mod:`pylogctl.groups.replicas`: highest leader epoch, then log end offset, then the first
log dir given); ``replicas="all"`` reads every copy.
"""

from __future__ import annotations

import mmap
import os
from contextlib import contextmanager
from typing import Callable
from dataclasses import dataclass, field, replace

from ..errors import FileUnreadableError, PylogctlError, UsageError
from ..format.legacy import LegacyBatch
from ..format.log_stream import iter_batches
from ..format.record_batch import CODEC_MASK, RECORD_BATCH_OVERHEAD
from ..storage import filesystems, remote_mirror
from ..storage.log_dir_layout import is_log_dir, live_partition_name, log_segments, not_a_kafka_dir
from ..storage.log_dir import LogDir, PartitionEntry
from ..storage.naming import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, replace_suffix
from ..storage.partition_paths import PathKind, resolve_path
from ..storage.remote_records import RemoteFileRecords
from ..storage.index import CorruptIndexError
from ..storage.offset_index import OffsetIndex, OffsetPosition
from ..storage.time_index import TimeIndex
from .scan_filter import ScanFilter

DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024
REPLICA_MODES = ("one", "all")
MIRRORED_TOPICS = frozenset({"__consumer_offsets"})
_HEADER_BYTES = RECORD_BATCH_OVERHEAD  # a v2 batch header; a v0/v1 message's is shorter


@dataclass(frozen=True)
class SegmentSplit:
    """A byte range ``[start, stop)`` of a segment (``stop`` None: to the end of the file).

    ``offset_lower``/``offset_upper`` bound the offsets it holds (``offset_upper`` None: not
    known); ``seek_offset`` is the lowest offset worth decoding (records below it fail the
    filter), which the reader finds through the offset index when ``indexed``.
    """

    topic: str
    partition: int
    path: str
    base_offset: int
    start: int
    stop: int | None
    offset_lower: int
    offset_upper: int | None
    seek_offset: int
    indexed: bool
    file_size: int | None = None  # the segment's size when planned (a remote one's listing)

    @property
    def index_path(self) -> str:
        return replace_suffix(self.path, LOG_SUFFIX, INDEX_SUFFIX)


@dataclass(frozen=True)
class PartitionSource:
    """A partition dir picked to be read, and the bytes of its ``.log`` files."""

    topic: str
    partition: int
    path: str
    log_dir: str | None
    segments: int
    segment_bytes: int


@dataclass
class ScanPlan:
    """The splits to read, in partition and offset order, and what planning skipped."""

    splits: list[SegmentSplit]
    partitions: list[PartitionSource]
    log_dirs: list[str]
    segments: int  # non-empty segments of the partitions found
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> segments left unread
    notes: list[str] = field(default_factory=list)
    # the replica read for each partition held by several log dirs (notes count them)
    replica_choices: list[str] = field(default_factory=list)

    @property
    def segments_read(self) -> int:
        return len({s.path for s in self.splits})

    def summary(self) -> str:
        skipped = ", ".join(f"{n} by {why}" for why, n in sorted(self.skipped.items()) if n)
        return (f"read {self.segments_read} of {self.segments} non-empty segments in "
                f"{len(self.splits)} splits" + (f" (skipped {skipped})" if skipped else ""))


# -- finding partitions ------------------------------------------------------------------------

def _partition_entries(paths: list[str]) -> tuple[list[tuple[str | None, PartitionEntry]],
                                                  list[str]]:
    """``(log dir or None, partition)`` for every partition the paths name, in path order,
    and the log dirs seen."""
    out: list[tuple[str | None, PartitionEntry]] = []
    log_dirs: list[str] = []
    for path in paths:
        arg = resolve_path(path)
        if arg.kind is PathKind.FILE:
            raise UsageError(f"{path} is a file: give log dirs, dirs holding log dirs or "
                             f"partition dirs", path=path)
        if arg.kind is PathKind.OTHER_DIR:
            raise not_a_kafka_dir(path)
        if arg.kind is PathKind.PARTITION_DIR:
            name = live_partition_name(path)
            out.append((arg.parent if is_log_dir(arg.parent) else None,
                        PartitionEntry(name.topic, name.partition, arg.abspath)))
            continue
        for d in arg.log_dirs:
            log_dir = LogDir(d)
            log_dirs.append(log_dir.path)
            out += [(log_dir.path, e) for e in log_dir.partitions]
    return out, list(dict.fromkeys(log_dirs))


def _choose_replicas(entries: list[tuple[str | None, PartitionEntry]], mode: str,
                     notes: list[str], details: list[str]
                     ) -> list[tuple[str | None, PartitionEntry]]:
    if mode not in REPLICA_MODES:
        raise UsageError(f"replicas is one of {', '.join(REPLICA_MODES)}, not {mode!r}")
    by_key: dict[tuple[str, int, str], list[tuple[str | None, PartitionEntry]]] = {}
    for log_dir, entry in entries:
        # the same dir named twice (a log dir and one of its partition dirs) is read once
        by_key.setdefault((entry.topic, entry.partition, entry.path), []).append((log_dir, entry))
    unique = [v[0] for v in by_key.values()]
    if mode == "all":
        return unique
    # the replica facts and the choice consumer-groups uses
    from ..groups.replicas import Replica, choices_summary, choose_replica

    groups: dict[tuple[str, int], list[tuple[str | None, PartitionEntry]]] = {}
    for item in unique:
        groups.setdefault(item[1].key, []).append(item)
    chosen = []
    choices = []
    for key, items in groups.items():
        replicas = [Replica(d or os.path.dirname(e.path), None, e, None, None) for d, e in items]
        choice = choose_replica(key[0], key[1], replicas)
        assert choice is not None
        chosen.append(items[replicas.index(choice.chosen)])
        if choice.others:
            choices.append(choice)
    if choices:
        notes.append(choices_summary(choices) + " (scan -v lists them; --all-replicas reads "
                     "every copy)")
        details += [c.line() for c in choices]
    return chosen


# -- indexes -----------------------------------------------------------------------------------

def sane_offset_index(path: str, base: int) -> OffsetIndex | None:
    """The segment's offset index, read-only, or None when missing, empty or not sane (a
    remote one is read whole: an index is small)."""
    try:
        index = _open_index(OffsetIndex, path, base)
    except PylogctlError:
        return None
    if index is None:
        return None
    if index.entries == 0 or not _trusted(index, lambda e: e):
        index.close()
        return None
    return index


def _trusted(index: OffsetIndex | TimeIndex, key: Callable[[tuple], tuple]) -> bool:
    """Kafka's ``sanityCheck`` passes and the fields ``key`` picks grow from the second-last
    entry to the last: a crashed broker's preallocated, zero-filled tail passes Kafka's check
    (its loader rebuilds such an index) but breaks that order."""
    try:
        index.sanity_check()
    except CorruptIndexError:
        return False
    n = index.entries
    return n < 2 or all(y > x for x, y in zip(key(index.entry(n - 2)), key(index.entry(n - 1))))


def _open_index(kind, path: str, base: int):
    """A read-only index: mapped from disk, or read whole from the store for a URL or a file
    a sparse mirror left there; None when there is none."""
    if filesystems.is_url(path):
        return kind.from_bytes(path, filesystems.read_whole(path), base)
    remote = remote_mirror.read_through(path)
    if remote is None and not os.path.exists(path):
        return None
    return kind(path, base) if remote is None else kind.from_bytes(path, remote, base)


def time_floor(path: str, base: int, time_from: int, last_segment: bool) -> int | None:
    """The lowest offset of a segment that can hold a record at or after ``time_from``, from
    its time index: the segment's base when the index cannot tell; None when no record of
    the (rolled) segment can."""
    try:
        index = _open_index(TimeIndex, replace_suffix(path, LOG_SUFFIX, TIME_INDEX_SUFFIX), base)
    except PylogctlError:
        return base
    if index is None:
        return base
    try:
        n = index.entries
        if n == 0 or not _trusted(index, lambda e: (e.timestamp,)):
            return base
        last = index.entry(n - 1)
        if not last_segment and last.timestamp < time_from:
            return None
        found = index.lookup(time_from - 1)
        if found.timestamp < 0 or found.timestamp >= time_from or found.offset < base:
            return base
        return found.offset
    finally:
        index.close()


def batch_floor(view, position: int, size: int, base: int,
                entry_offset: int) -> tuple[bool, int | None]:
    """Whether the format layer's iterator finds a batch at ``position`` of ``view`` (a
    segment of ``size`` bytes based at ``base``; only the header need be there), as an index
    entry for ``entry_offset`` claims; and the lowest offset from there (None for a compressed
    v0/v1 wrapper, whose header names its last offset)."""
    try:
        batch = next(iter_batches(view, position, min(size, len(view))), None)
    except PylogctlError:  # a size below the minimum, an unknown magic: not a batch start
        return False, None
    if batch is None:  # fewer bytes left than a header, or a batch running past the end
        return False, None
    if isinstance(batch, LegacyBatch):
        floor = batch.offset if batch.attributes & CODEC_MASK == 0 else None
        return base <= batch.offset <= entry_offset, floor
    return base <= batch.base_offset <= entry_offset, batch.base_offset


@contextmanager
def _segment_view(path: str, size: int):
    """A reader of batch headers of a segment: ``head(position)`` gives a buffer over the
    file holding the header at ``position``: the file mapped, or for a segment a sparse
    mirror left in the store, a ranged read into a map as long as the file."""
    remote = remote_mirror.url_of(path) if remote_mirror.is_placeholder(path) else None
    if remote is not None:
        with RemoteFileRecords(remote, size) as records:
            def fetched(position: int) -> memoryview:
                records.fetch(position, position + _HEADER_BYTES)
                return records.view
            yield fetched
        return
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        view = memoryview(m)
        try:
            yield lambda position: view
        finally:
            view.release()


def _split_segment(topic: str, partition: int, path: str, base: int, size: int,
                   upper: int | None, seek: int, split_bytes: int) -> list[SegmentSplit]:
    index = sane_offset_index(replace_suffix(path, LOG_SUFFIX, INDEX_SUFFIX), base) \
        if size > split_bytes or seek > base else None
    if index is None:
        return [SegmentSplit(topic, partition, path, base, 0, None, base, upper, seek, False)]
    try:
        cuts: list[tuple[int, int]] = [(0, base)]  # (position, lowest offset from there)
        if size > split_bytes:
            with _segment_view(path, size) as head:
                position = 0
                while True:
                    entry = index.fetch_upper_bound_offset(OffsetPosition(base, position),
                                                           split_bytes)
                    if entry is None or entry.position >= size:
                        break
                    if entry.position > position:
                        ok, floor = batch_floor(head(entry.position), entry.position, size,
                                                base, entry.offset)
                        if ok:
                            cuts.append((entry.position,
                                         cuts[-1][1] if floor is None else floor))
                    position = entry.position
    finally:
        index.close()
    splits = []
    for i, (start, lower) in enumerate(cuts):
        last = i == len(cuts) - 1
        stop = None if last else cuts[i + 1][0]
        high = upper if last else cuts[i + 1][1]
        splits.append(SegmentSplit(topic, partition, path, base, start, stop, lower, high, seek,
                                   True))
    return splits


# -- the plan ----------------------------------------------------------------------------------

def plan_scan(paths: list[str] | str, scan_filter: ScanFilter = ScanFilter(), *,
              split_bytes: int = DEFAULT_SPLIT_BYTES, replicas: str = "one") -> ScanPlan:
    """The splits of the partitions ``paths`` name (log dirs, dirs holding log dirs, or
    partition dirs) that may hold records ``scan_filter`` keeps."""
    if isinstance(paths, str):
        paths = [paths]
    if split_bytes < 1:
        raise UsageError(f"split size must be positive, not {split_bytes}")
    notes: list[str] = []
    paths = [_readable_path(os.fspath(p), replicas) for p in paths]
    entries, log_dirs = _partition_entries(paths)
    details: list[str] = []
    entries = _choose_replicas(entries, replicas, notes, details)
    entries.sort(key=lambda item: (item[1].topic, item[1].partition))
    skipped = {"topic": 0, "partition": 0, "offset": 0, "time": 0}
    splits: list[SegmentSplit] = []
    sources: list[PartitionSource] = []
    total = 0
    for log_dir, entry in entries:
        segments = []
        for base, path in log_segments(entry.path):
            try:
                segments.append((base, path, os.stat(path).st_size))
            except OSError as exc:
                raise FileUnreadableError(f"Cannot read {path}: {exc.strerror}",
                                          path=path) from None
        sources.append(PartitionSource(entry.topic, entry.partition, entry.path, log_dir,
                                       len(segments), sum(s[2] for s in segments)))
        live = [(i, s) for i, s in enumerate(segments) if s[2] > 0]
        total += len(live)
        if not scan_filter.wants_topic(entry.topic):
            skipped["topic"] += len(live)
            continue
        if not scan_filter.wants_partition(entry.partition):
            skipped["partition"] += len(live)
            continue
        for i, (base, path, size) in live:
            upper = segments[i + 1][0] if i + 1 < len(segments) else None
            if not scan_filter.wants_offsets(base, upper):
                skipped["offset"] += 1
                continue
            seek = max(base, scan_filter.offset_from)
            if scan_filter.has_time_from:
                floor = time_floor(path, base, scan_filter.time_from, upper is None)
                if floor is None or (upper is not None and floor >= upper):
                    skipped["time"] += 1
                    continue
                seek = max(seek, floor)
            parts = [s for s in _split_segment(entry.topic, entry.partition, path, base, size,
                                               upper, seek, split_bytes)
                     if (s.offset_upper is None or s.offset_upper > seek)
                     and s.offset_lower < scan_filter.offset_to]
            if not parts:
                skipped["offset"] += 1
            remote = remote_mirror.url_of(path)
            splits += [replace(s, path=remote or s.path, file_size=size) for s in parts]
    return ScanPlan(splits, sources, log_dirs, total, skipped, notes, details)


def readable_path(path: str | os.PathLike[str]) -> str:
    """An engine's input as given: a URL as it is, a local path made absolute."""
    path = filesystems.local_path(os.fspath(path))
    return path if filesystems.is_url(path) else os.path.abspath(path)


def _readable_path(path: str, replicas: str) -> str:
    """A local path for planning: a URL's sparse mirror (segments stay in the store and are
    read by ranges; ``__consumer_offsets`` is fetched whole for ``stats``' lag; the files that
    choose among replicas only when choosing)."""
    path = filesystems.local_path(path)
    if not filesystems.is_url(path):
        return path
    return remote_mirror.mirror(path, "sparse", MIRRORED_TOPICS,
                                replica_files=replicas != "all").path
