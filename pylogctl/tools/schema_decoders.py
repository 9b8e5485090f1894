"""The ``avro``, ``protobuf`` and ``json-schema`` decoders: keys and values that Confluent's
serializers wrote (:mod:`pylogctl.format.confluent_wire`), read with the schema their id names
in the ``_schemas`` topic of the same log dirs (:mod:`pylogctl.groups.schemas_topic`).

``schema-registry`` reads each record by the type of its id's schema. The libraries are those
the registry's Python clients use: fastavro reads Avro; Protobuf messages are parsed by the
``protobuf`` runtime from descriptors that ``protoc`` builds from the registry's ``.proto``
text (grpcio-tools ships it as a Python extension: the runtime cannot parse ``.proto`` text,
and protoc resolves imports, references and well-known types exactly as the producer's build
did, in ~4 ms a schema; a pure-Python ``.proto`` parser would leave the descriptor building and
type resolution to us); JSON Schema payloads are JSON, checked with ``jsonschema``.
They come with ``pip install 'pylogctl[schemas]'``; a missing one is a one-line error.

Every decoded value is JSON-ready: Avro bytes and fixed as text by
:func:`~pylogctl.format.readable_bytes.readable`, dates and decimals as strings, Protobuf
messages in protobuf's JSON mapping (proto field names, fields at their default value included).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import io
import json
import os
import re
import tempfile
import uuid
from typing import Any, Callable

from ..errors import CorruptRecordError, UsageError
from ..format.confluent_wire import read_message_indexes, unframe
from ..format.readable_bytes import readable
from ..groups.replicas import LogDirs
from ..groups.schemas_topic import (AVRO, JSON, PROTOBUF, TOPIC, RegisteredSchema, SchemaStore,
                                    load_schemas, log_dirs_holding)
from .decoders import ValueDecodeError

# decoder name -> the schemaType it reads (None: whichever the id's schema has)
SCHEMA_TYPES = {"avro": AVRO, "protobuf": PROTOBUF, "json-schema": JSON, "schema-registry": None}
_LIBRARIES = {"avro": ("fastavro",), "protobuf": ("google.protobuf", "grpc_tools"),
              "json-schema": (), "schema-registry": ("fastavro", "google.protobuf", "grpc_tools")}
EXTRA = "pip install 'pylogctl[schemas]'"


def schema_decoder(name: str, log_dirs: Any, topic: str = TOPIC) -> Callable[[bytes], Any]:
    """The decoder ``name`` over the schemas in ``topic`` (the registry's kafkastore.topic) of
    ``log_dirs`` (a LogDirs, or paths in log dirs)."""
    _require(name)
    if log_dirs is None:
        raise UsageError(f"The {name} decoder needs the log dirs that hold {topic}")
    if not isinstance(log_dirs, LogDirs):
        log_dirs = log_dirs_holding(log_dirs)
    store = _store((topic, *(d.path for d in log_dirs.log_dirs)), log_dirs, topic)
    if not store.found:
        raise UsageError(f"The {name} decoder reads schemas from the {topic} topic, which "
                         f"{', '.join(d.path for d in log_dirs.log_dirs)} do not hold")
    return SchemaDecoder(name, store)


def _require(name: str) -> None:
    import importlib.util

    for module in _LIBRARIES[name]:
        if importlib.util.find_spec(module.split(".")[0]) is None:
            raise UsageError(f"The {name} decoder needs {module.split('.')[0]}, which is not "
                             f"installed: {EXTRA}")


_STORES: dict[tuple[str, ...], SchemaStore] = {}


def _store(key: tuple[str, ...], log_dirs: LogDirs, topic: str) -> SchemaStore:
    """The store of these log dirs, loaded once (key and value decoders share it)."""
    if key not in _STORES:
        _STORES[key] = load_schemas(log_dirs, topic)
    return _STORES[key]


class SchemaDecoder:
    """Unframes a key or value and decodes it with its schema; :class:`ValueDecodeError`
    (carrying any value still worth showing) for what it cannot decode."""

    def __init__(self, name: str, store: SchemaStore) -> None:
        self.name = name
        self.schema_type = SCHEMA_TYPES[name]
        self.store = store
        self._readers: dict[int, Callable[[bytes], Any]] = {}

    @property
    def notes(self) -> list[str]:
        return self.store.notes

    def __call__(self, raw: bytes) -> Any:
        try:
            framed = unframe(raw)
        except CorruptRecordError as exc:
            raise ValueDecodeError(str(exc)) from None
        sid = framed.schema_id
        reader = self._readers.get(sid)
        if reader is None:
            schema = self.store.get(sid)
            if schema is None:
                how = (" (its versions were hard-deleted)" if sid in self.store.hard_deleted
                       else "")
                raise ValueDecodeError(f"schema id {sid} is not in {self.store.topic}{how}")
            if self.schema_type not in (None, schema.schema_type):
                raise ValueDecodeError(f"schema id {sid} ({schema.subject} version "
                                       f"{schema.version}) is {schema.schema_type}, not "
                                       f"{self.schema_type}")
            if schema.schema_type not in _READERS:
                raise ValueDecodeError(f"schema id {sid} is of type {schema.schema_type}, "
                                       f"which pylogctl does not read")
            try:
                reader = _READERS[schema.schema_type](schema, self.store)
            except ValueDecodeError:
                raise
            except Exception as exc:  # the library's own error for a schema it rejects
                raise ValueDecodeError(f"schema id {sid} ({schema.subject} version "
                                       f"{schema.version}) cannot be read: "
                                       f"{_one_line(exc)}") from None
            self._readers[sid] = reader
        try:
            return reader(framed.data)
        except ValueDecodeError:
            raise
        except Exception as exc:  # data the schema does not describe
            raise ValueDecodeError(f"the data does not match schema id {sid}: "
                                   f"{_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _references(schema: RegisteredSchema, store: SchemaStore,
                seen: dict[str, RegisteredSchema]) -> dict[str, RegisteredSchema]:
    """Every schema ``schema`` references, transitively, by reference name (imports first)."""
    for ref in schema.references:
        if ref.name in seen:
            continue
        target = store.version(ref.subject, ref.version)
        if target is None:
            raise ValueDecodeError(f"schema id {schema.id} references {ref.subject} version "
                                   f"{ref.version}, which is not in {store.topic}")
        _references(target, store, seen)
        seen[ref.name] = target
    return seen


# --- Avro ---------------------------------------------------------------------------------

def _avro_reader(schema: RegisteredSchema, store: SchemaStore) -> Callable[[bytes], Any]:
    import fastavro

    named: dict[str, Any] = {}
    for ref in _references(schema, store, {}).values():
        fastavro.parse_schema(json.loads(ref.schema), named_schemas=named)
    parsed = fastavro.parse_schema(json.loads(schema.schema), named_schemas=named)

    def read(data: bytes) -> Any:
        buf = io.BytesIO(data)
        value = fastavro.schemaless_reader(buf, parsed, None)
        if buf.tell() != len(data):
            raise ValueDecodeError(f"the data does not match schema id {schema.id}: "
                                   f"{len(data) - buf.tell()} bytes left after the record")
        return _json_ready(value)
    return read


def _json_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, bytes):
        return readable(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    return value


# --- Protobuf -----------------------------------------------------------------------------

def _protobuf_reader(schema: RegisteredSchema, store: SchemaStore) -> Callable[[bytes], Any]:
    from google.protobuf import descriptor_pool, json_format, message_factory

    files = _compile_proto(schema, _references(schema, store, {}))
    pool = descriptor_pool.DescriptorPool()
    for f in files:
        pool.Add(f)
    main = files[-1]
    classes: dict[tuple[int, ...], Any] = {}

    def message_class(indexes: list[int]) -> Any:
        key = tuple(indexes)
        if key not in classes:
            names, types = [], main.message_type
            for i in indexes:
                if i >= len(types):
                    raise ValueDecodeError(f"message index {indexes} is not a message of "
                                           f"schema id {schema.id}")
                names.append(types[i].name)
                types = types[i].nested_type
            full = ".".join(([main.package] if main.package else []) + names)
            classes[key] = message_factory.GetMessageClass(pool.FindMessageTypeByName(full))
        return classes[key]

    def read(data: bytes) -> Any:
        try:
            indexes, body = read_message_indexes(data)
        except CorruptRecordError as exc:
            raise ValueDecodeError(str(exc)) from None
        msg = message_class(indexes).FromString(body)
        return json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)
    return read


_MAIN_PROTO = "pylogctl_registered_schema.proto"


def _compile_proto(schema: RegisteredSchema, refs: dict[str, RegisteredSchema]) -> list[Any]:
    """The FileDescriptorProtos of ``schema`` and its imports, imports first, by protoc."""
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc

    with tempfile.TemporaryDirectory(prefix="pylogctl-proto-") as tmp:
        for name, text in [*((n, r.schema) for n, r in refs.items()),
                           (_MAIN_PROTO, schema.schema)]:
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(tmp, "set.pb")
        errors = os.path.join(tmp, "protoc.err")
        rc = _quiet(errors, lambda: protoc.main([
            "protoc", f"-I{tmp}", f"-I{_well_known_protos()}", "--include_imports",
            f"--descriptor_set_out={out}", _MAIN_PROTO]))
        if rc != 0:
            with open(errors, encoding="utf-8", errors="replace") as f:
                # protoc's "file.proto:line:column: message", not absl's warnings
                lines = [line for line in f.read().replace(tmp + os.sep, "").splitlines()
                         if re.match(r"\S+\.proto:\d+:\d+: ", line)]
            raise ValueDecodeError(f"schema id {schema.id} ({schema.subject} version "
                                   f"{schema.version}) is not valid .proto text: "
                                   f"{lines[0] if lines else f'protoc exit {rc}'}")
        with open(out, "rb") as f:
            files = list(descriptor_pb2.FileDescriptorSet.FromString(f.read()).file)
    return files


def _well_known_protos() -> str:
    from importlib.resources import files

    return str(files("grpc_tools") / "_proto")


def _quiet(path: str, run: Callable[[], int]) -> int:
    """``run()`` with file descriptor 2 (where protoc writes its errors) sent to ``path``."""
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "wb") as f:
            os.dup2(f.fileno(), 2)
            return run()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


# --- JSON Schema --------------------------------------------------------------------------

def _json_schema_reader(schema: RegisteredSchema, store: SchemaStore) -> Callable[[bytes], Any]:
    document = json.loads(schema.schema)
    validate = _validator(document, _references(schema, store, {}))

    def read(data: bytes) -> Any:
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise ValueDecodeError(f"the data of schema id {schema.id} is not JSON: "
                                   f"{exc}") from None
        problem = validate(value) if validate is not None else None
        if problem is not None:
            raise ValueDecodeError(f"the value does not match schema id {schema.id}: {problem}",
                                   value)
        return value
    return read


def _validator(document: Any, refs: dict[str, RegisteredSchema]
               ) -> Callable[[Any], str | None] | None:
    """A check of values against ``document`` (None without jsonschema: values are shown
    unchecked, as the schemas extra is what brings it)."""
    try:
        import jsonschema
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT7
    except ImportError:
        return None
    registry = Registry().with_resources(
        (name, Resource.from_contents(json.loads(r.schema), default_specification=DRAFT7))
        for name, r in refs.items())
    cls = jsonschema.validators.validator_for(document, default=jsonschema.Draft7Validator)
    validator = cls(document, registry=registry)

    def check(value: Any) -> str | None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is None:
            return None
        where = "/".join(map(str, error.absolute_path))
        return f"{error.message}" + (f" (at /{where})" if where else "")
    return check


_READERS = {AVRO: _avro_reader, PROTOBUF: _protobuf_reader, JSON: _json_schema_reader}
