"""What a record is, whatever batch format it came from.

Kafka has two record shapes on disk: the v2 ``DefaultRecord`` inside a record batch, and the
legacy v0/v1 message. Both surface here as :class:`Record` so that every reader downstream
(dump, recovery, consumer-group replay) handles one type.
"""

from __future__ import annotations

import enum
from typing import NamedTuple
from .varint import INT32_MAX

NO_TIMESTAMP = -1
NO_SEQUENCE = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_PARTITION_LEADER_EPOCH = -1


class TimestampType(enum.IntEnum):
    """Kafka's TimestampType; ``str()`` gives the label kafka-dump-log prints."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    def __str__(self) -> str:
        return _TS_NAMES[self]


_TS_NAMES = {
    TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
    TimestampType.CREATE_TIME: "CreateTime",
    TimestampType.LOG_APPEND_TIME: "LogAppendTime",
}


class Header(NamedTuple):
    """A record header: a UTF-8 key and a nullable byte value.

    The C accelerator builds instances as ``tuple.__new__`` does, without calling the class
    (``register_classes`` in ``_speedups.c``); it stops doing so if the class changes shape.
    """

    key: str
    value: bytes | None


class Record:
    """One record with absolute offset and timestamp.

    ``sequence`` is the producer sequence (baseSequence + offsetDelta, or -1). Legacy messages
    are :class:`LegacyRecord` instances, which add their own CRC.

    The C accelerator builds instances without calling the class (``register_classes`` in
    ``_speedups.c``): it stores each slot what ``__init__`` would. So ``__init__`` must stay a
    plain assignment of its arguments, in ``__slots__`` order; a change of the slots, or of
    ``__init__`` at run time, makes the C side call the class instead, but a new ``__init__``
    written here must be mirrored there.
    """

    __slots__ = ("offset", "timestamp", "key", "value", "headers", "sequence", "attributes")

    def __init__(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
                 headers: tuple[Header, ...] = (), sequence: int = NO_SEQUENCE,
                 attributes: int = 0) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = headers
        self.sequence = sequence
        self.attributes = attributes

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in Record.__slots__)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(offset={self.offset}, timestamp={self.timestamp}, "
                f"key={self.key!r}, value={self.value!r}, headers={self.headers!r}, "
                f"sequence={self.sequence})")


class LegacyRecord(Record):
    """A v0/v1 message (or an inner message of a compressed wrapper) with its own CRC-32."""

    __slots__ = ("magic", "crc", "is_valid", "timestamp_type")

    def __init__(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
                 magic: int, crc: int, is_valid: bool, attributes: int,
                 timestamp_type: TimestampType) -> None:
        super().__init__(offset, timestamp, key, value, (), NO_SEQUENCE, attributes)
        self.magic = magic
        self.crc = crc
        self.is_valid = is_valid
        self.timestamp_type = timestamp_type


def increment_sequence(sequence: int, increment: int) -> int:
    """Add to a producer sequence, wrapping at int32 max as Kafka does."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """Subtract from a producer sequence, wrapping below 0 to int32 max as Kafka does."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement
