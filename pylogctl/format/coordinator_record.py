"""Coordinator records: the key/value framing of ``__consumer_offsets``, ``__transaction_state``
and ``__share_group_state``.

These topics hold records written by a Kafka coordinator (group, transaction, share). The key is
``int16 record type | key struct`` and the value ``int16 version | value struct``; a null value
is a tombstone. The record type selects the key and value schemas (the key struct is read at the
type number, which Kafka's generated reader treats like the key's only version). This module
reads that framing once for all three topics and reports failures the way Kafka 4.4's
``CoordinatorRecordSerde`` does, so the dump tool can echo Kafka's wording while library callers
still see the precise cause.

Like Kafka's reader, it ignores bytes left after a struct. A value version outside the value
schema's valid range is refused (``UnknownRecordVersionException``, checked by the serde since
Kafka 4.0's coordinator runtime) before any byte of the value is read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Mapping, TypeVar

from ..errors import CorruptRecordError
from .message import Field, MessageUnderflowError, Schema, read_struct, write_message

_INT16 = struct.Struct(">h")


@dataclass(frozen=True)
class RecordType:
    """One record type of a coordinator topic: its number, name and key/value schemas."""

    id: int
    name: str  # as Kafka's generated CoordinatorRecordType names it, e.g. OFFSET_COMMIT
    key: Schema
    value: Schema


class UnknownRecordTypeError(CorruptRecordError):
    """The key's record type is not one this version of the schemas knows (never fatal in Kafka)."""

    def __init__(self, record_type: int, topic: str) -> None:
        super().__init__(f"Found an unknown record type {record_type} in a {topic} record key")
        self.record_type = record_type


class CoordinatorRecordError(CorruptRecordError):
    """A coordinator record that does not decode.

    ``message`` names the precise cause; ``kafka_message`` is the text Kafka's serde would put in
    its exception (Java reader messages, e.g. ``null`` for a buffer underflow).
    """

    def __init__(self, message: str, kafka_message: str, position: int | None = None) -> None:
        super().__init__(message, position=position)
        self.kafka_message = kafka_message


class UnknownRecordVersionError(CoordinatorRecordError):
    """A value version the value schema does not define (Kafka's
    ``Deserializer.UnknownRecordVersionException``; the dump reports it and goes on)."""

    def __init__(self, record_type: int, version: int, topic: str) -> None:
        text = f"Found an unknown record version {version} for {record_type} type"
        super().__init__(f"{text} in a {topic} record value", text, position=0)
        self.record_type = record_type
        self.version = version


@dataclass(frozen=True)
class CoordinatorRecord:
    """A decoded coordinator record.

    ``key`` and ``value`` map camelCase field names to values (bytes, uuids as
    :class:`~pylogctl.format.message.KafkaUuid`, nested dicts/lists); tagged fields equal to their
    default are absent, as in Kafka's JSON. ``value_version`` and ``value`` are None for a
    tombstone.
    """

    record_type: int
    type_name: str
    key: dict[str, Any]
    value_version: int | None
    value: dict[str, Any] | None


R = TypeVar("R", bound=CoordinatorRecord)


def java_cause(exc: CorruptRecordError) -> str:
    """What Kafka's generated reader would say for the failure ``exc`` describes."""
    if isinstance(exc, MessageUnderflowError):
        if exc.what in ("string", "byte array", "tagged field"):
            return (f"Error reading byte array of {exc.needed} byte(s): only {exc.available} "
                    f"byte(s) available")
        return "null"  # java.nio.BufferUnderflowException carries no message
    return exc.message


def read_prefix(buf: bytes, part: str) -> int:
    """The leading int16 of a key (record type) or value (version)."""
    if len(buf) < 2:
        text = f"Could not read version from {part}'s buffer."
        raise CoordinatorRecordError(text, text, position=0)
    return _INT16.unpack_from(buf, 0)[0]


def read_body(buf: bytes, schema: Schema, version: int, part: str) -> dict[str, Any]:
    """The struct after the int16 prefix, read as Kafka's generated code reads ``version``."""
    at = schema.reading_version(version)
    try:
        return read_struct(buf, schema.fields, at, schema.is_flexible(at), pos=2)[0]
    except CorruptRecordError as exc:
        prefix = f"Could not read record with version {version} from {part}'s buffer due to: "
        raise CoordinatorRecordError(f"{prefix}{exc.message}.", f"{prefix}{java_cause(exc)}.",
                                     position=exc.position) from exc


def decode_coordinator_record(key: bytes, value: bytes | None, types: Mapping[int, RecordType],
                              topic: str, cls: type[R]) -> R:
    """Decode one record of a coordinator topic whose record types are ``types``.

    Raises :class:`UnknownRecordTypeError` for a type not in ``types``,
    :class:`UnknownRecordVersionError` for a value version its schema lacks and
    :class:`CoordinatorRecordError` for bytes that do not follow the schemas.
    """
    record_type = read_prefix(key, "key")
    rtype = types.get(record_type)
    if rtype is None:
        raise UnknownRecordTypeError(record_type, topic)
    key_data = read_body(key, rtype.key, record_type, "key")
    if value is None:
        return cls(record_type, rtype.name, key_data, None, None)
    version = read_prefix(value, "value")
    if not rtype.value.has_version(version):
        raise UnknownRecordVersionError(record_type, version, topic)
    return cls(record_type, rtype.name, key_data, version,
               read_body(value, rtype.value, version, "value"))


def encode_coordinator_record(types: Mapping[int, RecordType], record_type: int,
                              key: Mapping[str, Any], value_version: int | None = None,
                              value: Mapping[str, Any] | None = None
                              ) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes of a record of a coordinator topic whose record types are
    ``types``; ``value=None`` makes a tombstone."""
    rtype = types[record_type]
    names = {f.json_name for f in rtype.key.fields}
    if set(key) != names:  # a key is the record's identity: no field may default
        raise ValueError(f"a {rtype.key.name} has the fields {sorted(names)}, not {sorted(key)}")
    key_bytes = encode_prefixed(record_type, key, rtype.key)
    if value is None:
        return key_bytes, None
    if value_version is None:
        raise ValueError("a value needs its version")
    if not rtype.value.has_version(value_version):
        raise ValueError(f"{rtype.value.name} has no version {value_version}")
    return key_bytes, encode_prefixed(value_version, value, rtype.value)


def encode_prefixed(prefix: int, data: Mapping[str, Any], schema: Schema) -> bytes:
    """``int16 prefix | struct``, the inverse of the reading above: a key (prefix = record type)
    or a value (prefix = version), the struct laid out as a reader would read it."""
    return _INT16.pack(prefix) + write_message(schema, data, schema.reading_version(prefix))


# -- schema helpers shared by the coordinator record modules ------------------------------------

def coordinator_key(name: str, *fields: Field | str) -> Schema:
    """A key schema as Kafka declares them: version 0 only, never flexible. A field given as a
    plain name is a string (most keys are a group id and a member id)."""
    return Schema(name, tuple(Field(f, "string", versions="0") if isinstance(f, str) else f
                              for f in fields), valid="0")


def coordinator_value(name: str, *fields: Field, valid: str = "0") -> Schema:
    """A value schema of the KIP-848 generation: flexible from version 0."""
    return Schema(name, fields, flexible="0+", valid=valid)


def tagged(name: str, type_: str, tag: int, default: Any = None, **kw: Any) -> Field:
    """A tagged field present in every version (``taggedVersions: 0+``)."""
    return Field(name, type_, tag=tag, default=default, **kw)

