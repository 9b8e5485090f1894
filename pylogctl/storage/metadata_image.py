"""The KRaft metadata image: what a node knows of the cluster after replaying
``__cluster_metadata`` (Kafka's ``MetadataImage``: features, cluster registrations, topics and
partitions, configs, client quotas, producer ids, ACLs, SCRAM credentials, delegation tokens,
and the provenance of the last record in it), with ``PartitionRegistration.merge``, the rule
every partition change follows. How each record changes it is :mod:`.metadata_delta`'s; the
reading of files and the metadata transactions of KIP-868, :mod:`.metadata_loader`'s.

Configs are kept as the records wrote them, with the record that set each one (``origin``);
Kafka's image drops the names its ``DefaultSupportedConfigChecker`` does not know (a 3.x
topic's ``message.format.version``, every BROKER_LOGGER config): :meth:`MetadataImage.
supported_configs` is that view, the raw one serves pylogctl's own config resolution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..format.message import uuid_bytes
from .topic_config_def import TOPIC_CONFIG_KEYS

MIGRATING_DIR = "AAAAAAAAAAAAAAAAAAAAAA"  # DirectoryId.MIGRATING: placement not known yet
NO_LEADER_CHANGE = -2  # PartitionChangeRecord.Leader's default
NO_RECOVERY_CHANGE = -1  # LeaderRecoveryState.NO_CHANGE
METADATA_VERSION_FEATURE = "metadata.version"
# MetadataVersion (server-common 4.4): feature level -> its name; Kafka 4 reads from 3.3-IV3 on
METADATA_VERSIONS = {
    7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0",
    13: "3.6-IV1", 14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3",
    19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2",
    25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1", 28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0",
    31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2", 34: "4.5-IV0",
}
# ConfigResource.Type ids
TOPIC_RESOURCE, BROKER_RESOURCE, BROKER_LOGGER_RESOURCE = 2, 4, 8
CLIENT_METRICS_RESOURCE, GROUP_RESOURCE = 16, 32
RESOURCE_TYPES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
# DefaultSupportedConfigChecker: LogConfig.configNames(), GroupConfig.configNames(),
# ClientMetricsConfigs.configNames() of Kafka 4.4; every BROKER name; nothing else
_SUPPORTED = {
    TOPIC_RESOURCE: frozenset(TOPIC_CONFIG_KEYS) | {"internal.segment.bytes"},
    GROUP_RESOURCE: frozenset((
        "consumer.assignment.interval.ms consumer.assignor.offload.enable "
        "consumer.heartbeat.interval.ms consumer.session.timeout.ms "
        "errors.deadletterqueue.copy.record.enable errors.deadletterqueue.topic.name "
        "share.assignment.interval.ms share.assignor.offload.enable share.auto.offset.reset "
        "share.delivery.count.limit share.heartbeat.interval.ms share.isolation.level "
        "share.partition.max.record.locks share.record.lock.duration.ms "
        "share.renew.acknowledge.enable share.session.timeout.ms "
        "streams.acceptable.recovery.lag streams.assignment.interval.ms streams.assignor.name "
        "streams.assignor.offload.enable streams.heartbeat.interval.ms "
        "streams.initial.rebalance.delay.ms streams.num.standby.replicas "
        "streams.num.warmup.replicas streams.rack.aware.assignment.tags "
        "streams.session.timeout.ms streams.task.offset.interval.ms").split()),
    CLIENT_METRICS_RESOURCE: frozenset(("interval.ms", "match", "metrics")),
}


class ReplayFault(Exception):
    """A record Kafka's ``MetadataDelta`` refuses to apply (the message is Kafka's)."""


@dataclass(frozen=True)
class Endpoint:
    """A listener of a broker or controller registration (``Endpoint``)."""

    listener: str
    security_protocol: int
    host: str
    port: int


@dataclass(frozen=True)
class BrokerRegistration:
    """A ``RegisterBrokerRecord`` as later records changed it (``BrokerRegistration``)."""

    id: int
    epoch: int
    incarnation_id: str
    endpoints: tuple[Endpoint, ...]  # in record order; Kafka's text sorts them by name
    features: tuple[tuple[str, int, int], ...]  # (name, min, max) supported
    rack: Optional[str]
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    directories: tuple[str, ...]  # sorted as Kafka sorts Uuids
    cordoned_directories: Optional[tuple[str, ...]]


@dataclass(frozen=True)
class ControllerRegistration:
    """A ``RegisterControllerRecord`` (``ControllerRegistration``)."""

    id: int
    incarnation_id: str
    zk_migration_ready: bool
    endpoints: tuple[Endpoint, ...]
    features: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class PartitionRegistration:
    """A partition's replicas, leader and epochs (``PartitionRegistration``)."""

    replicas: tuple[int, ...]
    directories: tuple[str, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    leader: int
    leader_recovery_state: int  # 0 RECOVERED, 1 RECOVERING
    leader_epoch: int
    partition_epoch: int

    def merge(self, change: dict[str, Any]) -> "PartitionRegistration":
        """``PartitionRegistration.merge``: a null field keeps its value; a leader, even the
        same one, bumps the leader epoch; every change bumps the partition epoch."""
        def pick(name: str, old: tuple) -> tuple:
            value = change.get(name)
            return old if value is None else tuple(value)
        replicas = pick("replicas", self.replicas)
        dirs = change.get("directories")
        if dirs is not None and change.get("replicas") is not None and dirs \
                and len(dirs) != len(change["replicas"]):
            raise ReplayFault("The lengths for replicas and directories do not match")
        leader, epoch = self.leader, self.leader_epoch
        if change.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            leader, epoch = change["leader"], epoch + 1
        recovery = change.get("leaderRecoveryState", NO_RECOVERY_CHANGE)
        return PartitionRegistration(
            replicas, migrating_directories(self.directories if dirs is None else uuid_texts(dirs),
                                 len(replicas)),
            pick("isr", self.isr), pick("removingReplicas", self.removing_replicas),
            pick("addingReplicas", self.adding_replicas),
            pick("eligibleLeaderReplicas", self.elr), pick("lastKnownElr", self.last_known_elr),
            leader, self.leader_recovery_state if recovery == NO_RECOVERY_CHANGE
            else recovery_state(recovery), epoch, self.partition_epoch + 1)


@dataclass
class TopicImage:
    name: str
    id: str
    partitions: dict[int, PartitionRegistration] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigEntry:
    """A config value and the record that set it (``file offset N``)."""

    value: str
    origin: str


@dataclass(frozen=True)
class Acl:
    """An ``AccessControlEntryRecord`` (``StandardAcl``); enums by their codes."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


@dataclass(frozen=True)
class DelegationToken:
    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int


@dataclass(frozen=True)
class Provenance:
    """The last record the image contains (``MetadataProvenance``)."""

    offset: int = -1
    epoch: int = -1
    time_ms: int = -1


@dataclass
class MetadataImage:
    """Every part of Kafka's ``MetadataImage``, in plain dicts."""

    provenance: Provenance = Provenance()
    metadata_version: Optional[int] = None  # the metadata.version feature level
    features: dict[str, int] = field(default_factory=dict)  # the other finalized features
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    controllers: dict[int, ControllerRegistration] = field(default_factory=dict)
    topics: dict[str, TopicImage] = field(default_factory=dict)  # by topic id
    topic_ids: dict[str, str] = field(default_factory=dict)  # name -> id
    # (resource type, resource name) -> config name -> value; "" names a type's default
    configs: dict[tuple[int, str], dict[str, ConfigEntry]] = field(default_factory=dict)
    # entity, as sorted (type, name or None) pairs -> quota key -> value
    client_quotas: dict[tuple[tuple[str, Optional[str]], ...], dict[str, float]] = field(
        default_factory=dict)
    next_producer_id: int = -1
    acls: dict[str, Acl] = field(default_factory=dict)  # by ACL id
    scram: dict[int, dict[str, ScramCredential]] = field(default_factory=dict)  # mechanism
    delegation_tokens: dict[str, DelegationToken] = field(default_factory=dict)
    zk_migration_state: Optional[int] = None

    def topic_by_name(self, name: str) -> Optional[TopicImage]:
        topic_id = self.topic_ids.get(name)
        return None if topic_id is None else self.topics.get(topic_id)

    def supported_configs(self) -> dict[tuple[int, str], dict[str, ConfigEntry]]:
        """The configs Kafka's image holds: the names ``DefaultSupportedConfigChecker``
        accepts, resources left empty dropped."""
        out = {}
        for (kind, name), configs in self.configs.items():
            if kind == BROKER_RESOURCE:
                kept = dict(configs)
            else:
                known = _SUPPORTED.get(kind, frozenset())
                kept = {k: v for k, v in configs.items() if k in known}
            if kept:
                out[(kind, name)] = kept
        return out


def uuid_key(text: str) -> tuple[int, int]:
    """Sort key of a Uuid as ``Uuid.compareTo`` orders them (signed halves)."""
    raw = uuid_bytes(text)
    hi, lo = (int.from_bytes(raw[i:i + 8], "big", signed=True) for i in (0, 8))
    return hi, lo


def uuid_texts(values: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in values or ())


def migrating_directories(directories: tuple[str, ...], replicas: int) -> tuple[str, ...]:
    # PartitionRegistration.defaultToMigrating: no directory known = every one MIGRATING
    if all(d == MIGRATING_DIR for d in directories):
        return (MIGRATING_DIR,) * replicas
    return directories


def recovery_state(value: int) -> int:
    if value not in (0, 1):
        raise ReplayFault(f"Value {value} is not a valid leader recovery state")
    return value
