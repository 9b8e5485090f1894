"""The first view of a log dir an operator wants: one line of facts per partition.

Per partition: segments, bytes, log start and end offsets, the checkpointed high watermark and
recovery point, the leader epochs, whether the indexes are there and the topic id; per log dir:
``meta.properties``, the clean-shutdown marker and the lock file. Everything is read from the
files as a stopped broker left them, with the existing readers; nothing is written. Problems
(malformed checkpoints, invalid bytes or a CRC-invalid batch at the end of the log, unreadable
files) become notes, never exceptions, so one bad partition does not hide the others.

Offsets follow Kafka's loader: the log end offset is the active (newest) segment's next offset,
found by walking that segment's batch headers only (its base offset when it holds no complete
batch); the log start offset is the larger of the ``log-start-offset-checkpoint`` entry and the
first segment's base offset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal

from ..errors import CorruptRecordError, ExitCode, FileUnreadableError, PylogctlError
from ..storage.checkpoint import (HIGH_WATERMARK_CHECKPOINT, LEADER_EPOCH_CHECKPOINT,
                                  LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT,
                                  CorruptCheckpointError, read_leader_epoch_checkpoint,
                                  read_offset_checkpoint)
from ..storage.file_records import FileRecords
from ..storage.log_dir_layout import (LOCK_FILE, META_PROPERTIES, PARTITION_METADATA, list_dir,
                               partition_dirs)
from ..storage.metadata_files import read_partition_metadata, read_properties
from ..storage.naming import (INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, PartitionDirName,
                              file_offset, snapshot_id_from_file, suffix_of)
from .dump_metadata import CLEAN_SHUTDOWN

Severity = Literal["info", "problem", "unreadable"]
_SUMMARY_CHECKPOINTS = (LOG_START_OFFSET_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT,
                        RECOVERY_POINT_CHECKPOINT)
_MARKER_TEXT = {"delete": "a deleted partition's dir, awaiting asynchronous deletion",
                "future": "a future replica's dir (an intra-broker move in progress)",
                "stray": "a stray replica's dir (no longer assigned to this broker)"}


@dataclass(frozen=True)
class Note:
    """``problem`` and ``unreadable`` notes set the exit code (1 and 3); ``info`` does not."""

    severity: Severity
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"severity": self.severity, "message": self.message}


@dataclass(frozen=True)
class MetaProperties:
    version: str | None
    node_id: int | None  # node.id in KRaft, broker.id in ZooKeeper mode
    id_key: str | None  # which of the two the file uses
    cluster_id: str | None
    directory_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "nodeId": self.node_id, "idKey": self.id_key,
                "clusterId": self.cluster_id, "directoryId": self.directory_id}


@dataclass
class PartitionSummary:
    dir_name: str
    topic: str
    partition: int
    marker: str | None  # "delete", "future", "stray" for a marked dir
    segments: int = 0
    bytes: int = 0  # the segments' bytes: the size kafka-log-dirs reports (UnifiedLog.size)
    other_bytes: int = 0  # indexes, snapshots, checkpoints and the rest
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    high_watermark: int | None = None
    recovery_point: int | None = None
    leader_epoch: int | None = None  # the latest epoch in leader-epoch-checkpoint
    leader_epoch_start_offset: int | None = None
    leader_epoch_entries: int | None = None  # None when the file is absent
    missing_indexes: list[str] = field(default_factory=list)
    active_segment: str | None = None
    topic_id: str | None = None
    kraft_snapshots: int = 0
    notes: list[Note] = field(default_factory=list)

    @property
    def needs_attention(self) -> bool:
        """A note (damaged data, a checkpoint past the log end, a marked dir) or a missing
        index: what ``--problems`` keeps."""
        return bool(self.notes or self.missing_indexes)

    @property
    def indexes(self) -> str:
        """``all``, ``missing:active`` (only the active segment's), ``missing:N`` (segments
        lacking an index) or ``-`` (no segments): one word, so the text table stays awk-able."""
        if not self.segments:
            return "-"
        lacking = {file_offset(name) for name in self.missing_indexes}
        if not lacking:
            return "all"
        if self.active_segment is not None and lacking == {file_offset(self.active_segment)}:
            return "missing:active"
        return f"missing:{len(lacking)}"

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "dir": self.dir_name,
                "marker": self.marker, "segments": self.segments, "bytes": self.bytes,
                "otherBytes": self.other_bytes,
                "logStartOffset": self.log_start_offset, "logEndOffset": self.log_end_offset,
                "highWatermark": self.high_watermark, "recoveryPoint": self.recovery_point,
                "leaderEpoch": self.leader_epoch,
                "leaderEpochStartOffset": self.leader_epoch_start_offset,
                "leaderEpochEntries": self.leader_epoch_entries, "indexes": self.indexes,
                "missingIndexes": self.missing_indexes, "topicId": self.topic_id,
                "kraftSnapshots": self.kraft_snapshots,
                "notes": [n.to_dict() for n in self.notes]}


@dataclass
class LogDirSummary:
    path: str
    meta: MetaProperties | None
    clean_shutdown: bool
    lock: bool
    other_dirs: list[str]
    notes: list[Note]
    partitions: list[PartitionSummary]


@dataclass
class _LogDirScan:
    """What one listing of the log dir gives; partitions are summarized from it on demand."""

    summary: LogDirSummary
    checkpoints: dict[str, dict[tuple[str, int], int]]
    partition_paths: list[tuple[PartitionDirName, str]]

    def iter_partitions(self) -> Iterator[PartitionSummary]:
        for name, path in self.partition_paths:
            yield summarize_partition(path, name, self.checkpoints)


def _scan(path: str) -> _LogDirScan:
    files = {e.name for e in list_dir(path) if not e.is_dir()}
    notes: list[Note] = []
    meta = None
    if META_PROPERTIES in files:
        try:
            meta = _meta(read_properties(os.path.join(path, META_PROPERTIES)))
        except FileUnreadableError as exc:
            notes.append(Note("unreadable", str(exc)))
    checkpoints = {}
    for name in _SUMMARY_CHECKPOINTS:
        if name in files:
            checkpoints[name] = _offset_checkpoint(os.path.join(path, name), notes)
    parts, others = partition_dirs(path)
    summary = LogDirSummary(path=path, meta=meta, clean_shutdown=CLEAN_SHUTDOWN in files,
                            lock=LOCK_FILE in files, other_dirs=others, notes=notes,
                            partitions=[])
    return _LogDirScan(summary, checkpoints, parts)


def summarize_log_dir(path: str | os.PathLike[str]) -> LogDirSummary:
    """The log dir's facts and one :class:`PartitionSummary` per partition dir, sorted by
    topic then partition; raises only when the log dir itself cannot be listed."""
    scan = _scan(os.fspath(path))
    scan.summary.partitions = list(scan.iter_partitions())
    return scan.summary


def _meta(props: dict[str, str]) -> MetaProperties:
    id_key = "node.id" if "node.id" in props else "broker.id" if "broker.id" in props else None
    raw = props.get(id_key) if id_key else None
    node_id = int(raw) if raw is not None and raw.lstrip("-").isdigit() else None
    return MetaProperties(props.get("version"), node_id, id_key, props.get("cluster.id"),
                          props.get("directory.id"))


def _offset_checkpoint(path: str, notes: list[Note]) -> dict[tuple[str, int], int]:
    try:
        return {(e.topic, e.partition): e.offset for e in read_offset_checkpoint(path).entries}
    except FileUnreadableError as exc:
        notes.append(Note("unreadable", str(exc)))
    except CorruptCheckpointError as exc:
        notes.append(Note("problem", str(exc)))
    return {}


def summarize_partition(path: str | os.PathLike[str], name: PartitionDirName,
                        checkpoints: dict[str, dict[tuple[str, int], int]]) -> PartitionSummary:
    """One partition dir; ``checkpoints`` maps each log-dir checkpoint's file name to its
    entries. A future replica is checkpointed in the log dir it moves to, like a live one; a
    deleted or stray dir no longer is, so an entry for its partition is not its own."""
    path = os.fspath(path)
    s = PartitionSummary(os.path.basename(path), name.topic, name.partition, name.marker)
    if name.marker is not None:
        s.notes.append(Note("info", _MARKER_TEXT[name.marker]))
    try:
        entries = [e for e in list_dir(path) if not e.is_dir()]
    except FileUnreadableError as exc:
        s.notes.append(Note("unreadable", str(exc)))
        return s
    names = {e.name for e in entries}
    for e in entries:
        try:
            size = e.stat().st_size
            if suffix_of(e.name) == LOG_SUFFIX and file_offset(e.name) is not None:
                s.bytes += size
            else:
                s.other_bytes += size
        except OSError as exc:
            s.notes.append(Note("unreadable", f"Cannot stat {e.path}: {exc.strerror}"))
    logs = sorted((file_offset(n), n) for n in names
                  if suffix_of(n) == LOG_SUFFIX and file_offset(n) is not None)
    s.segments = len(logs)
    s.kraft_snapshots = sum(snapshot_id_from_file(n) is not None for n in names)
    for _, log in logs:
        stem = log[:-len(LOG_SUFFIX)]
        s.missing_indexes += [stem + sfx for sfx in (INDEX_SUFFIX, TIME_INDEX_SUFFIX)
                              if stem + sfx not in names]
    def checkpointed(checkpoint: str) -> int | None:
        if name.marker in ("delete", "stray"):
            return None
        return checkpoints.get(checkpoint, {}).get((name.topic, name.partition))

    checkpointed_start = checkpointed(LOG_START_OFFSET_CHECKPOINT)
    s.high_watermark = checkpointed(HIGH_WATERMARK_CHECKPOINT)
    s.recovery_point = checkpointed(RECOVERY_POINT_CHECKPOINT)
    if logs:
        first_base = logs[0][0]
        s.log_start_offset = (first_base if checkpointed_start is None
                              else max(first_base, checkpointed_start))
        base, s.active_segment = logs[-1]
        s.log_end_offset = _log_end_offset(os.path.join(path, s.active_segment), base, s.notes)
    else:
        s.log_start_offset = checkpointed_start
    if LEADER_EPOCH_CHECKPOINT in names:
        _leader_epochs(os.path.join(path, LEADER_EPOCH_CHECKPOINT), s)
    if PARTITION_METADATA in names:
        try:
            s.topic_id = read_partition_metadata(os.path.join(path, PARTITION_METADATA))["topicId"]
        except PylogctlError as exc:
            s.notes.append(_error_note(exc))
    _consistency_notes(s, checkpointed_start)
    return s


def _error_note(exc: PylogctlError) -> Note:
    return Note("unreadable" if exc.exit_code == ExitCode.UNREADABLE else "problem", str(exc))


def _leader_epochs(path: str, s: PartitionSummary) -> None:
    try:
        entries = read_leader_epoch_checkpoint(path).entries
    except PylogctlError as exc:
        s.notes.append(_error_note(exc))
        return
    s.leader_epoch_entries = len(entries)
    if entries:
        latest = max(entries, key=lambda e: e.epoch)
        s.leader_epoch, s.leader_epoch_start_offset = latest.epoch, latest.start_offset


def _log_end_offset(segment: str, base: int, notes: list[Note]) -> int | None:
    """The next offset after the segment's last complete batch (``base`` if it has none);
    invalid trailing bytes, a corrupt batch header and a CRC-invalid last batch are noted."""
    name = os.path.basename(segment)
    try:
        with FileRecords(segment) as records:
            end, valid_end, size = base, 0, records.file_size
            last = None
            try:
                for last in records.batches():
                    end, valid_end = last.next_offset, last.position + last.size_in_bytes
            except CorruptRecordError as exc:
                notes.append(Note("problem", f"Corrupt data in {name}: {exc.message} (byte "
                                  f"position {exc.position}); the log end offset is that of "
                                  f"the last complete batch before it"))
                size = valid_end  # the trailing bytes are reported by the error
            if last is not None and not last.is_valid:
                notes.append(Note("problem", f"The last batch of {name} (offsets up to "
                                  f"{last.last_offset}, byte position {last.position}) fails "
                                  f"its CRC check"))
            del last
    except FileUnreadableError as exc:
        notes.append(Note("unreadable", str(exc)))
        return None
    if size > valid_end:
        notes.append(Note("problem", f"Found {size - valid_end} invalid bytes at the end of "
                          f"{name} (from byte position {valid_end}); a broker's recovery "
                          f"truncates them"))
    return end


def _consistency_notes(s: PartitionSummary, checkpointed_start: int | None) -> None:
    """Disagreements Kafka's loader resolves at start-up: worth knowing, not corruption."""
    leo = s.log_end_offset
    if leo is None:
        return
    if checkpointed_start is not None and leo < checkpointed_start:
        s.notes.append(Note("info", f"log end offset {leo} is below the checkpointed log start "
                            f"offset {checkpointed_start}: a broker deletes every segment at load"))
    if s.high_watermark is not None and s.high_watermark > leo:
        s.notes.append(Note("info", f"checkpointed high watermark {s.high_watermark} is above "
                            f"the log end offset {leo}"))
    if s.recovery_point is not None and s.recovery_point > leo:
        s.notes.append(Note("info", f"checkpointed recovery point {s.recovery_point} is above "
                            f"the log end offset {leo}"))


class LogDirSummaryDump:
    """A log dir as a formatter section (``log-dir-summary``): the log dir's facts in the
    header, one item per partition, computed lazily; the footer counts the notes that set
    the exit code."""

    kind = "log-dir-summary"
    items_key = "partitions"

    def __init__(self, path: str | os.PathLike[str], problems_only: bool = False) -> None:
        self.path = os.fspath(path)
        self.problems_only = problems_only
        self.error: PylogctlError | None = None
        self.footer: dict[str, Any] = {}
        self.partitions: list[PartitionSummary] = []
        self._scan = _scan(self.path)
        s = self._scan.summary
        self.header: dict[str, Any] = {
            "file": self.path, "type": self.kind,
            "metaProperties": s.meta.to_dict() if s.meta else None,
            "cleanShutdown": s.clean_shutdown, "lock": s.lock, "otherDirs": s.other_dirs,
            "notes": [n.to_dict() for n in s.notes], "problemsOnly": problems_only}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        for p in self._scan.iter_partitions():
            self.partitions.append(p)
            if p.needs_attention or not self.problems_only:
                yield p.to_dict()
        notes = self._scan.summary.notes + [n for p in self.partitions for n in p.notes]
        self.footer.update(partitionCount=len(self.partitions),
                           attentionCount=sum(p.needs_attention for p in self.partitions),
                           problemCount=sum(n.severity == "problem" for n in notes),
                           unreadableCount=sum(n.severity == "unreadable" for n in notes))

    def diagnostics(self) -> list[str]:
        """One stderr line per note, once ``items`` is consumed: the unreadable first, then
        the problems, then the rest, so what needs attention leads a long list."""
        notes = [(self.path, n) for n in self._scan.summary.notes]
        notes += [(os.path.join(self.path, p.dir_name), n) for p in self.partitions
                  for n in p.notes]
        notes.sort(key=lambda item: _SEVERITY_ORDER.index(item[1].severity))
        return [f"{where}: {n.message}" for where, n in notes]


_SEVERITY_ORDER = ("unreadable", "problem", "info")


def dump_log_dir(path: str | os.PathLike[str], problems_only: bool = False
                 ) -> LogDirSummaryDump:
    return LogDirSummaryDump(path, problems_only)

