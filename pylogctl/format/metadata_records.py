"""KRaft metadata records: the frames of ``__cluster_metadata`` logs and snapshots.

Every non-control record value in the metadata log, in a KRaft snapshot ``*.checkpoint`` and in
``bootstrap.checkpoint`` is one frame (Kafka's ``AbstractApiMessageSerde``)::

    unsigned varint frame version (always 1) | unsigned varint apiKey | unsigned varint version
    | the record body, a flexible generated message at that version

The schemas below restate Kafka 4.4's ``metadata/src/main/resources/common/metadata/*.json``
(among the newest: ClearElrRecord, KIP-966; UnregisterControllerRecord, KIP-853; the cordoned
log dirs of RegisterBrokerRecord v4 and BrokerRegistrationChangeRecord v3, KIP-1066);
:mod:`pylogctl.format.message` does the reading. Like
Kafka's generated readers, a version above the highest known one is still decoded (its fields
are those of the highest version, unknown tagged fields are skipped) unless it holds a nested
struct, whose generated reader refuses the version; :attr:`MetadataRecord.known_version` tells
the two apart.

:func:`encode_metadata_record` frames a record for the broker (and the tests) with
:func:`pylogctl.format.message.write_message`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import CorruptRecordError, UnsupportedFormatError
from .jackson import JavaDouble, java_double_str
from .message import (Field, KafkaUuid, NullDefaultField, Schema, read_struct, to_json_value,
                      write_message)
from .varint import encode_unsigned_varint, read_unsigned_varint

FRAME_VERSION = 1
INT16_MAX = 32767


def _f(name: str, type_: str, versions: str = "0+", **kw: Any) -> Field:
    return Field(name, type_, versions, **kw)


def _tagged_null(name: str, type_: str, versions: str, tag: int) -> Field:
    return NullDefaultField(name, type_, versions, nullable=versions, tag=tag)


_ENDPOINT = (_f("Name", "string"), _f("Host", "string"), _f("Port", "uint16"),
             _f("SecurityProtocol", "int16"))
_FEATURE = (_f("Name", "string"), _f("MinSupportedVersion", "int16"),
            _f("MaxSupportedVersion", "int16"))


def _schema(name: str, valid: str, *fields: Field) -> Schema:
    return Schema(name, tuple(fields), flexible="0+", valid=valid)


# apiKey -> schema, in apiKey order. Keys 6, 13 and 16 were used by pre-release records that
# Kafka has since deleted; they are unknown types now.
SCHEMAS: dict[int, Schema] = {
    0: _schema("RegisterBrokerRecord", "0-4",
               _f("BrokerId", "int32"),
               _f("IsMigratingZkBroker", "bool", "2+"),
               _f("IncarnationId", "uuid"),
               _f("BrokerEpoch", "int64"),
               _f("EndPoints", "[]BrokerEndpoint", fields=_ENDPOINT),
               _f("Features", "[]BrokerFeature", fields=_FEATURE),
               _f("Rack", "string", nullable="0+"),
               _f("Fenced", "bool", default=True),
               _f("InControlledShutdown", "bool", "1+"),
               _f("LogDirs", "[]uuid", "3+", tag=0),
               _tagged_null("CordonedLogDirs", "[]uuid", "4+", 1)),
    1: _schema("UnregisterBrokerRecord", "0",
               _f("BrokerId", "int32"), _f("BrokerEpoch", "int64")),
    2: _schema("TopicRecord", "0",
               _f("Name", "string"), _f("TopicId", "uuid")),
    3: _schema("PartitionRecord", "0-2",
               _f("PartitionId", "int32", default=-1),
               _f("TopicId", "uuid"),
               _f("Replicas", "[]int32"),
               _f("Isr", "[]int32"),
               _f("RemovingReplicas", "[]int32"),
               _f("AddingReplicas", "[]int32"),
               _f("Leader", "int32", default=-1),
               _f("LeaderRecoveryState", "int8", tag=0, default=0),
               _f("LeaderEpoch", "int32", default=-1),
               _f("PartitionEpoch", "int32", default=-1),
               _f("Directories", "[]uuid", "1+"),
               _tagged_null("EligibleLeaderReplicas", "[]int32", "2+", 1),
               _tagged_null("LastKnownElr", "[]int32", "2+", 2)),
    4: _schema("ConfigRecord", "0",
               _f("ResourceType", "int8"),
               _f("ResourceName", "string"),
               _f("Name", "string"),
               _f("Value", "string", nullable="0+")),
    5: _schema("PartitionChangeRecord", "0-2",
               _f("PartitionId", "int32", default=-1),
               _f("TopicId", "uuid"),
               _tagged_null("Isr", "[]int32", "0+", 0),
               _f("Leader", "int32", tag=1, default=-2),
               _tagged_null("Replicas", "[]int32", "0+", 2),
               _tagged_null("RemovingReplicas", "[]int32", "0+", 3),
               _tagged_null("AddingReplicas", "[]int32", "0+", 4),
               _f("LeaderRecoveryState", "int8", tag=5, default=-1),
               _tagged_null("Directories", "[]uuid", "1+", 8),
               _tagged_null("EligibleLeaderReplicas", "[]int32", "2+", 6),
               _tagged_null("LastKnownElr", "[]int32", "2+", 7)),
    7: _schema("FenceBrokerRecord", "0",
               _f("Id", "int32"), _f("Epoch", "int64")),
    8: _schema("UnfenceBrokerRecord", "0",
               _f("Id", "int32"), _f("Epoch", "int64")),
    9: _schema("RemoveTopicRecord", "0",
               _f("TopicId", "uuid")),
    10: _schema("DelegationTokenRecord", "0",
                _f("Owner", "string"),
                _f("Requester", "string"),
                _f("Renewers", "[]string"),
                _f("IssueTimestamp", "int64"),
                _f("MaxTimestamp", "int64"),
                _f("ExpirationTimestamp", "int64"),
                _f("TokenId", "string")),
    11: _schema("UserScramCredentialRecord", "0",
                _f("Name", "string"),
                _f("Mechanism", "int8"),
                _f("Salt", "bytes"),
                _f("StoredKey", "bytes"),
                _f("ServerKey", "bytes"),
                _f("Iterations", "int32")),
    12: _schema("FeatureLevelRecord", "0",
                _f("Name", "string"), _f("FeatureLevel", "int16")),
    14: _schema("ClientQuotaRecord", "0",
                _f("Entity", "[]EntityData", fields=(
                    _f("EntityType", "string"),
                    _f("EntityName", "string", nullable="0+"))),
                _f("Key", "string"),
                _f("Value", "float64"),
                _f("Remove", "bool")),
    15: _schema("ProducerIdsRecord", "0",
                _f("BrokerId", "int32"),
                _f("BrokerEpoch", "int64", default=-1),
                _f("NextProducerId", "int64")),
    17: _schema("BrokerRegistrationChangeRecord", "0-3",
                _f("BrokerId", "int32"),
                _f("BrokerEpoch", "int64"),
                _f("Fenced", "int8", tag=0),
                _f("InControlledShutdown", "int8", "1+", tag=1),
                _f("LogDirs", "[]uuid", "2+", tag=2),
                _tagged_null("CordonedLogDirs", "[]uuid", "3+", 3)),
    18: _schema("AccessControlEntryRecord", "0",
                _f("Id", "uuid"),
                _f("ResourceType", "int8"),
                _f("ResourceName", "string"),
                _f("PatternType", "int8"),
                _f("Principal", "string"),
                _f("Host", "string"),
                _f("Operation", "int8"),
                _f("PermissionType", "int8")),
    19: _schema("RemoveAccessControlEntryRecord", "0", _f("Id", "uuid")),
    20: _schema("NoOpRecord", "0"),
    21: _schema("ZkMigrationStateRecord", "0", _f("ZkMigrationState", "int8")),
    22: _schema("RemoveUserScramCredentialRecord", "0",
                _f("Name", "string"), _f("Mechanism", "int8")),
    23: _schema("BeginTransactionRecord", "0", _tagged_null("Name", "string", "0+", 0)),
    24: _schema("EndTransactionRecord", "0"),
    25: _schema("AbortTransactionRecord", "0", _tagged_null("Reason", "string", "0+", 0)),
    26: _schema("RemoveDelegationTokenRecord", "0", _f("TokenId", "string")),
    27: _schema("RegisterControllerRecord", "0",
                _f("ControllerId", "int32"),
                _f("IncarnationId", "uuid"),
                _f("ZkMigrationReady", "bool"),
                _f("EndPoints", "[]ControllerEndpoint", fields=_ENDPOINT),
                _f("Features", "[]ControllerFeature", fields=_FEATURE)),
    # KIP-966: "TopicName" empty = all topics.
    28: _schema("ClearElrRecord", "0", _f("TopicName", "string")),
    # KIP-853: a controller removed from a dynamic quorum.
    29: _schema("UnregisterControllerRecord", "0", _f("ControllerId", "int32")),
}


def type_name(schema_name: str) -> str:
    """``RegisterBrokerRecord`` -> ``REGISTER_BROKER_RECORD``, as Kafka's MetadataRecordType.

    An underscore goes before a capital only when the previous character was not one.
    """
    out = []
    prev_upper = True
    for ch in schema_name:
        if ch.isupper():
            if not prev_upper:
                out.append("_")
            prev_upper = True
        else:
            prev_upper = False
        out.append(ch.upper())
    return "".join(out)


TYPE_NAMES: dict[int, str] = {key: type_name(s.name) for key, s in SCHEMAS.items()}
API_KEYS: dict[str, int] = {name: key for key, name in TYPE_NAMES.items()}


class MetadataFrameError(CorruptRecordError):
    """The frame header is unreadable or not frame version 1 (message is Kafka's text)."""


class UnknownMetadataTypeError(UnsupportedFormatError):
    """The frame names an apiKey no metadata record schema has."""

    def __init__(self, api_key: int, position: int | None = None) -> None:
        super().__init__(f"Unknown metadata id {api_key}", position=position)
        self.api_key = api_key


class MetadataRecordBodyError(CorruptRecordError):
    """The record body does not decode at its version."""

    def __init__(self, message: str, api_key: int, position: int | None = None) -> None:
        super().__init__(message, position=position)
        self.api_key = api_key


class MetadataTrailingBytesError(CorruptRecordError):
    """Bytes follow a fully decoded record body (message is Kafka's text)."""


@dataclass(frozen=True)
class MetadataRecord:
    """One decoded metadata record; ``data`` holds values by camelCase name, in schema order.

    Values are Python ints/bools/strs, ``bytes``, :class:`KafkaUuid`, :class:`JavaDouble`,
    lists and dicts (nested structs); :meth:`to_json` gives Kafka's rendering.
    """

    api_key: int
    version: int
    data: dict[str, Any]

    @property
    def schema(self) -> Schema:
        return SCHEMAS[self.api_key]

    @property
    def type_name(self) -> str:
        return TYPE_NAMES[self.api_key]

    @property
    def known_version(self) -> bool:
        return self.schema.has_version(self.version)

    def to_json(self) -> dict[str, Any]:
        """``{"type", "version", "data"}`` as kafka-dump-log's metadata decoder builds it."""
        return {"type": self.type_name, "version": self.version,
                "data": _json_data(to_json_value(self.data))}


def _json_data(value: Any) -> Any:
    # Jackson writes non-finite doubles as quoted strings ("NaN"); finite ones keep their type
    if isinstance(value, float):
        return java_double_str(value) if not math.isfinite(value) else JavaDouble(value)
    if isinstance(value, dict):
        return {k: _json_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_data(v) for v in value]
    return value


def _read_short(buf: bytes, pos: int, entity: str) -> tuple[int, int]:
    """An unsigned varint narrowed to a Java short, with Kafka's checks and texts."""
    try:
        raw, nxt = read_unsigned_varint(buf, pos)
    except CorruptRecordError:
        raise MetadataFrameError(f"Error while reading {entity}", position=pos) from None
    as_int = raw & 0xFFFFFFFF  # Java keeps the low 32 bits of a 5-byte varint, signed
    if as_int >= 1 << 31:
        as_int -= 1 << 32
    if as_int > INT16_MAX:
        raise MetadataFrameError(f"Value for {entity} was too large.", position=pos)
    return ((as_int + 32768) & 0xFFFF) - 32768, nxt


def read_frame_header(value: bytes) -> tuple[int, int, int]:
    """Return ``(apiKey, version, body position)``; raises :class:`MetadataFrameError`."""
    frame_version, pos = _read_short(value, 0, "frame version")
    if frame_version == 0:
        raise MetadataFrameError(
            "Could not deserialize metadata record with frame version 0. Note that upgrades "
            "from the preview release of KRaft in 2.8 to newer versions are not supported.",
            position=0)
    if frame_version != FRAME_VERSION:
        raise MetadataFrameError(
            f"Could not deserialize metadata record due to unknown frame version "
            f"{frame_version}(only frame version {FRAME_VERSION} is supported)", position=0)
    api_key, pos = _read_short(value, pos, "type")
    version, pos = _read_short(value, pos, "version")
    return api_key, version, pos


def decode_frame(value: bytes | bytearray | memoryview,
                 schemas: Mapping[int, Schema]) -> tuple[int, int, dict[str, Any]]:
    """``(apiKey, version, data)`` of one frame whose record schemas are ``schemas``: Kafka's
    ``AbstractApiMessageSerde.read``, shared by the metadata log and ``__remote_log_metadata``.

    Raises :class:`MetadataFrameError`, :class:`UnknownMetadataTypeError`,
    :class:`MetadataRecordBodyError` or :class:`MetadataTrailingBytesError` (all
    :class:`CorruptRecordError`), never anything else.
    """
    buf = bytes(value)
    api_key, version, pos = read_frame_header(buf)
    schema = schemas.get(api_key)
    if schema is None:
        raise UnknownMetadataTypeError(api_key, position=pos)
    eff = schema.reading_version(version)
    try:
        data, end = read_struct(buf, schema.fields, eff, schema.is_flexible(eff), pos,
                                newer=version if version > eff else None)
    except CorruptRecordError as exc:
        raise MetadataRecordBodyError(
            f"Failed to deserialize record with type {api_key}: {exc.message}", api_key,
            position=exc.position) from exc
    if end != len(buf):
        raise MetadataTrailingBytesError(f"Found {len(buf) - end} byte(s) of garbage after "
                                         f"{api_key}", position=end)
    return api_key, version, data


def encode_frame(api_key: int, version: int, data: Mapping[str, Any], schema: Schema) -> bytes:
    """The inverse of :func:`decode_frame` for one record of ``schema``."""
    header = (encode_unsigned_varint(FRAME_VERSION) + encode_unsigned_varint(api_key)
              + encode_unsigned_varint(version))
    return header + write_message(schema, data, version)


def decode_metadata_record(value: bytes | bytearray | memoryview) -> MetadataRecord:
    """Decode one metadata record value (frame header and body); raises what
    :func:`decode_frame` raises, never anything else."""
    return MetadataRecord(*decode_frame(value, SCHEMAS))


def encode_metadata_record(api_key: int, version: int, data: dict[str, Any]) -> bytes:
    """Frame and encode a record; ``data`` maps camelCase names to values (missing = default).

    Raises :class:`ValueError` for an unknown apiKey, a version outside the schema's valid
    range, a null in a non-nullable field, or a non-default value for a field the version lacks.
    """
    schema = SCHEMAS.get(api_key)
    if schema is None:
        raise ValueError(f"Unknown metadata id {api_key}")
    if not schema.has_version(version):
        raise ValueError(f"Can't write version {version} of {schema.name}")
    return encode_frame(api_key, version, data, schema)


__all__ = [
    "API_KEYS", "FRAME_VERSION", "JavaDouble", "KafkaUuid", "MetadataFrameError", "MetadataRecord",
    "MetadataRecordBodyError", "MetadataTrailingBytesError", "NullDefaultField", "SCHEMAS",
    "TYPE_NAMES", "UnknownMetadataTypeError", "decode_frame", "decode_metadata_record",
    "encode_frame", "encode_metadata_record",
    "java_double_str", "read_frame_header", "type_name",
]
