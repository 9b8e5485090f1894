"""Kafka's wire protocol for the broker: framing, request headers, and the one place the
``kio`` library (messages generated from Kafka's JSON schemas) is used.

A frame is an int32 size and that many bytes. A request starts with its header (api key,
api version, correlation id, client id; tagged fields from header v2, i.e. for flexible
versions), a response with the correlation id (and tagged fields from header v1, except
ApiVersions responses, which always use header v0 so a client can read them before it knows
what the broker speaks).

Handlers never see kio's classes on the way out: they describe a response as plain data, a
dict whose keys are kio's field names for the newest version (``error_code`` as an int,
durations and timestamps as int milliseconds), and :func:`encode_response` builds the class of
the version asked for from it, ignoring what that version lacks and using the schema's
defaults for what the dict leaves out. So one handler serves every version of its API.
Requests come in as kio's decoded dataclasses (read with kio's native reader).

Record data is opaque here. A ``records`` field may hold a :class:`FileRegion` instead of
bytes: the encoder then leaves a hole the size of the region, and the network layer sends it
straight from the segment file (``sendfile``), so fetched data is never copied into Python.

kio is imported on first use only: ``pylogctl --help`` must not pay for it.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import struct
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import PylogctlError
from .produce_response import PRODUCE_KEY, encode_produce_response
from .produce_response import VERSIONS as PRODUCE_VERSIONS

API_VERSIONS_KEY = 18
UNSUPPORTED_VERSION = 35
_SIZE = struct.Struct(">i")
_HEADER_START = struct.Struct(">hhi")  # api key, api version, correlation id


class InvalidRequestError(PylogctlError):
    """A frame that does not parse as the request it claims to be (Kafka closes the
    connection on it)."""


class FileRegion(bytes):
    """``size`` bytes at ``position`` of an open file: a ``records`` value sent with
    ``sendfile``. It is an empty ``bytes`` whose ``len()`` is the region's size, which is all
    kio's encoder asks of it before handing it to the output buffer."""

    fileno: int
    position: int
    size: int

    def __new__(cls, fileno: int, position: int, size: int) -> "FileRegion":
        region = super().__new__(cls, b"")
        region.fileno, region.position, region.size = fileno, position, size
        return region

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __repr__(self) -> str:
        return f"FileRegion(fd={self.fileno}, position={self.position}, size={self.size})"


class _Output:
    """kio's ``Writable``: collects the encoded bytes, keeping file regions apart."""

    def __init__(self) -> None:
        self.parts: list[bytes | FileRegion] = []
        self._buffer = bytearray()

    def write(self, data: bytes) -> int:
        if isinstance(data, FileRegion):
            if self._buffer:
                self.parts.append(bytes(self._buffer))
                self._buffer.clear()
            if data.size:
                self.parts.append(data)
        else:
            self._buffer += data
        return len(data)

    def finish(self) -> list[bytes | FileRegion]:
        if self._buffer:
            self.parts.append(bytes(self._buffer))
            self._buffer.clear()
        return self.parts


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


@dataclass(frozen=True)
class Request:
    """A decoded request: its header and kio's body object."""

    header: RequestHeader
    body: Any

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version


@dataclass
class Connection:
    """What a handler knows of the client connection a request came on."""

    client_host: str


@dataclass(frozen=True)
class Response:
    """An encoded response frame, size prefix included; parts are bytes or file regions."""

    parts: list[bytes | FileRegion]

    @property
    def size(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self) -> Iterator[bytes | FileRegion]:
        return iter(self.parts)


# -- kio, loaded on first use ---------------------------------------------------------------
@functools.cache
def _kio() -> Any:
    import kio.index
    import kio.schema.errors
    import kio.serial
    import kio.serial._introspect
    import kio.static.constants
    return kio


def preload() -> None:
    """Import kio before listening: its ~0.6 s import would otherwise be the first client's
    first round trip (each API's schemas still load on first use, a few ms each)."""
    _kio()


def api_name(api_key: int) -> str:
    return _kio().schema.index.api_key_map.get(api_key, f"api-{api_key}")


def schema_versions(api_key: int) -> range:
    """The versions kio has schemas for (Kafka 4's floors and ceilings)."""
    kio = _kio()
    name = kio.schema.index.api_key_map[api_key]
    versions = sorted(kio.schema.index.schema_name_map[name])
    return range(versions[0], versions[-1] + 1)


def peek_header(frame: bytes) -> tuple[int, int, int]:
    """``(api key, api version, correlation id)``: the first 8 bytes of every request header."""
    if len(frame) < _HEADER_START.size:
        raise InvalidRequestError(f"A request of {len(frame)} bytes has no header")
    return _HEADER_START.unpack_from(frame)


def decode_request(frame: bytes) -> Request:
    """Parse a request frame (without its size prefix) of a version kio knows."""
    kio = _kio()
    api_key, api_version, _ = peek_header(frame)
    try:
        cls = kio.index.load_request_schema(api_key, api_version)
    except kio.index.KioIndexError:
        raise InvalidRequestError(f"Unknown API key {api_key} or version {api_version}") \
            from None
    from .frame_check import check_compact_lengths, reject_nulls
    try:
        header, pos = kio.serial.entity_reader(cls.__header_schema__)(frame, 0)
        if cls.__flexible__:  # a huge compact length would abort the process in kio
            check_compact_lengths(cls, frame, pos)
        body, pos = kio.serial.entity_reader(cls)(frame, pos)
        reject_nulls(body)
    except Exception as exc:  # kio's native reader raises several kinds
        raise InvalidRequestError(f"Error reading {api_name(api_key)} v{api_version}: "
                                  f"{exc}") from None
    return Request(RequestHeader(api_key, api_version, header.correlation_id,
                                 header.client_id), body)


def encode_response(header: RequestHeader, data: dict[str, Any]) -> Response:
    """Encode ``data`` as the response to ``header``'s API and version (Produce's directly,
    :mod:`.produce_response`; the others through kio)."""
    if header.api_key == PRODUCE_KEY and header.api_version in PRODUCE_VERSIONS:
        return Response([encode_produce_response(header.api_version, header.correlation_id,
                                                 data)])
    kio = _kio()
    cls = kio.index.load_response_schema(header.api_key, header.api_version)
    return _frame(cls, header.correlation_id, data)


def encode_api_versions_fallback(correlation_id: int,
                                 api_keys: list[dict[str, int]]) -> Response:
    """KIP-511: an ApiVersions request newer than ours gets UNSUPPORTED_VERSION in a v0 body,
    listing what we support, so the client retries with a version we know."""
    cls = _kio().index.load_response_schema(API_VERSIONS_KEY, 0)
    return _frame(cls, correlation_id, {"error_code": UNSUPPORTED_VERSION,
                                        "api_keys": api_keys})


def _frame(cls: type, correlation_id: int, data: dict[str, Any]) -> Response:
    kio = _kio()
    body = build(cls, data)
    out = _Output()
    out.write(b"\0\0\0\0")  # size, patched below
    header_cls = cls.__header_schema__
    kio.serial.entity_writer(header_cls)(out, header_cls(correlation_id=correlation_id))
    kio.serial.entity_writer(cls)(out, body)
    parts = out.finish()
    size = sum(len(p) for p in parts) - 4
    parts[0] = _SIZE.pack(size) + parts[0][4:]
    return Response(parts)


# -- plain data -> kio dataclasses ----------------------------------------------------------
@functools.cache
def _plan(cls: type) -> list[tuple[str, str, Any, bool, Any]]:
    """Per field of ``cls``: (name, conversion, nested class, optional, has default)."""
    kio = _kio()
    intro = kio.serial._introspect
    plan = []
    for f in dataclasses.fields(cls):
        kind = intro.classify_field(f)
        has_default = (f.default is not dataclasses.MISSING
                       or f.default_factory is not dataclasses.MISSING)
        if isinstance(kind, (intro.EntityField, intro.EntityTupleField)):
            conversion = "entity" if isinstance(kind, intro.EntityField) else "entities"
            plan.append((f.name, conversion, kind.type_, intro.is_optional(f), has_default))
        else:
            conversion = f.metadata.get("kafka_type", "")
            if isinstance(kind, intro.PrimitiveTupleField):
                conversion = "tuple"
            plan.append((f.name, conversion, None, intro.is_optional(f), has_default))
    return plan


def build(cls: type, data: dict[str, Any]) -> Any:
    """An instance of kio's ``cls`` from plain data (see the module docstring)."""
    kwargs = {}
    for name, conversion, nested, optional, has_default in _plan(cls):
        if name not in data:
            if has_default:
                continue
            if optional:
                kwargs[name] = None
                continue
            if conversion in ("entities", "tuple"):
                kwargs[name] = ()
                continue
            raise KeyError(f"{cls.__module__}.{cls.__qualname__} needs {name!r}")
        value = data[name]
        if value is None and not optional:
            # a field nullable only in newer versions: older ones get its empty value
            if has_default:
                continue
            value = {"string": "", "bytes": b"", "records": b""}.get(conversion)
        if conversion == "datetime_i64" and value is not None and int(value) < 0 and \
                not optional:
            # -1 for "none" in a field kio does not make nullable (DescribeTransactions'
            # start time): the instant -1 ms, which it writes back as -1
            kwargs[name] = datetime.datetime.fromtimestamp(int(value) / 1000,
                                                           tz=datetime.timezone.utc)
            continue
        kwargs[name] = _convert(conversion, nested, value)
    return cls(**kwargs)


def _convert(conversion: str, nested: Any, value: Any) -> Any:
    if value is None:
        return None
    if conversion == "entity":
        return build(nested, value)
    if conversion == "entities":
        return tuple(build(nested, v) for v in value)
    if conversion == "tuple":
        return tuple(value)
    if conversion == "error_code":
        return _kio().schema.errors.ErrorCode(int(value))
    if conversion in ("timedelta_i32", "timedelta_i64"):
        return datetime.timedelta(milliseconds=int(value))
    if conversion == "datetime_i64":
        if int(value) < 0:
            return None
        return datetime.datetime.fromtimestamp(int(value) / 1000, tz=datetime.timezone.utc)
    if conversion == "uuid":
        return value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value))
    return value


def millis(value: Any) -> int:
    """A kio duration or timestamp field as int milliseconds (-1 for None)."""
    if value is None:
        return -1
    if isinstance(value, datetime.timedelta):
        return round(value.total_seconds() * 1000)
    if isinstance(value, datetime.datetime):
        return round(value.timestamp() * 1000)
    return int(value)


__all__ = ["Request", "RequestHeader", "Response", "FileRegion", "InvalidRequestError",
           "decode_request", "encode_response", "encode_api_versions_fallback", "peek_header",
           "schema_versions", "api_name", "build", "millis", "API_VERSIONS_KEY",
           "UNSUPPORTED_VERSION"]
