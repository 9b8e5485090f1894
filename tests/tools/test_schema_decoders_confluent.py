"""The schema decoders read what Confluent's own serializers write: confluent-kafka's
AvroSerializer, ProtobufSerializer (a nested message, so its message indexes) and
JSONSerializer frame the values, against the client library's in-memory registry (no Schema
Registry runs here); ``_schemas`` then holds those schemas with the ids they got, as the
registry would store them (Protobuf as ``.proto`` text, its canonical form)."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from pylogctl.groups.replicas import LogDirs
from pylogctl.tools.schema_decoders import schema_decoder
from schema_registry_support import (AVRO_ORDER, JSON_SCHEMA, PROTO_SHOP, schema_key,
                                     schema_value, write_partition)

pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")
serde = pytest.importorskip("confluent_kafka.schema_registry.protobuf")
try:
    from confluent_kafka.schema_registry._sync.mock_schema_registry_client import (
        MockSchemaRegistryClient)
except ImportError:  # older clients
    pytest.skip("confluent-kafka without its in-memory registry", allow_module_level=True)


def _shop_pb2(tmp_path):
    """The generated module of PROTO_SHOP (protoc, as a producer's build makes it)."""
    from importlib.resources import files

    from grpc_tools import protoc

    tmp_path.mkdir()
    (tmp_path / "shop.proto").write_text(PROTO_SHOP)
    assert protoc.main(["protoc", f"-I{tmp_path}", f"-I{files('grpc_tools') / '_proto'}",
                        f"--python_out={tmp_path}", "shop.proto"]) == 0
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module("shop_pb2")
    finally:
        sys.path.remove(str(tmp_path))


def test_values_confluents_serializers_wrote(tmp_path):
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    shop = _shop_pb2(tmp_path / "gen")
    registry = MockSchemaRegistryClient({"url": "mock://test"})
    ctx = SerializationContext("shop", MessageField.VALUE)
    conf = {"auto.register.schemas": True}
    avro = AvroSerializer(registry, json.dumps(AVRO_ORDER), conf=conf)
    line = serde.ProtobufSerializer(shop.Basket.Line, registry,
                                    {"use.deprecated.format": False})
    customer = serde.ProtobufSerializer(shop.Customer, registry,
                                        {"use.deprecated.format": False})
    user = JSONSerializer(json.dumps(JSON_SCHEMA), registry, conf=conf)
    values = [
        avro({"id": 7, "item": "tea", "price": None, "tag": b"\x01"}, ctx),
        line(shop.Basket.Line(sku="SKU-9", qty=2), ctx),
        customer(shop.Customer(name="Ada"), ctx),
        user({"user": "ada", "age": 36}, ctx),
    ]
    ids = [int.from_bytes(v[1:5], "big") for v in values]
    assert values[1][5:8] == b"\x04\x02\x00"  # indexes [1, 0], as pylogctl reads them
    texts = [(json.dumps(AVRO_ORDER), None), (PROTO_SHOP, "PROTOBUF"),
             (PROTO_SHOP, "PROTOBUF"), (json.dumps(JSON_SCHEMA), "JSON")]
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    (log_dir / "meta.properties").write_text("version=1\nnode.id=1\n")
    records = {}
    for sid, (text, kind) in zip(ids, texts):
        subject = f"s{sid}-value"
        records[sid] = (schema_key(subject, 1), schema_value(subject, 1, sid, text, kind))
    write_partition(log_dir, "_schemas", list(records.values()))
    decode = schema_decoder("schema-registry", LogDirs([log_dir]))
    assert [decode(v) for v in values] == [
        {"id": 7, "item": "tea", "price": None, "tag": "\\x01"},
        {"sku": "SKU-9", "qty": 2}, {"name": "Ada"}, {"user": "ada", "age": 36}]
