"""KRaft metadata record frames and schemas (pylogctl.format.metadata_records).

Golden values are encoded by hand following Kafka's rules (frame: uvarint frame version 1,
uvarint apiKey, uvarint version; body: flexible message with compact lengths and a tagged-field
section), independently of the module's own encoder, which is then checked against them.
"""

from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pylogctl.errors import CorruptRecordError, UnsupportedFormatError
from pylogctl.format.message import Field, KafkaUuid
from pylogctl.format.metadata_records import (
    API_KEYS, SCHEMAS, TYPE_NAMES, JavaDouble, MetadataFrameError, MetadataRecordBodyError,
    MetadataTrailingBytesError, UnknownMetadataTypeError, decode_metadata_record,
    encode_metadata_record, java_double_str, read_frame_header, type_name)

from wire import NO_TAGS, UUID, UUID_STR, uvarint
from wire import compact_string as cstr

ZERO_UUID_STR = "AAAAAAAAAAAAAAAAAAAAAA"


def i32s(*values: int) -> bytes:
    return uvarint(len(values) + 1) + b"".join(struct.pack(">i", v) for v in values)


def frame(api_key: int, version: int) -> bytes:
    return b"\x01" + uvarint(api_key) + uvarint(version)


def dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


TOPIC_RECORD = frame(2, 0) + cstr("test-topic") + UUID + NO_TAGS
REGISTER_BROKER_V0 = (frame(0, 0) + struct.pack(">i", 0) + bytes(16) + struct.pack(">q", 10)
                      + b"\x01" + b"\x01" + b"\x01" + b"\x01" + NO_TAGS)
PARTITION_CHANGE_V0 = (frame(5, 0) + struct.pack(">i", 0) + UUID
                       + b"\x02" + b"\x00" + uvarint(13) + i32s(0, 1, 2)
                       + b"\x01" + b"\x04" + struct.pack(">i", 1))


# --- golden decodes -------------------------------------------------------------------------

def test_topic_record_golden():
    rec = decode_metadata_record(TOPIC_RECORD)
    assert (rec.api_key, rec.type_name, rec.version) == (2, "TOPIC_RECORD", 0)
    assert rec.known_version
    assert rec.data == {"name": "test-topic", "topicId": UUID}
    assert dumps(rec.to_json()) == (
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"test-topic","topicId":"%s"}}'
        % UUID_STR)


def test_register_broker_record_with_defaults_as_kafkas_test_writes_it():
    # DumpLogSegmentsTest: new RegisterBrokerRecord().setBrokerId(0).setBrokerEpoch(10), version 0
    # (an unset string is "", not null, in Kafka's generated classes)
    rec = decode_metadata_record(REGISTER_BROKER_V0)
    assert dumps(rec.to_json()) == (
        '{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":0,'
        f'"incarnationId":"{ZERO_UUID_STR}","brokerEpoch":10,"endPoints":[],"features":[],'
        '"rack":"","fenced":true}}')


def test_partition_change_record_tagged_fields_golden():
    rec = decode_metadata_record(PARTITION_CHANGE_V0)
    assert dumps(rec.to_json()) == (
        '{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,'
        f'"topicId":"{UUID_STR}","isr":[0,1,2],"leader":1}}}}')


def test_register_broker_record_v3_full_golden():
    body = (struct.pack(">i", 7) + b"\x01" + UUID + struct.pack(">q", 42)
            + uvarint(2) + cstr("PLAINTEXT") + cstr("h") + struct.pack(">Hh", 9092, 0) + NO_TAGS
            + uvarint(2) + cstr("metadata.version") + struct.pack(">hh", 1, 21) + NO_TAGS
            + cstr("r1") + b"\x00" + b"\x01"
            + b"\x01" + b"\x00" + uvarint(17) + uvarint(2) + UUID)
    rec = decode_metadata_record(frame(0, 3) + body)
    assert dumps(rec.to_json()) == (
        '{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":7,'
        f'"isMigratingZkBroker":true,"incarnationId":"{UUID_STR}","brokerEpoch":42,'
        '"endPoints":[{"name":"PLAINTEXT","host":"h","port":9092,"securityProtocol":0}],'
        '"features":[{"name":"metadata.version","minSupportedVersion":1,"maxSupportedVersion":21}],'
        f'"rack":"r1","fenced":false,"inControlledShutdown":true,"logDirs":["{UUID_STR}"]}}}}')


def test_tagged_field_with_null_default_prints_empty_list_but_not_null():
    # Kafka compares a "default": "null" tagged field against null, not against []
    empty_elr = frame(5, 2) + struct.pack(">i", 3) + UUID + b"\x01" + b"\x06" + b"\x01" + b"\x01"
    assert decode_metadata_record(empty_elr).to_json()["data"] == {
        "partitionId": 3, "topicId": UUID_STR, "eligibleLeaderReplicas": []}
    null_isr = frame(5, 0) + struct.pack(">i", 3) + UUID + b"\x01" + b"\x00" + b"\x01" + b"\x00"
    assert decode_metadata_record(null_isr).to_json()["data"] == {
        "partitionId": 3, "topicId": UUID_STR}


def test_tagged_field_equal_to_its_default_is_not_printed():
    leader_unchanged = (frame(5, 0) + struct.pack(">i", 1) + UUID + b"\x01"
                        + b"\x01" + b"\x04" + struct.pack(">i", -2))
    assert "leader" not in decode_metadata_record(leader_unchanged).data


def test_unknown_tagged_fields_are_skipped():
    rec = decode_metadata_record(frame(2, 0) + cstr("t") + UUID + b"\x01" + b"\x63\x02\xab\xcd")
    assert rec.data == {"name": "t", "topicId": UUID}


def test_bytes_are_base64_and_quota_value_is_a_java_double():
    scram = (frame(11, 0) + cstr("alice") + b"\x01" + uvarint(4) + b"\x00\x01\xfe"
             + uvarint(1) + uvarint(3) + b"ab" + struct.pack(">i", 4096) + NO_TAGS)
    assert decode_metadata_record(scram).to_json()["data"] == {
        "name": "alice", "mechanism": 1, "salt": "AAH+", "storedKey": "", "serverKey": "YWI=",
        "iterations": 4096}
    quota = (frame(14, 0) + uvarint(2) + cstr("user") + cstr(None) + NO_TAGS
             + cstr("producer_byte_rate")
             + struct.pack(">d", 10485760.0) + b"\x00" + NO_TAGS)
    data = decode_metadata_record(quota).to_json()["data"]
    assert data["entity"] == [{"entityType": "user", "entityName": None}]
    assert isinstance(data["value"], JavaDouble) and str(data["value"]) == "1.048576E7"
    assert dumps(data["value"]) == "10485760.0"  # json.dumps keeps Python's notation


def test_non_finite_double_is_printed_as_jackson_quotes_it():
    quota = (frame(14, 0) + uvarint(1) + cstr("k") + struct.pack(">d", math.nan) + b"\x01"
             + NO_TAGS)
    assert decode_metadata_record(quota).to_json()["data"]["value"] == "NaN"


@pytest.mark.parametrize("value,text", [
    (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (1048576.0, "1048576.0"), (9999999.0, "9999999.0"),
    (1e7, "1.0E7"), (10485760.0, "1.048576E7"), (0.001, "0.001"), (0.0001, "1.0E-4"),
    (1.5e-5, "1.5E-5"), (123.456, "123.456"), (-3.25, "-3.25"), (1e23, "1.0E23"),
    (5e-324, "4.9E-324"), (1.7976931348623157e308, "1.7976931348623157E308"),
    (math.inf, "Infinity"), (-math.inf, "-Infinity"), (math.nan, "NaN"),
])
def test_java_double_str(value, text):
    assert java_double_str(value) == text


def test_frame_header():
    assert read_frame_header(frame(300, 2) + b"rest") == (300, 2, 4)


# --- type names -----------------------------------------------------------------------------

def test_type_names_are_kafkas_metadata_record_type_constants():
    assert TYPE_NAMES == {
        0: "REGISTER_BROKER_RECORD", 1: "UNREGISTER_BROKER_RECORD", 2: "TOPIC_RECORD",
        3: "PARTITION_RECORD", 4: "CONFIG_RECORD", 5: "PARTITION_CHANGE_RECORD",
        7: "FENCE_BROKER_RECORD", 8: "UNFENCE_BROKER_RECORD", 9: "REMOVE_TOPIC_RECORD",
        10: "DELEGATION_TOKEN_RECORD", 11: "USER_SCRAM_CREDENTIAL_RECORD",
        12: "FEATURE_LEVEL_RECORD", 14: "CLIENT_QUOTA_RECORD", 15: "PRODUCER_IDS_RECORD",
        17: "BROKER_REGISTRATION_CHANGE_RECORD", 18: "ACCESS_CONTROL_ENTRY_RECORD",
        19: "REMOVE_ACCESS_CONTROL_ENTRY_RECORD", 20: "NO_OP_RECORD",
        21: "ZK_MIGRATION_STATE_RECORD", 22: "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
        23: "BEGIN_TRANSACTION_RECORD", 24: "END_TRANSACTION_RECORD",
        25: "ABORT_TRANSACTION_RECORD", 26: "REMOVE_DELEGATION_TOKEN_RECORD",
        27: "REGISTER_CONTROLLER_RECORD", 28: "CLEAR_ELR_RECORD",
        29: "UNREGISTER_CONTROLLER_RECORD",
    }
    assert API_KEYS["TOPIC_RECORD"] == 2
    assert type_name("ZkMigrationStateRecord") == "ZK_MIGRATION_STATE_RECORD"


# --- every type and version round-trips through the encoder ---------------------------------

def _versions(api_key: int) -> list[int]:
    spec = SCHEMAS[api_key].valid
    lo, _, hi = spec.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


ALL_VERSIONS = [(k, v) for k in SCHEMAS for v in _versions(k)]
SCALARS = {"int8": 7, "int16": 300, "int32": 70000, "int64": 1 << 40, "uint16": 65535,
           "uint32": 1 << 31, "float64": 1.5, "string": "ünïcode-é", "bytes": b"\x00\xff",
           "uuid": KafkaUuid(UUID)}


def _sample(fields: tuple[Field, ...], version: int) -> dict:
    """A value for every field of ``version``, each different from the field's default."""
    out = {}
    for f in fields:
        if not f.in_version(version):
            continue
        base = f.type[2:] if f.type.startswith("[]") else f.type
        if f.fields:
            elem = _sample(f.fields, version)
        elif base == "bool":
            elem = not f.default_value()
        else:
            elem = SCALARS[base]
        out[f.json_name] = [elem, elem] if f.type.startswith("[]") else elem
    return out


@pytest.mark.parametrize("api_key,version", ALL_VERSIONS,
                         ids=[f"{TYPE_NAMES[k]}-v{v}" for k, v in ALL_VERSIONS])
def test_every_type_and_version_round_trips(api_key, version):
    data = _sample(SCHEMAS[api_key].fields, version)
    raw = encode_metadata_record(api_key, version, data)
    rec = decode_metadata_record(raw)
    assert (rec.api_key, rec.version) == (api_key, version)
    assert rec.data == data
    assert list(rec.data) == list(data)  # schema order
    assert encode_metadata_record(api_key, version, rec.data) == raw
    payload = rec.to_json()
    assert payload["type"] == TYPE_NAMES[api_key] and payload["version"] == version
    dumps(payload)  # JSON-ready


@pytest.mark.parametrize("api_key,version", ALL_VERSIONS,
                         ids=[f"{TYPE_NAMES[k]}-v{v}" for k, v in ALL_VERSIONS])
def test_every_type_and_version_decodes_with_all_defaults(api_key, version):
    rec = decode_metadata_record(encode_metadata_record(api_key, version, {}))
    schema = SCHEMAS[api_key]
    assert list(rec.data) == [f.json_name for f in schema.fields
                              if f.in_version(version) and f.tag is None]


def test_encoder_matches_hand_built_goldens():
    assert encode_metadata_record(2, 0, {"name": "test-topic", "topicId": UUID}) == TOPIC_RECORD
    assert encode_metadata_record(0, 0, {"brokerId": 0, "brokerEpoch": 10}) == REGISTER_BROKER_V0
    assert encode_metadata_record(5, 0, {"partitionId": 0, "topicId": UUID, "isr": [0, 1, 2],
                                         "leader": 1}) == PARTITION_CHANGE_V0


def test_encoder_rejects_what_kafka_rejects():
    with pytest.raises(ValueError, match="Unknown metadata id 6"):
        encode_metadata_record(6, 0, {})
    with pytest.raises(ValueError, match="Can't write version 1 of TopicRecord"):
        encode_metadata_record(2, 1, {})
    with pytest.raises(ValueError, match="non-nullable"):
        encode_metadata_record(2, 0, {"name": None})
    with pytest.raises(ValueError, match="non-default logDirs"):
        encode_metadata_record(0, 2, {"logDirs": [UUID]})


def _value_strategy(f: Field, type_: str, version: int):
    if type_.startswith("[]"):
        inner = st.lists(_value_strategy(f, type_[2:], version), max_size=3)
        return st.one_of(st.none(), inner) if f.nullable_in(version) else inner
    ints = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
    if type_ in ints:
        bits = ints[type_]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if type_ == "uint16":
        return st.integers(0, 0xFFFF)
    if type_ == "float64":
        return st.floats(allow_nan=False)
    if type_ == "bool":
        return st.booleans()
    if type_ == "uuid":
        return st.binary(min_size=16, max_size=16).map(KafkaUuid)
    if type_ in ("string", "bytes"):
        base = st.text(max_size=20) if type_ == "string" else st.binary(max_size=20)
        return st.one_of(st.none(), base) if f.nullable_in(version) else base
    return st.fixed_dictionaries({g.json_name: _value_strategy(g, g.type, version)
                                  for g in f.fields if g.in_version(version)})


@st.composite
def records(draw):
    api_key, version = draw(st.sampled_from(ALL_VERSIONS))
    schema = SCHEMAS[api_key]
    data = draw(st.fixed_dictionaries({f.json_name: _value_strategy(f, f.type, version)
                                       for f in schema.fields if f.in_version(version)}))
    return api_key, version, data


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_random_records_round_trip(rec):
    api_key, version, data = rec
    raw = encode_metadata_record(api_key, version, data)
    decoded = decode_metadata_record(raw)
    assert encode_metadata_record(api_key, version, decoded.data) == raw
    for f in SCHEMAS[api_key].fields:
        if f.in_version(version) and f.json_name in decoded.data:
            assert decoded.data[f.json_name] == data[f.json_name]
    dumps(decoded.to_json())


# --- versions beyond the schema -------------------------------------------------------------

def test_version_above_the_highest_decodes_with_the_highest_layout():
    # Kafka's generated reader does not check the version; TopicRecord v1 reads like v0
    rec = decode_metadata_record(frame(2, 1) + cstr("t") + UUID + NO_TAGS)
    assert (rec.version, rec.known_version) == (1, False)
    assert rec.to_json()["version"] == 1
    rec = decode_metadata_record(frame(0, 9) + encode_metadata_record(0, 3, {})[3:])
    assert list(rec.data)[-1] == "inControlledShutdown"


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value,error,message", [
    (b"", MetadataFrameError, "Error while reading frame version"),
    (b"\x80", MetadataFrameError, "Error while reading frame version"),
    (b"\x01", MetadataFrameError, "Error while reading type"),
    (b"\x01\x02", MetadataFrameError, "Error while reading version"),
    (b"\x01\x02\xff\xff\xff\xff\xff", MetadataFrameError, "Error while reading version"),
    (uvarint(40000), MetadataFrameError, "Value for frame version was too large."),
    (b"\x01" + uvarint(32768), MetadataFrameError, "Value for type was too large."),
    (b"\x00\x02\x00", MetadataFrameError,
     "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
     "preview release of KRaft in 2.8 to newer versions are not supported."),
    (uvarint(10000) + uvarint(10000), MetadataFrameError,
     "Could not deserialize metadata record due to unknown frame version 10000(only frame "
     "version 1 is supported)"),
    (frame(6, 0), UnknownMetadataTypeError, "Unknown metadata id 6"),
    (frame(2, 0) + cstr("t"), MetadataRecordBodyError, "Failed to deserialize record with type 2"),
    (frame(2, 0) + b"\x00" + UUID + NO_TAGS, MetadataRecordBodyError,
     "Failed to deserialize record with type 2: non-nullable field name was serialized as null"),
    (TOPIC_RECORD + b"\x00", MetadataTrailingBytesError, "Found 1 byte(s) of garbage after 2"),
])
def test_errors(value, error, message):
    with pytest.raises(error) as info:
        decode_metadata_record(value)
    assert info.value.message.startswith(message)
    assert isinstance(info.value, CorruptRecordError)
    assert info.value.position is not None


def test_unknown_type_is_an_unsupported_format_error_with_its_key():
    with pytest.raises(UnsupportedFormatError) as info:
        decode_metadata_record(frame(13, 0))
    assert info.value.api_key == 13


def test_negative_short_from_a_five_byte_varint_is_an_unknown_type():
    # Java keeps the low 32 bits, signed, then narrows to a short: 0xFFFFFFFF -> -1
    with pytest.raises(UnknownMetadataTypeError, match="Unknown metadata id -1"):
        decode_metadata_record(b"\x01\xff\xff\xff\xff\x0f\x00")


GOLDENS = [TOPIC_RECORD, REGISTER_BROKER_V0, PARTITION_CHANGE_V0]


@pytest.mark.parametrize("raw", GOLDENS)
def test_every_truncation_raises_only_corrupt_record_error(raw):
    for n in range(len(raw)):
        with pytest.raises(CorruptRecordError):
            decode_metadata_record(raw[:n])


@settings(max_examples=500)
@given(st.binary(max_size=64))
def test_garbage_raises_only_corrupt_record_error(blob):
    try:
        decode_metadata_record(blob)
    except CorruptRecordError:
        pass


@settings(max_examples=500)
@given(st.sampled_from(ALL_VERSIONS), st.binary(max_size=48))
def test_garbage_bodies_raise_only_corrupt_record_error(key_version, body):
    try:
        rec = decode_metadata_record(frame(*key_version) + body)
    except CorruptRecordError:
        return
    dumps(rec.to_json())


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(records(), st.data())
def test_mutated_records_raise_only_corrupt_record_error(rec, data):
    raw = bytearray(encode_metadata_record(*rec))
    i = data.draw(st.integers(0, len(raw) - 1))
    raw[i] = data.draw(st.integers(0, 255))
    try:
        decoded = decode_metadata_record(bytes(raw))
    except CorruptRecordError:
        return
    dumps(decoded.to_json())
