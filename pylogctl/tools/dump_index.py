"""Dumping and verifying ``.index`` and ``.timeindex`` files, as kafka-dump-log does.

The verification rules are Kafka's (DumpLogSegments): an offset-index entry matches when the
first batch at its position has the entry's offset as its *last* offset; a time-index entry
matches when the batch found through the offset index ends at the entry's offset and its
largest record timestamp equals the entry's. Kafka stops at an entry (after the first) whose
offset equals the base offset: the zero-filled tail of a preallocated or crashed index.

Because real follower-written entries can point at a batch *before* the one holding the
offset (a multi-batch append is indexed with its last offset and its first position), every
offset-index mismatch carries an explanation saying whether lookups are still correct.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..errors import FileUnreadableError, PylogctlError
from ..storage.file_records import FileRecords
from ..storage.index import CorruptIndexError
from ..storage.naming import INDEX_SUFFIX, LOG_SUFFIX, offset_from_file
from ..storage.offset_index import OffsetIndex, OffsetPosition
from ..storage.time_index import TimeIndex
from .dump_options import DEFAULT_MAX_MESSAGE_SIZE, IndexDumpOptions

@dataclass
class IndexDump:
    """One index file: ``header``, lazy ``items`` (entries), then ``footer`` with the verdicts."""

    path: str
    kind: str
    header: dict[str, Any]
    options: IndexDumpOptions
    items_key: str = "entries"
    footer: dict[str, Any] = field(default_factory=dict)
    error: PylogctlError | None = None

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        if self.kind == "offset-index":
            return _offset_index_items(self)
        return _time_index_items(self)


def _sibling(path: str, suffix: str) -> str:
    name = os.path.basename(path).split(".", 1)[0]
    return os.path.join(os.path.dirname(os.path.abspath(path)), name + suffix)


def dump_index(path: str | os.PathLike[str], options: IndexDumpOptions = IndexDumpOptions()) -> IndexDump:
    path = os.fspath(path)
    kind = "offset-index" if path.endswith(INDEX_SUFFIX) else "time-index"
    try:
        base = offset_from_file(path)
    except ValueError:  # Kafka throws NumberFormatException; a one-line error here
        raise PylogctlError(f"Cannot parse a base offset from the file name "
                            f"{os.path.basename(path)}: Kafka names index files by their "
                            f"segment's base offset", path=path) from None
    header = {"file": path, "type": kind, "baseOffset": base}
    return IndexDump(path=path, kind=kind, header=header, options=options)


def _fail(dump: IndexDump, exc: PylogctlError) -> None:
    """The error that stops this dump, in the footer too so ``-o json`` shows it (as a log
    dump's footer does)."""
    dump.error = exc
    dump.footer["error"] = {"message": str(exc), "position": exc.position}


def explain_offset_mismatch(log: FileRecords, entry: OffsetPosition, max_bytes: int) -> dict[str, Any]:
    """Why the batch at ``entry.position`` does not end at ``entry.offset``, and whether it matters."""
    if entry.position < 0:
        return {"verdict": "corrupt", "explanation": f"the entry's position {entry.position} is "
                f"negative: it points before the start of the log"}
    first = None
    for batch in log.batches(entry.position):
        if first is None:
            first = batch
        if batch.position - entry.position > max_bytes * 64 or batch.base_offset > entry.offset:
            break
        if batch.base_offset <= entry.offset <= batch.last_offset:
            if batch is first:
                return {"verdict": "ok", "explanation": "the batch at the position holds the offset "
                        "but does not end there"}
            return {"verdict": "benign", "foundAtPosition": batch.position,
                    "explanation": f"offset {entry.offset} is in a later batch (position "
                    f"{batch.position}): the entry indexes a multi-batch append, as a follower "
                    f"writes it; lookups scan forward from position {entry.position} and still "
                    f"find it"}
    if first is None:
        return {"verdict": "corrupt", "explanation": f"no batch at position {entry.position}: it is "
                f"past the end of the log ({log.size_in_bytes} bytes)"}
    if first.base_offset > entry.offset:
        return {"verdict": "corrupt", "explanation": f"the batch at position {entry.position} starts "
                f"at offset {first.base_offset}, after the indexed offset {entry.offset}: lookups "
                f"would skip records"}
    return {"verdict": "corrupt", "explanation": f"offset {entry.offset} is not in the log after "
            f"position {entry.position}"}


def _offset_index_items(dump: IndexDump) -> Iterator[dict[str, Any]]:
    opts = dump.options
    mismatches: list[dict[str, Any]] = []
    dump.footer = {"entryCount": 0, "empty": False, "sanityCheck": None, "mismatches": mismatches}
    try:
        log = FileRecords(_sibling(dump.path, LOG_SUFFIX))
    except FileUnreadableError as exc:
        _fail(dump, exc)
        return
    try:
        with log, OffsetIndex(dump.path) as index:
            dump.footer["entryCount"] = index.entries
            if index.entries == 0:
                dump.footer["empty"] = True
                return
            if opts.sanity_check_only:
                index.sanity_check()
                dump.footer["sanityCheck"] = "passed"
                return
            for i in range(index.entries):
                entry = index.entry(i)
                if i > 0 and entry.offset == index.base_offset:
                    break
                # a negative position (a corrupt entry) names no batch: Kafka's slice rejects it
                first = next(iter(log.batches(entry.position)), None) if entry.position >= 0 else None
                if first is not None and first.position + first.size_in_bytes > entry.position + opts.max_message_size:
                    first = None  # the batch does not fit in the slice Kafka reads
                log_offset = -1 if first is None else first.last_offset
                if log_offset != entry.offset:
                    mismatches.append({"indexOffset": entry.offset, "logOffset": log_offset,
                                       **explain_offset_mismatch(log, entry, opts.max_message_size)})
                if not opts.verify_only:
                    yield {"offset": entry.offset, "position": entry.position}
    except PylogctlError as exc:
        # the index's own errors name it already; one without a file came from the segment
        _fail(dump, exc.at(log.path))
    mismatches.sort(key=lambda m: -m["indexOffset"])


def _time_index_items(dump: IndexDump) -> Iterator[dict[str, Any]]:
    opts = dump.options
    errors: dict[str, list] = {"timestampMismatches": [], "outOfOrder": [], "notFound": []}
    dump.footer = {"entryCount": 0, "sanityCheck": None, **errors}
    try:
        log = FileRecords(_sibling(dump.path, LOG_SUFFIX))
    except FileUnreadableError as exc:
        _fail(dump, exc)
        return
    offset_index_path = _sibling(dump.path, INDEX_SUFFIX)
    try:
        with log, TimeIndex(dump.path) as tindex:
            index = OffsetIndex(offset_index_path) if os.path.exists(offset_index_path) else None
            dump.footer["entryCount"] = tindex.entries
            if opts.sanity_check_only:
                tindex.sanity_check()
                dump.footer["sanityCheck"] = "passed"
                return
            prev_ts = -1
            for i in range(tindex.entries):
                entry = tindex.entry(i)
                if i > 0 and entry.offset == tindex.base_offset:
                    break
                start = index.lookup(entry.offset).position if index is not None else 0
                if start < 0:  # a corrupt offset-index entry: scan the segment from its start
                    start = 0
                match = next((b for b in log.batches(start) if b.last_offset >= entry.offset), None)
                if match is None:
                    errors["notFound"].append({"indexOffset": entry.offset, "logOffset": -1,
                                               "verdict": "corrupt", "explanation": "no batch at "
                                               "or after the indexed offset"})
                elif match.last_offset != entry.offset:
                    errors["notFound"].append({"indexOffset": entry.offset,
                                               "logOffset": match.last_offset,
                                               **explain_time_entry(match, entry)})
                else:
                    max_ts = max((r.timestamp for r in match.records()), default=-1)
                    if max_ts != entry.timestamp:
                        errors["timestampMismatches"].append({"indexTimestamp": entry.timestamp,
                                                              "logTimestamp": max_ts})
                    if prev_ts >= entry.timestamp:
                        errors["outOfOrder"].append({"indexTimestamp": entry.timestamp,
                                                     "previousTimestamp": prev_ts})
                if not opts.verify_only:
                    yield {"timestamp": entry.timestamp, "offset": entry.offset}
                prev_ts = entry.timestamp
            if index is not None:
                index.close()
    except PylogctlError as exc:
        # the index's own errors name it already; one without a file came from the segment
        _fail(dump, exc.at(log.path))


def explain_time_entry(batch, entry) -> dict[str, Any]:
    """A time-index entry inside a batch rather than at its end: which broker rule wrote it."""
    if batch.base_offset <= entry.offset:
        rec = next((r for r in batch.records() if r.offset == entry.offset), None)
        if rec is not None and rec.timestamp == entry.timestamp:
            return {"verdict": "benign", "explanation": f"the entry names the record holding the "
                    f"batch's max timestamp (offset {entry.offset}), not the batch's last offset "
                    f"{batch.last_offset}: older brokers indexed it so; time lookups still reach "
                    f"the right batch"}
    return {"verdict": "corrupt", "explanation": f"offset {entry.offset} does not hold timestamp "
            f"{entry.timestamp} in the batch ending at {batch.last_offset}"}


__all__ = ["IndexDump", "IndexDumpOptions", "dump_index", "CorruptIndexError",
           "DEFAULT_MAX_MESSAGE_SIZE", "explain_offset_mismatch", "explain_time_entry"]
