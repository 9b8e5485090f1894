"""A log dir holding a Schema Registry's ``_schemas`` topic and a topic of Confluent-framed
records, written for the schema decoders' tests.

No registry runs here, so the records are made as it makes them: ``_schemas`` keys and values
are the JSON of Schema Registry's ``SchemaKey``/``SchemaValue``/``DeleteSubject*`` (its
``KafkaStore``), and the data records are fastavro/protobuf/JSON bytes framed as Confluent's
serializers frame them (magic 0, schema id, Protobuf's message indexes).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from pylogctl.format.builder import build_batch
from pylogctl.format.confluent_wire import frame, write_message_indexes

T0 = 1_700_000_000_000

AVRO_ORDER = {"type": "record", "name": "Order", "namespace": "shop",
              "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"},
                         {"name": "price", "type": ["null", "double"], "default": None},
                         {"name": "tag", "type": "bytes"}]}
PROTO_SHOP = """syntax = "proto3";
package shop;

import "google/protobuf/timestamp.proto";

message Customer {
  string name = 1;
}

message Basket {
  message Line {
    string sku = 1;
    int32 qty = 2;
  }
  repeated Line lines = 1;
  google.protobuf.Timestamp at = 2;
}
"""
JSON_SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
               "properties": {"user": {"type": "string"}, "age": {"type": "integer"}},
               "required": ["user"]}


def schema_key(subject: str, version: int) -> bytes:
    return json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version,
                       "magic": 1}, separators=(",", ":")).encode()


def schema_value(subject: str, version: int, schema_id: int, schema: str,
                 schema_type: str | None = None, deleted: bool = False) -> bytes:
    v = {"subject": subject, "version": version, "id": schema_id}
    if schema_type is not None:  # the registry leaves AVRO out
        v["schemaType"] = schema_type
    v |= {"schema": schema, "deleted": deleted}
    return json.dumps(v, separators=(",", ":")).encode()


def avro_bytes(schema: dict, record: dict) -> bytes:
    import fastavro

    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return buf.getvalue()


def basket_line_bytes(sku: str, qty: int) -> bytes:
    """A ``shop.Basket.Line`` message, encoded by hand (field 1 string, field 2 varint)."""
    raw = sku.encode()
    return b"\x0a" + bytes([len(raw)]) + raw + b"\x10" + bytes([qty])


def customer_bytes(name: str) -> bytes:
    raw = name.encode()
    return b"\x0a" + bytes([len(raw)]) + raw


def write_partition(log_dir: Path, topic: str, records: list[tuple[bytes | None, bytes | None]]
                    ) -> None:
    part = log_dir / f"{topic}-0"
    part.mkdir(parents=True)
    batch = build_batch([(T0 + i, k, v) for i, (k, v) in enumerate(records)], base_offset=0)
    (part / "00000000000000000000.log").write_bytes(batch)


def build_registry_log_dir(root: Path) -> Path:
    """``root/logs``: ``_schemas`` (an Avro, a Protobuf and a JSON schema; a soft-deleted and
    a hard-deleted version) and ``shop-0`` whose values are framed with them:

    offset 0: Avro id 1; 1: Protobuf id 2, message Basket.Line (indexes [1, 0]);
    2: Protobuf id 2, Customer (indexes [0], the single byte 0); 3: JSON Schema id 3;
    4: Avro id 99 (no such schema); 5: Avro id 4 (soft-deleted: still read);
    6: Avro id 5 (hard-deleted: a tombstone); 7: JSON Schema id 3, a value it rejects;
    8: not framed at all.
    """
    log_dir = root / "logs"
    log_dir.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=test\n")
    old = dict(AVRO_ORDER, name="OldOrder")
    gone = dict(AVRO_ORDER, name="GoneOrder")
    schemas = [
        (b'{"keytype":"NOOP","magic":0}', None),
        (schema_key("shop-value", 1), schema_value("shop-value", 1, 1, json.dumps(AVRO_ORDER))),
        (schema_key("basket-value", 1),
         schema_value("basket-value", 1, 2, PROTO_SHOP, "PROTOBUF")),
        (schema_key("user-value", 1),
         schema_value("user-value", 1, 3, json.dumps(JSON_SCHEMA), "JSON")),
        (schema_key("old-value", 1), schema_value("old-value", 1, 4, json.dumps(old))),
        (schema_key("gone-value", 1), schema_value("gone-value", 1, 5, json.dumps(gone))),
        (b'{"keytype":"DELETE_SUBJECT","subject":"old-value","magic":0}',
         b'{"subject":"old-value","version":1}'),
        (schema_key("gone-value", 1), schema_value("gone-value", 1, 5, json.dumps(gone),
                                                   deleted=True)),
        (schema_key("gone-value", 1), None),
        (b'{"keytype":"CONFIG","subject":null,"magic":0}', b'{"compatibilityLevel":"BACKWARD"}'),
    ]
    write_partition(log_dir, "_schemas", schemas)
    order = {"id": 7, "item": "tea", "price": 2.5, "tag": b"\x00\xffok"}
    values = [
        frame(1, avro_bytes(AVRO_ORDER, order)),
        frame(2, write_message_indexes([1, 0]) + basket_line_bytes("SKU-1", 3)),
        frame(2, write_message_indexes([0]) + customer_bytes("Ada")),
        frame(3, b'{"user":"ada","age":36}'),
        frame(99, avro_bytes(AVRO_ORDER, order)),
        frame(4, avro_bytes(old, order)),
        frame(5, avro_bytes(gone, order)),
        frame(3, b'{"age":"old"}'),
        b"plain text",
    ]
    write_partition(log_dir, "shop", [(f"k{i}".encode(), v) for i, v in enumerate(values)])
    return log_dir
