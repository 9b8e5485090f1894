"""Loading the KRaft metadata image from files, as a node's ``MetadataLoader`` does: the latest
snapshot (``{endOffset:020d}-{epoch:010d}.checkpoint`` in ``__cluster_metadata-0``), then the
log from the snapshot's end offset, in offset order (:func:`load_metadata_dir`); or one file
read from its first batch, as ``kafka-metadata-shell --snapshot FILE`` reads a snapshot or a log
segment (:func:`load_metadata_file`).

Metadata transactions (KIP-868, ``MetadataBatchLoader``): the records between a
``BeginTransactionRecord`` and its ``EndTransactionRecord`` are applied together; an
``AbortTransactionRecord`` drops them, and a transaction still open where the files end is not
applied (a node would wait for its end).

Replay stops, and :attr:`MetadataReplay.stopped` says where (file, offset, byte position) and
why, at a record that fails to apply (a PartitionRecord for a topic id no TopicRecord created,
a FenceBrokerRecord for another broker epoch, an EndTransactionRecord without a begin), a
record that does not decode, a batch whose CRC does not match, a truncated or corrupt batch,
or a gap (offsets between the snapshot's end offset and the log, or between two batches, in no
file). Kafka's loader logs a record that fails to apply and goes on, but its batch's delta may
then fail as a whole (the PartitionRecord above leaves a topic delta without a topic, and the
delta's other records are lost with it), so past that record Kafka's image is not well defined.
The ``lenient`` mode skips such records instead, listing them in
:attr:`MetadataReplay.faults` (for commands that only want the configs). Offline, the log's
high watermark is unknown, so an uncommitted tail is replayed too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from ..errors import CorruptRecordError, PylogctlError
from ..format.control import ControlRecordType, decode_control_value, parse_control_key
from ..format.metadata_records import API_KEYS, decode_metadata_record
from .file_records import FileRecords
from .log_dir_layout import list_dir
from . import metadata_delta
from .metadata_image import MetadataImage, Provenance, ReplayFault
from .naming import LOG_SUFFIX, file_offset, snapshot_id_from_file

METADATA_PARTITION_DIR = "__cluster_metadata-0"
BEGIN = API_KEYS["BEGIN_TRANSACTION_RECORD"]
END = API_KEYS["END_TRANSACTION_RECORD"]
ABORT = API_KEYS["ABORT_TRANSACTION_RECORD"]
Progress = Callable[[int], None]


@dataclass(frozen=True)
class ReplayProblem:
    """A record skipped, or the point replay stopped at: the file, offset and byte position."""

    path: str
    offset: Optional[int]
    position: Optional[int]
    reason: str

    def __str__(self) -> str:
        where = [self.path]
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.position is not None:
            where.append(f"byte position {self.position}")
        return f"{', '.join(where)}: {self.reason}"


@dataclass
class MetadataReplay:
    """The image the files build and how the replay went."""

    image: MetadataImage
    source: str  # the metadata dir or the file read
    snapshot: Optional[str] = None  # the snapshot replayed first, if any
    segments: list[str] = field(default_factory=list)  # log segments replayed
    records: int = 0  # records applied (snapshot and log)
    next_offset: int = 0  # the offset replay would read next
    snapshot_time: int = -1  # the snapshot header's LastContainedLogTimestamp
    faults: list[ReplayProblem] = field(default_factory=list)  # records skipped (lenient)
    stopped: Optional[ReplayProblem] = None  # why replay ended before the files' end
    open_transaction: Optional[ReplayProblem] = None  # begun, never ended: not applied
    notes: list[str] = field(default_factory=list)


class _Replayer:
    """Applies records in offset order, holding a metadata transaction's back."""

    def __init__(self, replay: MetadataReplay, lenient: bool,
                 progress: Progress | None = None) -> None:
        self.replay = replay
        self.lenient = lenient
        self.progress = progress
        self.pending: Optional[list[tuple[int, dict, str, str, int, int]]] = None
        self.delta = metadata_delta.Delta(replay.image)
        self.begun: Optional[ReplayProblem] = None

    def file(self, path: str, from_offset: int, expect: Optional[int]) -> bool:
        """Replay ``path``'s records from ``from_offset``; ``expect`` is the offset the file
        must continue from (None: whatever it holds). False when replay stopped."""
        replay = self.replay
        name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        position = 0
        try:
            with FileRecords(path) as records:
                size, end, first = records.size_in_bytes, 0, True
                for batch in records.batches():
                    position = batch.position
                    if not batch.is_valid:
                        return self._stop(path, batch.base_offset, position,
                                          "the batch's CRC does not match its bytes")
                    end = position + batch.size_in_bytes
                    if batch.last_offset < from_offset:
                        continue
                    # offsets run on without a hole; only the batch the snapshot's end
                    # offset falls in may start below it
                    straddles = expect == from_offset and batch.base_offset < expect
                    if expect is not None and batch.base_offset != expect and not straddles:
                        return self._stop(path, batch.base_offset, position, (
                            f"gap: offsets {expect} to {batch.base_offset - 1} are in no file"
                            if first and batch.base_offset > expect else
                            f"the batch's base offset {batch.base_offset} does not follow "
                            f"offset {expect - 1}: records missing, or a corrupt batch header "
                            f"(the CRC does not cover the base offset)"))
                    first = False
                    expect = batch.last_offset + 1
                    if batch.is_control:
                        self._control(batch)
                        continue
                    self.delta = metadata_delta.Delta(replay.image)  # a batch, a delta
                    for record in batch.records():
                        if record.offset >= from_offset and not self._record(
                                path, name, record, position):
                            return False
                    if self.pending is None:  # what a node would publish
                        replay.image.provenance = Provenance(
                            batch.last_offset, batch.partition_leader_epoch,
                            batch.max_timestamp)
                    replay.next_offset = batch.last_offset + 1
                    if self.progress is not None:
                        self.progress(batch.size_in_bytes)
                if end < size:
                    return self._stop(path, None, end,
                                      f"{size - end} bytes after the last batch do not hold "
                                      f"a complete batch (a truncated write)")
        except PylogctlError as exc:
            return self._stop(path, None, exc.position if exc.position is not None else position,
                              exc.message)
        return True

    def _control(self, batch) -> None:
        for record in batch.records():
            try:
                kind = parse_control_key(record.key)[1]
                if kind == ControlRecordType.SNAPSHOT_HEADER:
                    header = decode_control_value(ControlRecordType.SNAPSHOT_HEADER,
                                                  record.value)
                    self.replay.snapshot_time = header["lastContainedLogTimestamp"]
            except (CorruptRecordError, ValueError):
                continue

    def _record(self, path: str, name: str, record, position: int) -> bool:
        """Replay one record; False when replay stopped at it."""
        replay = self.replay
        try:
            decoded = decode_metadata_record(record.value or b"")
        except CorruptRecordError as exc:
            if self.lenient:
                replay.notes.append(f"{name}: record at offset {record.offset} skipped: "
                                    f"{exc.message}")
                return True
            return self._stop(path, record.offset, position,
                              f"the record does not decode: {exc.message}")
        key, data, origin = decoded.api_key, decoded.data, f"{name} offset {record.offset}"
        at = (path, record.offset, position)
        if key == BEGIN:
            if self.pending is not None:
                return self._refused(*at, "Encountered BeginTransactionRecord while already "
                                     "in a transaction")
            self.pending = []
            self.begun = ReplayProblem(path, record.offset, position,
                                       "a metadata transaction begun here never ended: its "
                                       "records are not applied")
        elif key in (END, ABORT):
            if self.pending is None:
                which = "End" if key == END else "Abort"
                return self._refused(*at, f"Encountered {which}TransactionRecord without "
                                     f"having seen a BeginTransactionRecord")
            pending, self.pending, self.begun = self.pending, None, None
            if key == ABORT:
                replay.notes.append(f"{name}: the metadata transaction aborted at offset "
                                    f"{record.offset} dropped {len(pending)} records")
            else:
                self.delta = metadata_delta.Delta(replay.image)  # the transaction's delta
                if not all(self._apply(*args) for args in pending):
                    return False
        elif self.pending is not None:
            self.pending.append((key, data, origin, *at))
            return True
        return self._apply(key, data, origin, *at)

    def _apply(self, key: int, data: dict, origin: str, path: str, offset: int,
               position: int) -> bool:
        try:
            self.delta.replay(key, data, origin)
        except ReplayFault as exc:
            return self._refused(path, offset, position, str(exc))
        self.replay.records += 1
        return True

    def _refused(self, path: str, offset: int, position: int, reason: str) -> bool:
        """A record Kafka's delta refuses: skipped when lenient, else where replay stops."""
        reason = f"the record fails to apply: {reason}"
        if self.lenient:
            self.replay.faults.append(ReplayProblem(path, offset, position, reason))
            return True
        return self._stop(path, offset, position, reason)

    def _stop(self, path: str, offset: Optional[int], position: Optional[int],
              reason: str) -> bool:
        self.replay.stopped = ReplayProblem(path, offset, position, reason)
        return False

    def finish(self) -> None:
        self.replay.open_transaction = self.begun


def metadata_files(metadata_dir: str) -> tuple[list[tuple[tuple[int, int], str]],
                                               list[tuple[int, str]]]:
    """``(snapshots by (end offset, epoch), segments by base offset)``, each sorted."""
    snapshots, segments = [], []
    for entry in list_dir(metadata_dir):
        snapshot_id = snapshot_id_from_file(entry.name)
        if snapshot_id is not None:
            snapshots.append((snapshot_id, entry.path))
        elif entry.name.endswith(LOG_SUFFIX) and (base := file_offset(entry.name)) is not None:
            segments.append((base, entry.path))
    return sorted(snapshots), sorted(segments)


def load_metadata_dir(metadata_dir: str | os.PathLike[str], *, lenient: bool = False,
                      progress: Progress | None = None) -> MetadataReplay:
    """The image a node builds from ``__cluster_metadata-0``: its latest snapshot, then the
    log from the snapshot's end offset. ``lenient`` skips a record that does not decode
    or fails to apply, with a note, instead of stopping (as kafka-dump-log goes on past it);
    ``progress`` is called with the bytes of each data batch replayed."""
    metadata_dir = os.path.abspath(os.fspath(metadata_dir))
    replay = MetadataReplay(MetadataImage(), metadata_dir)
    replayer = _Replayer(replay, lenient, progress)
    snapshots, segments = metadata_files(metadata_dir)
    start, expect = 0, 0
    if snapshots:
        (start, epoch), path = snapshots[-1]
        replay.snapshot = path
        if not replayer.file(path, 0, None):
            return _done(replayer)
        # a node's provenance after a snapshot: its id and the header's timestamp
        replay.image.provenance = Provenance(start - 1, epoch, replay.snapshot_time)
        replay.next_offset = expect = start
    for base, path in segments:
        if _segment_end(segments, base) <= start:
            continue  # wholly below the snapshot
        replay.segments.append(path)
        if not replayer.file(path, start, expect):
            break
        expect = max(expect, replay.next_offset)
    return _done(replayer)


def bytes_to_replay(metadata_dir: str | os.PathLike[str]) -> int:
    """About what :func:`load_metadata_dir` reads: the latest snapshot and the segments from
    the one it ends in (for a progress bar's total)."""
    snapshots, segments = metadata_files(os.fspath(metadata_dir))
    start = snapshots[-1][0][0] if snapshots else 0
    paths = [p for _, p in snapshots[-1:]] + [
        p for base, p in segments if _segment_end(segments, base) > start]
    return sum(os.path.getsize(p) for p in paths)


def _segment_end(segments: list[tuple[int, str]], base: int) -> float:
    later = [b for b, _ in segments if b > base]
    return min(later) if later else float("inf")


def load_metadata_file(path: str | os.PathLike[str],
                       progress: Progress | None = None) -> MetadataReplay:
    """One snapshot or log segment from its first batch, as ``kafka-metadata-shell --snapshot``
    reads it (``SnapshotFileReader``): every record is a commit, control batches are skipped,
    and the provenance is the last batch read (offsets as the file holds them)."""
    path = os.path.abspath(os.fspath(path))
    replay = MetadataReplay(MetadataImage(), path)
    replayer = _Replayer(replay, False, progress)
    if snapshot_id_from_file(os.path.basename(path)) is not None:
        replay.snapshot = path
    else:
        replay.segments.append(path)
    replayer.file(path, 0, None)
    return _done(replayer)


def _done(replayer: _Replayer) -> MetadataReplay:
    replayer.finish()
    return replayer.replay


def problems(replay: MetadataReplay) -> Iterator[str]:
    """Every fault, the open transaction and the stop, one line each, in order."""
    for fault in replay.faults:
        yield f"record skipped: {fault}"
    if replay.open_transaction is not None:
        yield str(replay.open_transaction)
    if replay.stopped is not None:
        yield f"replay stopped: {replay.stopped}"
