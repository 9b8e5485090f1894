"""The Confluent wire format: how Schema Registry's serializers frame a key or value.

A framed payload is a magic byte 0, the schema id as a 4-byte big-endian int, then the
serialized data. Protobuf adds, between id and data, the path of the message type in its
``.proto`` file as message indexes (``MessageIndexes`` in Confluent's serde): a zig-zag varint
count, then each index as a zig-zag varint; the common path ``[0]`` (the file's first message)
is written as the single byte 0. Avro and JSON Schema data follow the id directly.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import CorruptRecordError
from .varint import encode_varint, read_varint

MAGIC_BYTE = 0
HEADER_SIZE = 5  # magic byte + schema id
_ID = struct.Struct(">i")


@dataclass(frozen=True)
class Framed:
    """A framed key or value: its schema id and the serialized data after the framing."""

    schema_id: int
    data: bytes


def unframe(raw: bytes) -> Framed:
    """The schema id and data of ``raw``; :class:`CorruptRecordError` when ``raw`` is not in
    the wire format (too short, or another magic byte)."""
    if len(raw) < HEADER_SIZE:
        raise CorruptRecordError(f"not in the Confluent wire format: {len(raw)} bytes, fewer "
                                 f"than the {HEADER_SIZE} of its header")
    if raw[0] != MAGIC_BYTE:
        raise CorruptRecordError(f"not in the Confluent wire format: magic byte {raw[0]}, "
                                 f"not {MAGIC_BYTE}")
    return Framed(_ID.unpack_from(raw, 1)[0], bytes(raw[HEADER_SIZE:]))


def frame(schema_id: int, data: bytes) -> bytes:
    """``data`` framed with ``schema_id`` (as a serializer writes it)."""
    return bytes((MAGIC_BYTE,)) + _ID.pack(schema_id) + data


# a path longer than this is not a message index list but other bytes
MAX_INDEXES = 128


def read_message_indexes(data: bytes) -> tuple[list[int], bytes]:
    """A Protobuf payload's message indexes and the message bytes after them."""
    count, pos = read_varint(data, 0)
    if count == 0:
        return [0], data[pos:]
    if count < 0 or count > MAX_INDEXES:
        raise CorruptRecordError(f"not a Protobuf message index list: count {count}")
    indexes = []
    for _ in range(count):
        index, pos = read_varint(data, pos)
        if index < 0:
            raise CorruptRecordError(f"not a Protobuf message index list: index {index}")
        indexes.append(index)
    return indexes, data[pos:]


def write_message_indexes(indexes: list[int]) -> bytes:
    """The encoding of ``indexes`` (``[0]`` as the single byte 0, as Confluent writes it)."""
    if indexes == [0]:
        return b"\x00"
    return encode_varint(len(indexes)) + b"".join(encode_varint(i) for i in indexes)
