"""pylogctl's record schemas against the JSON schemas inside Kafka's own jars.

Kafka generates its readers, writers and JSON converters from ``*.json`` message schemas that
ship inside its jars (``common/message/OffsetCommitValue.json`` in kafka-group-coordinator,
``common/metadata/*.json`` in kafka-metadata, ...). pylogctl restates them as
:class:`~pylogctl.format.message.Schema` declarations; this test reads the pinned release's
files and checks, version by version, that every record type Kafka defines is declared, that
nothing else is, and that each version reads the same fields: names, types, nullability, tags,
and the defaults that decide whether a tagged field is printed. A new Kafka release that adds a
field fails here, naming it.
"""

from __future__ import annotations

import json
import re
import zipfile
from typing import Any, Iterator

import pytest

from kafka_jvm import KAFKA_VERSION, jar_dir
from pylogctl.format import (control, group_coordinator_records, metadata_records,
                             remote_log_metadata_records, share_coordinator_records,
                             transaction_log_records)
from pylogctl.format.message import Field, KafkaUuid, NullDefaultField, Schema

_PRIMITIVES = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
               "string", "bytes", "uuid", "records"}


def _jar(name: str) -> zipfile.ZipFile:
    path = jar_dir() / f"kafka-{name}-{KAFKA_VERSION}.jar"
    if not path.exists():
        pytest.skip(f"{path.name} is not in {path.parent} (tests/install-tools.sh resolves it)")
    return zipfile.ZipFile(path)


def _schemas(jar: str, folder: str) -> Iterator[dict[str, Any]]:
    with _jar(jar) as z:
        for name in sorted(z.namelist()):
            if name.startswith(folder) and name.endswith(".json"):
                text = re.sub(r"^\s*//.*$", "", z.read(name).decode(), flags=re.M)
                yield json.loads(text)


def _versions(spec: str | None) -> tuple[int, int]:
    if spec is None or spec == "none":
        return (1, 0)
    if spec.endswith("+"):
        return (int(spec[:-1]), 1 << 15)
    lo, _, hi = spec.partition("-")
    return (int(lo), int(hi or lo))


def _in(spec: str | None, v: int) -> bool:
    lo, hi = _versions(spec)
    return lo <= v <= hi


class _Kafka:
    """One Kafka schema file, read the way its generator reads it."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.common = {c["name"]: c["fields"] for c in doc.get("commonStructs", ())}

    @property
    def valid(self) -> range:
        lo, hi = _versions(self.doc["validVersions"])
        return range(lo, hi + 1)

    def flexible(self, v: int) -> bool:
        return _in(self.doc.get("flexibleVersions"), v)

    def fields(self, fields: list[dict[str, Any]], v: int) -> list[tuple]:
        flexible = self.flexible(v)
        out = []
        for f in fields:
            versions = f.get("versions") or f.get("taggedVersions")
            if not _in(versions, v):
                continue
            type_ = f["type"]
            base = type_[2:] if type_.startswith("[]") else type_
            children = f.get("fields") or self.common.get(base)
            tagged = flexible and _in(f.get("taggedVersions"), v)
            nullable = _in(f.get("nullableVersions"), v)
            shape = ("[]" if type_.startswith("[]") else "") + (base if base in _PRIMITIVES
                                                               else "struct")
            default = _kafka_default(f, base, nullable) if tagged or base in _INTISH else None
            out.append((f["name"], shape, nullable if _NULLABLE_KINDS & {base, "[]"} or
                        type_.startswith("[]") or base not in _PRIMITIVES else None,
                        f.get("tag") if tagged else None, default,
                        tuple(self.fields(children, v)) if children else ()))
        return out


_INTISH = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64"}
_NULLABLE_KINDS = {"string", "bytes", "records"}


def _kafka_default(f: dict[str, Any], base: str, nullable: bool) -> Any:
    d = f.get("default")  # a JSON null literal is no default at all, unlike the string "null"
    if d == "null":
        return None
    if f["type"].startswith("[]"):
        return []
    if base in _INTISH:
        if d is None:
            return 0
        if isinstance(d, bool) or d in ("true", "false"):
            return d in (True, "true")
        return int(d, 0) if isinstance(d, str) else int(d)
    if base == "string":
        return d if d is not None else ""
    if base == "uuid":
        return KafkaUuid(bytes(16))
    if base in _PRIMITIVES:
        return None
    return "struct"  # a new instance of the struct


def _ours(fields: tuple[Field, ...], v: int, flexible: bool) -> list[tuple]:
    out = []
    for f in fields:
        if not f.in_version(v):
            continue
        type_ = f.type
        base = type_[2:] if type_.startswith("[]") else type_
        struct = bool(f.fields)
        shape = ("[]" if type_.startswith("[]") else "") + ("struct" if struct else base)
        tagged = flexible and f.tag is not None
        nullable = f.nullable_in(v)
        if tagged or base in _INTISH:
            if type_.startswith("[]"):
                default = None if isinstance(f, NullDefaultField) else []
            elif struct:
                default = None if isinstance(f, NullDefaultField) else "struct"
            else:
                default = f.default_value()
        else:
            default = None
        out.append((f.name, shape, nullable if _NULLABLE_KINDS & {base} or
                    type_.startswith("[]") or struct else None,
                    f.tag if tagged else None, default,
                    tuple(_ours(f.fields, v, flexible)) if struct else ()))
    return out


def _check(kafka: _Kafka, ours: Schema, read_at: int | None = None) -> None:
    """Every version Kafka defines reads the same fields in pylogctl (keys: at ``read_at``,
    the record type, where the generated reader treats any version as its only one)."""
    name = kafka.doc["name"]
    assert ours.name == name
    for v in kafka.valid:
        at = ours.reading_version(read_at) if read_at is not None else v
        assert read_at is not None or ours.has_version(v), f"{name} lacks version {v}"
        assert ours.is_flexible(at) == kafka.flexible(v), f"{name} v{v} flexible"
        assert _ours(ours.fields, at, ours.is_flexible(at)) == \
            kafka.fields(kafka.doc["fields"], v), f"{name} v{v}"
    if read_at is None:
        beyond = max(kafka.valid) + 1
        assert not ours.has_version(beyond), f"{name}: pylogctl accepts version {beyond}"


def _coordinator_case(jar: str, types: dict) -> None:
    keys, values = {}, {}
    for doc in _schemas(jar, "common/message/"):
        if doc.get("type") == "coordinator-key":
            keys[doc["apiKey"]] = doc
        elif doc.get("type") == "coordinator-value":
            values[doc["apiKey"]] = doc
    assert sorted(types) == sorted(keys) == sorted(values)
    for api_key, rtype in types.items():
        _check(_Kafka(keys[api_key]), rtype.key, read_at=api_key)
        _check(_Kafka(values[api_key]), rtype.value)


def test_group_coordinator_records_are_kafkas():
    _coordinator_case("group-coordinator", group_coordinator_records.RECORD_TYPES)


def test_share_coordinator_records_are_kafkas():
    _coordinator_case("share-coordinator", share_coordinator_records.RECORD_TYPES)


def test_transaction_coordinator_records_are_kafkas():
    _coordinator_case("transaction-coordinator", transaction_log_records.RECORD_TYPES)


def test_record_type_names_are_kafkas():
    """The names Kafka's generated CoordinatorRecordType gives (its file names, in upper
    snake case), which the JSON output does not print but the library exposes."""
    docs = {d["apiKey"]: d["name"] for d in _schemas("group-coordinator", "common/message/")
            if d.get("type") == "coordinator-key"}
    for api_key, name in docs.items():
        expected = metadata_records.type_name(name[:-len("Key")])
        assert group_coordinator_records.RECORD_TYPES[api_key].name == expected


@pytest.mark.parametrize("jar,folder,schemas", [
    ("metadata", "common/metadata/", metadata_records.SCHEMAS),
    ("storage", "message/Remote", remote_log_metadata_records.SCHEMAS),
], ids=["metadata", "remote-log-metadata"])
def test_framed_records_are_kafkas(jar, folder, schemas):
    docs = {d["apiKey"]: d for d in _schemas(jar, folder)}
    assert sorted(schemas) == sorted(docs)
    for api_key, doc in docs.items():
        _check(_Kafka(doc), schemas[api_key])


def test_clients_schemas_are_kafkas():
    """The consumer protocol embedded in classic group metadata and the KRaft control records."""
    path = jar_dir() / f"kafka-clients-{KAFKA_VERSION}.jar"
    if not path.exists():
        pytest.skip(f"{path.name} is not in {path.parent}")
    ours = {s.name: s for s in (group_coordinator_records.CONSUMER_PROTOCOL_SUBSCRIPTION,
                                group_coordinator_records.CONSUMER_PROTOCOL_ASSIGNMENT,
                                *control.SCHEMAS.values())}
    with zipfile.ZipFile(path) as z:
        for name, schema in ours.items():
            text = re.sub(r"^\s*//.*$", "", z.read(f"common/message/{name}.json").decode(),
                          flags=re.M)
            _check(_Kafka(json.loads(text)), schema)
