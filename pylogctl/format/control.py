"""Control records: the records of a control batch (attribute bit 5).

Every control record's key is ``int16 version (0) | int16 type``. The value depends on the type:
transaction markers (ABORT/COMMIT) carry ``int16 version | int32 coordinatorEpoch``; the KRaft
types carry a flexible message read at version 0, as Kafka's ``ControlRecordUtils`` does.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any

from ..errors import CorruptRecordError
from .message import Field, Schema, read_message

_KEY = struct.Struct(">hh")
_MARKER = struct.Struct(">hi")


class ControlRecordType(enum.IntEnum):
    UNKNOWN = -1
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6

    @classmethod
    def from_id(cls, type_id: int) -> "ControlRecordType":
        try:
            return cls(type_id)
        except ValueError:
            return cls.UNKNOWN


def parse_control_key(key: bytes | None) -> tuple[int, int]:
    """Return ``(version, type id)`` of a control record key, validated as Kafka does."""
    if key is None or len(key) < 4:
        n = 0 if key is None else len(key)
        raise CorruptRecordError(f"Invalid value size found for end control record key. Must have "
                                 f"at least 4 bytes, but found only {n}")
    version, type_id = _KEY.unpack_from(key, 0)
    if version < 0:
        raise CorruptRecordError(f"Invalid version found for control record: {version}. May "
                                 f"indicate data corruption")
    return version, type_id


def encode_control_key(control_type: ControlRecordType | int) -> bytes:
    return _KEY.pack(0, int(control_type))


@dataclass(frozen=True)
class EndTransactionMarker:
    control_type: ControlRecordType
    coordinator_epoch: int

    def encode_value(self) -> bytes:
        return _MARKER.pack(0, self.coordinator_epoch)


def parse_end_txn_marker(control_type: ControlRecordType, value: bytes | None) -> EndTransactionMarker:
    if control_type not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise CorruptRecordError(f"Invalid control record type for end transaction marker: "
                                 f"{control_type.name}")
    n = 0 if value is None else len(value)
    if value is None or n < 6:
        raise CorruptRecordError(f"Invalid value size found for end transaction marker. Must have "
                                 f"at least 6 bytes, but found only {n}")
    version, epoch = _MARKER.unpack_from(value, 0)
    if version < 0:
        raise CorruptRecordError(f"Invalid version found for end transaction marker: {version}. "
                                 f"May indicate data corruption")
    return EndTransactionMarker(control_type, epoch)


_VOTER = (Field("VoterId", "int32"), Field("VoterDirectoryId", "uuid", versions="1+"))
LEADER_CHANGE = Schema("LeaderChangeMessage", (
    Field("Version", "int16"),
    Field("LeaderId", "int32"),
    Field("Voters", "[]Voter", fields=_VOTER),
    Field("GrantingVoters", "[]Voter", fields=_VOTER),
), flexible="0+", valid="0-1")
SNAPSHOT_HEADER = Schema("SnapshotHeaderRecord", (
    Field("Version", "int16"),
    Field("LastContainedLogTimestamp", "int64"),
), flexible="0+", valid="0")
SNAPSHOT_FOOTER = Schema("SnapshotFooterRecord", (Field("Version", "int16"),), flexible="0+", valid="0")
KRAFT_VERSION = Schema("KRaftVersionRecord", (
    Field("Version", "int16"),
    Field("KRaftVersion", "int16"),
), flexible="0+", valid="0")
KRAFT_VOTERS = Schema("VotersRecord", (
    Field("Version", "int16"),
    Field("Voters", "[]Voter", fields=(
        Field("VoterId", "int32"),
        Field("VoterDirectoryId", "uuid"),
        Field("Endpoints", "[]Endpoint", fields=(
            Field("Name", "string"), Field("Host", "string"), Field("Port", "uint16"))),
        Field("KRaftVersionFeature", "KRaftVersionFeature", fields=(
            Field("MinSupportedVersion", "int16"), Field("MaxSupportedVersion", "int16"))),
    )),
), flexible="0+", valid="0")

SCHEMAS: dict[ControlRecordType, Schema] = {
    ControlRecordType.LEADER_CHANGE: LEADER_CHANGE,
    ControlRecordType.SNAPSHOT_HEADER: SNAPSHOT_HEADER,
    ControlRecordType.SNAPSHOT_FOOTER: SNAPSHOT_FOOTER,
    ControlRecordType.KRAFT_VERSION: KRAFT_VERSION,
    ControlRecordType.KRAFT_VOTERS: KRAFT_VOTERS,
}


def decode_control_value(control_type: ControlRecordType, value: bytes | None) -> dict[str, Any]:
    """Decode a KRaft control record's value (LeaderChange, snapshot header/footer, ...)."""
    schema = SCHEMAS[control_type]
    if value is None:
        raise CorruptRecordError(f"{schema.name} control record has a null value")
    version = 0
    if control_type == ControlRecordType.LEADER_CHANGE and len(value) >= 2:
        # the message's own Version field is its schema version (v1 adds voter directory ids)
        version = max(0, min(1, struct.unpack_from(">h", value, 0)[0]))
    return read_message(value, schema, version)
