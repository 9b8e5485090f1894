"""The ``avro``, ``protobuf``, ``json-schema`` and ``schema-registry`` decoders on records
written for the purpose in the Confluent wire format, with the schemas a ``_schemas`` topic
holds as Schema Registry writes it (tests/schema_registry_support.py)."""

from __future__ import annotations

import json

import pytest

from pylogctl.errors import UsageError
from pylogctl.groups.replicas import LogDirs
from pylogctl.groups.schemas_topic import SchemaStore, load_schemas
from pylogctl.storage.file_records import FileRecords
from pylogctl.tools import schema_decoders
from pylogctl.tools.decoders import ValueDecodeError, decode_or_show, get_decoder
from schema_registry_support import avro_bytes, build_registry_log_dir, schema_key, schema_value

pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")

ORDER = {"id": 7, "item": "tea", "price": 2.5, "tag": "\\x00\\xffok"}


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    return build_registry_log_dir(tmp_path_factory.mktemp("registry"))


@pytest.fixture(scope="module")
def values(log_dir):
    with FileRecords(str(log_dir / "shop-0" / "00000000000000000000.log")) as records:
        return [r.value for b in records.batches() for r in b.records()]


def _shown(name, log_dir, raw):
    told = []
    value = decode_or_show(get_decoder(name, [str(log_dir)]), raw, told.append)
    return value, told


def test_the_store_keeps_the_latest_record_of_each_key(log_dir):
    store = load_schemas(LogDirs([log_dir]))
    assert sorted(s.id for s in store.versions.values()) == [1, 2, 3, 4]
    assert store.get(2).schema_type == "PROTOBUF" and store.get(1).schema_type == "AVRO"
    assert store.get(4).deleted  # DELETE_SUBJECT: soft-deleted, still there by id
    assert store.get(5) is None and store.hard_deleted == {5}  # tombstoned
    assert store.notes == []


@pytest.mark.parametrize("name", ["avro", "schema-registry"])
def test_avro(log_dir, values, name):
    assert _shown(name, log_dir, values[0]) == (ORDER, [])


@pytest.mark.parametrize("name", ["protobuf", "schema-registry"])
def test_protobuf_nested_message_index(log_dir, values, name):
    # indexes [1, 0]: the file's second message (Basket), its first nested one (Line)
    assert _shown(name, log_dir, values[1]) == ({"sku": "SKU-1", "qty": 3}, [])


def test_protobuf_first_message_as_the_single_zero_byte(log_dir, values):
    assert _shown("protobuf", log_dir, values[2]) == ({"name": "Ada"}, [])


def test_json_schema(log_dir, values):
    assert _shown("json-schema", log_dir, values[3]) == ({"user": "ada", "age": 36}, [])


def test_json_schema_value_it_rejects_is_shown_and_reported(log_dir, values):
    assert _shown("json-schema", log_dir, values[7]) == (
        {"age": "old"}, ["the value does not match schema id 3: 'user' is a required property"])


def test_a_schema_id_missing_from_schemas_is_one_line_and_the_raw_value(log_dir, values):
    value, told = _shown("avro", log_dir, values[4])
    assert told == ["schema id 99 is not in _schemas; shown as raw bytes"]
    assert value == ("\\x00\\x00\\x00\\x00c\\x0e\\x06tea\\x02" + "\\x00" * 6
                     + "\\x04@\\x08\\x00\\xffok")


def test_a_soft_deleted_schema_still_reads_its_id(log_dir, values):
    assert _shown("avro", log_dir, values[5]) == (ORDER, [])


def test_a_hard_deleted_schema_is_missing(log_dir, values):
    assert _shown("avro", log_dir, values[6])[1] == [
        "schema id 5 is not in _schemas (its versions were hard-deleted); shown as raw bytes"]


def test_a_value_of_another_type_or_not_framed(log_dir, values):
    assert _shown("avro", log_dir, values[1])[1] == [
        "schema id 2 (basket-value version 1) is PROTOBUF, not AVRO; shown as raw bytes"]
    assert _shown("schema-registry", log_dir, values[8]) == (
        "plain text", ["not in the Confluent wire format: magic byte 112, not 0; shown as "
                       "raw bytes"])


def _store(*records):
    store = SchemaStore()
    for key, value in records:
        store.apply(key, value, "test")
    return store


def test_references_are_read_from_their_subject_versions():
    from pylogctl.format.confluent_wire import frame, write_message_indexes

    money = {"type": "record", "name": "Money", "namespace": "shop",
             "fields": [{"name": "cents", "type": "long"}]}
    priced = {"type": "record", "name": "Priced", "namespace": "shop",
              "fields": [{"name": "amount", "type": "shop.Money"}]}
    ref = [{"name": "shop.Money", "subject": "money", "version": 1}]
    proto_ref = [{"name": "shop/money.proto", "subject": "money-proto", "version": 1}]
    value = json.loads(schema_value("priced", 1, 11, json.dumps(priced)))
    proto = json.loads(schema_value("wallet", 1, 13, 'syntax = "proto3";\npackage shop;\n'
                                    'import "shop/money.proto";\n'
                                    'message Wallet { Cash cash = 1; }\n', "PROTOBUF"))
    store = _store(
        (schema_key("money", 1), schema_value("money", 1, 10, json.dumps(money))),
        (schema_key("priced", 1), json.dumps(value | {"references": ref}).encode()),
        (schema_key("money-proto", 1), schema_value(
            "money-proto", 1, 12, 'syntax = "proto3";\npackage shop;\n'
            'message Cash { int64 cents = 1; }\n', "PROTOBUF")),
        (schema_key("wallet", 1), json.dumps(proto | {"references": proto_ref}).encode()))
    decoder = schema_decoders.SchemaDecoder("schema-registry", store)
    assert decoder(frame(11, avro_bytes({"type": "record", "name": "Priced", "fields": [
        {"name": "amount", "type": money}]}, {"amount": {"cents": 250}}))) == {
            "amount": {"cents": 250}}
    assert decoder(frame(13, write_message_indexes([0]) + b"\x0a\x03\x08\xfa\x01")) == {
        "cash": {"cents": "250"}}  # protobuf's JSON mapping writes int64 as a string


def test_a_proto_schema_protoc_rejects_is_one_line():
    store = _store((schema_key("bad", 1), schema_value("bad", 1, 1, "message {", "PROTOBUF")))
    with pytest.raises(ValueDecodeError, match=r"^schema id 1 \(bad version 1\) is not valid "
                       r"\.proto text: .*pylogctl_registered_schema\.proto:1:"):
        schema_decoders.SchemaDecoder("protobuf", store)(b"\x00\x00\x00\x00\x01\x00")


def test_log_dirs_without_schemas_are_a_usage_error(tmp_path):
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=1\n")
    with pytest.raises(UsageError, match="reads schemas from the _schemas topic, which "):
        get_decoder("avro", [str(tmp_path)])


def test_a_missing_library_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "fastavro" else real(name, *a))
    with pytest.raises(UsageError, match=r"^The avro decoder needs fastavro, which is not "
                       r"installed: pip install 'pylogctl\[schemas\]'$"):
        get_decoder("avro", ["."])


def test_avro_logical_types_are_json_ready():
    import datetime as dt
    import decimal

    from pylogctl.format.confluent_wire import frame

    schema = {"type": "record", "name": "Paid", "fields": [
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9,
                                    "scale": 2}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}}]}
    store = _store((schema_key("paid", 1), schema_value("paid", 1, 1, json.dumps(schema))))
    raw = frame(1, avro_bytes(schema, {
        "at": dt.datetime(2024, 6, 15, 10, 0, tzinfo=dt.timezone.utc),
        "amount": decimal.Decimal("12.50"), "ref": "6f1b3c3e-5d0a-4c1e-9d55-0e2f8e0a7b11"}))
    value = schema_decoders.SchemaDecoder("avro", store)(raw)
    assert value == {"at": "2024-06-15T10:00:00+00:00", "amount": "12.50",
                     "ref": "6f1b3c3e-5d0a-4c1e-9d55-0e2f8e0a7b11"}
    json.dumps(value)


def test_records_the_store_cannot_read_are_noted_and_skipped():
    store = _store((b"not json", b"{}"),
                   (schema_key("s", 1), b'{"subject":"s","version":1}'))
    assert store.versions == {}
    assert store.notes == ["test: a record whose key or value is not JSON, skipped",
                           "test: a SCHEMA record without its fields ('id'), skipped"]


def test_a_registry_with_another_kafkastore_topic(tmp_path, values):
    log_dir = build_registry_log_dir(tmp_path)
    (log_dir / "_schemas-0").rename(log_dir / "_schemas_dev-0")
    assert get_decoder("avro", [str(log_dir)], "_schemas_dev")(values[0]) == ORDER
    with pytest.raises(ValueDecodeError, match="^schema id 99 is not in _schemas_dev$"):
        get_decoder("avro", [str(log_dir)], "_schemas_dev")(values[4])
