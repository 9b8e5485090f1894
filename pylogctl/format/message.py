"""Kafka's generated-message encoding, driven by small schema declarations.

Kafka describes control records, coordinator records (``__consumer_offsets``,
``__transaction_state``) and KRaft metadata records with JSON schemas and generates readers
from them. This module is the one reader for all of them: a :class:`Field` list mirrors a
schema, :func:`read_struct` decodes bytes at a version (:func:`write_struct` is its inverse, for
records pylogctl writes itself), and :func:`to_json` renders the result the way Kafka's
generated ``*JsonConverter.write`` does (schema order, camelCase names, bytes as base64, uuids as
URL-safe base64, tagged fields only when they differ from their default).

Non-flexible versions: string = int16 length, bytes = int32 length, array = int32 count (-1 =
null). Flexible versions: "compact" lengths as unsigned varint N+1 (0 = null), and every struct
ends with a tagged-field section (count, then tag/size/data per field).
"""

from __future__ import annotations

import base64
import functools
import struct
from dataclasses import dataclass, field as dc_field
from typing import Any, Mapping

from ..errors import CorruptRecordError
from . import jackson
from .varint import encode_unsigned_varint, read_unsigned_varint
from .java_string import java_utf8

_INTS = {"int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"),
         "int64": struct.Struct(">q"), "uint16": struct.Struct(">H"), "uint32": struct.Struct(">I"),
         "float64": struct.Struct(">d")}


def uuid_text(raw: bytes) -> str:
    """Kafka's ``Uuid.toString()`` of 16 raw bytes: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_bytes(text: str) -> bytes:
    """The 16 raw bytes of a ``Uuid.toString()`` text (``Uuid.fromString``)."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class KafkaUuid(bytes):
    """16 raw bytes that render as Kafka's ``Uuid.toString()`` (:func:`uuid_text`)."""

    def __str__(self) -> str:
        return uuid_text(bytes(self))


class MessageUnderflowError(CorruptRecordError):
    """A read ran past the end of the message.

    ``what`` names what was being read (a primitive type such as ``int64``, ``string``,
    ``byte array``, ``tagged field`` or ``unsigned varint``) and ``needed``/``available`` the byte
    counts, so callers that must echo a Java reader's wording can tell the cases apart.
    """

    def __init__(self, message: str, what: str, needed: int, available: int,
                 position: int | None = None) -> None:
        super().__init__(message, position=position)
        self.what = what
        self.needed = needed
        self.available = available


@functools.lru_cache(maxsize=None)  # a handful of specs, parsed for every field read
def _parse_versions(spec: str | None) -> tuple[int, int]:
    if spec is None or spec == "none":
        return (1, 0)  # empty range
    if spec.endswith("+"):
        return (int(spec[:-1]), 1 << 15)
    if "-" in spec:
        lo, hi = spec.split("-")
        return (int(lo), int(hi))
    return (int(spec), int(spec))


@dataclass(frozen=True)
class Field:
    """One schema field. ``type`` is a primitive name, ``[]T`` for arrays, or ``struct``."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str | None = None
    tag: int | None = None
    default: Any = None
    fields: tuple["Field", ...] = ()

    @functools.cached_property  # read for every field of every record decoded
    def json_name(self) -> str:
        return self.name[:1].lower() + self.name[1:]

    def in_version(self, version: int) -> bool:
        lo, hi = _parse_versions(self.versions)
        return lo <= version <= hi

    def nullable_in(self, version: int) -> bool:
        lo, hi = _parse_versions(self.nullable)
        return lo <= version <= hi

    def default_value(self) -> Any:
        if self.default is not None:
            return self.default
        base = self.type[2:] if self.type.startswith("[]") else self.type
        if self.type.startswith("[]"):
            return []
        if base in _INTS:
            return 0
        if base == "bool":
            return False
        if base == "string":
            return ""
        if base == "uuid":
            return KafkaUuid(bytes(16))
        return None


class NullDefaultField(Field):
    """A field whose schema default is ``null`` (``"default": "null"``).

    :class:`Field` can only express non-null defaults, yet for a tagged nullable field Kafka
    compares against null: an empty list *is* written and printed, a null one is not.
    """

    def default_value(self) -> Any:
        return None


@dataclass(frozen=True)
class Schema:
    """A top-level message: its fields and the versions that are flexible."""

    name: str
    fields: tuple[Field, ...]
    flexible: str = "none"
    valid: str = "0+"
    extra: dict = dc_field(default_factory=dict, compare=False)

    def is_flexible(self, version: int) -> bool:
        lo, hi = _parse_versions(self.flexible)
        return lo <= version <= hi

    def has_version(self, version: int) -> bool:
        lo, hi = _parse_versions(self.valid)
        return lo <= version <= hi

    def reading_version(self, version: int) -> int:
        """The version whose layout Kafka's generated reader applies to ``version``.

        Generated code only tests version bounds that lie inside the valid range, so a version
        outside it reads like the nearest valid one (the version number itself is kept).
        """
        lo, hi = _parse_versions(self.valid)
        return min(max(version, lo), hi)


class _Reader:
    __slots__ = ("buf", "pos", "end", "newer")

    def __init__(self, buf: bytes, pos: int = 0, end: int | None = None,
                 newer: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end
        self.newer = newer  # see read_struct

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            available = max(0, self.end - self.pos)
            raise MessageUnderflowError(f"Error reading {what} of {n} byte(s): only "
                                        f"{available} byte(s) available", what, n, available,
                                        position=self.pos)

    def fixed(self, kind: str) -> Any:
        st = _INTS[kind]
        self.need(st.size, kind)
        (v,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return v

    def uvarint(self) -> int:
        pos = self.pos
        if pos < self.end and self.buf[pos] < 0x80:
            self.pos = pos + 1
            return self.buf[pos]
        last = min(self.end, pos + 5)
        if not any(self.buf[i] < 0x80 for i in range(pos, last)) and last - pos < 5:
            raise MessageUnderflowError("Truncated unsigned varint", "unsigned varint",
                                        last - pos + 1, last - pos, position=pos)
        v, self.pos = read_unsigned_varint(self.buf, pos)
        return v

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out


def read_struct(buf: bytes, fields: tuple[Field, ...], version: int, flexible: bool,
                pos: int = 0, end: int | None = None,
                newer: int | None = None) -> tuple[dict[str, Any], int]:
    """Decode a struct at ``pos``; return ``(values by json name, next position)``.

    Only fields present in ``version`` appear; absent tagged fields get their default.
    ``newer`` is the record's own version when it is above the schema's highest (``version``
    is then the highest, see :meth:`Schema.reading_version`): Kafka's generated reader of a
    top-level message reads such a version, but that of a nested struct refuses it
    (``UnsupportedVersionException: Can't read version N of StructName``), so a nested struct
    that is present then fails the read.
    """
    r = _Reader(buf, pos, end, newer)
    out = _read_fields(r, fields, version, flexible)
    return out, r.pos


def read_message(buf: bytes, schema: Schema, version: int) -> dict[str, Any]:
    """Decode a whole top-level message and insist that nothing is left over."""
    r = _Reader(buf)
    out = _read_fields(r, schema.fields, version, schema.is_flexible(version))
    if r.pos != r.end:
        raise CorruptRecordError(f"Found {r.end - r.pos} unexpected trailing byte(s) after "
                                 f"{schema.name} version {version}", position=r.pos)
    return out


def _read_fields(r: _Reader, fields: tuple[Field, ...], version: int, flexible: bool) -> dict:
    values: dict[str, Any] = {}
    tagged = {}
    for f in fields:
        if not f.in_version(version):
            continue
        if f.tag is not None and flexible:
            tagged[f.tag] = f
            continue
        values[f.json_name] = _read_value(r, f, f.type, version, flexible)
    present_tags: set[str] = set()
    if flexible:
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            size = r.uvarint()
            r.need(size, "tagged field")
            f = tagged.get(tag)
            if f is None:
                r.pos += size  # unknown tags are skipped, as Kafka keeps but never prints them
                continue
            sub = _Reader(r.buf, r.pos, r.pos + size, r.newer)
            values[f.json_name] = _read_value(sub, f, f.type, version, flexible, tagged=True)
            present_tags.add(f.json_name)
            r.pos += size
    # re-order to schema order; drop tagged fields equal to their default, as Kafka's generated
    # JsonConverter does. A struct's default is a new struct with every field at its default
    # (unless the schema says "null"): absent, or present with only defaults, it is not
    # printed; present as null (its marker 0), it is printed as null.
    ordered: dict[str, Any] = {}
    for f in fields:
        if not f.in_version(version):
            continue
        name = f.json_name
        if f.tag is not None and flexible:
            if name in present_tags and values[name] != _tagged_default(f, version, flexible):
                ordered[name] = values[name]
            continue
        ordered[name] = values[name]
    return ordered


def _tagged_default(f: Field, version: int, flexible: bool) -> Any:
    """The value a tagged field is not written (nor printed) with."""
    if _is_struct(f) and not isinstance(f, NullDefaultField):
        return default_struct(f.fields, version, flexible)
    return f.default_value()


def _is_struct(f: Field) -> bool:
    return bool(f.fields) and not f.type.startswith("[]")


def default_struct(fields: tuple[Field, ...], version: int, flexible: bool) -> dict[str, Any]:
    """A struct with every field at its default, as :func:`read_struct` would return it."""
    out: dict[str, Any] = {}
    for f in fields:
        if not f.in_version(version) or (f.tag is not None and flexible):
            continue
        if _is_struct(f) and not isinstance(f, NullDefaultField):
            out[f.json_name] = default_struct(f.fields, version, flexible)
        else:
            out[f.json_name] = f.default_value()
    return out


def _read_value(r: _Reader, f: Field, type_: str, version: int, flexible: bool,
                element: bool = False, tagged: bool = False) -> Any:
    if type_.startswith("[]"):
        if flexible:
            n = r.uvarint() - 1
        else:
            n = r.fixed("int32")
        if n < 0:
            if n == -1 and f.nullable_in(version):
                return None
            if n == -1:
                raise CorruptRecordError(f"non-nullable field {f.json_name} was serialized as null",
                                         position=r.pos)
            raise CorruptRecordError(f"Invalid array length {n} for field {f.json_name}",
                                     position=r.pos)
        if n > r.end - r.pos:
            raise CorruptRecordError(f"Tried to allocate a collection of size {n}, but there are "
                                     f"only {r.end - r.pos} bytes remaining.", position=r.pos)
        elem = type_[2:]
        return [_read_value(r, f, elem, version, flexible, element=True) for _ in range(n)]
    if type_ in _INTS:
        return r.fixed(type_)
    if type_ == "bool":
        return r.fixed("int8") != 0
    if type_ == "uuid":
        return KafkaUuid(r.take(16, "uuid"))
    if type_ in ("string", "bytes", "records"):
        if flexible:
            n = r.uvarint() - 1
        else:
            n = r.fixed("int16") if type_ == "string" else r.fixed("int32")
        # array elements are never nullable and Kafka names them "<field> element"
        name = f"{f.json_name} element" if element else f.json_name
        if n < 0:
            if n == -1 and not element and (f.nullable_in(version) or type_ == "records"):
                return None
            if n == -1:
                raise CorruptRecordError(f"non-nullable field {name} was serialized as null",
                                         position=r.pos)
            raise CorruptRecordError(f"Invalid length {n} for field {name}", position=r.pos)
        if type_ == "string" and n > 0x7FFF:
            raise CorruptRecordError(f"string field {name} had invalid length {n}", position=r.pos)
        raw = r.take(n, "string" if type_ == "string" else "byte array")
        if type_ == "string":
            return java_utf8(raw)
        return raw
    # a nested struct (type is the struct's name); a nullable one starts with a presence marker
    # (int8 -1/1, or unsigned varint 0/1 inside a tagged field)
    if f.nullable_in(version) and not element:
        present = r.uvarint() > 0 if tagged else r.fixed("int8") >= 0
        if not present:
            return None
    if r.newer is not None:
        name = f.type[2:] if f.type.startswith("[]") else f.type
        raise CorruptRecordError(f"Can't read version {r.newer} of {name}", position=r.pos)
    sub, r.pos = read_struct(r.buf, f.fields, version, flexible, r.pos, r.end, r.newer)
    return sub


def to_json_value(value: Any) -> Any:
    """Convert decoded values to JSON-ready ones (bytes -> base64, uuid -> Kafka's form)."""
    if isinstance(value, KafkaUuid):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {k: to_json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json_value(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """Compact JSON as Jackson's ``ObjectNode.toString()`` prints it."""
    return jackson.dumps(to_json_value(value))


def write_struct(fields: tuple[Field, ...], values: Mapping[str, Any], version: int,
                 flexible: bool) -> bytes:
    """Encode ``values`` (keyed by json name, as :func:`read_struct` returns them) at ``version``.

    The inverse of :func:`read_struct`, as Kafka's generated ``write`` does it: fields missing from
    ``values`` take their default and tagged fields are written only when they differ from it.
    Raises :class:`ValueError` for a null in a non-nullable field or a non-default value for a
    field that ``version`` lacks.
    """
    out = bytearray()
    _write_fields(out, fields, values, version, flexible)
    return bytes(out)


def write_message(schema: Schema, values: Mapping[str, Any], version: int) -> bytes:
    """Encode a whole top-level message (the inverse of :func:`read_message`)."""
    return write_struct(schema.fields, values, version, schema.is_flexible(version))


def _write_default(f: Field, version: int, flexible: bool) -> Any:
    """The value of a field the caller left out, as Kafka's generated constructor sets it."""
    if not f.nullable_in(version) and f.type == "bytes":
        return b""  # Kafka's default for non-nullable bytes is empty, not null
    if _is_struct(f) and not isinstance(f, NullDefaultField):
        return default_struct(f.fields, version, flexible)  # a struct with all its defaults
    return f.default_value()


def _write_fields(out: bytearray, fields: tuple[Field, ...], values: Mapping[str, Any],
                  version: int, flexible: bool) -> None:
    tagged = []
    for f in fields:
        default = _write_default(f, version, flexible)
        value = values.get(f.json_name, default)
        if not f.in_version(version):
            if value != default:
                raise ValueError(f"Attempted to write a non-default {f.json_name} at version "
                                 f"{version}")
            continue
        if f.tag is not None and flexible:
            if value != _tagged_default(f, version, flexible):
                data = bytearray()
                _write_value(data, f, f.type, value, version, flexible, tagged=True)
                tagged.append((f.tag, data))
            continue
        _write_value(out, f, f.type, value, version, flexible)
    if flexible:
        out += encode_unsigned_varint(len(tagged))
        for tag, data in sorted(tagged, key=lambda t: t[0]):
            out += encode_unsigned_varint(tag) + encode_unsigned_varint(len(data)) + data


def _write_length(out: bytearray, n: int, kind: str, flexible: bool) -> None:
    if flexible:
        out += encode_unsigned_varint(n + 1)
    else:
        out += _INTS["int16" if kind == "string" else "int32"].pack(n)


def _write_value(out: bytearray, f: Field, type_: str, value: Any, version: int, flexible: bool,
                 element: bool = False, tagged: bool = False) -> None:
    nullable = f.nullable_in(version) and not element
    if value is None and not (nullable or type_ == "records"):
        raise ValueError(f"non-nullable field {f.json_name} was set to null")
    if type_.startswith("[]"):
        if value is None:
            _write_length(out, -1, "array", flexible)
            return
        _write_length(out, len(value), "array", flexible)
        for item in value:
            _write_value(out, f, type_[2:], item, version, flexible, element=True)
    elif type_ in _INTS:
        out += _INTS[type_].pack(value)
    elif type_ == "bool":
        out.append(1 if value else 0)
    elif type_ == "uuid":
        raw = bytes(value)
        if len(raw) != 16:
            raise ValueError(f"uuid field {f.json_name} needs 16 bytes, got {len(raw)}")
        out += raw
    elif type_ in ("string", "bytes", "records"):
        if value is None:
            _write_length(out, -1, type_, flexible)
            return
        raw = value.encode("utf-8") if type_ == "string" else bytes(value)
        _write_length(out, len(raw), type_, flexible)
        out += raw
    else:  # a nested struct; a nullable one starts with a presence marker
        if nullable:
            if value is None:
                out += encode_unsigned_varint(0) if tagged else b"\xff"
                return
            out += encode_unsigned_varint(1) if tagged else b"\x01"
        _write_fields(out, f.fields, value, version, flexible)
