"""KIP-932 share groups: records 10-15 of ``__consumer_offsets`` folded into a :class:`Group`.

A share group is persisted as a consumer group of the new protocol is, one record per thing
(the group epoch, 11; each member's metadata, 10; the target assignment epoch, 12, and each
member's target, 13; each member's current assignment, 14), plus the partitions whose share
state the share coordinator holds (ShareGroupStatePartitionMetadata, 15: topics initializing,
initialized and being deleted). The last value of each key is the state. Kafka's ``ShareGroup``
is ``Empty`` without members and ``Stable`` with them (it has no assignment phases to show).
Where the records (acknowledged offsets) live is ``__share_group_state``
(:mod:`.share_group_state`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .group_metadata import Group, GroupState, GroupType, Member, topic_partitions

SHARE_MEMBER_METADATA = 10
SHARE_GROUP_METADATA = 11
SHARE_TARGET_ASSIGNMENT_METADATA = 12
SHARE_TARGET_ASSIGNMENT_MEMBER = 13
SHARE_CURRENT_MEMBER_ASSIGNMENT = 14
SHARE_STATE_PARTITION_METADATA = 15
SHARE_GROUP_RECORD_TYPES = frozenset(range(10, 16))
_MEMBER_RECORDS = (SHARE_MEMBER_METADATA, SHARE_TARGET_ASSIGNMENT_MEMBER,
                   SHARE_CURRENT_MEMBER_ASSIGNMENT)


@dataclass
class ShareGroupRecords:
    """The live share-group records of one group, collected by the loader in any order."""

    group_id: str
    epoch: int = 0
    assignment_epoch: int = -1
    state_topics: list[dict[str, Any]] = field(default_factory=list)  # record 15's topics
    members: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    last_offset: int = -1

    def add(self, record_type: int, key: dict[str, Any], value: dict[str, Any],
            offset: int) -> None:
        self.last_offset = max(self.last_offset, offset)
        if record_type == SHARE_GROUP_METADATA:
            self.epoch = value["epoch"]
        elif record_type == SHARE_TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = value["assignmentEpoch"]
        elif record_type == SHARE_STATE_PARTITION_METADATA:
            # initializing topics have no state yet; deleting ones are going
            self.state_topics = list(value.get("initializedTopics") or ())
        elif record_type in _MEMBER_RECORDS:
            self.members.setdefault(key["memberId"], {})[record_type] = value

    def build(self, partition: int, topic_name: Callable[[str], str | None]) -> Group:
        names = {str(t["topicId"]): t["topicName"] for t in self.state_topics}

        def name(topic_id: Any) -> str:
            tid = str(topic_id)
            return names.get(tid) or topic_name(tid) or tid

        members = []
        for member_id, records in self.members.items():
            meta = records.get(SHARE_MEMBER_METADATA)
            current = records.get(SHARE_CURRENT_MEMBER_ASSIGNMENT)
            if meta is None and current is None:
                continue  # only a target assignment left: not a member
            meta = meta or {}
            members.append(Member(
                member_id=member_id, group_instance_id=None,
                client_id=meta.get("clientId", ""), client_host=meta.get("clientHost", ""),
                assignment=topic_partitions((name(e["topicId"]), e["partitions"])
                                            for e in current["assignedPartitions"])
                if current else (),
                subscribed_topic_names=tuple(meta.get("subscribedTopicNames") or ()),
                member_epoch=current["memberEpoch"] if current else 0))
        shared = tuple(sorted((str(t["topicId"]), t["topicName"], p)
                              for t in self.state_topics for p in t["partitions"]))
        return Group(self.group_id, partition, GroupType.SHARE, "share",
                     GroupState.STABLE if members else GroupState.EMPTY,
                     generation=self.epoch, target_assignment_epoch=self.assignment_epoch,
                     members=tuple(members), registration_offset=self.last_offset,
                     share_partitions=shared)
