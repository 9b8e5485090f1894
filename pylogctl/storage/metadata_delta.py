"""How each metadata record changes the image: the rules of Kafka's ``MetadataDelta`` and its
``*Delta.replay`` methods (``ClusterDelta``, ``TopicsDelta``/``TopicDelta``,
``ConfigurationsDelta``, ``FeaturesDelta``, ``ClientQuotasDelta``, ``ProducerIdsDelta``,
``AclsDelta``, ``ScramDelta``, ``DelegationTokenDelta``), applied record by record.

Kafka gathers a batch's records in a delta and applies it at the batch's end; applying each
record at once ends in the same image but in one case, which :class:`Delta` keeps: a
``RemoveTopicRecord`` drops the topic's configs only if the image held them when the delta
began (``ConfigurationsDelta.replay``), so configs set in the same batch as the topic's removal
outlive it. A record the delta refuses raises :class:`~.metadata_image.ReplayFault` with
Kafka's words before anything changes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..format.metadata_records import API_KEYS
from .metadata_image import (METADATA_VERSION_FEATURE, METADATA_VERSIONS, TOPIC_RESOURCE, Acl,
                             BrokerRegistration, ConfigEntry, ControllerRegistration,
                             DelegationToken, Endpoint, MetadataImage, PartitionRegistration,
                             ReplayFault, ScramCredential, TopicImage, migrating_directories,
                             recovery_state, uuid_texts, uuid_key)


class Delta:
    """The records of one batch (one ``MetadataDelta``), applied to ``image`` one by one."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.new_topic_configs: set[str] = set()  # TOPIC config resources made in this delta

    def replay(self, api_key: int, data: dict[str, Any], origin: str) -> None:
        """Apply one record; raises :class:`ReplayFault` (nothing changed) when Kafka's delta
        would refuse it."""
        if api_key == _REMOVE_TOPIC:
            _remove_topic(self.image, data, self.new_topic_configs)
            return
        if api_key == _CONFIG and data["resourceType"] == TOPIC_RESOURCE and \
                (TOPIC_RESOURCE, data["resourceName"]) not in self.image.configs:
            self.new_topic_configs.add(data["resourceName"])
        handler = _HANDLERS.get(api_key)
        if handler is None:
            raise ReplayFault(f"Unknown metadata record type {api_key}")
        handler(self.image, data, origin)


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
        tuple(sorted(uuid_texts(d.get("logDirs")), key=uuid_key)),
        None if cordoned is None else uuid_texts(cordoned))


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
        directories=tuple(sorted(uuid_texts(dirs), key=uuid_key)) if dirs else broker.directories,
        cordoned_directories=broker.cordoned_directories if cordoned is None
        else uuid_texts(cordoned))


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
    dirs = uuid_texts(d.get("directories"))
    if dirs and len(dirs) != len(d["replicas"]):
        raise ReplayFault("The lengths for replicas and directories do not match")
    topic.partitions[d["partitionId"]] = PartitionRegistration(
        tuple(d["replicas"]), migrating_directories(dirs, len(d["replicas"])), tuple(d["isr"]),
        tuple(d["removingReplicas"]), tuple(d["addingReplicas"]),
        tuple(d.get("eligibleLeaderReplicas") or ()), tuple(d.get("lastKnownElr") or ()),
        d["leader"], recovery_state(d.get("leaderRecoveryState", 0)), d["leaderEpoch"],
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


def _remove_topic(image: MetadataImage, d: dict, new_topic_configs: set[str]) -> None:
    topic_id = str(d["topicId"])
    topic = image.topics.pop(topic_id, None)
    if topic is None:
        raise ReplayFault(f"Unable to delete topic with id {topic_id}: no such topic found.")
    if image.topic_ids.get(topic.name) == topic_id:
        del image.topic_ids[topic.name]
    if topic.name not in new_topic_configs:  # ConfigurationsDelta: the image's configs only
        image.configs.pop((TOPIC_RESOURCE, topic.name), None)


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


def _set(attr: str, key: str):
    def apply(image: MetadataImage, d: dict, _: str) -> None:
        setattr(image, attr, d[key])
    return apply


def _pop(attr: str, key: str):
    def apply(image: MetadataImage, d: dict, _: str) -> None:
        getattr(image, attr).pop(d[key], None)
    return apply


def _nothing(image: MetadataImage, d: dict, _: str) -> None:
    """NoOpRecord; and the transaction markers once :mod:`.metadata_loader` has read them."""


_K = API_KEYS
_REMOVE_TOPIC, _CONFIG = _K["REMOVE_TOPIC_RECORD"], _K["CONFIG_RECORD"]
_HANDLERS = {
    _K["REGISTER_BROKER_RECORD"]: _register_broker,
    _K["UNREGISTER_BROKER_RECORD"]: _pop("brokers", "brokerId"),
    _K["TOPIC_RECORD"]: _topic,
    _K["PARTITION_RECORD"]: _partition,
    _K["CONFIG_RECORD"]: _config,
    _K["PARTITION_CHANGE_RECORD"]: _change_partition,
    _K["FENCE_BROKER_RECORD"]: _fence(True),
    _K["UNFENCE_BROKER_RECORD"]: _fence(False),
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
