"""A pass over a flexible request body before kio reads it: every compact length (arrays,
strings, bytes, tagged fields) must fit in the bytes that remain, as Kafka's generated
readers check ("Tried to allocate a collection of size N, but there are only M bytes
remaining").

Why: kio's native reader reserves a compact array's declared length before reading its
elements. A length near 2^32 (five bytes of a varint) makes that allocation fail, and a failed
allocation in its Rust code aborts the whole broker process -- no exception to catch. Legacy
(int32) lengths are checked by kio itself, so non-flexible versions need no pass.

Only lengths are checked; everything else is left to kio.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from .protocol import InvalidRequestError, _kio

_FIXED = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
          "float64": 8, "uuid": 16, "timedelta_i32": 4, "timedelta_i64": 8, "datetime_i64": 8,
          "error_code": 2}
_VARLEN = ("string", "bytes", "records")

# A field's plan: ("fixed", size) | ("varlen", None) | ("entity", plan) | ("nullable", plan)
# | ("entities", plan) | ("array", element field plan); an entity's plan is
# (regular field plans, {tag: field plan}).
_Field = tuple[str, Any]


def check_compact_lengths(cls: type, data: bytes | memoryview, pos: int) -> None:
    """Raise :class:`InvalidRequestError` when a length in the flexible body of ``cls`` at
    ``pos`` of ``data`` claims more bytes than ``data`` has."""
    _entity(_entity_plan(cls), data, pos, len(data))


@functools.cache
def _entity_plan(cls: type) -> tuple[list[_Field], dict[int, _Field]]:
    intro = _kio().serial._introspect
    regular: list[_Field] = []
    tagged: dict[int, _Field] = {}
    for f in dataclasses.fields(cls):
        kind = intro.classify_field(f)
        if isinstance(kind, intro.EntityField):
            plan: _Field = ("nullable" if intro.is_optional(f) else "entity",
                            _entity_plan(kind.type_))
        elif isinstance(kind, intro.EntityTupleField):
            plan = ("entities", _entity_plan(kind.type_))
        else:
            element = _primitive(f.metadata.get("kafka_type", ""))
            plan = ("array", element) if isinstance(kind, intro.PrimitiveTupleField) \
                else element
        tag = intro.get_field_tag(f)
        if tag is None:
            regular.append(plan)
        else:
            tagged[tag] = plan
    return regular, tagged


def _primitive(kafka_type: str) -> _Field:
    if kafka_type in _VARLEN:
        return ("varlen", None)
    if kafka_type not in _FIXED:
        raise ValueError(f"unknown kafka type {kafka_type!r}")
    return ("fixed", _FIXED[kafka_type])


def _uvarint(data: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end:
            raise InvalidRequestError("A varint runs past the end of the request")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise InvalidRequestError("A varint of more than five bytes")


def _length(data: bytes | memoryview, pos: int, end: int, what: str) -> tuple[int, int]:
    """A compact length (the varint is length + 1; 0 is null, returned as 0)."""
    n, pos = _uvarint(data, pos, end)
    if n - 1 > end - pos:
        raise InvalidRequestError(f"Tried to read a {what} of size {n - 1}, but there are "
                                  f"only {end - pos} bytes remaining")
    return max(n - 1, 0), pos


def _field(plan: _Field, data: bytes | memoryview, pos: int, end: int) -> int:
    kind, arg = plan
    if kind == "fixed":
        return pos + arg
    if kind == "varlen":
        n, pos = _length(data, pos, end, "string or bytes")
        return pos + n
    if kind == "entity":
        return _entity(arg, data, pos, end)
    if kind == "nullable":
        if pos >= end:
            raise InvalidRequestError("A struct runs past the end of the request")
        return pos + 1 if data[pos] == 0xFF else _entity(arg, data, pos + 1, end)
    n, pos = _length(data, pos, end, "collection")
    for _ in range(n):
        pos = _entity(arg, data, pos, end) if kind == "entities" else _field(arg, data, pos, end)
        if pos > end:
            raise InvalidRequestError("A collection runs past the end of the request")
    return pos


def _entity(plan: tuple[list[_Field], dict[int, _Field]], data: bytes | memoryview, pos: int,
            end: int) -> int:
    regular, tagged = plan
    for field in regular:
        pos = _field(field, data, pos, end)
        if pos > end:
            raise InvalidRequestError("A field runs past the end of the request")
    count, pos = _uvarint(data, pos, end)
    for _ in range(count):
        tag, pos = _uvarint(data, pos, end)
        size, pos = _uvarint(data, pos, end)  # a plain size, not length + 1
        if size > end - pos:
            raise InvalidRequestError("A tagged field runs past the end of the request")
        if tag in tagged:
            _field(tagged[tag], data, pos, pos + size)
        pos += size
    return pos


def reject_nulls(entity: Any) -> None:
    """Raise :class:`InvalidRequestError` when a field that is not nullable in this version
    was sent as null (kio reads a -1 length as None whatever the schema says; Kafka refuses
    the request, and handlers rely on the schema)."""
    for name, required, nested, kind in _null_plan(type(entity)):
        value = getattr(entity, name)
        if value is None:
            if required:
                raise InvalidRequestError(f"Non-nullable field {name} was serialized as null")
        elif kind == "entity":
            reject_nulls(value)
        elif kind == "entities":
            for item in value:
                reject_nulls(item)
        elif kind == "array" and None in value:
            raise InvalidRequestError(f"Null element in the non-nullable array {name}")


@functools.cache
def _null_plan(cls: type) -> list[tuple[str, bool, type | None, str]]:
    """(name, not nullable, nested class, kind) of the fields worth looking at."""
    intro = _kio().serial._introspect
    plan = []
    for f in dataclasses.fields(cls):
        kind = intro.classify_field(f)
        required = not intro.is_optional(f)
        if isinstance(kind, intro.EntityField):
            plan.append((f.name, required, kind.type_, "entity"))
        elif isinstance(kind, intro.EntityTupleField):
            plan.append((f.name, required, kind.type_, "entities"))
        elif isinstance(kind, intro.PrimitiveTupleField):
            plan.append((f.name, required, None, "array"))
        elif required:
            plan.append((f.name, required, None, "primitive"))
    return plan
