"""Control records and Kafka's generated-message encoding (pylogctl.format.control / .message).

Every value here is encoded by hand following Kafka's flexible-version rules: compact lengths are
unsigned varints of N+1 (0 = null) and every struct ends with a tagged-field section.
"""

from __future__ import annotations

import struct

import pytest

from pylogctl.errors import CorruptRecordError
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.control import (ControlRecordType, EndTransactionMarker, decode_control_value,
                                     encode_control_key, parse_control_key, parse_end_txn_marker)
from pylogctl.format.log_stream import iter_batches
from pylogctl.format.message import Field, KafkaUuid, Schema, read_message, read_struct, to_json

from wire import NO_TAGS, UUID, UUID_STR, compact_string, uvarint


def compact_array(items: list[bytes] | None) -> bytes:
    if items is None:
        return b"\x00"
    return uvarint(len(items) + 1) + b"".join(items)


def i16(v): return struct.pack(">h", v)
def i32(v): return struct.pack(">i", v)
def i64(v): return struct.pack(">q", v)


def tagged(*fields: tuple[int, bytes]) -> bytes:
    return uvarint(len(fields)) + b"".join(uvarint(tag) + uvarint(len(data)) + data for tag, data in fields)


# -- KRaft control record values -------------------------------------------------------------

def test_snapshot_header():
    value = i16(0) + i64(10000) + NO_TAGS
    decoded = decode_control_value(ControlRecordType.SNAPSHOT_HEADER, value)
    assert decoded == {"version": 0, "lastContainedLogTimestamp": 10000}
    assert to_json(decoded) == '{"version":0,"lastContainedLogTimestamp":10000}'


def test_snapshot_header_skips_unknown_tagged_fields():
    value = i16(0) + i64(-1) + tagged((7, b"\x01\x02"), (300, b""))
    assert to_json(decode_control_value(ControlRecordType.SNAPSHOT_HEADER, value)) == \
        '{"version":0,"lastContainedLogTimestamp":-1}'


def test_snapshot_footer():
    assert to_json(decode_control_value(ControlRecordType.SNAPSHOT_FOOTER, i16(0) + NO_TAGS)) == '{"version":0}'


def test_kraft_version():
    value = i16(0) + i16(1) + NO_TAGS
    assert to_json(decode_control_value(ControlRecordType.KRAFT_VERSION, value)) == \
        '{"version":0,"kRaftVersion":1}'


def voter_v0(voter_id: int) -> bytes:
    return i32(voter_id) + NO_TAGS


def test_leader_change_v0():
    value = (i16(0) + i32(3) + compact_array([voter_v0(1), voter_v0(2), voter_v0(3)])
             + compact_array([voter_v0(3), voter_v0(1)]) + NO_TAGS)
    assert to_json(decode_control_value(ControlRecordType.LEADER_CHANGE, value)) == (
        '{"version":0,"leaderId":3,"voters":[{"voterId":1},{"voterId":2},{"voterId":3}],'
        '"grantingVoters":[{"voterId":3},{"voterId":1}]}')


def test_leader_change_empty_arrays_and_negative_leader():
    value = i16(0) + i32(-1) + compact_array([]) + compact_array([]) + NO_TAGS
    assert to_json(decode_control_value(ControlRecordType.LEADER_CHANGE, value)) == \
        '{"version":0,"leaderId":-1,"voters":[],"grantingVoters":[]}'


def test_leader_change_v1_has_voter_directory_ids():
    voter = i32(1) + UUID + NO_TAGS
    value = i16(1) + i32(1) + compact_array([voter]) + compact_array([voter]) + NO_TAGS
    assert to_json(decode_control_value(ControlRecordType.LEADER_CHANGE, value)) == (
        f'{{"version":1,"leaderId":1,"voters":[{{"voterId":1,"voterDirectoryId":"{UUID_STR}"}}],'
        f'"grantingVoters":[{{"voterId":1,"voterDirectoryId":"{UUID_STR}"}}]}}')


def test_voters_record():
    endpoint = compact_string("CONTROLLER") + compact_string("localhost") + struct.pack(">H", 65535) + NO_TAGS
    endpoint2 = compact_string("CONTROLLER_SSL") + compact_string("ctrl-ü.example") + struct.pack(">H", 9094) + NO_TAGS
    feature = i16(0) + i16(1) + NO_TAGS
    voter1 = i32(1) + UUID + compact_array([endpoint, endpoint2]) + feature + NO_TAGS
    voter2 = i32(2) + bytes(16) + compact_array([]) + feature + NO_TAGS
    value = i16(0) + compact_array([voter1, voter2]) + NO_TAGS
    assert to_json(decode_control_value(ControlRecordType.KRAFT_VOTERS, value)) == (
        '{"version":0,"voters":['
        f'{{"voterId":1,"voterDirectoryId":"{UUID_STR}","endpoints":['
        '{"name":"CONTROLLER","host":"localhost","port":65535},'
        '{"name":"CONTROLLER_SSL","host":"ctrl-ü.example","port":9094}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}},'
        '{"voterId":2,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","endpoints":[],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}')


def test_kraft_values_through_a_control_batch():
    values = {
        ControlRecordType.SNAPSHOT_HEADER: (i16(0) + i64(10000) + NO_TAGS,
                                            '{"version":0,"lastContainedLogTimestamp":10000}'),
        ControlRecordType.KRAFT_VERSION: (i16(0) + i16(1) + NO_TAGS, '{"version":0,"kRaftVersion":1}'),
        ControlRecordType.SNAPSHOT_FOOTER: (i16(0) + NO_TAGS, '{"version":0}'),
    }
    b = RecordBatchBuilder(base_offset=0, is_control=True)
    for ctype, (value, _) in values.items():
        b.append_control(ctype, value, 1_700_000_000_000)
    (batch,) = iter_batches(b.build())
    assert batch.is_control and batch.is_valid
    seen = []
    for rec in batch.records():
        version, type_id = parse_control_key(rec.key)
        ctype = ControlRecordType.from_id(type_id)
        seen.append((version, ctype, to_json(decode_control_value(ctype, rec.value))))
    assert seen == [(0, t, j) for t, (_, j) in values.items()]


# -- errors in values ------------------------------------------------------------------------

def test_trailing_bytes_rejected():
    with pytest.raises(CorruptRecordError) as info:
        decode_control_value(ControlRecordType.SNAPSHOT_FOOTER, i16(0) + NO_TAGS + b"\x99")
    assert info.value.message == "Found 1 unexpected trailing byte(s) after SnapshotFooterRecord version 0"
    assert info.value.position == 3


def test_truncated_value_rejected():
    with pytest.raises(CorruptRecordError) as info:
        decode_control_value(ControlRecordType.SNAPSHOT_HEADER, i16(0) + b"\x00\x00\x27")
    assert info.value.message == "Error reading int64 of 8 byte(s): only 3 byte(s) available"
    assert info.value.position == 2


def test_null_value_rejected():
    with pytest.raises(CorruptRecordError, match="SnapshotHeaderRecord control record has a null value"):
        decode_control_value(ControlRecordType.SNAPSHOT_HEADER, None)


def test_missing_tag_section_rejected():
    with pytest.raises(CorruptRecordError, match="Truncated unsigned varint"):
        decode_control_value(ControlRecordType.KRAFT_VERSION, i16(0) + i16(1))


def test_tagged_field_longer_than_value_rejected():
    with pytest.raises(CorruptRecordError, match="tagged field"):
        decode_control_value(ControlRecordType.SNAPSHOT_FOOTER, i16(0) + b"\x01\x05\x10\x00")


def test_array_count_larger_than_remaining_rejected():
    value = i16(0) + i32(1) + uvarint(1000) + NO_TAGS
    with pytest.raises(CorruptRecordError, match="Tried to allocate a collection of size 999, but there are "
                                                 "only 1 bytes remaining."):
        decode_control_value(ControlRecordType.LEADER_CHANGE, value)


def test_null_non_nullable_array_rejected():
    value = i16(0) + i32(1) + compact_array(None) + compact_array([]) + NO_TAGS
    with pytest.raises(CorruptRecordError, match="non-nullable field voters was serialized as null"):
        decode_control_value(ControlRecordType.LEADER_CHANGE, value)


# -- control keys and transaction markers ----------------------------------------------------

def test_control_keys():
    for ctype in ControlRecordType:
        if ctype is ControlRecordType.UNKNOWN:
            continue
        key = encode_control_key(ctype)
        assert key == struct.pack(">hh", 0, int(ctype))
        assert parse_control_key(key) == (0, int(ctype))
    assert parse_control_key(struct.pack(">hh", 3, 1) + b"extra") == (3, 1)
    assert ControlRecordType.from_id(99) is ControlRecordType.UNKNOWN
    assert ControlRecordType.from_id(6) is ControlRecordType.KRAFT_VOTERS


@pytest.mark.parametrize("key, found", [(None, 0), (b"", 0), (b"\x00\x00\x00", 3)])
def test_control_key_too_short(key, found):
    with pytest.raises(CorruptRecordError) as info:
        parse_control_key(key)
    assert info.value.message == (f"Invalid value size found for end control record key. Must have at "
                                  f"least 4 bytes, but found only {found}")


def test_control_key_negative_version():
    with pytest.raises(CorruptRecordError, match="Invalid version found for control record: -1. May "
                                                 "indicate data corruption"):
        parse_control_key(struct.pack(">hh", -1, 0))


def test_end_transaction_markers():
    for ctype in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        value = EndTransactionMarker(ctype, 42).encode_value()
        assert value == struct.pack(">hi", 0, 42)
        assert parse_end_txn_marker(ctype, value) == EndTransactionMarker(ctype, 42)
    # newer marker versions may append fields: extra bytes are allowed
    assert parse_end_txn_marker(ControlRecordType.COMMIT, struct.pack(">hi", 1, -1) + b"\x00\x00").coordinator_epoch == -1


def test_end_transaction_marker_errors():
    with pytest.raises(CorruptRecordError, match="Invalid control record type for end transaction marker: "
                                                 "LEADER_CHANGE"):
        parse_end_txn_marker(ControlRecordType.LEADER_CHANGE, struct.pack(">hi", 0, 1))
    with pytest.raises(CorruptRecordError, match="Must have at least 6 bytes, but found only 5"):
        parse_end_txn_marker(ControlRecordType.ABORT, b"\x00" * 5)
    with pytest.raises(CorruptRecordError, match="Must have at least 6 bytes, but found only 0"):
        parse_end_txn_marker(ControlRecordType.ABORT, None)
    with pytest.raises(CorruptRecordError, match="Invalid version found for end transaction marker: -2"):
        parse_end_txn_marker(ControlRecordType.COMMIT, struct.pack(">hi", -2, 1))


# -- the generic reader: non-flexible versions, nullable fields, tagged fields -----------------

SAMPLE = Schema("SampleRecord", (
    Field("Name", "string"),
    Field("Comment", "string", nullable="0+"),
    Field("Data", "bytes"),
    Field("Ids", "[]int32"),
    Field("Flag", "bool", versions="1+"),
    Field("Weight", "float64", versions="2+"),
    Field("Note", "string", versions="2+", tag=0, default="n/a"),
    Field("Count", "int32", versions="2+", tag=1),
), flexible="2+")


def test_non_flexible_version():
    buf = (i16(5) + b"group" + i16(-1) + i32(3) + b"\x00\xff\x10" + i32(2) + i32(7) + i32(-7))
    assert read_message(buf, SAMPLE, 0) == {"name": "group", "comment": None, "data": b"\x00\xff\x10",
                                            "ids": [7, -7]}
    assert to_json(read_message(buf, SAMPLE, 0)) == \
        '{"name":"group","comment":null,"data":"AP8Q","ids":[7,-7]}'
    assert read_message(buf + b"\x01", SAMPLE, 1)["flag"] is True


def test_non_nullable_null_string_rejected():
    buf = i16(-1) + i16(-1) + i32(0) + i32(0)
    with pytest.raises(CorruptRecordError, match="non-nullable field name was serialized as null"):
        read_message(buf, SAMPLE, 0)


def flexible_sample(tags: bytes) -> bytes:
    return (compact_string("ü") + compact_string(None) + uvarint(1) + compact_array([i32(1)])
            + b"\x00" + struct.pack(">d", 1.5) + tags)


def test_flexible_version_tagged_fields():
    # absent tagged fields are not printed
    assert to_json(read_message(flexible_sample(NO_TAGS), SAMPLE, 2)) == \
        '{"name":"ü","comment":null,"data":"","ids":[1],"flag":false,"weight":1.5}'
    # present ones come back in schema order, unknown tags are skipped
    tags = tagged((1, i32(9)), (0, compact_string("hi")), (5, b"zz"))
    assert to_json(read_message(flexible_sample(tags), SAMPLE, 2)) == \
        '{"name":"ü","comment":null,"data":"","ids":[1],"flag":false,"weight":1.5,"note":"hi","count":9}'
    # tagged fields equal to their default are left out, as Kafka's JSON converter does
    tags = tagged((0, compact_string("n/a")), (1, i32(0)))
    assert "note" not in read_message(flexible_sample(tags), SAMPLE, 2)
    assert "count" not in read_message(flexible_sample(tags), SAMPLE, 2)


def test_read_struct_returns_next_position():
    fields = (Field("A", "int16"), Field("B", "uuid"))
    buf = b"\xee" + i16(-3) + UUID + b"rest"
    values, pos = read_struct(buf, fields, 0, False, pos=1)
    assert values == {"a": -3, "b": UUID} and pos == 19
    assert isinstance(values["b"], KafkaUuid) and str(values["b"]) == UUID_STR


def test_schema_version_ranges():
    assert SAMPLE.is_flexible(2) and not SAMPLE.is_flexible(1)
    assert Schema("X", (), valid="0-1").has_version(1)
    assert not Schema("X", (), valid="0-1").has_version(2)
    assert Field("F", "int8", versions="3+").in_version(10)
    assert not Field("F", "int8", versions="none").in_version(0)
