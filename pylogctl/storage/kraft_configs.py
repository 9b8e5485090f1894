"""The topic, broker and group configs of a KRaft cluster, replayed from its
``__cluster_metadata`` log, with the brokers' registered endpoints, the feature levels and each
partition's leader and leader epoch: a view of the image :mod:`.metadata_loader` builds (the
latest snapshot, then the log from its end offset, as a broker does), kept for the commands
that resolve configs and coordinators.

Resource type TOPIC (2) names a topic; BROKER (4) names a broker id, or ``""`` for the
cluster-wide default of every broker; GROUP (32) a group id. Configs are the records' own, the
names Kafka 4's image no longer keeps included (a 3.x topic's ``message.format.version``), each
with the record that set it. A partition's leader epoch follows ``PartitionRegistration.merge``
(a new leader in a ``PartitionChangeRecord``, even the same one, bumps it): a broker taking over
a log dir reads the epoch its data must be written above here.

A record that does not decode, or that fails to apply, is skipped with a note, as
kafka-dump-log skips it;
``bootstrap.checkpoint`` holds only features and SCRAM credentials, never configs, and is not
read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..format.metadata_records import API_KEYS
from .metadata_image import (BROKER_RESOURCE, GROUP_RESOURCE, METADATA_VERSION_FEATURE,
                             TOPIC_RESOURCE, ConfigEntry)
from .metadata_loader import (METADATA_PARTITION_DIR, MetadataReplay, load_metadata_dir,
                              problems)

REGISTER_BROKER_RECORD = API_KEYS["REGISTER_BROKER_RECORD"]
UNREGISTER_BROKER_RECORD = API_KEYS["UNREGISTER_BROKER_RECORD"]
TOPIC_RECORD = API_KEYS["TOPIC_RECORD"]
PARTITION_RECORD = API_KEYS["PARTITION_RECORD"]
CONFIG_RECORD = API_KEYS["CONFIG_RECORD"]
PARTITION_CHANGE_RECORD = API_KEYS["PARTITION_CHANGE_RECORD"]
REMOVE_TOPIC_RECORD = API_KEYS["REMOVE_TOPIC_RECORD"]
FEATURE_LEVEL_RECORD = API_KEYS["FEATURE_LEVEL_RECORD"]
__all__ = ["BROKER_RESOURCE", "GROUP_RESOURCE", "METADATA_PARTITION_DIR", "TOPIC_RESOURCE",
           "BrokerEndpoint", "ConfigEntry", "KraftConfigs", "PartitionState",
           "find_metadata_dir", "kraft_configs_of", "read_kraft_configs"]


@dataclass(frozen=True)
class BrokerEndpoint:
    """One advertised listener of a registered broker (``RegisterBrokerRecord.EndPoints``)."""

    listener: str
    host: str
    port: int


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
    return kraft_configs_of(load_metadata_dir(metadata_dir, lenient=True))


def kraft_configs_of(replay: MetadataReplay) -> KraftConfigs:
    """The view of an image already replayed."""
    image = replay.image
    state = KraftConfigs(replay.source, snapshot=replay.snapshot, records=replay.records,
                         notes=replay.notes + list(problems(replay)))
    by_type = {TOPIC_RESOURCE: state.topics, BROKER_RESOURCE: state.brokers,
               GROUP_RESOURCE: state.groups}
    for (kind, name), configs in image.configs.items():
        if kind in by_type:  # client metrics, broker loggers: nothing pylogctl shows
            by_type[kind][name] = dict(configs)
    state.topic_names = {topic_id: t.name for topic_id, t in image.topics.items()}
    state.broker_endpoints = {
        broker_id: tuple(BrokerEndpoint(e.listener, e.host, e.port) for e in b.endpoints)
        for broker_id, b in image.brokers.items()}
    if image.metadata_version is not None:
        state.features[METADATA_VERSION_FEATURE] = image.metadata_version
    state.features.update(image.features)
    state.partitions = {
        (topic_id, pid): PartitionState(p.leader, p.leader_epoch, p.isr, p.elr,
                                        p.last_known_elr)
        for topic_id, t in image.topics.items() for pid, p in t.partitions.items()}
    return state
