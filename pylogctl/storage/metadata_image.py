"""The KRaft metadata image: what a node knows of the cluster after replaying
``__cluster_metadata``, built record by record with the rules of Kafka's ``MetadataDelta`` and
its ``*Delta.replay`` methods (``org.apache.kafka.image``).

Kafka gathers a batch's records in a delta and applies it at the batch's end; applying each
record at once ends in the same image, and a record Kafka's delta refuses (a PartitionRecord for
a topic id no TopicRecord created, a FenceBrokerRecord for an epoch that is not the broker's...)
raises :class:`ReplayFault` here with Kafka's words, before changing anything.

Configs are kept as the records wrote them, with the record that set each one (``origin``);
Kafka's image drops the names its ``DefaultSupportedConfigChecker`` does not know (a 3.x
topic's ``message.format.version``, every BROKER_LOGGER config): :meth:`MetadataImage.
supported_configs` is that view, the raw one serves pylogctl's own config resolution.
The metadata transactions of KIP-868 and the reading of files are :mod:`.metadata_loader`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from ..format.metadata_records import API_KEYS

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
    TOPIC_RESOURCE: frozenset((
        "cleanup.policy compression.gzip.level compression.lz4.level compression.type "
        "compression.zstd.level delete.retention.ms errors.deadletterqueue.group.enable "
        "file.delete.delay.ms flush.messages flush.ms follower.replication.throttled.replicas "
        "index.interval.bytes internal.segment.bytes leader.replication.throttled.replicas "
        "local.retention.bytes local.retention.ms max.compaction.lag.ms "
        "max.decompressed.message.bytes max.message.bytes message.timestamp.after.max.ms "
        "message.timestamp.before.max.ms message.timestamp.type min.cleanable.dirty.ratio "
        "min.compaction.lag.ms min.insync.replicas preallocate remote.copy.lag.bytes "
        "remote.copy.lag.ms remote.log.copy.disable remote.log.delete.on.disable "
        "remote.storage.enable retention.bytes retention.ms segment.bytes segment.index.bytes "
        "segment.jitter.ms segment.ms unclean.leader.election.enable").split()),
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
            replicas, _migrating(self.directories if dirs is None else _uuids(dirs),
                                 len(replicas)),
            pick("isr", self.isr), pick("removingReplicas", self.removing_replicas),
            pick("addingReplicas", self.adding_replicas),
            pick("eligibleLeaderReplicas", self.elr), pick("lastKnownElr", self.last_known_elr),
            leader, self.leader_recovery_state if recovery == NO_RECOVERY_CHANGE
            else _recovery_state(recovery), epoch, self.partition_epoch + 1)


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

    def apply(self, api_key: int, data: dict[str, Any], origin: str) -> None:
        """Replay one record; raises :class:`ReplayFault` (nothing changed) when Kafka's
        delta would refuse it."""
        handler = _HANDLERS.get(api_key)
        if handler is None:
            raise ReplayFault(f"Unknown metadata record type {api_key}")
        handler(self, data, origin)


def uuid_key(text: str) -> tuple[int, int]:
    """Sort key of a Uuid as ``Uuid.compareTo`` orders them (signed halves)."""
    import base64

    raw = base64.urlsafe_b64decode(text + "==")
    hi, lo = (int.from_bytes(raw[i:i + 8], "big", signed=True) for i in (0, 8))
    return hi, lo


def _uuids(values: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in values or ())


def _migrating(directories: tuple[str, ...], replicas: int) -> tuple[str, ...]:
    # PartitionRegistration.defaultToMigrating: no directory known = every one MIGRATING
    if all(d == MIGRATING_DIR for d in directories):
        return (MIGRATING_DIR,) * replicas
    return directories


def _recovery_state(value: int) -> int:
    if value not in (0, 1):
        raise ReplayFault(f"Value {value} is not a valid leader recovery state")
    return value


def _endpoints(data: dict[str, Any]) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(e["name"], e["securityProtocol"], e["host"], e["port"])
                 for e in data["endPoints"])


def _features(data: dict[str, Any]) -> tuple[tuple[str, int, int], ...]:
    return tuple((f["name"], f["minSupportedVersion"], f["maxSupportedVersion"])
                 for f in data["features"])


def _register_broker(image: MetadataImage, d: dict, _: str) -> None:
    cordoned = d.get("cordonedLogDirs")
    image.brokers[d["brokerId"]] = BrokerRegistration(
        d["brokerId"], d["brokerEpoch"], str(d["incarnationId"]), _endpoints(d), _features(d),
        d["rack"], d["fenced"], d.get("inControlledShutdown", False),
        d.get("isMigratingZkBroker", False),
        tuple(sorted(_uuids(d.get("logDirs")), key=uuid_key)),
        None if cordoned is None else _uuids(cordoned))


def _broker(image: MetadataImage, broker_id: int, epoch: int, action: str
            ) -> BrokerRegistration:
    broker = image.brokers.get(broker_id)
    if broker is None:
        raise ReplayFault(f"Tried to {action} broker {broker_id}, but that broker was not "
                          f"registered.")
    if broker.epoch != epoch:
        raise ReplayFault(f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, "
                          f"did not match the current broker epoch, {broker.epoch}")
    return broker


def _fence(fenced: bool):
    def apply(image: MetadataImage, d: dict, _: str) -> None:
        broker = _broker(image, d["id"], d["epoch"], "fence" if fenced else "unfence")
        image.brokers[d["id"]] = replace(broker, fenced=fenced)
    return apply


def _change_broker(image: MetadataImage, d: dict, _: str) -> None:
    broker = _broker(image, d["brokerId"], d["brokerEpoch"], "change")
    fencing = {0: None, 1: True, -1: False}  # BrokerRegistrationFencingChange
    shutdown = {0: None, 1: True}  # BrokerRegistrationInControlledShutdownChange
    if d.get("fenced", 0) not in fencing:
        raise ReplayFault(f"Unable to replay BrokerRegistrationChangeRecord: unknown value for "
                          f"fenced field: {d['fenced']}")
    if d.get("inControlledShutdown", 0) not in shutdown:
        raise ReplayFault(f"Unable to replay BrokerRegistrationChangeRecord: unknown value for "
                          f"inControlledShutdown field: {d['inControlledShutdown']}")
    fenced, down = fencing[d.get("fenced", 0)], shutdown[d.get("inControlledShutdown", 0)]
    dirs, cordoned = d.get("logDirs"), d.get("cordonedLogDirs")
    image.brokers[d["brokerId"]] = replace(
        broker, fenced=broker.fenced if fenced is None else fenced,
        in_controlled_shutdown=broker.in_controlled_shutdown if down is None else down,
        directories=tuple(sorted(_uuids(dirs), key=uuid_key)) if dirs else broker.directories,
        cordoned_directories=broker.cordoned_directories if cordoned is None
        else _uuids(cordoned))


def _register_controller(image: MetadataImage, d: dict, _: str) -> None:
    for e in d["endPoints"]:
        if e["securityProtocol"] not in (0, 1, 2, 3):
            raise ReplayFault(f"Unknown security protocol {e['securityProtocol']}")
    image.controllers[d["controllerId"]] = ControllerRegistration(
        d["controllerId"], str(d["incarnationId"]), d["zkMigrationReady"], _endpoints(d),
        _features(d))


def _topic(image: MetadataImage, d: dict, _: str) -> None:
    topic_id = str(d["topicId"])
    image.topics[topic_id] = TopicImage(d["name"], topic_id)
    image.topic_ids[d["name"]] = topic_id


def _existing_topic(image: MetadataImage, d: dict, what: str) -> TopicImage:
    topic = image.topics.get(str(d["topicId"]))
    if topic is None:
        raise ReplayFault(f"{what} for topic id {d['topicId']}, which no TopicRecord created")
    return topic


def _partition(image: MetadataImage, d: dict, _: str) -> None:
    topic = _existing_topic(image, d, "PartitionRecord")
    dirs = _uuids(d.get("directories"))
    if dirs and len(dirs) != len(d["replicas"]):
        raise ReplayFault("The lengths for replicas and directories do not match")
    topic.partitions[d["partitionId"]] = PartitionRegistration(
        tuple(d["replicas"]), _migrating(dirs, len(d["replicas"])), tuple(d["isr"]),
        tuple(d["removingReplicas"]), tuple(d["addingReplicas"]),
        tuple(d.get("eligibleLeaderReplicas") or ()), tuple(d.get("lastKnownElr") or ()),
        d["leader"], _recovery_state(d.get("leaderRecoveryState", 0)), d["leaderEpoch"],
        d["partitionEpoch"])


def _change_partition(image: MetadataImage, d: dict, _: str) -> None:
    topic = image.topics.get(str(d["topicId"]))
    old = None if topic is None else topic.partitions.get(d["partitionId"])
    if topic is None or old is None:
        raise ReplayFault(f"Unable to find partition {d['topicId']}:{d['partitionId']}")
    topic.partitions[d["partitionId"]] = old.merge(d)


def _clear_elr(image: MetadataImage, d: dict, _: str) -> None:
    if d["topicName"]:
        topic = image.topic_by_name(d["topicName"])
        if topic is None:
            raise ReplayFault(f"Unable to clear elr for topic with name {d['topicName']}: no "
                              f"such topic found.")
        topics = [topic]
    else:
        topics = list(image.topics.values())
    cleared = {"eligibleLeaderReplicas": [], "lastKnownElr": []}
    for topic in topics:
        for pid, p in topic.partitions.items():
            if p.elr or p.last_known_elr:
                topic.partitions[pid] = p.merge(cleared)


def _remove_topic(image: MetadataImage, d: dict, _: str) -> None:
    topic_id = str(d["topicId"])
    topic = image.topics.pop(topic_id, None)
    if topic is None:
        raise ReplayFault(f"Unable to delete topic with id {topic_id}: no such topic found.")
    if image.topic_ids.get(topic.name) == topic_id:
        del image.topic_ids[topic.name]
    image.configs.pop((TOPIC_RESOURCE, topic.name), None)  # ConfigurationsDelta too


def _config(image: MetadataImage, d: dict, origin: str) -> None:
    key = (d["resourceType"], d["resourceName"])
    configs = image.configs.setdefault(key, {})
    if d["value"] is None:
        configs.pop(d["name"], None)
        if not configs:
            del image.configs[key]
    else:
        configs[d["name"]] = ConfigEntry(d["value"], origin)


def _feature(image: MetadataImage, d: dict, _: str) -> None:
    name, level = d["name"], d["featureLevel"]
    if name == METADATA_VERSION_FEATURE:
        if level not in METADATA_VERSIONS:
            raise ReplayFault(f"Unsupported metadata version - if you are currently upgrading "
                              f"your cluster, please ensure the metadata version is set to "
                              f"3.3-IV3 (or higher) before updating the software version. The "
                              f"metadata version is currently set to level {level}")
        image.metadata_version = level
    elif level == 0:
        image.features.pop(name, None)
    else:
        image.features[name] = level


def _client_quota(image: MetadataImage, d: dict, _: str) -> None:
    entity = tuple(sorted(((e["entityType"], e["entityName"]) for e in d["entity"]),
                          key=lambda e: e[0]))
    quotas = image.client_quotas.setdefault(entity, {})
    if d["remove"]:
        quotas.pop(d["key"], None)
        if not quotas:
            del image.client_quotas[entity]
    else:
        quotas[d["key"]] = float(d["value"])


def _producer_ids(image: MetadataImage, d: dict, _: str) -> None:
    image.next_producer_id = d["nextProducerId"]


def _acl(image: MetadataImage, d: dict, _: str) -> None:
    image.acls[str(d["id"])] = Acl(d["resourceType"], d["resourceName"], d["patternType"],
                                   d["principal"], d["host"], d["operation"],
                                   d["permissionType"])


def _remove_acl(image: MetadataImage, d: dict, _: str) -> None:
    if image.acls.pop(str(d["id"]), None) is None:
        raise ReplayFault(f"Failed to find existing ACL with ID {d['id']} in either image or "
                          f"changes")


def _scram(image: MetadataImage, d: dict, _: str) -> None:
    users = image.scram.setdefault(d["mechanism"] if d["mechanism"] in (1, 2) else 0, {})
    users[d["name"]] = ScramCredential(bytes(d["salt"]), bytes(d["storedKey"]),
                                       bytes(d["serverKey"]), d["iterations"])


def _remove_scram(image: MetadataImage, d: dict, _: str) -> None:
    mechanism = d["mechanism"] if d["mechanism"] in (1, 2) else 0
    users = image.scram.get(mechanism, {})
    users.pop(d["name"], None)
    if not users:
        image.scram.pop(mechanism, None)


def _token(image: MetadataImage, d: dict, _: str) -> None:
    image.delegation_tokens[d["tokenId"]] = DelegationToken(
        d["tokenId"], d["owner"], d["requester"], tuple(d["renewers"]), d["issueTimestamp"],
        d["maxTimestamp"], d["expirationTimestamp"])


def _set(attr: str, key: Optional[str] = None):
    def apply(image: MetadataImage, d: dict, _: str) -> None:
        setattr(image, attr, d[key] if key else None)
    return apply


def _pop(attr: str, key: str):
    def apply(image: MetadataImage, d: dict, _: str) -> None:
        getattr(image, attr).pop(d[key], None)
    return apply


def _nothing(image: MetadataImage, d: dict, _: str) -> None:
    """NoOpRecord; and the transaction markers once :mod:`.metadata_loader` has read them."""


_K = API_KEYS
_HANDLERS = {
    _K["REGISTER_BROKER_RECORD"]: _register_broker,
    _K["UNREGISTER_BROKER_RECORD"]: _pop("brokers", "brokerId"),
    _K["TOPIC_RECORD"]: _topic,
    _K["PARTITION_RECORD"]: _partition,
    _K["CONFIG_RECORD"]: _config,
    _K["PARTITION_CHANGE_RECORD"]: _change_partition,
    _K["FENCE_BROKER_RECORD"]: _fence(True),
    _K["UNFENCE_BROKER_RECORD"]: _fence(False),
    _K["REMOVE_TOPIC_RECORD"]: _remove_topic,
    _K["DELEGATION_TOKEN_RECORD"]: _token,
    _K["USER_SCRAM_CREDENTIAL_RECORD"]: _scram,
    _K["FEATURE_LEVEL_RECORD"]: _feature,
    _K["CLIENT_QUOTA_RECORD"]: _client_quota,
    _K["PRODUCER_IDS_RECORD"]: _producer_ids,
    _K["BROKER_REGISTRATION_CHANGE_RECORD"]: _change_broker,
    _K["ACCESS_CONTROL_ENTRY_RECORD"]: _acl,
    _K["REMOVE_ACCESS_CONTROL_ENTRY_RECORD"]: _remove_acl,
    _K["NO_OP_RECORD"]: _nothing,
    _K["ZK_MIGRATION_STATE_RECORD"]: _set("zk_migration_state", "zkMigrationState"),
    _K["REMOVE_USER_SCRAM_CREDENTIAL_RECORD"]: _remove_scram,
    _K["BEGIN_TRANSACTION_RECORD"]: _nothing,
    _K["END_TRANSACTION_RECORD"]: _nothing,
    _K["ABORT_TRANSACTION_RECORD"]: _nothing,
    _K["REMOVE_DELEGATION_TOKEN_RECORD"]: _pop("delegation_tokens", "tokenId"),
    _K["REGISTER_CONTROLLER_RECORD"]: _register_controller,
    _K["CLEAR_ELR_RECORD"]: _clear_elr,
    _K["UNREGISTER_CONTROLLER_RECORD"]: _pop("controllers", "controllerId"),
}
