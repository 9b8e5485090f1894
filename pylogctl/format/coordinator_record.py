"""Coordinator records: the key/value framing of ``__consumer_offsets`` and ``__transaction_state``.

Both topics hold records written by a Kafka coordinator. The key is ``int16 record type | key
struct`` and the value ``int16 version | value struct``; a null value is a tombstone. The record
type selects the key and value schemas (the key struct is read at the type number, which is how
Kafka versions it). This module reads that framing once for both topics and reports failures the
way Kafka's ``CoordinatorRecordSerde`` does, so the dump tool can echo Kafka's wording while
library callers still see the precise cause.

Like Kafka's reader, it ignores bytes left after a struct, and a value version outside the
schema's valid range is read with the layout of the nearest valid version.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Mapping, TypeVar

from ..errors import CorruptRecordError
from .message import MessageUnderflowError, Schema, read_struct, write_message

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

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


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

    Raises :class:`UnknownRecordTypeError` for a type not in ``types`` and
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
    return cls(record_type, rtype.name, key_data, version,
               read_body(value, rtype.value, version, "value"))


def encode_prefixed(prefix: int, data: Mapping[str, Any], schema: Schema) -> bytes:
    """``int16 prefix | struct``, the inverse of the reading above: a key (prefix = record type)
    or a value (prefix = version), the struct laid out as a reader would read it."""
    return _INT16.pack(prefix) + write_message(schema, data, schema.reading_version(prefix))
