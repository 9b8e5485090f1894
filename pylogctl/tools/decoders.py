"""Key/value decoders, chosen by name (``--key-decoder`` / ``--value-decoder``) or by Kafka's
class name (``--key-decoder-class`` / ``--value-decoder-class``, as kafka-dump-log takes them).

Kafka's decoders (``org.apache.kafka.tools.api`` since 4.0, ``kafka.serializer`` before):

- ``StringDecoder`` -> ``string``: UTF-8, malformed bytes replaced as Java does
  (:func:`pylogctl.format.java_string.java_utf8`);
- ``IntegerDecoder`` / ``LongDecoder`` -> ``integer`` / ``long``: a big-endian signed int/long
  read from the first 4/8 bytes (the rest ignored), printed in decimal. Shorter data makes
  Kafka's ``ByteBuffer.getInt``/``getLong`` throw ``BufferUnderflowException``, which kills the
  tool mid-line; :class:`ShortDataError` lets the dump stop there too, with one line on stderr;
- ``DefaultDecoder`` -> ``hex``: Kafka returns the ``byte[]`` itself and prints its Java
  ``toString()`` (``[B@6150c3ec``, an identity hash that says nothing about the bytes);
  pylogctl prints the bytes in hex instead, deliberately.

``text``, ``base64``, ``json`` and ``none`` are pylogctl's own conveniences. ``text`` is the
one rule for bytes in pylogctl's own text output
(:func:`pylogctl.format.readable_bytes.readable`). ``avro``, ``protobuf``,
``json-schema`` and ``schema-registry`` (any of the three, by the schema's type) read the
Confluent wire format with the schemas of a ``_schemas`` topic
(:mod:`.schema_decoders`). A decoder returns a JSON-ready value: a string, an int, or for
``json`` and the schema decoders the parsed document.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Iterable, Iterator

from ..format.java_string import java_utf8
from ..format.readable_bytes import readable

# where the schema decoders look by default: Schema Registry's default kafkastore.topic (the
# same name as groups.schemas_topic.TOPIC, kept here for the command line's light imports)
SCHEMAS_TOPIC = "_schemas"
SCHEMA_DECODER_NAMES = ("avro", "protobuf", "json-schema", "schema-registry")
DECODER_NAMES = ("string", "text", "integer", "long", "hex", "base64", "json",
                 *SCHEMA_DECODER_NAMES, "none")
Decoder = Callable[[bytes], Any]

_KAFKA_4 = "org.apache.kafka.tools.api."
_KAFKA_3 = "kafka.serializer."
DEFAULT_DECODER_CLASS = _KAFKA_4 + "StringDecoder"  # kafka-dump-log's default
# Kafka's decoder classes, by their 4.x names and their 3.x names (which 4.x no longer has:
# a 3.x runbook's --key-decoder-class kafka.serializer.StringDecoder runs here unchanged)
DECODER_CLASSES = {prefix + cls: name
                   for prefix in (_KAFKA_4, _KAFKA_3)
                   for cls, name in (("StringDecoder", "string"), ("IntegerDecoder", "integer"),
                                     ("LongDecoder", "long"), ("DefaultDecoder", "hex"))}


class ValueDecodeError(ValueError):
    """A key or value a decoder cannot read (an unknown schema id, not the wire format), or
    reads but finds wrong (``value``: what to show anyway)."""

    def __init__(self, message: str, value: Any = None) -> None:
        super().__init__(message)
        self.value = value


def decode_or_show(decoder: Decoder, raw: bytes, report: Callable[[str], None]) -> Any:
    """``decoder(raw)``; what it cannot decode is reported (one line) and shown by
    :func:`~pylogctl.format.readable_bytes.readable`, so one odd record never stops a dump or a
    scan."""
    try:
        return decoder(raw)
    except ValueDecodeError as exc:
        if exc.value is None:
            report(f"{exc}; shown as raw bytes")
            return readable(raw)
        report(str(exc))
        return exc.value


def decode_rows(rows: Iterable[dict[str, Any]], key_decoder: Decoder | None,
                value_decoder: Decoder | None, report: Callable[[str], None]
                ) -> Iterator[dict[str, Any]]:
    """Scanned rows with ``key`` and ``value`` decoded (a None decoder leaves the bytes as they
    are); a record a decoder cannot read is reported with its topic, partition and offset.
    Fixed-size decoders show short data as text here: a scan is no kafka-dump-log to die."""
    for row in rows:
        for part, decoder in (("key", key_decoder), ("value", value_decoder)):
            raw = row.get(part)
            if decoder is None or raw is None:
                continue
            where = f"{row.get('topic')}-{row.get('partition')} offset {row.get('offset')}"
            try:
                row[part] = decode_or_show(decoder, bytes(raw),
                                           lambda m: report(f"{where}: the {part}: {m}"))
            except ShortDataError as exc:
                report(f"{where}: the {part}: {exc}; shown as raw bytes")
                row[part] = readable(bytes(raw))
        yield row


class ShortDataError(ValueError):
    """Fewer bytes than a fixed-size decoder reads (Java's ``BufferUnderflowException``)."""

    def __init__(self, needed: int, got: int) -> None:
        kind = "int" if needed == 4 else "long"
        super().__init__(f"a big-endian {kind} needs {needed} bytes, it has {got}")
        self.needed = needed
        self.got = got


def _string(b: bytes) -> str:
    return java_utf8(b)


def _fixed(size: int) -> Decoder:
    def decode(b: bytes) -> int:
        if len(b) < size:
            raise ShortDataError(size, len(b))
        return int.from_bytes(b[:size], "big", signed=True)
    return decode


def _json(b: bytes) -> Any:
    """Parsed JSON; bytes that are not JSON fall back to their UTF-8 text."""
    try:
        return json.loads(b)
    except (ValueError, UnicodeDecodeError):
        return _string(b)


_DECODERS: dict[str, Decoder | None] = {
    "string": _string,
    "text": readable,
    "integer": _fixed(4),
    "long": _fixed(8),
    "hex": lambda b: b.hex(),
    "base64": lambda b: base64.b64encode(b).decode("ascii"),
    "json": _json,
    "none": None,
}


def get_decoder(name: str, log_dirs: Any = None, schemas_topic: str = SCHEMAS_TOPIC
                ) -> Decoder | None:
    """The decoder called ``name``; None for ``none`` (the part is not shown). The schema
    decoders read their schemas from ``schemas_topic`` in ``log_dirs`` (a
    :class:`~pylogctl.groups.replicas.LogDirs`, or paths inside log dirs)."""
    if name in SCHEMA_DECODER_NAMES:
        from .schema_decoders import schema_decoder

        return schema_decoder(name, log_dirs, schemas_topic)
    try:
        return _DECODERS[name]
    except KeyError:
        raise ValueError(f"unknown decoder {name!r}; choose from {', '.join(DECODER_NAMES)}") from None


def decoder_for_class(class_name: str) -> str:
    """The decoder name for one of Kafka's decoder class names; ValueError for any other (a
    custom class on Kafka's classpath has no Python counterpart)."""
    try:
        return DECODER_CLASSES[class_name]
    except KeyError:
        known = ", ".join(k for k in DECODER_CLASSES if k.startswith(_KAFKA_4))
        raise ValueError(f"unknown decoder class {class_name!r}: pylogctl knows Kafka's own "
                         f"({known}, and their kafka.serializer names from Kafka 3.x)") from None
