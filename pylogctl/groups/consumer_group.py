"""KIP-848 consumer groups: records 3-8 of ``__consumer_offsets`` folded into a :class:`Group`.

The new group protocol persists a group as separate records, each the full current state of
one thing: the group epoch (ConsumerGroupMetadata, 3), the subscribed topics' metadata (4),
each member's metadata (5), the target assignment epoch (6) and each member's target (7), and
each member's current assignment and epoch (8). A tombstone deletes the thing; so the live
state is the last value of each key, which is what the loader hands over. A member exists while
its metadata (5) or current assignment (8) is live; the group while any of its records is.

The state is derived as Kafka's ``ConsumerGroup.maybeUpdateGroupState`` derives it: ``Empty``
without members, ``Assigning`` while the group epoch is ahead of the target assignment epoch,
``Reconciling`` while a member is not stable at the target epoch, else ``Stable``. The
assignment strategy shown is the server assignor most members ask for, else the broker's default
(``uniform``, the first of ``group.consumer.assignors``). Members are in the coordinator's
``TimelineHashMap`` order, as Kafka's describe lists them. Assignments name topics by id; names
come from the group's own topic metadata (record 4), then from the log dirs'
``partition.metadata`` files, else the id itself is shown.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from ..format.group_coordinator_records import GroupRecordType as T
from .group_metadata import CONSUMER_PROTOCOL_TYPE, Group, GroupState, GroupType, Member
from .group_metadata import topic_partitions
from .java_hash_map import timeline_order
from .offset_commits import TopicPartition
from .partitioner import java_string_hash

CONSUMER_GROUP_TYPES = frozenset({T.CONSUMER_GROUP_METADATA, T.CONSUMER_GROUP_PARTITION_METADATA,
                                  T.CONSUMER_GROUP_MEMBER_METADATA,
                                  T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
                                  T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                                  T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                                  T.CONSUMER_GROUP_REGULAR_EXPRESSION})
DEFAULT_ASSIGNOR = "uniform"
MEMBER_STATE_STABLE = 0  # MemberState.STABLE


@dataclass
class ConsumerGroupRecords:
    """The live KIP-848 records of one group, collected by the loader in any order."""

    group_id: str
    epoch: int = 0
    assignment_epoch: int = -1
    topic_names: dict[str, str] = field(default_factory=dict)  # topic id -> name (record 4)
    members: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    joined: dict[str, int] = field(default_factory=dict)  # member -> its first record's offset
    regular_expressions: list[str] = field(default_factory=list)  # resolved ones (record 16)
    last_offset: int = -1
    live: list[tuple[int, dict[str, Any], dict[str, Any]]] = field(default_factory=list)

    def add(self, record_type: int, key: dict[str, Any], value: dict[str, Any],
            offset: int) -> None:
        """Take one live record (``record_type`` one of :data:`CONSUMER_GROUP_TYPES`)."""
        self.last_offset = max(self.last_offset, offset)
        self.live.append((record_type, key, value))  # for a broker to replay
        if record_type == T.CONSUMER_GROUP_METADATA:
            self.epoch = value["epoch"]
        elif record_type == T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = value["assignmentEpoch"]
        elif record_type == T.CONSUMER_GROUP_PARTITION_METADATA:
            self.topic_names.update((str(t["topicId"]), t["topicName"]) for t in value["topics"])
        elif record_type == T.CONSUMER_GROUP_REGULAR_EXPRESSION:
            self.regular_expressions.append(key["regularExpression"])
        elif record_type in (T.CONSUMER_GROUP_MEMBER_METADATA,
                             T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                             T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT):
            member = key["memberId"]
            self.members.setdefault(member, {})[record_type] = value
            if record_type != T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:  # another map's
                self.joined[member] = min(offset, self.joined.get(member, offset))

    def build(self, partition: int, topic_name: Callable[[str], str | None]) -> Group:
        """The group, with topic ids named by its own metadata, then ``topic_name``."""
        def name(topic_id: Any) -> str:
            tid = str(topic_id)
            return self.topic_names.get(tid) or topic_name(tid) or tid

        def assigned(entries: list[dict[str, Any]]) -> tuple[TopicPartition, ...]:
            return topic_partitions((name(e["topicId"]), e["partitions"]) for e in entries)

        members = []
        reconciled = True
        for member_id, records in self.members.items():
            meta = records.get(T.CONSUMER_GROUP_MEMBER_METADATA)
            current = records.get(T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT)
            target = records.get(T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER)
            if meta is None and current is None:
                continue  # only a target assignment left: not a member
            meta = meta or {}
            epoch = current["memberEpoch"] if current else 0
            member_state = current["state"] if current else MEMBER_STATE_STABLE
            reconciled = reconciled and (member_state == MEMBER_STATE_STABLE
                                         and epoch == self.assignment_epoch)
            timeout = meta.get("rebalanceTimeoutMs", -1)
            classic = meta.get("classicMemberMetadata")
            members.append(Member(
                member_id=member_id, group_instance_id=meta.get("instanceId"),
                client_id=meta.get("clientId", ""), client_host=meta.get("clientHost", ""),
                assignment=assigned(current["assignedPartitions"]) if current else (),
                subscribed_topic_names=tuple(meta.get("subscribedTopicNames", ())),
                rebalance_timeout_ms=None if timeout == -1 else timeout,
                session_timeout_ms=classic["sessionTimeoutMs"] if classic else None,
                member_epoch=epoch,
                target_assignment=assigned(target["topicPartitions"]) if target else (),
                upgraded=classic is None))
        if not members:
            state = GroupState.EMPTY
        elif self.epoch > self.assignment_epoch:
            state = GroupState.ASSIGNING
        elif not reconciled:
            state = GroupState.RECONCILING
        else:
            state = GroupState.STABLE
        assignors = Counter(m.get(T.CONSUMER_GROUP_MEMBER_METADATA, {}).get("serverAssignor")
                            for m in self.members.values())
        assignors.pop(None, None)
        preferred = max(sorted(assignors), key=assignors.__getitem__, default=DEFAULT_ASSIGNOR)
        # the coordinator's insertion order: the first record of each member
        members.sort(key=lambda m: self.joined.get(m.member_id, -1))
        members = timeline_order(members, lambda m: java_string_hash(m.member_id))
        return Group(self.group_id, partition, GroupType.CONSUMER, CONSUMER_PROTOCOL_TYPE, state,
                     generation=self.epoch, protocol=preferred,
                     target_assignment_epoch=self.assignment_epoch, members=tuple(members),
                     registration_offset=self.last_offset,
                     regular_expressions=tuple(self.regular_expressions))
