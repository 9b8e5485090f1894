"""The live state of one KIP-848 consumer group in the broker (Kafka's ``ConsumerGroup``):
group epoch and metadata hash, members, each member's target assignment and the target's
epoch, and who owns each partition at which epoch.

The state only ever changes by :meth:`ConsumerGroup.replay` of a ``__consumer_offsets``
record (types 3-8 and 16), the same function for records read back at start-up and for those
the coordinator has just written, as Kafka's coordinator replays its own writes. (The offline
view of the same records is :mod:`pylogctl.groups.consumer_group`.)
"""

from __future__ import annotations

import struct
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..format.group_coordinator_records import GroupRecordType as T
from ..groups.group_metadata import GroupState
from .consumer_group_member import ConsumerGroupMember, uuid_field
from .partition_assignor import Assignment

EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD = (GroupState.EMPTY, GroupState.ASSIGNING,
                                               GroupState.RECONCILING, GroupState.STABLE,
                                               GroupState.DEAD)
INITIAL_EPOCH = 1  # ModernGroup's first group epoch and TargetAssignmentMetadata.INITIAL's


@dataclass
class ConsumerGroup:
    group_id: str
    group_epoch: int = INITIAL_EPOCH
    metadata_hash: int = 0
    assignment_epoch: int = INITIAL_EPOCH
    assignment_timestamp: int = 0
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    # topic id -> partition -> epoch of the member owning it (assigned or pending revocation)
    partition_epochs: dict[uuid.UUID, dict[int, int]] = field(default_factory=dict)
    regular_expressions: dict[str, dict[str, Any]] = field(default_factory=dict)
    has_subscription_metadata_record: bool = False
    deleted: bool = False

    # -- derived ------------------------------------------------------------------------------
    @property
    def state(self) -> str:
        if self.deleted:
            return DEAD
        if not self.members:
            return EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return RECONCILING
        return STABLE

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        if instance_id is None:
            return None
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def current_partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition_epochs.get(topic_id, {}).get(partition, -1)

    def preferred_server_assignor(self, default: str) -> str:
        """The server assignor most members name (Kafka's ``preferredServerAssignor``)."""
        counts = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        return max(counts, key=counts.__getitem__) if counts else default

    def subscribed_topic_names(self, members: list[ConsumerGroupMember]) -> Counter[str]:
        """How many of ``members`` subscribe to each topic by name."""
        return Counter(t for m in members for t in m.subscribed_topic_names)

    # -- replay ---------------------------------------------------------------------------------
    def replay(self, record_type: int, key: dict[str, Any], value: dict[str, Any] | None
               ) -> None:
        """Apply one record (``value`` None: a tombstone)."""
        if record_type == T.CONSUMER_GROUP_METADATA:
            if value is None:
                self.deleted = True
            else:
                self.group_epoch = value["epoch"]
                self.metadata_hash = value.get("metadataHash", 0)
        elif record_type == T.CONSUMER_GROUP_PARTITION_METADATA:
            self.has_subscription_metadata_record = value is not None
        elif record_type == T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            if value is None:
                self.assignment_epoch = -1
            else:
                self.assignment_epoch = value["assignmentEpoch"]
                self.assignment_timestamp = value.get("assignmentTimestamp", 0)
        elif record_type == T.CONSUMER_GROUP_REGULAR_EXPRESSION:
            if value is None:
                self.regular_expressions.pop(key["regularExpression"], None)
            else:
                self.regular_expressions[key["regularExpression"]] = value
        elif record_type == T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                self.target.pop(key["memberId"], None)
            else:
                self.target[key["memberId"]] = {
                    uuid_field(tp["topicId"]): frozenset(tp["partitions"])
                    for tp in value["topicPartitions"]}
        elif record_type == T.CONSUMER_GROUP_MEMBER_METADATA:
            member_id = key["memberId"]
            if value is None:
                old = self.members.pop(member_id, None)
                if old is not None:
                    self._release(old)
            else:
                member = self.members.get(member_id) or ConsumerGroupMember(member_id)
                self.members[member_id] = member.with_metadata(value)
        elif record_type == T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT:
            member_id = key["memberId"]
            old = self.members.get(member_id)
            if old is not None:
                self._release(old)
            if value is None:
                if old is not None:
                    self.members[member_id] = ConsumerGroupMember(
                        member_id, **{f: getattr(old, f) for f in _METADATA_FIELDS})
            else:
                member = (old or ConsumerGroupMember(member_id)).with_assignment(value)
                self.members[member_id] = member
                self._own(member)

    def _own(self, member: ConsumerGroupMember) -> None:
        for assignment in (member.assigned, member.pending_revocation):
            for topic_id, partitions in assignment.items():
                epochs = self.partition_epochs.setdefault(topic_id, {})
                for partition in partitions:
                    epochs[partition] = member.member_epoch

    def _release(self, member: ConsumerGroupMember) -> None:
        for assignment in (member.assigned, member.pending_revocation):
            for topic_id, partitions in assignment.items():
                epochs = self.partition_epochs.get(topic_id, {})
                for partition in partitions:
                    if epochs.get(partition) == member.member_epoch:
                        del epochs[partition]


_METADATA_FIELDS = ("instance_id", "rack_id", "rebalance_timeout_ms", "client_id",
                    "client_host", "subscribed_topic_names", "subscribed_topic_regex",
                    "server_assignor", "classic_member_metadata")




def metadata_hash(names: set[str], topics: dict[str, tuple[uuid.UUID, int]]) -> int:
    """Kafka's ``ModernGroup.computeMetadataHash``: xxh3-64 over the sorted topics' hashes, each
    (``Utils.computeTopicHash``) the xxh3-64 of a magic byte, the topic id, the name and the
    partition indexes as hash4j streams them (little-endian, a string as its UTF-16 units and
    then its length). Racks are not known here and add nothing."""
    import xxhash
    hashes = []
    for name in sorted(n for n in names if n in topics):
        topic_id, count = topics[name]
        most, least = struct.unpack(">qq", topic_id.bytes)
        chars = name.encode("utf-16-le", "surrogatepass")  # Java's chars
        data = b"\0" + struct.pack("<qq", most, least) + chars + \
            struct.pack("<ii", len(chars) // 2, count) + struct.pack(f"<{count}i", *range(count))
        hashes.append(xxhash.xxh3_64_intdigest(data))
    if not hashes:
        return 0
    value = xxhash.xxh3_64_intdigest(struct.pack(f"<{len(hashes)}Q", *hashes))
    return value - (1 << 64) if value >= 1 << 63 else value
