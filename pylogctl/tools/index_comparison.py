"""How an index file on disk compares with the one Kafka's recovery builds, and whether a
difference matters.

A rebuild (``LogSegment.recover``) indexes batch by batch; a broker indexes its *appends*. So
Kafka's own files often differ from a rebuild without being wrong: a clean restart inside the
segment, the log cleaner (one append per read buffer), a follower (one append per fetched
multi-batch response), another ``index.interval.bytes``, or a leader before Kafka 3.8 (which
gave the time index the offset of the *record* holding the max timestamp) all leave valid
indexes. A difference is *benign* when every entry still leads lookups to the right batch,
judged by the rules of Kafka's DumpLogSegments verification (and the explanations of
:mod:`pylogctl.tools.dump_index`). It is *corrupt* when the file is not a whole number of
entries, ends in the zero-filled preallocated tail a crashed broker leaves, has entries out of
order or naming no batch or the wrong one, when a time index ends below the segment's largest
timestamp (a broker reads the segment's largest timestamp from its last entry, for time
retention), or when a transaction index lists other aborted transactions than the log implies
(read_committed consumers would drop the wrong records).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import PylogctlError
from ..format.control import ControlRecordType, parse_control_key
from ..format.log_stream import AnyBatch
from ..storage.file_records import FileRecords
from ..storage.files import read_bytes
from ..storage.naming import INDEX_SUFFIX, TIME_INDEX_SUFFIX, replace_suffix
from ..storage.offset_index import OffsetIndex, OffsetPosition
from ..storage.time_index import TimeIndex, TimestampOffset
from ..storage.transaction_index import ENTRY as TXN_ENTRY
from ..storage.transaction_index import AbortedTxn, read_transaction_index
from .dump_index import explain_offset_mismatch, explain_time_entry
from .dump_options import DEFAULT_MAX_MESSAGE_SIZE

IndexKind = Literal["offset-index", "time-index", "txn-index"]
Status = Literal["identical", "missing", "different"]
Verdict = Literal["benign", "corrupt"]
ENTRY_SIZES: dict[str, int] = {"offset-index": OffsetIndex.entry_size,
                               "time-index": TimeIndex.entry_size, "txn-index": TXN_ENTRY.size}


@dataclass(frozen=True)
class IndexComparison:
    """One index of one segment: the file on disk against the rebuilt one."""

    kind: IndexKind
    status: Status
    existing_entries: int | None  # None: no file
    rebuilt_entries: int
    first_difference: dict[str, Any] | None = None
    verdict: Verdict | None = None  # for "different"
    explanation: str | None = None

    @property
    def problem(self) -> bool:
        """Missing, or different in a way a broker or a consumer would trip over."""
        return self.status == "missing" or self.verdict == "corrupt"


class _Corrupt(Exception):
    """The first reason an existing index is not usable (internal to the judging)."""


def compare_index(kind: IndexKind, existing: str, rebuilt: str, base_offset: int,
                  log: FileRecords, valid_bytes: int,
                  preallocated: bool = False) -> IndexComparison:
    """Compare the index file ``existing`` with the freshly built ``rebuilt`` one.

    ``log`` is the segment's ``.log`` (read-only) and ``valid_bytes`` where its valid batches
    end. A missing ``.txnindex`` equals a rebuilt one without entries: Kafka only creates the
    file for its first aborted transaction. ``preallocated``: the segment is the active one of
    the KRaft metadata log, whose indexes the raft layer leaves at their preallocated size
    even when it stops cleanly (it recovers the whole log, and so rebuilds them, at every
    start); a zero-filled tail after the right entries is then what Kafka leaves, not damage.
    """
    new = read_bytes(rebuilt) if os.path.exists(rebuilt) else b""
    count = len(new) // ENTRY_SIZES[kind]  # a rebuilt index holds whole entries only
    if not os.path.exists(existing):
        if kind == "txn-index" and not new:
            return IndexComparison(kind, "identical", None, 0)
        return IndexComparison(kind, "missing", None, count)
    old = read_bytes(existing)
    whole = len(old) // ENTRY_SIZES[kind]
    if old == new:
        return IndexComparison(kind, "identical", whole, count)
    new_entries = _entries(kind, rebuilt, base_offset) if new else []
    # a crashed broker's preallocated index is megabytes of zeros: decode up to the first one
    zeros = None if kind == "txn-index" else _zero_tail(old, ENTRY_SIZES[kind])
    try:
        old_entries = _entries(kind, existing, base_offset, None if zeros is None else zeros + 1)
    except PylogctlError as exc:  # an unknown .txnindex entry version
        return IndexComparison(kind, "different", whole, count, None, "corrupt", exc.message)
    difference = _first_difference(old_entries, new_entries)
    # entry 0 counts as real unless the whole file is zeros (a metadata log that never
    # reached index.interval.bytes)
    real = zeros if zeros is not None and old.strip(b"\0") else 0
    if preallocated and zeros is not None and old_entries[:real] == new_entries[:real] \
            and len(new_entries) <= real + 1:
        # the rebuilt time index may end with the segment's largest timestamp, an entry a log
        # appends only when it closes the segment
        return IndexComparison(kind, "different", whole, count, difference, "benign",
                               f"{f'the same first {real} entries, then' if real else 'only'}"
                               f" the zero-filled preallocated tail the raft layer keeps on the "
                               f"metadata log's active segment even after a clean stop (Kafka "
                               f"recovers that log from offset 0, rebuilding its indexes, at "
                               f"every start)")
    try:
        explanation = _judge(kind, old, old_entries, new_entries, log, valid_bytes, rebuilt)
        verdict: Verdict = "benign"
    except _Corrupt as exc:
        explanation, verdict = str(exc), "corrupt"
    return IndexComparison(kind, "different", whole, count, difference, verdict, explanation)


def _entries(kind: IndexKind, path: str, base_offset: int,
             limit: int | None = None) -> list[Any]:
    if kind == "txn-index":
        return read_transaction_index(path)
    cls = OffsetIndex if kind == "offset-index" else TimeIndex
    with cls(path, base_offset) as index:
        count = index.entries if limit is None else min(limit, index.entries)
        return [index.entry(i) for i in range(count)]


def entry_dict(entry: Any) -> dict[str, Any]:
    """An index entry as JSON-ready data, with Kafka's field names."""
    if isinstance(entry, AbortedTxn):
        return {"producerId": entry.producer_id, "firstOffset": entry.first_offset,
                "lastOffset": entry.last_offset, "lastStableOffset": entry.last_stable_offset}
    return dict(entry._asdict())


def _first_difference(old: list[Any], new: list[Any]) -> dict[str, Any] | None:
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else None
        b = new[i] if i < len(new) else None
        if a != b:
            return {"entry": i, "existing": None if a is None else entry_dict(a),
                    "rebuilt": None if b is None else entry_dict(b)}
    return None  # same entries: the files differ only in a partial trailing entry


def _judge(kind: IndexKind, raw: bytes, old: list[Any], new: list[Any], log: FileRecords,
           valid_bytes: int, rebuilt: str) -> str:
    """Why the existing index is still fine; raises :class:`_Corrupt` saying why it is not.
    ``rebuilt`` is the rebuilt file; a rebuilt ``.index`` lies beside a rebuilt ``.timeindex``."""
    size = ENTRY_SIZES[kind]
    partial = len(raw) % size
    if kind == "txn-index":
        if old != new:
            return _judge_txn_index(old, new, log, valid_bytes)
        return (f"the same {len(old)} entries and a partial one ({partial} bytes) at the end, "
                f"which Kafka's reader ignores")
    if partial:
        raise _Corrupt(f"{len(raw)} bytes is not a whole number of {size}-byte entries: Kafka's "
                       f"sanity check fails and a broker rebuilds the index")
    zeros = _zero_tail(raw, size)
    if zeros is not None:
        raise _Corrupt(f"entries {zeros} to {len(raw) // size - 1} are zero bytes: the "
                       f"preallocated tail a broker leaves when it stops uncleanly (Kafka "
                       f"rebuilds the index on its next start)")
    if kind == "offset-index":
        return _judge_offset_index(old, new, log, valid_bytes)
    with OffsetIndex(replace_suffix(rebuilt, TIME_INDEX_SUFFIX, INDEX_SUFFIX)) as offsets:
        return _judge_time_index(old, new, log, offsets)


def _judge_txn_index(old: list[AbortedTxn], new: list[AbortedTxn], log: FileRecords,
                     valid_bytes: int) -> str:
    """A compacted segment's ``.txnindex`` as Kafka's log cleaner writes it: the entry of every
    aborted transaction whose ABORT marker it keeps, with the original first offset and last
    stable offset, although the transaction's data may be gone (``CleanedTransactionMetadata``).
    A rebuild only finds the transactions that still have a batch. Benign when every entry the
    rebuild finds is listed (same producer and marker), every other entry names an ABORT marker
    of its producer in the segment, and read_committed consumers drop the same batches."""
    def why() -> str:
        return (f"it lists {len(old)} aborted transactions where the log implies {len(new)}, or "
                f"other ones: read_committed consumers would drop or keep the wrong records")

    listed = {(t.producer_id, t.last_offset) for t in old}
    if any((t.producer_id, t.last_offset) not in listed for t in new):
        raise _Corrupt(why())
    markers, data = set(), []
    for batch in log.batches():
        if batch.position >= valid_bytes or batch.magic < 2:
            continue
        if batch.is_control:
            records = batch.records()
            if records and _control_type(records[0].key) == ControlRecordType.ABORT:
                markers.add((batch.producer_id, batch.base_offset))
        elif batch.is_transactional and batch.records_count:
            data.append(batch)
    if not listed <= markers:
        raise _Corrupt(why())

    def by_producer(entries: list[AbortedTxn]) -> dict[int, list[AbortedTxn]]:
        out: dict[int, list[AbortedTxn]] = {}
        for t in entries:
            out.setdefault(t.producer_id, []).append(t)
        return out

    def aborted(entries: dict[int, list[AbortedTxn]], batch: AnyBatch) -> bool:
        return any(t.first_offset <= batch.last_offset and batch.base_offset <= t.last_offset
                   for t in entries.get(batch.producer_id, ()))

    old_by, new_by = by_producer(old), by_producer(new)
    if any(aborted(old_by, b) != aborted(new_by, b) for b in data):
        raise _Corrupt(why())
    return (f"{len(old)} entries where a rebuild finds {len(new)}: the log cleaner keeps the "
            f"entry of each ABORT marker it keeps, with its original offsets, after the "
            f"transaction's data is gone; read_committed consumers drop the same batches")


def _control_type(key: bytes | None) -> ControlRecordType:
    try:
        return ControlRecordType.from_id(parse_control_key(key)[1])
    except PylogctlError:
        return ControlRecordType.UNKNOWN


def _zero_tail(raw: bytes, size: int) -> int | None:
    """The first entry of an all-zero tail (never entry 0, which may legitimately be zero)."""
    stripped = len(raw.rstrip(b"\0"))
    first = max(1, -(-stripped // size))
    return first if first * size < len(raw) else None


def _batch_at(log: FileRecords, position: int, valid_bytes: int) -> AnyBatch | None:
    """The valid batch starting exactly at ``position``, or None."""
    if not 0 <= position < valid_bytes:
        return None
    try:
        batch = next(iter(log.batches(position)), None)
        if batch is not None:
            batch.ensure_valid()
        return batch
    except PylogctlError:  # not a batch boundary: the bytes there do not parse or check
        return None


def _judge_offset_index(old: list[OffsetPosition], new: list[OffsetPosition], log: FileRecords,
                        valid_bytes: int) -> str:
    rebuilt = set(new)
    multi_batch = other = 0
    previous: OffsetPosition | None = None
    for i, entry in enumerate(old):
        if previous is not None and (entry.offset <= previous.offset
                                     or entry.position <= previous.position):
            raise _Corrupt(f"entry {i} (offset {entry.offset} at position {entry.position}) does "
                           f"not follow entry {i - 1} (offset {previous.offset} at position "
                           f"{previous.position}): offsets and positions must increase")
        previous = entry
        if entry in rebuilt:
            continue
        batch = _batch_at(log, entry.position, valid_bytes)
        if batch is None:
            raise _Corrupt(f"entry {i} (offset {entry.offset}) points at position "
                           f"{entry.position}, where no valid batch starts")
        other += 1
        if batch.last_offset != entry.offset:
            why = explain_offset_mismatch(log, entry, DEFAULT_MAX_MESSAGE_SIZE)
            if why["verdict"] == "corrupt":
                raise _Corrupt(f"entry {i}: {why['explanation']}")
            multi_batch += why["verdict"] == "benign"
    if not other:
        return _sparser(old, new)
    how = ("entries of multi-batch appends, as a follower writes them" if multi_batch else
           "entries at other append boundaries (a broker restart inside the segment, the log "
           "cleaner, or another index.interval.bytes)")
    return (f"{other} of {len(old)} entries differ from a rebuild's: {how}; every entry "
            f"leads lookups to the right batch")


def _sparser(old: list[Any], new: list[Any]) -> str:
    have = f"only {len(old)} of the {len(new)}" if old else f"none of the {len(new)}"
    return (f"{have} entries a rebuild writes: a sparser index (appends of several batches, "
            f"as the log cleaner writes a segment); lookups scan further but find every "
            f"offset")


def _judge_time_index(old: list[TimestampOffset], new: list[TimestampOffset], log: FileRecords,
                      offsets: OffsetIndex) -> str:
    """Kafka's time-index verification: each entry's offset ends a batch with that max
    timestamp (or, as older leaders wrote, names the record holding it); ``offsets`` (the
    rebuilt offset index) says where to start looking, as it does for a broker."""
    largest = new[-1].timestamp if new else None
    if largest is not None and (not old or old[-1].timestamp < largest):
        last = f"its last timestamp is {old[-1].timestamp}" if old else "it is empty"
        raise _Corrupt(f"{last}, below the segment's largest timestamp {largest}: a broker "
                       f"reads the segment's largest timestamp from the last entry (time "
                       f"retention would misjudge the segment)")
    rebuilt = set(new)
    record_level = other = 0
    previous: TimestampOffset | None = None
    for i, entry in enumerate(old):
        if previous is not None and (entry.timestamp <= previous.timestamp
                                     or entry.offset < previous.offset):
            raise _Corrupt(f"entry {i} (timestamp {entry.timestamp}, offset {entry.offset}) does "
                           f"not follow entry {i - 1} (timestamp {previous.timestamp}, offset "
                           f"{previous.offset}): timestamps must increase, offsets never "
                           f"decrease")
        previous = entry
        if entry in rebuilt:
            continue
        other += 1
        start = offsets.lookup(entry.offset).position
        found = log.search_for_offset_with_size(entry.offset, start)
        batch = None if found is None else next(iter(log.batches(found.position)))
        if batch is None or batch.base_offset > entry.offset:
            raise _Corrupt(f"entry {i}: offset {entry.offset} is in no batch of the log")
        if batch.last_offset == entry.offset:
            if batch.max_timestamp != entry.timestamp:
                raise _Corrupt(f"entry {i}: timestamp {entry.timestamp}, but the batch ending "
                               f"at offset {entry.offset} has max timestamp "
                               f"{batch.max_timestamp}")
            continue
        why = explain_time_entry(batch, entry)
        if why["verdict"] == "corrupt":
            raise _Corrupt(f"entry {i}: {why['explanation']}")
        record_level += 1
    if not other:
        return _sparser(old, new)
    if record_level:
        return (f"{record_level} of {len(old)} entries name the record holding a batch's max "
                f"timestamp, not the batch's last offset, as leaders before Kafka 3.8 wrote "
                f"them; time lookups still reach the right batch")
    return (f"{other} of {len(old)} entries differ from a rebuild's: entries at other append "
            f"boundaries (a broker restart inside the segment, the log cleaner, a follower's "
            f"multi-batch appends, or another index.interval.bytes); every entry holds the max "
            f"timestamp so far")
