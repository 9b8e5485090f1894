"""The records of ``__consumer_offsets``: schemas, record types and a decoder.

The group coordinator writes offset commits, classic group metadata (with the embedded consumer
protocol), KIP-848 consumer-group records, KIP-932 share-group records, regex resolutions and
KIP-1071 streams-group records (:mod:`pylogctl.format.streams_group_records`) to this topic.
The schemas restate Kafka 4.4's ``group-coordinator/src/main/resources/common/message`` (the
generated ``CoordinatorRecordType``: types 0-8, 10-17 and 19-23). Numbers it does not define
-- 9, the share-group partition metadata of the KIP-932 preview, and 18, dropped from KIP-1071
before release -- are reported as unknown types, as Kafka 4.4 reports them.
:func:`decode_group_record` is what the dump tool and the offline consumer-groups command
build on.
"""

from __future__ import annotations

import enum
from typing import Any

from .coordinator_record import (CoordinatorRecord, CoordinatorRecordError, RecordType,
                                 UnknownRecordTypeError, UnknownRecordVersionError,
                                 coordinator_key, coordinator_value, decode_coordinator_record,
                                 encode_coordinator_record, encode_prefixed, read_prefix, tagged)
from .message import Field, Schema, read_struct
from .streams_group_records import STREAMS_SCHEMAS

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
    SHARE_GROUP_MEMBER_METADATA = 10
    SHARE_GROUP_METADATA = 11
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
    SHARE_GROUP_STATE_PARTITION_METADATA = 15
    CONSUMER_GROUP_REGULAR_EXPRESSION = 16
    STREAMS_GROUP_METADATA = 17
    STREAMS_GROUP_MEMBER_METADATA = 19
    STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA = 20
    STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER = 21
    STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT = 22
    STREAMS_GROUP_TOPOLOGY = 23


# -- classic records -------------------------------------------------------------------------
# Keys are never flexible and have one version; Kafka reads them at the record type, which its
# generated reader treats like version 0.

_COMMIT_KEY_FIELDS = (Field("group", "string", versions="0"), Field("topic", "string", versions="0"),
                      Field("partition", "int32", versions="0"))
LEGACY_OFFSET_COMMIT_KEY = coordinator_key("LegacyOffsetCommitKey", *_COMMIT_KEY_FIELDS)
OFFSET_COMMIT_KEY = coordinator_key("OffsetCommitKey", *_COMMIT_KEY_FIELDS)
GROUP_METADATA_KEY = coordinator_key("GroupMetadataKey", "group")

# Type 0 (keys written before Kafka 0.10.1): Kafka 4.4 gives it a value schema of its own, with
# the v0 layout only; a later value version under a type-0 key is an unknown record version.
LEGACY_OFFSET_COMMIT_VALUE = Schema("LegacyOffsetCommitValue", (
    Field("offset", "int64", versions="0"),
    Field("metadata", "string", versions="0"),
    Field("commitTimestamp", "int64", versions="0"),
), valid="0")

OFFSET_COMMIT_VALUE = Schema("OffsetCommitValue", (
    Field("offset", "int64"),
    Field("leaderEpoch", "int32", versions="3+", default=-1),
    Field("metadata", "string"),
    Field("commitTimestamp", "int64"),
    Field("expireTimestamp", "int64", versions="1", default=-1),
    # KIP-848 brokers (4.1+) record the committed topic's id
    Field("topicId", "uuid", versions="4+", tag=0),
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
# a member's current assignment also records the epoch each partition was assigned in
_ASSIGNED_TOPIC_PARTITIONS = (*_TOPIC_PARTITIONS,
                              tagged("AssignmentEpochs", "[]int32", 0, nullable="0+"))
_TOPIC_PARTITIONS_INFO = (Field("TopicId", "uuid"), Field("TopicName", "string"),
                          Field("Partitions", "[]int32"))
_ASSIGNMENT_METADATA = (Field("AssignmentEpoch", "int32"),
                        tagged("AssignmentTimestamp", "int64", 0, default=0))

CONSUMER_GROUP_MEMBER_METADATA_VALUE = coordinator_value(
    "ConsumerGroupMemberMetadataValue",
    Field("InstanceId", "string", nullable="0+"),
    Field("RackId", "string", nullable="0+"),
    Field("ClientId", "string"),
    Field("ClientHost", "string"),
    Field("SubscribedTopicNames", "[]string"),
    Field("SubscribedTopicRegex", "string", nullable="0+"),
    Field("RebalanceTimeoutMs", "int32", default=-1),
    Field("ServerAssignor", "string", nullable="0+"),
    # a member that joined with the classic protocol (KIP-848's upgrade path); brokers write
    # null for the others, and it is printed as null
    tagged("ClassicMemberMetadata", "ClassicMemberMetadata", 0, nullable="0+", fields=(
        Field("SessionTimeoutMs", "int32"),
        Field("SupportedProtocols", "[]ClassicProtocol", fields=(
            Field("Name", "string"), Field("Metadata", "bytes"))),
    )),
)
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = coordinator_value(
    "ConsumerGroupCurrentMemberAssignmentValue",
    Field("MemberEpoch", "int32"),
    Field("PreviousMemberEpoch", "int32"),
    Field("State", "int8"),
    Field("AssignedPartitions", "[]TopicPartitions", fields=_ASSIGNED_TOPIC_PARTITIONS),
    Field("PartitionsPendingRevocation", "[]TopicPartitions", fields=_ASSIGNED_TOPIC_PARTITIONS),
)

_T = GroupRecordType
_MEMBER = ("GroupId", "MemberId")
_SPECS: tuple[tuple[GroupRecordType, str, tuple[str, ...], Schema], ...] = (
    (_T.CONSUMER_GROUP_METADATA, "ConsumerGroupMetadata", ("GroupId",),
     coordinator_value("ConsumerGroupMetadataValue", Field("Epoch", "int32"),
                       tagged("MetadataHash", "int64", 0, default=0))),
    (_T.CONSUMER_GROUP_PARTITION_METADATA, "ConsumerGroupPartitionMetadata", ("GroupId",),
     coordinator_value("ConsumerGroupPartitionMetadataValue",
                       Field("Topics", "[]TopicMetadata", fields=_TOPIC_METADATA))),
    (_T.CONSUMER_GROUP_MEMBER_METADATA, "ConsumerGroupMemberMetadata", _MEMBER,
     CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    (_T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, "ConsumerGroupTargetAssignmentMetadata",
     ("GroupId",), coordinator_value("ConsumerGroupTargetAssignmentMetadataValue",
                                     *_ASSIGNMENT_METADATA)),
    (_T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, "ConsumerGroupTargetAssignmentMember", _MEMBER,
     coordinator_value("ConsumerGroupTargetAssignmentMemberValue",
                       Field("TopicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS))),
    (_T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, "ConsumerGroupCurrentMemberAssignment", _MEMBER,
     CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    (_T.SHARE_GROUP_MEMBER_METADATA, "ShareGroupMemberMetadata", _MEMBER,
     coordinator_value("ShareGroupMemberMetadataValue",
                       Field("RackId", "string", nullable="0+"),
                       Field("ClientId", "string"),
                       Field("ClientHost", "string"),
                       Field("SubscribedTopicNames", "[]string"))),
    (_T.SHARE_GROUP_METADATA, "ShareGroupMetadata", ("GroupId",),
     coordinator_value("ShareGroupMetadataValue", Field("Epoch", "int32"),
                       Field("MetadataHash", "int64"))),
    (_T.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, "ShareGroupTargetAssignmentMetadata", ("GroupId",),
     coordinator_value("ShareGroupTargetAssignmentMetadataValue", *_ASSIGNMENT_METADATA)),
    (_T.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, "ShareGroupTargetAssignmentMember", _MEMBER,
     coordinator_value("ShareGroupTargetAssignmentMemberValue",
                       Field("TopicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS))),
    (_T.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, "ShareGroupCurrentMemberAssignment", _MEMBER,
     coordinator_value("ShareGroupCurrentMemberAssignmentValue",
                       Field("MemberEpoch", "int32"),
                       Field("PreviousMemberEpoch", "int32"),
                       Field("State", "int8"),
                       Field("AssignedPartitions", "[]TopicPartitions",
                             fields=_TOPIC_PARTITIONS))),
    (_T.SHARE_GROUP_STATE_PARTITION_METADATA, "ShareGroupStatePartitionMetadata", ("GroupId",),
     coordinator_value("ShareGroupStatePartitionMetadataValue",
                       Field("InitializingTopics", "[]TopicPartitionsInfo",
                             fields=_TOPIC_PARTITIONS_INFO),
                       Field("InitializedTopics", "[]TopicPartitionsInfo",
                             fields=_TOPIC_PARTITIONS_INFO),
                       Field("DeletingTopics", "[]TopicInfo", fields=(
                           Field("TopicId", "uuid"), Field("TopicName", "string"))))),
    (_T.CONSUMER_GROUP_REGULAR_EXPRESSION, "ConsumerGroupRegularExpression",
     ("GroupId", "RegularExpression"),
     coordinator_value("ConsumerGroupRegularExpressionValue",
                       Field("Topics", "[]string"),
                       Field("Version", "int64"),
                       Field("Timestamp", "int64"))),
)

RECORD_TYPES: dict[int, RecordType] = {
    0: RecordType(0, _T.LEGACY_OFFSET_COMMIT.name, LEGACY_OFFSET_COMMIT_KEY,
                  LEGACY_OFFSET_COMMIT_VALUE),
    1: RecordType(1, _T.OFFSET_COMMIT.name, OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: RecordType(2, _T.GROUP_METADATA.name, GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    **{int(t): RecordType(int(t), t.name, coordinator_key(f"{name}Key", *key_fields), value)
       for t, name, key_fields, value in _SPECS},
    **{t: RecordType(t, GroupRecordType(t).name, key, value)
       for t, (key, value) in STREAMS_SCHEMAS.items()},
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
    Kafka 4.4 does not define,
    :class:`~pylogctl.format.coordinator_record.UnknownRecordVersionError` for a value version
    its schema lacks and
    :class:`~pylogctl.format.coordinator_record.CoordinatorRecordError` for malformed bytes.
    """
    return decode_coordinator_record(key, value, RECORD_TYPES, TOPIC, GroupCoordinatorRecord)


def encode_group_record(record_type: int, key: dict[str, Any], value_version: int | None = None,
                        value: dict[str, Any] | None = None) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes of a record; ``value=None`` makes a tombstone."""
    return encode_coordinator_record(RECORD_TYPES, record_type, key, value_version, value)


def decode_consumer_protocol(data: bytes, schema: Schema,
                             strict: bool = False) -> tuple[int, dict[str, Any]]:
    """Decode embedded consumer-protocol bytes (``int16 version | struct``, never flexible).

    ``schema`` is :data:`CONSUMER_PROTOCOL_SUBSCRIPTION` or :data:`CONSUMER_PROTOCOL_ASSIGNMENT`.
    Returns ``(version, fields)``; raises
    :class:`~pylogctl.errors.CorruptRecordError` if the bytes do not parse.
    Trailing bytes are ignored: newer protocol versions only append fields. ``strict`` reads
    a newer version as Kafka's generated reader does, whose nested structs (the topic
    partitions) refuse it.
    """
    version = read_prefix(data, "consumer protocol")
    at = schema.reading_version(version)
    return version, read_struct(data, schema.fields, at, False, pos=2,
                                newer=version if strict and version > at else None)[0]


def encode_consumer_protocol(version: int, fields: dict[str, Any], schema: Schema) -> bytes:
    """The inverse of :func:`decode_consumer_protocol`."""
    return encode_prefixed(version, fields, schema)


__all__ = ["GroupRecordType", "GroupCoordinatorRecord", "RECORD_TYPES", "TOPIC",
           "UnknownRecordVersionError",
           "decode_group_record", "encode_group_record", "decode_consumer_protocol",
           "encode_consumer_protocol", "CONSUMER_PROTOCOL_SUBSCRIPTION",
           "CONSUMER_PROTOCOL_ASSIGNMENT", "UnknownRecordTypeError", "CoordinatorRecordError"]
