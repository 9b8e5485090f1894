"""The broker's ``__cluster_metadata-0`` log: the records a KRaft combined-mode node (broker
and its own controller) writes for what this broker keeps as controller state, so that a
restart and the offline commands (``pylogctl config``, ``retention``, ``compact``,
``dump-segment``'s metadata decoder) read the same state from the same place as on a real
KRaft node.

The log is one the real Kafka broker loads in KRaft combined mode, so a log dir moves between
the two brokers. Each start is a raft election this node wins alone: a new epoch above both the
log's last epoch and ``quorum-state``'s, written to ``quorum-state`` first, then a
``LeaderChangeMessage`` control batch opening the epoch, as Kafka's raft leader writes them.
An empty log starts with ``FeatureLevelRecord`` ``metadata.version`` (Kafka's bootstrap
records; :data:`METADATA_VERSION` is Kafka 4.0's default level) and ``group.version`` 1, the
KIP-848 consumer groups this broker runs; a log without ``group.version`` gets it at start when
its ``metadata.version`` allows (as ``kafka-features upgrade`` would). No other feature is set,
so Kafka keeps to what this broker implements: no transactions V2, no share or streams groups.

Written then: ``TopicRecord`` and a ``PartitionRecord`` per partition when a topic appears,
``PartitionChangeRecord`` when this node takes a partition over at start-up (its leader epoch
goes up, as when Kafka's controller re-elects a restarted broker), ``ConfigRecord`` for each
topic config set or deleted (a null value deletes), and ``RemoveTopicRecord`` when a topic goes.
Each change is one batch, appended and fsynced before the request is answered, as a raft leader
commits before the controller answers; a torn tail left by a crash is truncated by the load
(the metadata log is always recovered from offset 0, as Kafka's raft layer loads it). Not
written: broker registrations (Kafka's broker registers itself when it starts) and snapshots.

The broker's :class:`~pylogctl.broker.log_manager.LogManager` skips this dir: it is never a
topic served to clients, never in the offset checkpoints, never subject to retention.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Iterable

from ..format.builder import RecordBatchBuilder
from ..format.control import LEADER_CHANGE, ControlRecordType
from ..format.message import KafkaUuid, write_message
from ..format.metadata_records import encode_metadata_record
from ..storage.checkpoint import write_file_atomically
from ..storage.clock import wall_clock_ms
from ..storage.kraft_configs import (CONFIG_RECORD, FEATURE_LEVEL_RECORD,
                                     METADATA_PARTITION_DIR, PARTITION_CHANGE_RECORD,
                                     PARTITION_RECORD, REMOVE_TOPIC_RECORD, TOPIC_RECORD,
                                     TOPIC_RESOURCE, KraftConfigs, PartitionState,
                                     read_kraft_configs)
from ..storage.lock import LogDirLock
from ..storage.metadata_files import (QUORUM_STATE, format_quorum_state, leader_quorum_state,
                                      quorum_state_epoch)
from ..storage.log import Log
from ..storage.log_config import LogConfig
from ..storage.producer_append import AppendOrigin

METADATA_VERSION = 25  # MetadataVersion.IBP_4_0_IV3's feature level
GROUP_VERSION = 1  # GroupVersion.GV_1: KIP-848 consumer groups
GROUP_VERSION_MIN_METADATA_VERSION = 22  # GV_1 depends on IBP_4_0_IV0

Record = tuple[int, int, dict[str, Any]]  # (apiKey, version, data)


def topic_record(name: str, topic_id: uuid.UUID) -> Record:
    return TOPIC_RECORD, 0, {"name": name, "topicId": KafkaUuid(topic_id.bytes)}


def partition_record(topic_id: uuid.UUID, index: int, node_id: int, leader_epoch: int,
                     directory_id: uuid.UUID | None) -> Record:
    """Replicas = ISR = [node]; v1 names the log dir (``directory.id``) as Kafka 3.7+ does."""
    data: dict[str, Any] = {"partitionId": index, "topicId": KafkaUuid(topic_id.bytes),
                            "replicas": [node_id], "isr": [node_id], "leader": node_id,
                            "leaderEpoch": leader_epoch, "partitionEpoch": 0}
    if directory_id is None:
        return PARTITION_RECORD, 0, data
    return PARTITION_RECORD, 1, {**data, "directories": [KafkaUuid(directory_id.bytes)]}


def partition_change_records(topic_id: uuid.UUID, index: int, node_id: int,
                             old: PartitionState, leader_epoch: int) -> list[Record]:
    """This node leads the partition with ``leader_epoch`` (above ``old.leader_epoch``): each
    record names a leader, so each bumps the epoch by one on replay. The first also makes the
    node the whole ISR and clears KIP-966's eligible leaders (version 2) if Kafka left any."""
    base: dict[str, Any] = {"partitionId": index, "topicId": KafkaUuid(topic_id.bytes),
                            "leader": node_id}
    first = dict(base)
    if old.isr != (node_id,):
        first["isr"] = [node_id]
    version = 0
    if old.elr or old.last_known_elr:
        version, first["eligibleLeaderReplicas"], first["lastKnownElr"] = 2, [], []
    bumps = leader_epoch - old.leader_epoch
    return [(PARTITION_CHANGE_RECORD, version, first)] + [
        (PARTITION_CHANGE_RECORD, 0, base) for _ in range(bumps - 1)]


def config_record(topic: str, name: str, value: str | None) -> Record:
    return CONFIG_RECORD, 0, {"resourceType": TOPIC_RESOURCE, "resourceName": topic,
                              "name": name, "value": value}


def remove_topic_record(topic_id: uuid.UUID) -> Record:
    return REMOVE_TOPIC_RECORD, 0, {"topicId": KafkaUuid(topic_id.bytes)}


class MetadataLog:
    """``__cluster_metadata-0`` of a log dir whose ``.lock`` the caller holds."""

    def __init__(self, log_dir: str, lock: LogDirLock) -> None:
        self.path = os.path.join(log_dir, METADATA_PARTITION_DIR)
        self.lock = lock
        self.log: Log | None = None
        self.epoch = 0

    def open(self, node_id: int) -> KraftConfigs:
        """Load (recover) the log, lead a new epoch in it, replay it; returns what the replay
        found."""
        os.makedirs(self.path, exist_ok=True)
        self.log = Log.load(self.path, LogConfig(), lock=self.lock)
        latest = self.log.leader_epoch_cache.latest_epoch()
        self.epoch = max(latest or 0, quorum_state_epoch(self.path)) + 1  # epoch 1 first
        state = leader_quorum_state(self.path, node_id, self.epoch)
        write_file_atomically(os.path.join(self.path, QUORUM_STATE), format_quorum_state(state))
        self._append_leader_change(node_id)
        replay = read_kraft_configs(self.path)
        bootstrap = []
        if "metadata.version" not in replay.features:
            bootstrap.append(("metadata.version", METADATA_VERSION))
            replay.features["metadata.version"] = METADATA_VERSION
        if "group.version" not in replay.features and \
                replay.features["metadata.version"] >= GROUP_VERSION_MIN_METADATA_VERSION:
            bootstrap.append(("group.version", GROUP_VERSION))
            replay.features["group.version"] = GROUP_VERSION
        if bootstrap:
            self.append([(FEATURE_LEVEL_RECORD, 0, {"name": name, "featureLevel": level})
                         for name, level in bootstrap])
        return replay

    def _append_leader_change(self, node_id: int) -> None:
        """The control batch a raft leader opens its epoch with (``LeaderState``)."""
        assert self.log is not None
        voters = [{"voterId": node_id}]
        value = write_message(LEADER_CHANGE, {"version": 0, "leaderId": node_id,
                                              "voters": voters, "grantingVoters": voters}, 0)
        builder = RecordBatchBuilder(base_offset=0, partition_leader_epoch=self.epoch,
                                     is_control=True)
        builder.append_control(ControlRecordType.LEADER_CHANGE, value,
                               wall_clock_ms())
        self._append(builder.build())

    def append(self, records: Iterable[Record]) -> None:
        """Append ``records`` as one batch and fsync it."""
        assert self.log is not None, "open() first"
        now = wall_clock_ms()
        builder = RecordBatchBuilder(base_offset=0, partition_leader_epoch=self.epoch)
        for api_key, version, data in records:
            builder.append(now, None, encode_metadata_record(api_key, version, data))
        if builder.num_records == 0:
            return
        self._append(builder.build())

    def _append(self, batch: bytes) -> None:
        assert self.log is not None
        self.log.append_as_leader(batch, self.epoch, AppendOrigin.RAFT_LEADER)
        self.log.update_high_watermark(self.log.log_end_offset)
        self.log.flush()

    def close(self) -> None:
        if self.log is not None:
            self.log.flush()
            self.log.close()
            self.log = None
