"""The broker's ``__cluster_metadata-0`` log: the records a KRaft combined-mode node (broker
and its own controller) writes for what this broker keeps as controller state, so that a
restart and the offline commands (``pylogctl config``, ``retention``, ``compact``,
``dump-segment``'s metadata decoder) read the same state from the same place as on a real
KRaft node.

Written: ``TopicRecord`` and a ``PartitionRecord`` per partition when a topic appears,
``ConfigRecord`` for each topic config set or deleted (a null value deletes), and
``RemoveTopicRecord`` when a topic goes. Each change is one batch, appended and fsynced before
the request is answered, as a raft leader commits before the controller answers; a torn tail
left by a crash is truncated by the load (the metadata log is always recovered from offset 0,
as Kafka's raft layer loads it). Not written: broker registrations, features, snapshots, raft
control records (no quorum voters to elect); the offline readers need none of them.

The broker's :class:`~pylogctl.broker.log_manager.LogManager` skips this dir: it is never a
topic served to clients, never in the offset checkpoints, never subject to retention.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any, Iterable

from ..format.builder import RecordBatchBuilder
from ..format.message import KafkaUuid
from ..format.metadata_records import API_KEYS, encode_metadata_record
from ..storage.kraft_configs import (METADATA_PARTITION_DIR, KraftConfigs,
                                     read_kraft_configs)
from ..storage.lock import LogDirLock
from ..storage.log import Log
from ..storage.log_config import LogConfig
from ..storage.producer_append import AppendOrigin

TOPIC_RECORD = API_KEYS["TOPIC_RECORD"]
PARTITION_RECORD = API_KEYS["PARTITION_RECORD"]
CONFIG_RECORD = API_KEYS["CONFIG_RECORD"]
REMOVE_TOPIC_RECORD = API_KEYS["REMOVE_TOPIC_RECORD"]
TOPIC_RESOURCE = 2

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

    def open(self) -> KraftConfigs:
        """Load (recover) the log, then replay it; returns what the replay found."""
        os.makedirs(self.path, exist_ok=True)
        self.log = Log.load(self.path, LogConfig(), lock=self.lock)
        latest = self.log.leader_epoch_cache.latest_epoch()
        self.epoch = 1 if latest is None else latest + 1  # a new raft epoch per start
        return read_kraft_configs(self.path)

    def append(self, records: Iterable[Record]) -> None:
        """Append ``records`` as one batch and fsync it."""
        assert self.log is not None, "open() first"
        now = time.time_ns() // 1_000_000
        builder = RecordBatchBuilder(base_offset=0, partition_leader_epoch=self.epoch)
        for api_key, version, data in records:
            builder.append(now, None, encode_metadata_record(api_key, version, data))
        if builder.num_records == 0:
            return
        self.log.append_as_leader(builder.build(), self.epoch, AppendOrigin.RAFT_LEADER)
        self.log.update_high_watermark(self.log.log_end_offset)
        self.log.flush()

    def close(self) -> None:
        if self.log is not None:
            self.log.flush()
            self.log.close()
            self.log = None
