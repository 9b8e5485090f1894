"""Committed offsets: what an offset-commit record (record types 0 and 1) says.

Brokers write the key at version 1 (0 in the oldest logs: the same fields, so both name the
same group/topic/partition) and the value at version 3 (1 when the commit carried an expiry,
2 at IBP 2.1-IV0, 4 once tagged fields are used). ``leaderEpoch`` -1 means none, as does
``expireTimestamp`` -1.

A replay decodes one key and one value per committed partition, often hundreds of thousands
of them, and the schema-driven reader (:mod:`pylogctl.format.group_coordinator_records`)
takes about 20 microseconds a record. So the layouts brokers actually write (key v0/v1, value
v0-v3, all fixed-size fields and int16-length strings) are read here with one ``struct`` call
each; anything else (a flexible v4 value, bytes that do not parse) goes to
:func:`~pylogctl.format.group_coordinator_records.decode_group_record`, which stays the
reference: the tests check both agree on every corpus record and on generated ones.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ..format.coordinator_record import read_body, read_prefix
from ..format.group_coordinator_records import RECORD_TYPES, GroupRecordType, decode_group_record

OFFSET_COMMIT_TYPES = (GroupRecordType.LEGACY_OFFSET_COMMIT, GroupRecordType.OFFSET_COMMIT)
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_OFFSET = struct.Struct(">q")
_OFFSET_EPOCH = struct.Struct(">qi")
_TIMESTAMPS = {0: struct.Struct(">q"), 1: struct.Struct(">qq"), 2: struct.Struct(">q"),
               3: struct.Struct(">q")}


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class OffsetCommitKey(NamedTuple):
    group: str
    topic: str
    partition: int


class OffsetAndMetadata(NamedTuple):
    """A committed offset as the coordinator holds it; ``record_offset`` is where the commit
    sits in ``__consumer_offsets``. (A tuple: a load makes hundreds of thousands.)"""

    offset: int
    leader_epoch: int | None
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None
    record_offset: int


def _string(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = _I16.unpack_from(buf, pos)
    end = pos + 2 + n
    if n < 0 or end > len(buf):
        raise ValueError("string out of bounds")
    return buf[pos + 2:end].decode("utf-8"), end


def decode_offset_commit_key(key: bytes) -> OffsetCommitKey:
    """``(group, topic, partition)`` of an offset-commit key (record type 0 or 1)."""
    try:
        if key[:2] not in (b"\x00\x00", b"\x00\x01"):
            raise ValueError("not an offset commit key")
        group, pos = _string(key, 2)
        topic, pos = _string(key, pos)
        (partition,) = _I32.unpack_from(key, pos)
        return OffsetCommitKey(group, topic, partition)
    except (ValueError, struct.error, UnicodeDecodeError):
        k = decode_group_record(key, None).key  # the reference: its error, or its answer
        return OffsetCommitKey(k["group"], k["topic"], k["partition"])


def decode_offset_commit_value(value: bytes, record_offset: int) -> OffsetAndMetadata:
    """The committed offset in an offset-commit value (versions 0-4)."""
    try:
        (version,) = _I16.unpack_from(value, 0)
        stamps = _TIMESTAMPS.get(version)
        if stamps is None:
            raise ValueError("not a fixed layout")
        if version == 3:
            offset, epoch = _OFFSET_EPOCH.unpack_from(value, 2)
            pos = 14
        else:
            (offset,) = _OFFSET.unpack_from(value, 2)
            epoch, pos = -1, 10
        metadata, pos = _string(value, pos)
        times = stamps.unpack_from(value, pos)
    except (ValueError, struct.error, UnicodeDecodeError):
        return _from_reference(value, record_offset)
    expire = times[1] if version == 1 else -1
    return OffsetAndMetadata(offset, None if epoch < 0 else epoch, metadata, times[0],
                             None if expire == -1 else expire, record_offset)


def _from_reference(value: bytes, record_offset: int) -> OffsetAndMetadata:
    v = read_body(value, RECORD_TYPES[GroupRecordType.OFFSET_COMMIT].value,
                  read_prefix(value, "value"), "value")
    epoch = v.get("leaderEpoch", -1)
    expire = v.get("expireTimestamp", -1)
    return OffsetAndMetadata(v["offset"], None if epoch < 0 else epoch, v["metadata"],
                             v["commitTimestamp"], None if expire == -1 else expire,
                             record_offset)
