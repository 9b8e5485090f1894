"""Loading one ``__consumer_offsets`` partition the way the group coordinator does.

Kafka's coordinator, on becoming leader of an offsets partition, reads it from the log start
offset to the log end (not the high watermark) and replays every record in offset order
(``GroupMetadataManager.doLoadGroupsAndOffsets``, ``CoordinatorLoaderImpl``). The replay
rules (last record wins, tombstones, transactions) are :class:`~.replay.RecordReplay`'s; this
module reads the segments into it and turns the surviving records into groups:

- a group exists when it has a live registration (classic record 2 or KIP-848 records 3-8),
  committed offsets, or offsets pending in a transaction;
- unknown record types are skipped (a warning in Kafka); share-group records (10-15, KIP-932)
  build share groups, streams-group records (17, 19-23, KIP-1071) streams groups, neither of
  which ``kafka-consumer-groups.sh`` shows (a streams group's offset commits are its own);
  types 9 and 18, the partition-metadata records of share and streams groups before Kafka
  4.1, are unknown to Kafka 4.4's loader, and so here;
- with ``group_ids``, only those groups are decoded (and only batches holding their ids read).

Reading stops where recovery would cut the log: a batch with a corrupt header, a failed CRC
or undecodable records, or bytes after the last complete batch. Such a problem, an undecodable
record, or a record without a key becomes a :class:`LoadNote` naming the file and byte
position; nothing raises. Appending records later (offset resets, deletions) only needs the
same replay over the longer log.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Collection

from ..errors import CorruptRecordError, FileUnreadableError, PylogctlError
from ..format.group_coordinator_records import GroupRecordType as T
from ..format.group_coordinator_records import decode_group_record, encode_group_record
from ..format.crc import crc32c
from ..format.log_stream import HEADER_SIZE_UP_TO_MAGIC, iter_batches
from ..format.varint import INT64_MAX, INT64_MIN
from ..format.record_batch import (ATTRIBUTES_OFFSET, CODEC_MASK, CONTROL_FLAG, HEADER,
                                   LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_FLAG,
                                   TRANSACTIONAL_FLAG, decode_records)
from .replay import SCAN_DONE, RecordReplay, new_latest
from ..storage.file_records import RELEASE_EVERY, FileRecords
from ..storage.log_dir_layout import log_segments
from .consumer_group import CONSUMER_GROUP_TYPES, ConsumerGroupRecords
from .share_group import SHARE_GROUP_RECORD_TYPES, ShareGroupRecords
from .streams_group import STREAMS_GROUP_TYPES, StreamsGroupRecords
from .group_metadata import Group, Member, classic_group
from .offset_commits import (OffsetAndMetadata, TopicPartition, decode_offset_commit_key,
                             decode_offset_commit_value)

_SLOW_ATTRIBUTES = CODEC_MASK | TRANSACTIONAL_FLAG | CONTROL_FLAG
_COMMIT_TYPES = frozenset({int(T.LEGACY_OFFSET_COMMIT), int(T.OFFSET_COMMIT)})
_GROUP_METADATA = int(T.GROUP_METADATA)
_LOG_APPEND_TIME = TIMESTAMP_TYPE_FLAG


@dataclass(frozen=True)
class LoadNote:
    """Something met while loading: the file and byte position when known. ``problem`` is
    False for what Kafka's loader also passes over silently (records of unknown types)."""

    message: str
    path: str | None = None
    position: int | None = None
    problem: bool = True

    def __str__(self) -> str:
        where = [p for p in (self.path, None if self.position is None
                             else f"byte position {self.position}") if p]
        return f"{self.message} ({', '.join(where)})" if where else self.message


@dataclass
class LoadedPartition:
    """What loading one offsets partition found. ``next_offset`` is the offset after the last
    batch read: the log end offset, unless reading stopped at invalid data (see ``notes``)."""

    partition: int
    path: str
    log_start_offset: int
    groups: dict[str, Group] = field(default_factory=dict)
    next_offset: int = 0
    bytes_read: int = 0
    batches: int = 0
    records: int = 0
    notes: list[LoadNote] = field(default_factory=list)
    # the live records of each KIP-848 group (type, key, value), for a coordinator to replay
    consumer_group_records: dict[str, list[tuple[int, dict[str, Any], dict[str, Any]]]] = \
        field(default_factory=dict)


def group_key_prefixes(group_id: str) -> dict[int, bytes]:
    """For each record type number up to the highest known, how the key of any record of
    ``group_id`` starts: every key schema opens with the group id as a non-flexible string
    (numbers Kafka retired, such as 9 and 18, included: old logs still hold them)."""
    tail = encode_group_record(T.GROUP_METADATA, {"group": group_id})[0][2:]
    return {t: t.to_bytes(2, "big") + tail for t in range(max(T) + 1)}


def load_offsets_partition(partition_dir: str | os.PathLike[str], partition: int, *,
                           log_start_offset: int = 0,
                           group_ids: Collection[str] | None = None,
                           topic_name: Callable[[str], str | None] = lambda _: None
                           ) -> LoadedPartition:
    """Load ``partition_dir`` (``__consumer_offsets-{partition}``) as a coordinator would.

    ``log_start_offset`` is the checkpointed log start (batches wholly below it are skipped);
    ``group_ids`` limits the result to those groups; ``topic_name`` names the topic ids of
    KIP-848 assignments that the group's own records do not name.
    """
    path = os.fspath(partition_dir)
    segments = log_segments(path)
    first = segments[0][0] if segments else 0
    loaded = LoadedPartition(partition, path, max(log_start_offset, first), next_offset=first)
    needles = None
    if group_ids is not None:
        # a group id is written in a key as int16 length + UTF-8 bytes
        tails = {group_key_prefixes(g)[T.GROUP_METADATA][2:] for g in group_ids}
        needles = re.compile(b"|".join(re.escape(t) for t in sorted(tails)))
    # the C table only pays off over whole batches; with group ids most are skipped unread
    replay = RecordReplay(needles, new_latest(accelerated=needles is None))
    for _, segment in segments:
        if not _read_segment(segment, loaded, replay):
            break
    loaded.records = replay.records
    _Decoder(loaded, segments, group_ids, topic_name).run(replay)
    return loaded


def _read_segment(path: str, loaded: LoadedPartition, replay: RecordReplay) -> bool:
    """Replay one segment's valid batches; False when reading must stop here."""
    try:
        records = FileRecords(path)
    except FileUnreadableError as exc:
        loaded.notes.append(LoadNote(exc.message, path))
        return False
    with records:
        end = _scan(records, path, loaded, replay)
        size = records.file_size
    if end is None:
        return False
    if end < size:
        loaded.notes.append(LoadNote(f"{size - end} invalid bytes at the end: reading stops "
                                     f"here, as recovery would truncate them", path, end))
        return False
    return True


def _scan(segment: FileRecords, path: str, loaded: LoadedPartition, replay: RecordReplay
          ) -> int | None:
    """Replay the batches of ``segment``; the end of the last valid one, or None after a note
    saying why reading stopped.

    Most batches of an offsets partition are small, uncompressed, plain v2 batches of offset
    commits, and per-batch overhead dominates a replay; so those are framed, CRC-checked and
    decoded right from the header fields (the calls :class:`RecordBatch` would make). Any other
    batch (legacy, compressed, transactional, control, or a header that is not plainly whole
    and sane) goes through :func:`~pylogctl.format.log_stream.iter_batches`, which applies
    Kafka's framing rules and errors.

    With the C table (:class:`~.replay.LastRecords`), its ``scan`` does all of that for runs of
    uncompressed v2 batches, transactional and control ones included (the replay's own
    ``end_transaction`` applies the markers), and stops before any batch it cannot finish
    exactly so; the loop below then takes that one batch (and any note or error it brings)
    and hands on to ``scan`` again.
    """
    view, size = segment.view, segment.file_size
    unpack = HEADER.unpack_from
    add_plain, needles = replay.add_plain, replay.needles
    fast = getattr(replay.latest, "scan", None) if needles is None else None
    if not INT64_MIN <= loaded.log_start_offset <= INT64_MAX:
        fast = None
    log_start = loaded.log_start_offset
    pos = batches = 0
    next_offset = loaded.next_offset
    release = RELEASE_EVERY
    try:
        while pos < size - HEADER_SIZE_UP_TO_MAGIC:
            if pos >= release:  # keep the resident set bounded on a big segment
                segment.release(pos)
                release += RELEASE_EVERY
            if fast is not None:
                pos, n, records, last, stopped = fast(view, pos, size, release, log_start,
                                                      replay.pending, replay.end_transaction)
                batches += n
                replay.records += records
                if last is not None:
                    next_offset = last
                if stopped in SCAN_DONE:
                    continue  # the end, or time to release pages
            slow = pos + RECORD_BATCH_OVERHEAD > size
            if not slow:
                (base, length, _, magic, crc, attributes, delta, base_ts, max_ts, _, _,
                 base_seq, count) = unpack(view, pos)
                stop = pos + LOG_OVERHEAD + length
                slow = (magic != 2 or stop > size or stop < pos + RECORD_BATCH_OVERHEAD
                        or attributes & _SLOW_ATTRIBUTES != 0)
            if slow:
                batch = next(iter_batches(view, pos, size, path), None)
                if batch is None:
                    break
                if batch.next_offset > log_start:
                    if not batch.is_valid:
                        _crc_note(loaded, path, batch.base_offset, batch.position)
                        return None
                    replay.add(batch, view)
                    next_offset = batch.next_offset
                pos = batch.position + batch.size_in_bytes
                batches += 1
                continue
            if base + delta >= log_start:
                if crc32c(view[pos + ATTRIBUTES_OFFSET:stop]) != crc:
                    _crc_note(loaded, path, base, pos)
                    return None
                start = pos + RECORD_BATCH_OVERHEAD
                if needles is None or needles.search(view, start, stop) is not None:
                    try:
                        records = decode_records(bytes(view[start:stop]), count, base, base_ts,
                                                 base_seq, max_ts if attributes & _LOG_APPEND_TIME
                                                 else None)
                    except PylogctlError as exc:
                        exc.position = pos if exc.position is None else start + exc.position
                        raise
                    add_plain(records)
                next_offset = base + delta + 1
            pos = stop
            batches += 1
    except PylogctlError as exc:
        loaded.notes.append(LoadNote(f"{exc.message}: reading stops here", path,
                                     pos if exc.position is None else exc.position))
        return None
    finally:
        view = None  # no view into the map may outlive the file
        loaded.batches += batches
        loaded.bytes_read += pos
        loaded.next_offset = next_offset
    return pos


def _crc_note(loaded: LoadedPartition, path: str, base_offset: int, position: int) -> None:
    loaded.notes.append(LoadNote(f"batch at offset {base_offset} fails its CRC check: reading "
                                 f"stops here, as recovery would truncate the log", path,
                                 position))


class _Decoder:
    """Turns the surviving raw records into groups."""

    def __init__(self, loaded: LoadedPartition, segments: list[tuple[int, str]],
                 group_ids: Collection[str] | None,
                 topic_name: Callable[[str], str | None]) -> None:
        self.loaded = loaded
        self.segments = segments
        self.topic_name = topic_name
        self.prefixes = None if group_ids is None else [
            tuple(group_key_prefixes(g)[t] for g in group_ids) for t in range(max(T) + 1)]
        self.offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        self.classic: dict[str, Group] = {}
        self.modern: dict[str, ConsumerGroupRecords] = {}
        self.unknown: dict[int, int] = {}
        self.streams: dict[str, StreamsGroupRecords] = {}
        self.share: dict[str, ShareGroupRecords] = {}
        # one TopicPartition object per partition named: a load of 10,000 groups names a few
        # hundred partitions some 500,000 times, in offsets and assignments; shared objects
        # save memory and make a worker process's result much cheaper to send back (pickle
        # writes each object once, the rest are references)
        self.tps: dict[TopicPartition, TopicPartition] = {}
        self.commit_keys: dict[bytes, tuple[str, str]] = {}

    def run(self, replay: RecordReplay) -> None:
        for key, (offset, value) in replay.survivors().items():
            if value is not None:
                self._record(key, offset, value, self.offsets)
        pending: dict[int, dict[str, dict[TopicPartition, OffsetAndMetadata]]] = {}
        for producer_id, records in replay.pending.items():
            for key, (offset, value) in records.items():
                self._record(key, offset, value, pending.setdefault(producer_id, {}))
        self._groups(pending)
        for rtype, count in sorted(self.unknown.items()):
            self.loaded.notes.append(LoadNote(
                f"{count} record(s) of unknown type {rtype} skipped (Kafka skips them too)",
                self.loaded.path, problem=False))

    def _wanted(self, key: bytes, rtype: int) -> bool:
        if self.prefixes is None:
            return True
        return 0 <= rtype < len(self.prefixes) and key.startswith(self.prefixes[rtype])

    def _record(self, key: bytes | None, offset: int, value: bytes,
                offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]]) -> None:
        if key is None:
            self._note(offset, "record without a key skipped (Kafka's loader fails on it)")
            return
        rtype = int.from_bytes(key[:2], "big", signed=True) if len(key) >= 2 else -1
        if self.prefixes is not None and not self._wanted(key, rtype):
            return
        try:
            if rtype in _COMMIT_TYPES:
                group, tp = self._commit_key(key)
                offsets.setdefault(group, {})[tp] = decode_offset_commit_value(value, offset)
            elif rtype == _GROUP_METADATA:
                rec = decode_group_record(key, value)
                self.classic[rec.group_id] = classic_group(rec.group_id, self.loaded.partition,
                                                           rec.value, offset)
            elif rtype in CONSUMER_GROUP_TYPES:
                rec = decode_group_record(key, value)
                self.modern.setdefault(rec.group_id, ConsumerGroupRecords(rec.group_id)).add(
                    rtype, rec.key, rec.value, offset)
            elif rtype in SHARE_GROUP_RECORD_TYPES:
                rec = decode_group_record(key, value)
                self.share.setdefault(rec.group_id, ShareGroupRecords(rec.group_id)).add(
                    rtype, rec.key, rec.value, offset)
            elif rtype in STREAMS_GROUP_TYPES:
                rec = decode_group_record(key, value)
                self.streams.setdefault(rec.group_id, StreamsGroupRecords(rec.group_id)).add(
                    rtype, rec.key, rec.value, offset)
            else:
                self.unknown[rtype] = self.unknown.get(rtype, 0) + 1
        except CorruptRecordError as exc:
            self._note(offset, f"undecodable record skipped ({exc.message})")

    def _groups(self, pending: dict[int, dict[str, dict[TopicPartition, OffsetAndMetadata]]]
                ) -> None:
        groups = self.loaded.groups
        partition = self.loaded.partition
        for group_id, share in self.share.items():
            self.classic[group_id] = share.build(partition, self.topic_name)
        for group_id, streams in self.streams.items():
            self.classic[group_id] = streams.build(partition)
        for group_id, records in self.modern.items():
            group = records.build(partition, self.topic_name)
            old = self.classic.get(group_id)
            if old is None or (old.registration_offset or -1) < records.last_offset:
                self.classic[group_id] = group
                self.loaded.consumer_group_records[group_id] = records.live
        for group_id in sorted({*self.classic, *self.offsets, *self.streams,
                                *(g for p in pending.values() for g in p)},
                               key=lambda g: g.encode("utf-16-be", "surrogatepass")):
            group = self.classic.get(group_id) or Group(group_id, partition)
            if group.members:
                group.members = tuple(map(self._shared, group.members))
            group.offsets = self.offsets.get(group_id, {})
            group.pending_offsets = {pid: p[group_id] for pid, p in pending.items()
                                     if group_id in p}
            groups[group_id] = group

    def _commit_key(self, key: bytes) -> tuple[str, TopicPartition]:
        """The group and partition of an offset-commit key. The keys of a group's commits to
        one topic differ only in their last four bytes, the partition, so each such prefix is
        decoded once (when the key is exactly type, group, topic and partition)."""
        prefix = key[:-4]
        known = self.commit_keys.get(prefix)
        if known is None:
            group, topic, partition = decode_offset_commit_key(key)
            # the layout, from the lengths written: nothing after the partition
            group_size = int.from_bytes(key[2:4], "big", signed=True)
            topic_size = int.from_bytes(key[4 + group_size:6 + group_size], "big", signed=True)
            if group_size >= 0 and topic_size >= 0 and len(key) == 10 + group_size + topic_size:
                self.commit_keys[prefix] = (group, topic)
        else:
            group, topic = known
            partition = int.from_bytes(key[-4:], "big", signed=True)
        tp = TopicPartition(topic, partition)
        return group, self.tps.setdefault(tp, tp)

    def _shared(self, member: Member) -> Member:
        """``member`` with its assignments made of the shared TopicPartitions."""
        tps = self.tps
        changes = {name: tuple([tps.setdefault(tp, tp) for tp in assigned])
                   for name in ("assignment", "target_assignment")
                   if (assigned := getattr(member, name))}
        return replace(member, **changes) if changes else member

    def _note(self, offset: int, message: str) -> None:
        path, position = self._locate(offset)
        self.loaded.notes.append(LoadNote(f"offset {offset}: {message}", path, position))

    def _locate(self, offset: int) -> tuple[str | None, int | None]:
        """The segment and byte position of the batch holding ``offset`` (a rare path)."""
        bases = [b for b, _ in self.segments]
        i = bisect.bisect_right(bases, offset) - 1
        if i < 0:
            return None, None
        path = self.segments[i][1]
        try:
            with FileRecords(path) as records:
                for batch in records.batches():
                    if batch.base_offset <= offset <= batch.last_offset:
                        return path, batch.position
        except PylogctlError:
            pass
        return path, None
