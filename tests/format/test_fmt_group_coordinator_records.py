"""__consumer_offsets records: every record type and value version, tombstones, errors."""

from __future__ import annotations

import pytest
from aiokafka.coordinator.protocol import (ConsumerProtocolMemberAssignment,
                                           ConsumerProtocolMemberMetadata)
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator_support import (NO_TAGS, as_read, compact_string, i8, i16, i32, i64,
                                 message_values, string, uvarint)
from pylogctl.errors import CorruptRecordError
from pylogctl.format.coordinator_record import (CoordinatorRecordError, UnknownRecordTypeError,
                                               UnknownRecordVersionError)
from pylogctl.format.group_coordinator_records import (CONSUMER_PROTOCOL_ASSIGNMENT,
                                                       CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                       RECORD_TYPES, GroupCoordinatorRecord,
                                                       GroupRecordType, decode_consumer_protocol,
                                                       decode_group_record,
                                                       encode_consumer_protocol,
                                                       encode_group_record)
from pylogctl.format.message import KafkaUuid, to_json

UUID = bytes(range(16))


# -- hand-built bytes, independent of our encoder ----------------------------------------------

def test_offset_commit_v1_key_v3_value():
    key = i16(1) + string("grp") + string("orders") + i32(7)
    value = i16(3) + i64(42) + i32(5) + string("meta") + i64(1_700_000_000_000)
    rec = decode_group_record(key, value)
    assert isinstance(rec, GroupCoordinatorRecord)
    assert rec.record_type == GroupRecordType.OFFSET_COMMIT and rec.type_name == "OFFSET_COMMIT"
    assert rec.key == {"group": "grp", "topic": "orders", "partition": 7}
    assert rec.value_version == 3
    assert rec.value == {"offset": 42, "leaderEpoch": 5, "metadata": "meta",
                         "commitTimestamp": 1_700_000_000_000}
    assert rec.group_id == "grp" and rec.value is not None


def test_offset_commit_v1_value_has_expire_timestamp():
    key = i16(1) + string("g") + string("t") + i32(0)
    value = i16(1) + i64(9) + string("") + i64(100) + i64(200)
    assert to_json(decode_group_record(key, value).value) == \
        '{"offset":9,"metadata":"","commitTimestamp":100,"expireTimestamp":200}'


def test_legacy_offset_commit_key_type_0():
    key = i16(0) + string("g") + string("t") + i32(1)
    rec = decode_group_record(key, i16(0) + i64(5) + string("x") + i64(6))
    assert rec.type_name == "LEGACY_OFFSET_COMMIT"
    assert rec.value == {"offset": 5, "metadata": "x", "commitTimestamp": 6}


def test_offset_commit_v4_is_flexible():
    key = i16(1) + string("g") + string("t") + i32(1)
    value = i16(4) + i64(5) + i32(-1) + compact_string("m") + i64(6) + NO_TAGS
    assert decode_group_record(key, value).value == {"offset": 5, "leaderEpoch": -1,
                                                     "metadata": "m", "commitTimestamp": 6}


def test_group_metadata_v3_with_consumer_protocol_from_aiokafka():
    sub = ConsumerProtocolMemberMetadata(0, ["a", "b"], b"ud").encode()
    asg = ConsumerProtocolMemberAssignment(0, [("a", [0, 1])], b"").encode()
    member = (string("m1") + string(None) + string("cid") + string("/10.0.0.1") + i32(300000)
              + i32(10000) + i32(len(sub)) + sub + i32(len(asg)) + asg)
    value = (i16(3) + string("consumer") + i32(4) + string("range") + string("m1") + i64(123)
             + i32(1) + member)
    rec = decode_group_record(i16(2) + string("grp"), value)
    assert rec.type_name == "GROUP_METADATA" and rec.group_id == "grp"
    m = rec.value["members"][0]
    assert (m["memberId"], m["groupInstanceId"], m["rebalanceTimeout"]) == ("m1", None, 300000)
    assert decode_consumer_protocol(m["subscription"], CONSUMER_PROTOCOL_SUBSCRIPTION) == \
        (0, {"topics": ["a", "b"], "userData": b"ud"})
    assert decode_consumer_protocol(m["assignment"], CONSUMER_PROTOCOL_ASSIGNMENT) == \
        (0, {"assignedPartitions": [{"topic": "a", "partitions": [0, 1]}], "userData": b""})


def test_group_metadata_v0_has_no_rebalance_timeout_or_timestamp():
    member = string("m") + string("c") + string("h") + i32(5) + i32(0) + i32(0)
    value = i16(0) + string("") + i32(0) + string(None) + string(None) + i32(1) + member
    assert to_json(decode_group_record(i16(2) + string("g"), value).value) == (
        '{"protocolType":"","generation":0,"protocol":null,"leader":null,"members":[{"memberId":'
        '"m","clientId":"c","clientHost":"h","sessionTimeout":5,"subscription":"","assignment":""}]}')


def test_consumer_group_metadata_and_regex_records():
    rec = decode_group_record(i16(3) + string("g"), i16(0) + i32(10) + NO_TAGS)
    assert (rec.type_name, rec.key, rec.value) == ("CONSUMER_GROUP_METADATA", {"groupId": "g"},
                                                   {"epoch": 10})
    key = i16(16) + string("g") + string("topic.*")
    value = i16(0) + uvarint(2) + compact_string("topic1") + i64(3) + i64(1234) + NO_TAGS
    rec = decode_group_record(key, value)
    assert rec.type_name == "CONSUMER_GROUP_REGULAR_EXPRESSION" and rec.group_id == "g"
    assert rec.key == {"groupId": "g", "regularExpression": "topic.*"}
    assert rec.value == {"topics": ["topic1"], "version": 3, "timestamp": 1234}


def test_current_member_assignment_uuid_topics():
    value = (i16(0) + i32(5) + i32(4) + i8(0) + uvarint(2) + UUID + uvarint(3) + i32(0) + i32(1)
             + NO_TAGS + uvarint(1) + NO_TAGS)
    rec = decode_group_record(i16(8) + string("g") + string("m"), value)
    tp = rec.value["assignedPartitions"][0]
    assert isinstance(tp["topicId"], KafkaUuid) and tp["partitions"] == [0, 1]
    assert to_json(rec.value) == ('{"memberEpoch":5,"previousMemberEpoch":4,"state":0,'
                                  '"assignedPartitions":[{"topicId":"AAECAwQFBgcICQoLDA0ODw",'
                                  '"partitions":[0,1]}],"partitionsPendingRevocation":[]}')


def test_member_metadata_classic_member_tagged_struct():
    base = (compact_string(None) + compact_string("rack") + compact_string("c") + compact_string("h")
            + uvarint(1) + compact_string(None) + i32(-1) + compact_string("uniform"))
    key = i16(5) + string("g") + string("m")
    assert "classicMemberMetadata" not in decode_group_record(key, i16(0) + base + NO_TAGS).value
    classic = b"\x01" + i32(45000) + uvarint(2) + compact_string("range") + uvarint(2) + b"\x07" \
        + NO_TAGS + NO_TAGS
    value = i16(0) + base + uvarint(1) + uvarint(0) + uvarint(len(classic)) + classic
    assert decode_group_record(key, value).value["classicMemberMetadata"] == {
        "sessionTimeoutMs": 45000, "supportedProtocols": [{"name": "range", "metadata": b"\x07"}]}
    # a tagged null struct (marker 0), as brokers write it for members that never used the
    # classic protocol, is not the default (a struct with all its defaults): Kafka prints null
    value = i16(0) + base + uvarint(1) + uvarint(0) + uvarint(1) + b"\x00"
    assert decode_group_record(key, value).value["classicMemberMetadata"] is None
    # while a struct with every field at its default is left out, like any tagged default
    empty = b"\x01" + i32(0) + uvarint(1) + NO_TAGS + NO_TAGS
    value = i16(0) + base + uvarint(1) + uvarint(0) + uvarint(len(empty)) + empty
    assert "classicMemberMetadata" not in decode_group_record(key, value).value


# -- every record type and value version, through the encoder ----------------------------------

CASES = [(t, v) for t, rt in sorted(RECORD_TYPES.items())
         for v in range(0, 5) if rt.value.has_version(v)]


def test_record_types_are_kafka_4_4s():
    """Kafka 4.4's CoordinatorRecordType: 9 (the share-group partition metadata of the KIP-932
    preview) is gone, 17 and 19-23 are the streams groups (18 never shipped). The schemas
    themselves are checked against Kafka's jar in test_fmt_schemas_vs_kafka.py."""
    kafka_4_4 = [*range(9), *range(10, 18), *range(19, 24)]
    assert sorted(RECORD_TYPES) == kafka_4_4
    assert [int(t) for t in GroupRecordType] == kafka_4_4
    assert all(RECORD_TYPES[int(t)].name == t.name for t in GroupRecordType)
    assert len(CASES) == 1 + 5 + 5 + 19  # type 0 has value v0 only, types 1, 2 have five


@pytest.mark.parametrize("record_type, version", CASES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_type_and_version_round_trips(record_type, version, data):
    rt = RECORD_TYPES[record_type]
    key = data.draw(message_values(rt.key, rt.key.reading_version(record_type)))
    value = data.draw(message_values(rt.value, version))
    key_bytes, value_bytes = encode_group_record(record_type, key, version, value)
    rec = decode_group_record(key_bytes, value_bytes)
    assert (rec.record_type, rec.type_name, rec.value_version) == (record_type, rt.name, version)
    assert rec.key == key
    assert rec.value == as_read(rt.value.fields, value, version, rt.value.is_flexible(version))
    # tombstones keep the key
    tomb = decode_group_record(key_bytes, None)
    assert tomb.value is None and tomb.value_version is None and tomb.key == key


@pytest.mark.parametrize("schema", [CONSUMER_PROTOCOL_SUBSCRIPTION, CONSUMER_PROTOCOL_ASSIGNMENT],
                         ids=lambda s: s.name)
@pytest.mark.parametrize("version", range(4))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_consumer_protocol_round_trips(schema, version, data):
    fields = data.draw(message_values(schema, version))
    assert decode_consumer_protocol(encode_consumer_protocol(version, fields, schema), schema) == \
        (version, fields)


def test_consumer_protocol_newer_version_reads_like_highest_and_ignores_trailing_bytes():
    v3 = encode_consumer_protocol(3, {"topics": ["t"], "userData": None, "ownedPartitions": [],
                                      "generationId": 2, "rackId": "r"},
                                  CONSUMER_PROTOCOL_SUBSCRIPTION)
    version, fields = decode_consumer_protocol(i16(7) + v3[2:] + b"new-field",
                                               CONSUMER_PROTOCOL_SUBSCRIPTION)
    assert version == 7 and fields["rackId"] == "r"


# -- versions outside the valid range, trailing bytes ------------------------------------------

KEY_1 = i16(1) + string("g") + string("t") + i32(0)


@pytest.mark.parametrize("version", [5, 9, -1])
def test_a_value_version_outside_the_valid_range_is_refused(version):
    """Kafka 4.4's CoordinatorRecordSerde checks the version before reading the value."""
    value = i16(version) + i64(5) + i32(2) + compact_string("m") + i64(6) + NO_TAGS
    with pytest.raises(UnknownRecordVersionError) as info:
        decode_group_record(KEY_1, value)
    assert info.value.kafka_message == f"Found an unknown record version {version} for 1 type"
    assert (info.value.record_type, info.value.version) == (1, version)


def test_a_legacy_offset_commit_key_takes_the_v0_value_only():
    key = i16(0) + string("g") + string("t") + i32(0)
    assert decode_group_record(key, i16(0) + i64(5) + string("m") + i64(6)).value == {
        "offset": 5, "metadata": "m", "commitTimestamp": 6}
    with pytest.raises(UnknownRecordVersionError):
        decode_group_record(key, i16(1) + i64(5) + string("m") + i64(6) + i64(7))


def test_trailing_bytes_are_ignored_as_kafka_does():
    rec = decode_group_record(KEY_1 + b"junk", i16(0) + i64(5) + string("") + i64(6) + b"junk")
    assert rec.value["offset"] == 5


def test_unknown_tagged_fields_are_skipped():
    value = i16(0) + i32(10) + uvarint(1) + uvarint(9) + uvarint(2) + b"zz"
    assert decode_group_record(i16(3) + string("g"), value).value == {"epoch": 10}


# -- unknown types and malformed bytes -----------------------------------------------------------

@pytest.mark.parametrize("record_type", [9, 18, 24, 100, 32767, -1])
def test_unknown_record_types(record_type):
    with pytest.raises(UnknownRecordTypeError) as info:
        decode_group_record(i16(record_type) + string("g"), b"\x00\x00")
    assert info.value.record_type == record_type
    assert isinstance(info.value, CorruptRecordError)
    assert str(record_type) in info.value.message


ERRORS = {
    "empty key": (b"", None, "Could not read version from key's buffer."),
    "one-byte key": (b"\x00", None, "Could not read version from key's buffer."),
    "truncated key": (i16(1) + string("g") + string("t"), None,
                      "Could not read record with version 1 from key's buffer due to: null."),
    "key string too long": (i16(2) + i16(50) + b"abc", None,
                            "Could not read record with version 2 from key's buffer due to: Error "
                            "reading byte array of 50 byte(s): only 3 byte(s) available."),
    "null group": (i16(2) + i16(-1), None, "Could not read record with version 2 from key's buffer "
                   "due to: non-nullable field group was serialized as null."),
    "one-byte value": (KEY_1, b"\x00", "Could not read version from value's buffer."),
    "truncated value": (KEY_1, i16(3) + i64(1), "Could not read record with version 3 from value's "
                        "buffer due to: null."),
    "truncated tag section": (i16(3) + string("g"), i16(0) + i32(1) + uvarint(1),
                   "Could not read record with version 0 from value's buffer due to: null."),
    "array count": (i16(7) + string("g") + string("m"), i16(0) + uvarint(100) + b"\x00",
                    "Could not read record with version 0 from value's buffer due to: Tried to "
                    "allocate a collection of size 99, but there are only 1 bytes remaining.."),  # sic
    "compact string too long": (i16(10) + string("g") + string("m"),
                                i16(0) + compact_string(None) + uvarint(40000),
                                "Could not read record with version 0 from value's buffer due to: "
                                "string field clientId had invalid length 39999."),
    "null array element": (i16(10) + string("g") + string("m"),
                           i16(0) + compact_string(None) + compact_string("c") + compact_string("h")
                           + uvarint(2) + b"\x00",
                           "Could not read record with version 0 from value's buffer due to: "
                           "non-nullable field subscribedTopicNames element was serialized as "
                           "null."),
}


@pytest.mark.parametrize("key, value, kafka_message", ERRORS.values(), ids=ERRORS.keys())
def test_malformed_records(key, value, kafka_message):
    with pytest.raises(CoordinatorRecordError) as info:
        decode_group_record(key, value)
    assert info.value.kafka_message == kafka_message
    # our own message names the precise cause where Kafka's says "null"
    if kafka_message.endswith("due to: null."):
        assert "Error reading" in info.value.message or "Truncated" in info.value.message


def test_kafka_test_error_message():
    # Kafka's test writes a ConsumerGroupMemberMetadataValue (all defaults) under a type-3 key
    member_defaults = (compact_string("") * 4 + uvarint(1) + compact_string("") + i32(-1)
                       + compact_string("") + NO_TAGS)
    with pytest.raises(CoordinatorRecordError) as info:
        decode_group_record(i16(3) + string("group"), i16(0) + member_defaults)
    assert info.value.kafka_message == (
        "Could not read record with version 0 from value's buffer due to: Error reading byte array "
        "of 536870911 byte(s): only 1 byte(s) available.")


def test_encoder_rejects_what_kafka_would_not_write():
    with pytest.raises(ValueError, match="non-nullable field group was set to null"):
        encode_group_record(2, {"group": None})
    with pytest.raises(ValueError, match="a value needs its version"):
        encode_group_record(3, {"groupId": "g"}, None, {"epoch": 1})
    with pytest.raises(ValueError, match="non-default expireTimestamp at version 3"):
        encode_group_record(1, {"group": "g", "topic": "t", "partition": 0}, 3,
                            {"offset": 1, "metadata": "", "commitTimestamp": 0,
                             "expireTimestamp": 5})


def test_encoded_bytes_match_kafka_layout():
    key, value = encode_group_record(3, {"groupId": "group"}, 0, {"epoch": 10})
    assert key == i16(3) + string("group")
    assert value == i16(0) + i32(10) + NO_TAGS
    assert encode_group_record(3, {"groupId": "group"}) == (key, None)
