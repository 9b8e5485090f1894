"""The streams-group records of ``__consumer_offsets`` (KIP-1071): record types 17 and 19-23.

A Kafka Streams application that joins a group with the streams rebalance protocol
(``group.protocol=streams``) has the group coordinator keep its group epoch, topology,
members and their task assignments in ``__consumer_offsets``, as consumer groups keep theirs
(:mod:`pylogctl.format.group_coordinator_records`). The schemas restate Kafka 4.4's
``group-coordinator/src/main/resources/common/message/StreamsGroup*.json``. Type 18 (the
partition metadata of the early KIP-1071 drafts) was dropped before release and, like any
other number Kafka 4.4 does not define, is an unknown record type.

Every key is the group id (and the member id for per-member records); every value is a
flexible version-0 struct. Tasks are named by subtopology id and partition numbers.
"""

from __future__ import annotations

from .coordinator_record import coordinator_key, coordinator_value, tagged
from .message import Field, NullDefaultField, Schema

_MEMBER = ("GroupId", "MemberId")

# TaskIds of a member's current assignment carry the epoch each task was assigned in
# (tagged, empty when the writer did not track them); the target assignment's do not.
_TASK_IDS = (Field("SubtopologyId", "string"), Field("Partitions", "[]int32"))
_CURRENT_TASK_IDS = (*_TASK_IDS, tagged("AssignmentEpochs", "[]int32", 0, nullable="0+"))

_TOPIC_INFO = (
    Field("Name", "string"),
    Field("Partitions", "int32"),
    Field("ReplicationFactor", "int16"),
    Field("TopicConfigs", "[]TopicConfig", fields=(Field("key", "string"),
                                                   Field("value", "string"))),
)


def _tasks(name: str, fields: tuple[Field, ...] = _TASK_IDS) -> Field:
    return Field(name, "[]TaskIds", fields=fields)


STREAMS_GROUP_METADATA_VALUE = coordinator_value(
    "StreamsGroupMetadataValue",
    Field("Epoch", "int32"),
    Field("MetadataHash", "int64"),
    tagged("ValidatedTopologyEpoch", "int32", 0, default=-1),
    tagged("LastAssignmentConfigs", "[]LastAssignmentConfig", 1, nullable="0+", fields=(
        Field("Key", "string"), Field("Value", "string"))),
    tagged("StoredDescriptionTopologyEpoch", "int32", 2, default=-1),
    tagged("FailedDescriptionTopologyEpoch", "int32", 3, default=-1),
)

STREAMS_GROUP_MEMBER_METADATA_VALUE = coordinator_value(
    "StreamsGroupMemberMetadataValue",
    Field("InstanceId", "string", nullable="0+"),
    Field("RackId", "string", nullable="0+"),
    Field("ClientId", "string"),
    Field("ClientHost", "string"),
    Field("RebalanceTimeoutMs", "int32", default=-1),
    Field("TopologyEpoch", "int32"),
    Field("ProcessId", "string"),
    NullDefaultField("UserEndpoint", "Endpoint", nullable="0+", fields=(
        Field("Host", "string"), Field("Port", "uint16"))),
    Field("ClientTags", "[]KeyValue", fields=(Field("Key", "string"), Field("Value", "string"))),
)

STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = coordinator_value(
    "StreamsGroupTargetAssignmentMetadataValue",
    Field("AssignmentEpoch", "int32"),
    tagged("AssignmentTimestamp", "int64", 0, default=0),
)

STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = coordinator_value(
    "StreamsGroupTargetAssignmentMemberValue",
    _tasks("ActiveTasks"), _tasks("StandbyTasks"), _tasks("WarmupTasks"),
)

STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = coordinator_value(
    "StreamsGroupCurrentMemberAssignmentValue",
    Field("MemberEpoch", "int32"),
    Field("PreviousMemberEpoch", "int32"),
    Field("State", "int8"),
    *(_tasks(name, _CURRENT_TASK_IDS) for name in (
        "ActiveTasks", "StandbyTasks", "WarmupTasks", "ActiveTasksPendingRevocation",
        "StandbyTasksPendingRevocation", "WarmupTasksPendingRevocation")),
)

STREAMS_GROUP_TOPOLOGY_VALUE = coordinator_value(
    "StreamsGroupTopologyValue",
    Field("Epoch", "int32"),
    Field("Subtopologies", "[]Subtopology", fields=(
        Field("SubtopologyId", "string"),
        Field("SourceTopics", "[]string"),
        Field("SourceTopicRegex", "[]string"),
        Field("StateChangelogTopics", "[]TopicInfo", fields=_TOPIC_INFO),
        Field("RepartitionSinkTopics", "[]string"),
        Field("RepartitionSourceTopics", "[]TopicInfo", fields=_TOPIC_INFO),
        Field("CopartitionGroups", "[]CopartitionGroup", fields=(
            Field("SourceTopics", "[]int16"),
            Field("SourceTopicRegex", "[]int16"),
            Field("RepartitionSourceTopics", "[]int16"))),
    )),
)

# record type -> (key schema, value schema); the names are GroupRecordType's
STREAMS_SCHEMAS: dict[int, tuple[Schema, Schema]] = {
    17: (coordinator_key("StreamsGroupMetadataKey", "GroupId"), STREAMS_GROUP_METADATA_VALUE),
    19: (coordinator_key("StreamsGroupMemberMetadataKey", *_MEMBER),
         STREAMS_GROUP_MEMBER_METADATA_VALUE),
    20: (coordinator_key("StreamsGroupTargetAssignmentMetadataKey", "GroupId"),
         STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    21: (coordinator_key("StreamsGroupTargetAssignmentMemberKey", *_MEMBER),
         STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    22: (coordinator_key("StreamsGroupCurrentMemberAssignmentKey", *_MEMBER),
         STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    23: (coordinator_key("StreamsGroupTopologyKey", "GroupId"), STREAMS_GROUP_TOPOLOGY_VALUE),
}

__all__ = ["STREAMS_SCHEMAS"]
