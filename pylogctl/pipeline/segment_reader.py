"""Reading one split into columns: the loop both engines run, so both return the same rows.

The split's batches are walked with the engine's batch iterator (:func:`iter_batches` over
the :class:`FileRecords` map, every v0/v1/v2 format); a batch is skipped on its header alone
when its offsets lie below the seek offset or its maximum timestamp (v2) below the time
filter, and the walk stops at the first v2 batch based at or past the offset filter's end.
Every other batch has its CRC checked (as a consumer's ``check.crcs``) and its records
decoded and tested against the whole filter. A corrupt batch raises with the segment and the
byte position.

Records arrive in columns (a dict of lists, only the columns asked for) of at most
``chunk_records`` records: the Spark data source turns each into an Arrow batch without
building Python rows, the local engine zips them into rows.

A split that ends before the end of its file must end on a batch boundary: a walk that jumps
past it, or stops short of it, means the offset index it was cut at lied, and is an error
rather than silently lost or doubled records.

A split of a segment in object storage (its path a URL) is fetched, not mapped: one ranged
read from the offset index's entry for the seek offset to the first entry past which no batch
below the offset filter's end starts (:class:`RemoteFileRecords`), each checked to start a
batch, so a narrow offset range costs the index and a few KiB, not the segment.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from ..errors import CorruptRecordError, PylogctlError
from ..format.log_stream import iter_batches
from ..format.record import TimestampType
from ..storage import filesystems
from ..storage.file_records import FileRecords
from ..storage.offset_index import OffsetPosition
from ..storage.remote_records import RemoteFileRecords
from .plan import SegmentSplit, batch_floor, sane_offset_index
from .scan_filter import LONG_END, LONG_MIN, ScanFilter

CHUNK_RECORDS = 8192
CHUNK_BYTES = 16 * 1024 * 1024
PROGRESS_BYTES = 4 * 1024 * 1024  # a progress bar's step: ~0.1 s of reading
_HEADER_MARGIN = 64  # a v2 batch header is 61 bytes; a v0/v1 message header fewer
Columns = dict[str, list[Any]]
_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
_TS_TYPES = {t: str(t) for t in TimestampType}


def _index_entries(split: SegmentSplit, seeking: bool, hi: int
                   ) -> tuple[OffsetPosition | None, OffsetPosition | None]:
    """From the offset index (read once): the entry for the seek offset when its position lies
    inside the split, and one whose position no batch below offset ``hi`` starts at or after
    (inside the split too); either None when the index cannot tell. Neither is yet checked to
    start a batch."""
    index = sane_offset_index(split.index_path, split.base_offset)
    if index is None:
        return None, None
    try:
        seek = index.lookup(split.seek_offset) if seeking else None
        bound = None
        if hi < LONG_END:
            # a batch at entry k's position is based past entry k-1's offset (the last offset
            # of an earlier append): entries past the first one at or above hi - 1 qualify
            j = index.largest_lower_bound_slot(hi - 1)
            if j < 0 or index.entry(j).offset < hi - 1:
                j += 1
            if j + 1 < index.entries:
                bound = index.entry(j + 1)
    finally:
        index.close()

    def inside(entry: OffsetPosition | None) -> OffsetPosition | None:
        if entry is None or entry.position <= split.start \
                or (split.stop is not None and entry.position >= split.stop):
            return None
        return entry
    return inside(seek), inside(bound)


def _starts_batch(split: SegmentSplit, view: memoryview, end: int,
                  entry: OffsetPosition) -> bool:
    p = entry.position
    ok, floor = batch_floor(view, p, end, split.base_offset, entry.offset)
    return ok and floor is not None


def _seek(split: SegmentSplit, view: memoryview, end: int) -> int:
    """Where to start reading: the offset index's position for the seek offset, when it is
    inside the split and starts a batch; else the split's start."""
    entry = _index_entries(split, True, LONG_END)[0]
    if entry is None or not _starts_batch(split, view, end, entry):
        return split.start
    return entry.position


def _open_remote(split: SegmentSplit, seeking: bool, hi: int
                 ) -> tuple[RemoteFileRecords, int, int | None]:
    """A remote split's bytes and the ``[start, stop)`` to walk: from the index's position for
    the seek offset and up to one past which no batch below ``hi`` starts, each where it
    starts a batch (the bytes outside are never fetched); else the split's own bounds."""
    size = split.file_size if split.file_size is not None else filesystems.size(split.path)
    records = RemoteFileRecords(split.path, size)
    seek, bound = (_index_entries(split, seeking, hi) if seeking or hi < LONG_END
                   else (None, None))
    if bound is not None and seek is not None and bound.position <= seek.position:
        bound = None
    # the walk parses the header of the batch at its stop before it stops there
    lo = split.start if seek is None else seek.position
    top = _past(split.stop) if bound is None else _past(bound.position)
    records.fetch(lo, top)  # one ranged GET, unless an index entry lied
    start, stop = lo, split.stop
    if seek is not None and not _starts_batch(split, records.view, size, seek):
        records.fetch(split.start, lo)
        start = split.start
    if bound is not None and _starts_batch(split, records.view, size, bound):
        stop = bound.position
    elif bound is not None:
        records.fetch(top, _past(split.stop))
    return records, start, stop


def _past(stop: int | None) -> int | None:
    """Where a fetch for a walk that stops at ``stop`` ends: past the next batch's header."""
    return None if stop is None else stop + _HEADER_MARGIN


def read_split(split: SegmentSplit, scan_filter: ScanFilter, columns: tuple[str, ...], *,
               chunk_records: int = CHUNK_RECORDS, chunk_bytes: int = CHUNK_BYTES,
               progress: Callable[[int], None] | None = None) -> Iterator[Columns]:
    """Yield the records of ``split`` that ``scan_filter`` keeps, as column chunks.

    ``progress`` is told of every :data:`PROGRESS_BYTES` read (whether records matched or
    not, so a bar moves through a selective ``--grep``); the caller accounts for the rest of
    the split once it is done."""
    want = frozenset(columns)
    topic, partition, path = split.topic, split.partition, split.path
    seek = split.seek_offset
    f = scan_filter
    lo, hi, tlo, thi = f.offset_from, f.offset_to, f.time_from, f.time_to
    key, needle = f.key, f.value_contains
    offsets = lo > LONG_MIN or hi < LONG_END
    times = tlo > LONG_MIN or thi < LONG_END
    time_skip = tlo > LONG_MIN
    cols: Columns = {c: [] for c in columns}
    count = size = 0
    seeking = split.indexed and seek > split.offset_lower
    if filesystems.is_url(path):
        records, start, stop = _open_remote(split, seeking, hi if split.indexed else LONG_END)
    else:
        records, start, stop = FileRecords(path), split.start, split.stop
    with records:
        view, end = records.view, records.end
        if seeking and records.__class__ is FileRecords:
            start = _seek(split, view, end)
        reached = stop is None
        last_end = start
        reported = split.start
        try:
            for batch in iter_batches(view, start, end, path):
                pos = batch.position
                if stop is not None and pos >= stop:
                    if pos != stop:
                        raise CorruptRecordError(
                            f"a batch spans the split boundary {stop} taken from the offset "
                            f"index (it ends at byte position {pos}; run rebuild-index "
                            f"--verify)", path=path, position=stop)
                    reached = True
                    break
                last_end = pos + batch.size_in_bytes
                records.release(pos)
                if progress is not None and pos - reported >= PROGRESS_BYTES:
                    progress(pos - reported)
                    reported = pos
                if batch.last_offset < seek:
                    continue
                magic = batch.magic
                if magic == 2:
                    if batch.base_offset >= hi:
                        reached = True
                        break
                    if time_skip and batch.max_timestamp < tlo:
                        continue
                batch.ensure_valid()
                recs = batch.records()
                # one cheap pass per active test (a pass costs less than a compound test)
                if offsets and not (magic == 2 and lo <= batch.base_offset
                                    and batch.last_offset < hi):
                    recs = [r for r in recs if lo <= r.offset < hi]
                if key is not None:
                    recs = [r for r in recs if r.key == key]
                if times:
                    recs = [r for r in recs if tlo <= r.timestamp < thi]
                if needle is not None:
                    recs = [r for r in recs if (v := r.value) is not None and needle in v]
                n = len(recs)
                if not n:
                    continue
                _fill(cols, want, recs, batch, magic, topic, partition, path, pos, n)
                count += n
                size += batch.size_in_bytes
                if count >= chunk_records or size >= chunk_bytes:
                    yield cols
                    cols = {c: [] for c in columns}
                    count = size = 0
        except PylogctlError as exc:
            raise exc.at(path)
        if not reached:
            raise CorruptRecordError(
                f"the batches end at byte position {last_end}, before the split boundary "
                f"{stop} taken from the offset index (the segment is corrupt there)",
                path=path, position=last_end)
    if count:
        yield cols


def _fill(cols: Columns, want: frozenset[str], recs: list, batch: Any, magic: int, topic: str,
          partition: int, path: str, position: int, n: int) -> None:
    """Append the columns of ``recs`` (all from ``batch``)."""
    if "topic" in want:
        cols["topic"].extend([topic] * n)
    if "partition" in want:
        cols["partition"].extend([partition] * n)
    if "offset" in want:
        cols["offset"].extend([r.offset for r in recs])
    if "timestamp" in want:
        cols["timestamp"].extend([r.timestamp for r in recs])
    if "timestampType" in want:
        if magic == 2:
            cols["timestampType"].extend([_TS_TYPES[batch.timestamp_type]] * n)
        else:
            cols["timestampType"].extend([_TS_TYPES[r.timestamp_type] for r in recs])
    if "key" in want:
        cols["key"].extend([r.key for r in recs])
    if "value" in want:
        cols["value"].extend([r.value for r in recs])
    if "keySize" in want:
        cols["keySize"].extend([-1 if r.key is None else len(r.key) for r in recs])
    if "valueSize" in want:
        cols["valueSize"].extend([-1 if r.value is None else len(r.value) for r in recs])
    if "headers" in want:
        cols["headers"].extend([r.headers for r in recs])
    if "producerId" in want:
        cols["producerId"].extend([batch.producer_id] * n)
    if "producerEpoch" in want:
        cols["producerEpoch"].extend([batch.producer_epoch] * n)
    if "sequence" in want:
        cols["sequence"].extend([r.sequence for r in recs])
    if "isTransactional" in want:
        cols["isTransactional"].extend([batch.is_transactional] * n)
    if "isControl" in want:
        cols["isControl"].extend([batch.is_control] * n)
    if "partitionLeaderEpoch" in want:
        cols["partitionLeaderEpoch"].extend([batch.partition_leader_epoch] * n)
    if "codec" in want:
        cols["codec"].extend([_CODECS[batch.attributes & 0x07]] * n)
    if "magic" in want:
        cols["magic"].extend([magic] * n)
    if "segment" in want:
        cols["segment"].extend([path] * n)
    if "position" in want:
        cols["position"].extend([position] * n)


def chunk_rows(chunk: Columns, columns: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """The rows of a column chunk, as dicts in column order."""
    for values in zip(*(chunk[c] for c in columns)):
        yield dict(zip(columns, values))


__all__ = ["read_split", "chunk_rows", "CHUNK_RECORDS", "LONG_END"]
