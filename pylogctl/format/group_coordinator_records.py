"""The records of ``__consumer_offsets``: schemas, record types and a decoder.

The group coordinator writes offset commits, classic group metadata (with the embedded consumer
protocol), KIP-848 consumer-group records, KIP-932 share-group records and regex resolutions to
this topic. The schemas mirror Kafka's JSON schemas (``group-coordinator/.../common/message``,
Kafka 4.0, plus ConsumerGroupRegularExpression, type 16). Types Kafka 4.0 does not know, such as
the streams-group records whose numbers were still moving, are reported as unknown, as Kafka
does. :func:`decode_group_record` is what the dump tool and the offline consumer-groups command
build on.
"""

from __future__ import annotations

import enum
from typing import Any

from .coordinator_record import (CoordinatorRecord, CoordinatorRecordError, RecordType,
                                 UnknownRecordTypeError, decode_coordinator_record,
                                 encode_prefixed, read_prefix)
from .message import Field, Schema, read_struct

TOPIC = "__consumer_offsets"


class GroupRecordType(enum.IntEnum):
    """Record-type numbers of ``__consumer_offsets`` (the key's int16 prefix)."""

    LEGACY_OFFSET_COMMIT = 0
    OFFSET_COMMIT = 1
    GROUP_METADATA = 2
    CONSUMER_GROUP_METADATA = 3
    CONSUMER_GROUP_PARTITION_METADATA = 4
    CONSUMER_GROUP_MEMBER_METADATA = 5
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
    SHARE_GROUP_PARTITION_METADATA = 9
    SHARE_GROUP_MEMBER_METADATA = 10
    SHARE_GROUP_METADATA = 11
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
    SHARE_GROUP_STATE_PARTITION_METADATA = 15
    CONSUMER_GROUP_REGULAR_EXPRESSION = 16


# -- keys (never flexible; each struct is versioned by its record type) ----------------------

def _key(name: str, rtype: GroupRecordType, *fields: str) -> Schema:
    v = str(int(rtype))
    return Schema(name, tuple(Field(f, "string", versions=v) for f in fields), valid=v)


OFFSET_COMMIT_KEY = Schema("OffsetCommitKey", (
    Field("group", "string", versions="0-1"),
    Field("topic", "string", versions="0-1"),
    Field("partition", "int32", versions="0-1"),
), valid="0-1")
GROUP_METADATA_KEY = _key("GroupMetadataKey", GroupRecordType.GROUP_METADATA, "group")

# -- classic records -------------------------------------------------------------------------

OFFSET_COMMIT_VALUE = Schema("OffsetCommitValue", (
    Field("offset", "int64"),
    Field("leaderEpoch", "int32", versions="3+", default=-1),
    Field("metadata", "string"),
    Field("commitTimestamp", "int64"),
    Field("expireTimestamp", "int64", versions="1", default=-1),
), flexible="4+", valid="0-4")

GROUP_METADATA_VALUE = Schema("GroupMetadataValue", (
    Field("protocolType", "string"),
    Field("generation", "int32"),
    Field("protocol", "string", nullable="0+"),
    Field("leader", "string", nullable="0+"),
    Field("currentStateTimestamp", "int64", versions="2+", default=-1),
    Field("members", "[]MemberMetadata", fields=(
        Field("memberId", "string"),
        Field("groupInstanceId", "string", versions="3+", nullable="3+"),
        Field("clientId", "string"),
        Field("clientHost", "string"),
        Field("rebalanceTimeout", "int32", versions="1+", default=-1),
        Field("sessionTimeout", "int32"),
        Field("subscription", "bytes"),
        Field("assignment", "bytes"),
    )),
), flexible="4+", valid="0-4")

# The embedded consumer protocol (clients' ConsumerProtocol*.json): int16 version + struct.
_OWNED = (Field("Topic", "string", versions="1+"), Field("Partitions", "[]int32", versions="1+"))
CONSUMER_PROTOCOL_SUBSCRIPTION = Schema("ConsumerProtocolSubscription", (
    Field("Topics", "[]string"),
    Field("UserData", "bytes", nullable="0+"),
    Field("OwnedPartitions", "[]TopicPartition", versions="1+", fields=_OWNED),
    Field("GenerationId", "int32", versions="2+", default=-1),
    Field("RackId", "string", versions="3+", nullable="3+"),
), valid="0-3")
CONSUMER_PROTOCOL_ASSIGNMENT = Schema("ConsumerProtocolAssignment", (
    Field("AssignedPartitions", "[]TopicPartition", fields=(
        Field("Topic", "string"), Field("Partitions", "[]int32"))),
    Field("UserData", "bytes", nullable="0+"),
), valid="0-3")

# -- KIP-848 consumer groups, KIP-932 share groups (values flexible from v0) -----------------

_TOPIC_METADATA = (
    Field("TopicId", "uuid"),
    Field("TopicName", "string"),
    Field("NumPartitions", "int32"),
    Field("PartitionMetadata", "[]PartitionMetadata", fields=(
        Field("Partition", "int32"), Field("Racks", "[]string"))),
)
_TOPIC_PARTITIONS = (Field("TopicId", "uuid"), Field("Partitions", "[]int32"))


def _value(name: str, *fields: Field) -> Schema:
    return Schema(name, fields, flexible="0+", valid="0")


def _epoch_value(name: str, field_name: str) -> Schema:
    return _value(name, Field(field_name, "int32"))


CONSUMER_GROUP_MEMBER_METADATA_VALUE = _value(
    "ConsumerGroupMemberMetadataValue",
    Field("InstanceId", "string", nullable="0+"),
    Field("RackId", "string", nullable="0+"),
    Field("ClientId", "string"),
    Field("ClientHost", "string"),
    Field("SubscribedTopicNames", "[]string"),
    Field("SubscribedTopicRegex", "string", nullable="0+"),
    Field("RebalanceTimeoutMs", "int32", default=-1),
    Field("ServerAssignor", "string", nullable="0+"),
    Field("ClassicMemberMetadata", "ClassicMemberMetadata", nullable="0+", tag=0, fields=(
        Field("SessionTimeoutMs", "int32"),
        Field("SupportedProtocols", "[]ClassicProtocol", fields=(
            Field("Name", "string"), Field("Metadata", "bytes"))),
    )),
)
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = _value(
    "ConsumerGroupCurrentMemberAssignmentValue",
    Field("MemberEpoch", "int32"),
    Field("PreviousMemberEpoch", "int32"),
    Field("State", "int8"),
    Field("AssignedPartitions", "[]TopicPartitions", fields=_TOPIC_PARTITIONS),
    Field("PartitionsPendingRevocation", "[]TopicPartitions", fields=_TOPIC_PARTITIONS),
)

_T = GroupRecordType
_MEMBER = ("GroupId", "MemberId")
_SPECS: tuple[tuple[GroupRecordType, str, tuple[str, ...], Schema], ...] = (
    (_T.CONSUMER_GROUP_METADATA, "ConsumerGroupMetadata", ("GroupId",),
     _epoch_value("ConsumerGroupMetadataValue", "Epoch")),
    (_T.CONSUMER_GROUP_PARTITION_METADATA, "ConsumerGroupPartitionMetadata", ("GroupId",),
     _value("ConsumerGroupPartitionMetadataValue",
            Field("Topics", "[]TopicMetadata", fields=_TOPIC_METADATA))),
    (_T.CONSUMER_GROUP_MEMBER_METADATA, "ConsumerGroupMemberMetadata", _MEMBER,
     CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    (_T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, "ConsumerGroupTargetAssignmentMetadata",
     ("GroupId",), _epoch_value("ConsumerGroupTargetAssignmentMetadataValue", "AssignmentEpoch")),
    (_T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, "ConsumerGroupTargetAssignmentMember", _MEMBER,
     _value("ConsumerGroupTargetAssignmentMemberValue",
            Field("TopicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS))),
    (_T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, "ConsumerGroupCurrentMemberAssignment", _MEMBER,
     CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    (_T.SHARE_GROUP_PARTITION_METADATA, "ShareGroupPartitionMetadata", ("GroupId",),
     _value("ShareGroupPartitionMetadataValue",
            Field("Topics", "[]TopicMetadata", fields=_TOPIC_METADATA))),
    (_T.SHARE_GROUP_MEMBER_METADATA, "ShareGroupMemberMetadata", _MEMBER,
     _value("ShareGroupMemberMetadataValue",
            Field("RackId", "string", nullable="0+"),
            Field("ClientId", "string"),
            Field("ClientHost", "string"),
            Field("SubscribedTopicNames", "[]string"))),
    (_T.SHARE_GROUP_METADATA, "ShareGroupMetadata", ("GroupId",),
     _epoch_value("ShareGroupMetadataValue", "Epoch")),
    (_T.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, "ShareGroupTargetAssignmentMetadata", ("GroupId",),
     _epoch_value("ShareGroupTargetAssignmentMetadataValue", "AssignmentEpoch")),
    (_T.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, "ShareGroupTargetAssignmentMember", _MEMBER,
     _value("ShareGroupTargetAssignmentMemberValue",
            Field("TopicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS))),
    (_T.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, "ShareGroupCurrentMemberAssignment", _MEMBER,
     _value("ShareGroupCurrentMemberAssignmentValue",
            Field("MemberEpoch", "int32"),
            Field("PreviousMemberEpoch", "int32"),
            Field("State", "int8"),
            Field("AssignedPartitions", "[]TopicPartitions", fields=_TOPIC_PARTITIONS))),
    (_T.SHARE_GROUP_STATE_PARTITION_METADATA, "ShareGroupStatePartitionMetadata", ("GroupId",),
     _value("ShareGroupStatePartitionMetadataValue",
            Field("InitializedTopics", "[]TopicPartitionsInfo", fields=(
                Field("TopicId", "uuid"), Field("TopicName", "string"),
                Field("Partitions", "[]int32"))),
            Field("DeletingTopics", "[]TopicInfo", fields=(
                Field("TopicId", "uuid"), Field("TopicName", "string"))))),
    (_T.CONSUMER_GROUP_REGULAR_EXPRESSION, "ConsumerGroupRegularExpression",
     ("GroupId", "RegularExpression"),
     _value("ConsumerGroupRegularExpressionValue",
            Field("Topics", "[]string"),
            Field("Version", "int64"),
            Field("Timestamp", "int64"))),
)

RECORD_TYPES: dict[int, RecordType] = {
    0: RecordType(0, _T.LEGACY_OFFSET_COMMIT.name, OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: RecordType(1, _T.OFFSET_COMMIT.name, OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: RecordType(2, _T.GROUP_METADATA.name, GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    **{int(t): RecordType(int(t), t.name, _key(f"{name}Key", t, *key_fields), value)
       for t, name, key_fields, value in _SPECS},
}


class GroupCoordinatorRecord(CoordinatorRecord):
    """A decoded ``__consumer_offsets`` record (see :class:`CoordinatorRecord`)."""

    @property
    def group_id(self) -> str:
        """The group the record belongs to (``group`` in classic keys, ``groupId`` otherwise)."""
        return self.key["group"] if "group" in self.key else self.key["groupId"]


def decode_group_record(key: bytes, value: bytes | None) -> GroupCoordinatorRecord:
    """Decode one ``__consumer_offsets`` record.

    Raises :class:`~pylogctl.format.coordinator_record.UnknownRecordTypeError` for a record type
    this module does not know and
    :class:`~pylogctl.format.coordinator_record.CoordinatorRecordError` for malformed bytes.
    """
    return decode_coordinator_record(key, value, RECORD_TYPES, TOPIC, GroupCoordinatorRecord)


def encode_group_record(record_type: int, key: dict[str, Any], value_version: int | None = None,
                        value: dict[str, Any] | None = None) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes of a record; ``value=None`` makes a tombstone."""
    rtype = RECORD_TYPES[record_type]
    key_bytes = encode_prefixed(record_type, key, rtype.key)
    if value is None:
        return key_bytes, None
    if value_version is None:
        raise ValueError("a value needs its version")
    return key_bytes, encode_prefixed(value_version, value, rtype.value)


def decode_consumer_protocol(data: bytes, schema: Schema) -> tuple[int, dict[str, Any]]:
    """Decode embedded consumer-protocol bytes (``int16 version | struct``, never flexible).

    ``schema`` is :data:`CONSUMER_PROTOCOL_SUBSCRIPTION` or :data:`CONSUMER_PROTOCOL_ASSIGNMENT`.
    Returns ``(version, fields)``; raises
    :class:`~pylogctl.errors.CorruptRecordError` if the bytes do not parse.
    Trailing bytes are ignored: newer protocol versions only append fields.
    """
    version = read_prefix(data, "consumer protocol")
    return version, read_struct(data, schema.fields, schema.reading_version(version), False,
                                pos=2)[0]


def encode_consumer_protocol(version: int, fields: dict[str, Any], schema: Schema) -> bytes:
    """The inverse of :func:`decode_consumer_protocol`."""
    return encode_prefixed(version, fields, schema)


__all__ = ["GroupRecordType", "GroupCoordinatorRecord", "RECORD_TYPES", "TOPIC",
           "decode_group_record", "encode_group_record", "decode_consumer_protocol",
           "encode_consumer_protocol", "CONSUMER_PROTOCOL_SUBSCRIPTION",
           "CONSUMER_PROTOCOL_ASSIGNMENT", "UnknownRecordTypeError", "CoordinatorRecordError"]
