"""The topic, broker and group configs of a KRaft cluster, replayed from its
``__cluster_metadata`` log, with the brokers' registered endpoints, the feature levels and each
partition's leader and leader epoch.

A KRaft controller records every dynamic config as a ``ConfigRecord`` (apiKey 4: resource type,
resource name, config name, value; a null value deletes the config) in the metadata log, and
every so often writes its whole state as a snapshot ``{endOffset:020d}-{epoch:010d}.checkpoint``
holding what the records below ``endOffset`` built. A broker starts from the latest snapshot and
replays the log from its end offset, in offset order, so the last write wins; that is done here.
Resource type TOPIC (2) names a topic; BROKER (4) names a broker id, or ``""`` for the
cluster-wide default of every broker; GROUP (32) a group id. A ``RemoveTopicRecord`` (apiKey 9) drops the topic's
configs too (``ConfigurationsDelta.replay(RemoveTopicRecord, topicName)``). A
``RegisterBrokerRecord`` (apiKey 0) holds a broker's advertised endpoints, which Kafka's tools
print as a coordinator's ``host:port``; ``UnregisterBrokerRecord`` (apiKey 1) removes it.
``FeatureLevelRecord`` (apiKey 12) sets a feature (``metadata.version`` first of all; level 0
removes it). A ``PartitionRecord`` (apiKey 3) creates a partition; a ``PartitionChangeRecord``
(apiKey 5) changes what it names, and a new leader in it, even the same one, bumps the leader
epoch by one (``PartitionRegistration.merge``): a broker taking over a log dir reads the epoch
its data must be written above here.

Offline, the metadata log's high watermark is unknown (the raft layer keeps it in memory), so a
tail the quorum had not committed yet is replayed as well; a record that does not decode is
skipped with a note, as kafka-dump-log skips it. ``bootstrap.checkpoint`` holds only features
and SCRAM credentials, never configs, and is not read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import CorruptRecordError
from ..format.metadata_records import API_KEYS, decode_metadata_record, read_frame_header
from .file_records import FileRecords
from .log_dir import list_dir
from .naming import LOG_SUFFIX, offset_from_file, snapshot_id_from_file

METADATA_PARTITION_DIR = "__cluster_metadata-0"
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER
GROUP_RESOURCE = 32  # ConfigResource.Type.GROUP (KIP-848's dynamic group configs)
REGISTER_BROKER_RECORD = API_KEYS["REGISTER_BROKER_RECORD"]
UNREGISTER_BROKER_RECORD = API_KEYS["UNREGISTER_BROKER_RECORD"]
TOPIC_RECORD = API_KEYS["TOPIC_RECORD"]
PARTITION_RECORD = API_KEYS["PARTITION_RECORD"]
CONFIG_RECORD = API_KEYS["CONFIG_RECORD"]
PARTITION_CHANGE_RECORD = API_KEYS["PARTITION_CHANGE_RECORD"]
REMOVE_TOPIC_RECORD = API_KEYS["REMOVE_TOPIC_RECORD"]
FEATURE_LEVEL_RECORD = API_KEYS["FEATURE_LEVEL_RECORD"]
NO_LEADER_CHANGE = -2  # PartitionChangeRecord.Leader's default
_WANTED = (REGISTER_BROKER_RECORD, UNREGISTER_BROKER_RECORD, TOPIC_RECORD, PARTITION_RECORD,
           CONFIG_RECORD, PARTITION_CHANGE_RECORD, REMOVE_TOPIC_RECORD, FEATURE_LEVEL_RECORD)


@dataclass(frozen=True)
class BrokerEndpoint:
    """One advertised listener of a registered broker (``RegisterBrokerRecord.EndPoints``)."""

    listener: str
    host: str
    port: int


@dataclass(frozen=True)
class ConfigEntry:
    """A config value and the record that set it (``file offset N``)."""

    value: str
    origin: str


@dataclass(frozen=True)
class PartitionState:
    """A partition's registration as far as a leader needs it (``PartitionRegistration``)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    elr: tuple[int, ...] = ()  # eligible leader replicas (KIP-966)
    last_known_elr: tuple[int, ...] = ()


@dataclass
class KraftConfigs:
    """The configs a metadata log's replay ends with."""

    metadata_dir: str
    topics: dict[str, dict[str, ConfigEntry]] = field(default_factory=dict)
    brokers: dict[str, dict[str, ConfigEntry]] = field(default_factory=dict)  # "" = default
    groups: dict[str, dict[str, ConfigEntry]] = field(default_factory=dict)  # by group id
    topic_names: dict[str, str] = field(default_factory=dict)  # topic id -> name
    # broker id -> its advertised endpoints, in registration order
    broker_endpoints: dict[int, tuple[BrokerEndpoint, ...]] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)  # feature name -> level
    # (topic id, partition) -> its registration
    partitions: dict[tuple[str, int], PartitionState] = field(default_factory=dict)
    snapshot: str | None = None  # the snapshot replayed first, if any
    records: int = 0  # records replayed (snapshot and log)
    notes: list[str] = field(default_factory=list)


def find_metadata_dir(log_dir: str | os.PathLike[str]) -> str | None:
    """The ``__cluster_metadata-0`` dir of a log dir, if it has one (a KRaft broker's or
    controller's metadata log dir)."""
    path = os.path.join(os.fspath(log_dir), METADATA_PARTITION_DIR)
    return path if os.path.isdir(path) else None


def read_kraft_configs(metadata_dir: str | os.PathLike[str]) -> KraftConfigs:
    """Replay the latest snapshot, then the log from the snapshot's end offset."""
    metadata_dir = os.path.abspath(os.fspath(metadata_dir))
    state = KraftConfigs(metadata_dir)
    snapshots: list[tuple[tuple[int, int], str]] = []
    segments: list[tuple[int, str]] = []
    for entry in list_dir(metadata_dir):
        snapshot_id = snapshot_id_from_file(entry.name)
        if snapshot_id is not None:
            snapshots.append((snapshot_id, entry.path))
        elif entry.name.endswith(LOG_SUFFIX) and entry.name[:20].isdigit():
            segments.append((offset_from_file(entry.name), entry.path))
    start = 0
    if snapshots:
        (start, _), path = max(snapshots)
        state.snapshot = path
        _replay(state, path, 0)
    for _, path in sorted(segments):
        _replay(state, path, start)
    return state


def _replay(state: KraftConfigs, path: str, from_offset: int) -> None:
    name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
    with FileRecords(path) as records:
        for batch in records.batches():
            if batch.is_control or batch.last_offset < from_offset:
                continue
            for record in batch.records():
                if record.offset < from_offset or record.value is None:
                    continue
                try:
                    api_key = read_frame_header(record.value)[0]
                    if api_key in _WANTED:
                        _apply(state, decode_metadata_record(record.value).data, api_key,
                               f"{name} offset {record.offset}")
                except CorruptRecordError as exc:
                    state.notes.append(f"{name}: record at offset {record.offset} skipped: "
                                       f"{exc.message}")
                    continue
                state.records += 1


def _apply(state: KraftConfigs, data: dict, api_key: int, origin: str) -> None:
    if api_key == REGISTER_BROKER_RECORD:
        state.broker_endpoints[data["brokerId"]] = tuple(
            BrokerEndpoint(e["name"], e["host"], e["port"]) for e in data["endPoints"])
    elif api_key == UNREGISTER_BROKER_RECORD:
        state.broker_endpoints.pop(data["brokerId"], None)
    elif api_key == TOPIC_RECORD:
        state.topic_names[str(data["topicId"])] = data["name"]
    elif api_key == REMOVE_TOPIC_RECORD:
        topic_id = str(data["topicId"])
        topic = state.topic_names.pop(topic_id, None)
        if topic is not None:
            state.topics.pop(topic, None)
        for key in [k for k in state.partitions if k[0] == topic_id]:
            del state.partitions[key]
    elif api_key == PARTITION_RECORD:
        state.partitions[(str(data["topicId"]), data["partitionId"])] = PartitionState(
            data["leader"], data["leaderEpoch"], tuple(data["isr"]),
            tuple(data.get("eligibleLeaderReplicas") or ()), tuple(data.get("lastKnownElr") or ()))
    elif api_key == PARTITION_CHANGE_RECORD:
        _change_partition(state, data)
    elif api_key == FEATURE_LEVEL_RECORD:
        if data["featureLevel"] == 0:
            state.features.pop(data["name"], None)
        else:
            state.features[data["name"]] = data["featureLevel"]
    else:
        kind = data["resourceType"]
        if kind == TOPIC_RESOURCE:
            resources = state.topics
        elif kind == BROKER_RESOURCE:
            resources = state.brokers
        elif kind == GROUP_RESOURCE:
            resources = state.groups
        else:
            return  # client metrics, broker loggers: nothing pylogctl shows
        configs = resources.setdefault(data["resourceName"], {})
        if data["value"] is None:
            configs.pop(data["name"], None)
        else:
            configs[data["name"]] = ConfigEntry(data["value"], origin)


def _change_partition(state: KraftConfigs, data: dict) -> None:
    key = (str(data["topicId"]), data["partitionId"])
    old = state.partitions.get(key)
    if old is None:
        return  # a change to a partition the snapshot or log never created: Kafka fails here
    leader, epoch = old.leader, old.leader_epoch
    if data["leader"] != NO_LEADER_CHANGE:
        leader, epoch = data["leader"], epoch + 1

    def pick(name: str, before: tuple[int, ...]) -> tuple[int, ...]:
        return before if data.get(name) is None else tuple(data[name])  # null: no change
    state.partitions[key] = PartitionState(leader, epoch, pick("isr", old.isr),
                                           pick("eligibleLeaderReplicas", old.elr),
                                           pick("lastKnownElr", old.last_known_elr))
