"""The ``__consumer_offsets`` records a group coordinator writes for an offset commit, an
offset deletion and a group deletion (Kafka's ``GroupCoordinatorRecordHelpers``).

- A commit is key version 1 and value version 3 (``offset``, ``leaderEpoch``, ``metadata``,
  ``commitTimestamp``), what brokers write unless a commit carries an explicit expiry. An
  Admin client's ``alterConsumerGroupOffsets`` (the tool's ``--execute``) commits no leader
  epoch (-1) and empty metadata.
- A deletion is a tombstone (null value) per key: ``OffsetMetadataManager.deleteAllOffsets``
  tombstones every committed offset (and every offset pending in an open transaction), then
  ``createGroupTombstoneRecords`` the registration: a classic group's ``GroupMetadata``
  record, or a KIP-848 group's records, members first, then its resolved regular
  expressions, in Kafka's order (``ConsumerGroup.createGroupTombstoneRecords``).
"""

from __future__ import annotations

from typing import Iterable

from ..format.group_coordinator_records import GroupRecordType as T
from ..format.group_coordinator_records import encode_group_record
from .group_metadata import Group, GroupType
from .offset_commits import TopicPartition

OFFSET_COMMIT_KEY_VERSION = 1
OFFSET_COMMIT_VALUE_VERSION = 3

KeyValue = tuple[bytes, "bytes | None"]


def offset_commit_record(group_id: str, tp: TopicPartition, offset: int, commit_timestamp: int,
                         *, leader_epoch: int = -1, metadata: str = "") -> KeyValue:
    """The record of one committed offset."""
    return encode_group_record(
        OFFSET_COMMIT_KEY_VERSION,
        {"group": group_id, "topic": tp.topic, "partition": tp.partition},
        OFFSET_COMMIT_VALUE_VERSION,
        {"offset": offset, "leaderEpoch": leader_epoch, "metadata": metadata,
         "commitTimestamp": commit_timestamp})


def offset_tombstone(group_id: str, tp: TopicPartition) -> KeyValue:
    """Deletes the committed offset of ``tp``."""
    return encode_group_record(OFFSET_COMMIT_KEY_VERSION, {"group": group_id, "topic": tp.topic,
                                                           "partition": tp.partition})


def offset_tombstones(group_id: str, partitions: Iterable[TopicPartition]) -> list[KeyValue]:
    return [offset_tombstone(group_id, tp) for tp in partitions]


def group_tombstones(group: Group) -> list[KeyValue]:
    """Everything ``DeleteGroups`` writes for ``group``: its offsets' tombstones (pending
    transactional ones included), then its registration's."""
    partitions = dict.fromkeys(sorted(group.offsets))
    for pending in group.pending_offsets.values():
        partitions.update(dict.fromkeys(sorted(pending)))
    records = offset_tombstones(group.group_id, partitions)
    gid = group.group_id
    if group.group_type == GroupType.CONSUMER:
        members = [{"groupId": gid, "memberId": m.member_id} for m in group.members]
        records += [encode_group_record(T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, m)
                    for m in members]
        records += [encode_group_record(T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, m)
                    for m in members]
        records.append(encode_group_record(T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
                                           {"groupId": gid}))
        records += [encode_group_record(T.CONSUMER_GROUP_MEMBER_METADATA, m) for m in members]
        records += [encode_group_record(T.CONSUMER_GROUP_REGULAR_EXPRESSION,
                                        {"groupId": gid, "regularExpression": regex})
                    for regex in group.regular_expressions]
        records.append(encode_group_record(T.CONSUMER_GROUP_PARTITION_METADATA, {"groupId": gid}))
        records.append(encode_group_record(T.CONSUMER_GROUP_METADATA, {"groupId": gid}))
    elif group.registration_offset is not None:
        records.append(encode_group_record(T.GROUP_METADATA, {"group": gid}))
    return records
