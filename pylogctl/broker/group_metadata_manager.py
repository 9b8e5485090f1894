"""The groups of this node and ``__consumer_offsets`` (Kafka's ``GroupMetadataManager``): the
cache of every :class:`~.group_metadata.Group`, loading it from the log at start-up, and
writing group and offset records; the coordinator (:mod:`.group_coordinator`) decides what to
write and when, this module how and where, so ``pylogctl consumer-groups --describe`` reads
exactly what it wrote.

Records, written through the leader append path with the coordinator's origin, one batch per
request: an offset commit is ``OffsetCommitKey`` v1 -> ``OffsetCommitValue`` v3 (offset,
leader epoch, metadata, commit timestamp), a group is ``GroupMetadataKey`` v2 ->
``GroupMetadataValue`` v3, written when the leader's SyncGroup assignment makes the group
Stable and when a rebalance leaves it Empty. A group lives in partition
``abs(hash(group)) % N`` of the offsets topic, created with ``offsets.topic.num.partitions``
partitions on first use.

At start-up the groups are loaded from the log with their offsets, generation and protocol,
but without members (the group is Empty: members rejoin, where Kafka would wait out their
sessions) -- a deliberate difference from Kafka, for now.

Transactional offset commits (TxnOffsetCommit) are the same records in a transactional batch
carrying the producer id and epoch (Kafka's ``storeOffsets`` with a producer id); they stay
pending, per producer, until the transaction coordinator writes the COMMIT marker to the
partition (then they become the committed offsets) or the ABORT marker (then they are
dropped): :meth:`GroupMetadataManager.complete_transaction`. While one is pending, an
OffsetFetch with ``require_stable`` gets UNSTABLE_OFFSET_COMMIT for its partition. Pending
commits are restored at start-up from the log as the offline loader replays them.
"""

from __future__ import annotations

import logging
from typing import Any

from ..format.builder import RecordBatchBuilder
from ..format.group_coordinator_records import GroupRecordType, encode_group_record
from ..groups.group_loader import load_offsets_partition
from ..groups.offset_commits import TopicPartition
from ..groups.record_helpers import offset_commit_record, offset_tombstones
from ..groups.partitioner import partition_for
from ..storage.clock import wall_clock_ms
from ..storage.log_config import OFFSETS_TOPIC_CONFIG
from ..storage.producer_append import AppendOrigin
from .error_codes import Errors, error_for
from .group_metadata import CommittedOffset, Group, GroupConfig
from .replica_manager import OFFSETS_TOPIC, Partition, ReplicaManager

logger = logging.getLogger(__name__)

GROUP_METADATA_VALUE_VERSION = 3


class GroupMetadataManager:
    """Every classic group whose offsets partition this node leads (all of them), and their
    records in ``__consumer_offsets``."""

    def __init__(self, replicas: ReplicaManager, config: GroupConfig = GroupConfig()) -> None:
        self.replicas = replicas
        self.config = config
        self.groups: dict[str, Group] = {}
        # KIP-848 groups' live records found at start-up, for their coordinator to replay
        self.consumer_group_records: dict[str, list[Any]] = {}

    # -- the offsets topic ----------------------------------------------------------------------
    @property
    def partition_count(self) -> int:
        topic = self.replicas.topics.get(OFFSETS_TOPIC)
        return len(topic.partitions) if topic else self.config.offsets_topic_partitions

    def ensure_offsets_topic(self) -> None:
        if OFFSETS_TOPIC not in self.replicas.topics:
            self.replicas.create_topic(OFFSETS_TOPIC, self.config.offsets_topic_partitions,
                                       OFFSETS_TOPIC_CONFIG)

    def startup(self) -> None:
        """Load the groups and offsets stored in ``__consumer_offsets`` (see the module
        docstring: members are not restored)."""
        topic = self.replicas.topics.get(OFFSETS_TOPIC)
        if topic is None:
            return
        for partition in topic.partitions.values():
            loaded = load_offsets_partition(partition.log.dir, partition.index,
                                            log_start_offset=partition.log.log_start_offset)
            for note in loaded.notes:
                logger.warning("%s", note)
            self.consumer_group_records.update(loaded.consumer_group_records)
            for gid, stored in loaded.groups.items():
                group = Group(gid, protocol_type=stored.protocol_type or None,
                              generation=stored.generation or 0,
                              group_type=stored.group_type.lower())
                group.offsets = {(tp.topic, tp.partition): CommittedOffset(
                    o.offset, -1 if o.leader_epoch is None else o.leader_epoch, o.metadata,
                    o.commit_timestamp) for tp, o in stored.offsets.items()}
                group.pending_txn_offsets = {pid: {(tp.topic, tp.partition): CommittedOffset(
                    o.offset, -1 if o.leader_epoch is None else o.leader_epoch, o.metadata,
                    o.commit_timestamp) for tp, o in offsets.items()}
                    for pid, offsets in stored.pending_offsets.items() if offsets}
                self.groups[gid] = group

    def offsets_partition(self, group_id: str) -> Partition:
        self.ensure_offsets_topic()
        index = partition_for(group_id, self.partition_count)
        partition = self.replicas.partition(OFFSETS_TOPIC, index)
        assert partition is not None
        return partition

    def _store(self, group_id: str, records: list[tuple[bytes, bytes | None]],
               producer_id: int = -1, producer_epoch: int = -1) -> Errors:
        """Append one batch of coordinator records (a transactional one for a producer id);
        Kafka's commit error mapping applies."""
        stamp = wall_clock_ms()
        if producer_id >= 0:
            builder = RecordBatchBuilder(base_offset=0, producer_id=producer_id,
                                         producer_epoch=producer_epoch, base_sequence=0,
                                         is_transactional=True)
        else:
            builder = RecordBatchBuilder(base_offset=0)
        for key, value in records:
            builder.append(stamp, key, value)
        try:
            self.replicas.append(self.offsets_partition(group_id), builder.build(),
                                 AppendOrigin.COORDINATOR)
        except Exception as exc:  # noqa: BLE001 - every storage failure becomes an error code
            code = error_for(exc)
            if code == Errors.UNKNOWN_SERVER_ERROR:
                logger.exception("Storing records of group %s failed", group_id)
            else:  # a client's error (e.g. a stale producer epoch): no traceback
                logger.info("Storing records of group %s failed: %s", group_id, exc)
            if code in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE):
                return Errors.INVALID_COMMIT_OFFSET_SIZE
            if code == Errors.KAFKA_STORAGE_ERROR:
                return Errors.NOT_COORDINATOR
            return code
        return Errors.NONE

    def store_records(self, group_id: str, records: list[tuple[bytes, bytes | None]]
                      ) -> Errors:
        """Append encoded records of ``group_id`` in one batch (KIP-848 groups' records)."""
        return self._store(group_id, records)

    def store_group(self, group: Group) -> Errors:
        """Write the group's ``GroupMetadataValue`` (members, assignments, generation)."""
        members = [{"memberId": m.member_id, "groupInstanceId": m.group_instance_id,
                    "clientId": m.client_id, "clientHost": m.client_host,
                    "rebalanceTimeout": m.rebalance_timeout_ms,
                    "sessionTimeout": m.session_timeout_ms,
                    "subscription": (m.metadata(group.protocol_name)
                                     if group.protocol_name else b""),
                    "assignment": m.assignment} for m in group.members.values()]
        value = {"protocolType": group.protocol_type or "", "generation": group.generation,
                 "protocol": group.protocol_name, "leader": group.leader_id,
                 "currentStateTimestamp": group.state_timestamp, "members": members}
        record = encode_group_record(GroupRecordType.GROUP_METADATA, {"group": group.group_id},
                                     GROUP_METADATA_VALUE_VERSION, value)
        return self._store(group.group_id, [record])

    # -- offsets --------------------------------------------------------------------------------
    def store_offsets(self, group: Group,
                      offsets: dict[tuple[str, int], tuple[int, int, str | None]],
                      producer_id: int = -1, producer_epoch: int = -1
                      ) -> dict[tuple[str, int], Errors]:
        """Write ``(topic, partition) -> (offset, leader epoch, metadata)`` in one batch and,
        once written, make them the group's committed offsets (or, for a producer id, its
        pending ones); metadata over ``offset.metadata.max.bytes`` is refused per partition."""
        group_id = group.group_id
        results: dict[tuple[str, int], Errors] = {}
        records = []
        stamp = wall_clock_ms()
        accepted = {}
        for (topic, partition), (offset, epoch, metadata) in offsets.items():
            if metadata is not None and len(metadata.encode()) > \
                    self.config.offset_metadata_max_bytes:
                results[(topic, partition)] = Errors.OFFSET_METADATA_TOO_LARGE
                continue
            records.append(offset_commit_record(group_id, TopicPartition(topic, partition),
                                                offset, stamp, leader_epoch=epoch,
                                                metadata=metadata or ""))
            accepted[(topic, partition)] = CommittedOffset(offset, epoch, metadata or "", stamp)
        if records:
            error = self._store(group_id, records, producer_id, producer_epoch)
            if error == Errors.NONE and producer_id >= 0:
                group.pending_txn_offsets.setdefault(producer_id, {}).update(accepted)
            elif error == Errors.NONE:
                group.offsets.update(accepted)
            for tp in accepted:
                results[tp] = error
        return results

    def delete_offsets(self, group: Group, partitions: list[tuple[str, int]]) -> Errors:
        """Tombstones, in one batch, for the group's committed offsets of ``partitions`` (those
        it has); once written, they are gone from the group (Kafka's ``deleteOffsets``)."""
        gone = [tp for tp in partitions if tp in group.offsets]
        if not gone:
            return Errors.NONE
        error = self._store(group.group_id, offset_tombstones(
            group.group_id, [TopicPartition(*tp) for tp in gone]))
        if error == Errors.NONE:
            for tp in gone:
                del group.offsets[tp]
        return error

    def delete_group(self, group: Group,
                     group_records: list[tuple[bytes, bytes | None]] | None = None) -> Errors:
        """Tombstones for every committed offset and then the group's own (its metadata, or
        ``group_records`` for another type of group), in one batch; once written the group is
        gone (Kafka's ``deleteGroups`` of an empty group)."""
        records = offset_tombstones(group.group_id,
                                    [TopicPartition(*tp) for tp in sorted(group.offsets)])
        records.extend(group_records if group_records is not None else [encode_group_record(
            GroupRecordType.GROUP_METADATA, {"group": group.group_id})])
        error = self._store(group.group_id, records)
        if error == Errors.NONE:
            del self.groups[group.group_id]
        return error

    def complete_transaction(self, producer_id: int, offsets_partition: int,
                             commit: bool) -> None:
        """A COMMIT/ABORT marker of ``producer_id`` was written to ``offsets_partition``:
        its pending commits in the groups of that partition become committed or go."""
        for group in self.groups.values():
            pending = group.pending_txn_offsets.get(producer_id)
            if pending is None or \
                    partition_for(group.group_id, self.partition_count) != offsets_partition:
                continue
            del group.pending_txn_offsets[producer_id]
            if commit:
                group.offsets.update(pending)

    def has_pending_offsets(self, group_id: str, tp: tuple[str, int]) -> bool:
        group = self.groups.get(group_id)
        return group is not None and any(tp in p for p in group.pending_txn_offsets.values())

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None
                      ) -> dict[tuple[str, int], CommittedOffset | None]:
        group = self.groups.get(group_id)
        stored = group.offsets if group is not None else {}
        if partitions is None:
            return dict(stored)
        return {tp: stored.get(tp) for tp in partitions}
