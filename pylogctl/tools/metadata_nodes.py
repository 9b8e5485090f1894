"""The metadata image as ``kafka-metadata-shell`` shows it: Kafka's node tree
(``org.apache.kafka.image.node``: ``MetadataImageNode`` and its children, under the shell's
``RootShellNode`` with ``/image`` and ``/local``), whose leaves print what Kafka's classes print
(``PartitionRegistration.toString()``, ``BrokerRegistration.toString()``, the record
``StandardAcl``...), and the printers that walk it (``ShellNodePrinter``: two spaces a level).

Names sort as Java's ``String.compareTo`` sorts them (UTF-16 code units); leaves print nothing
redacted, as the shell's printer asks.
"""

from __future__ import annotations

import datetime
import re
from typing import Callable, Iterable, Optional

from .. import __version__
from ..format.jackson import java_double_str
from ..format.java_string import java_order
from ..storage.metadata_image import (METADATA_VERSIONS, RESOURCE_TYPES, BrokerRegistration,
                                      ControllerRegistration, Endpoint, MetadataImage,
                                      PartitionRegistration, TopicImage)

SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
RESOURCE_TYPE_NAMES = ("UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
                       "DELEGATION_TOKEN", "USER")
PATTERN_TYPE_NAMES = ("UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED")
OPERATION_NAMES = ("UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
                   "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                   "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT")
PERMISSION_NAMES = ("UNKNOWN", "ANY", "DENY", "ALLOW")
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def java_sorted(names: Iterable[str]) -> list[str]:
    """Sorted as ``String::compareTo``."""
    return sorted(names, key=java_order)


def java_int(text: str) -> Optional[int]:
    """``Integer.parseInt``: None where it throws."""
    if not _JAVA_INT.fullmatch(text):
        return None
    value = int(text)
    return value if -2**31 <= value < 2**31 else None


class Node:
    """A directory of the tree (``MetadataNode``); leaves override :attr:`is_directory`."""

    is_directory = True

    def child_names(self) -> Iterable[str]:
        return ()

    def child(self, name: str) -> Optional["Node"]:
        return None

    def print(self, printer: "ShellPrinter") -> None:
        for name in java_sorted(self.child_names()):
            printer.enter(name)
            child = self.child(name)
            if child is not None:
                child.print(printer)
            printer.leave()


class Leaf(Node):
    """``MetadataLeafNode``: one line of text."""

    is_directory = False

    def __init__(self, text: str) -> None:
        self.text = text

    def print(self, printer: "ShellPrinter") -> None:
        printer.output(self.text)


class Dir(Node):
    """A directory whose children are made on demand by name."""

    def __init__(self, children: dict[str, Callable[[], Optional[Node]]]) -> None:
        self.children = children

    def child_names(self) -> Iterable[str]:
        return self.children.keys()

    def child(self, name: str) -> Optional[Node]:
        make = self.children.get(name)
        return None if make is None else make()


class ShellPrinter:
    """``ShellNodePrinter``: ``name:`` lines, values indented two spaces a level."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.level = 0

    def enter(self, name: str) -> None:
        self.out.append(f"{'  ' * self.level}{name}:")
        self.level += 1

    def leave(self) -> None:
        self.level -= 1

    def output(self, text: str) -> None:
        self.out.append(f"{'  ' * max(0, self.level)}{text}")


def root_node(image: MetadataImage) -> Node:
    """The shell's ``/``: ``image`` and ``local`` (this program's version, not Kafka's)."""
    return Dir({"image": lambda: image_node(image),
                "local": lambda: Dir({"version": lambda: Leaf(__version__),
                                      "commitId": lambda: Leaf("unknown")})})


def image_node(image: MetadataImage) -> Node:
    """``MetadataImageNode``."""
    return Dir({
        "provenance": lambda: Leaf(provenance_text(image)),
        "features": lambda: _features(image),
        "cluster": lambda: Dir({
            "brokers": lambda: _by_int(image.brokers, broker_text),
            "controllers": lambda: _by_int(image.controllers, controller_text)}),
        "topics": lambda: Dir({"byName": lambda: _topics(image, by_name=True),
                               "byId": lambda: _topics(image, by_name=False)}),
        "configs": lambda: _configs(image),
        "clientQuotas": lambda: _client_quotas(image),
        "producerIds": lambda: Dir({
            "nextProducerId": lambda: Leaf(str(image.next_producer_id))}),
        "acls": lambda: Dir({"byId": lambda: Dir({
            acl_id: (lambda a=acl: Leaf(acl_text(a))) for acl_id, acl in image.acls.items()})}),
        "scram": lambda: Dir({
            name: (lambda m=mechanism: Dir({
                user: (lambda c=cred: Leaf(scram_text(c)))
                for user, cred in image.scram.get(m, {}).items()}))
            for mechanism, name in SCRAM_MECHANISMS.items()}),
        "delegationToken": lambda: Dir({
            token_id: (lambda t=token: Leaf(token_text(t)))
            for token_id, token in image.delegation_tokens.items()}),
    })


class _IntKeyed(Node):
    """Children named by an int that ``Integer.valueOf`` parses (``01`` is ``1``)."""

    def __init__(self, items: dict[int, object], text: Callable[[object], str]) -> None:
        self.items, self.text = items, text

    def child_names(self) -> Iterable[str]:
        return [str(k) for k in self.items]

    def child(self, name: str) -> Optional[Node]:
        key = java_int(name)
        item = None if key is None else self.items.get(key)
        return None if item is None else Leaf(self.text(item))


def _by_int(items: dict, text: Callable) -> Node:
    return _IntKeyed(items, text)


class _TopicNode(Node):
    """``TopicImageNode``: name, id and a leaf per partition."""

    def __init__(self, topic: TopicImage) -> None:
        self.topic = topic

    def child_names(self) -> Iterable[str]:
        return ["name", "id", *(str(p) for p in self.topic.partitions)]

    def child(self, name: str) -> Optional[Node]:
        if name == "name":
            return Leaf(self.topic.name)
        if name == "id":
            return Leaf(self.topic.id)
        key = java_int(name)
        partition = None if key is None else self.topic.partitions.get(key)
        return None if partition is None else Leaf(partition_text(partition))


def _topics(image: MetadataImage, by_name: bool) -> Node:
    if by_name:
        return Dir({name: (lambda i=topic_id: _TopicNode(image.topics[i]))
                    for name, topic_id in image.topic_ids.items() if topic_id in image.topics})
    return Dir({topic_id: (lambda t=topic: _TopicNode(t))
                for topic_id, topic in image.topics.items()})


def _features(image: MetadataImage) -> Node:
    version = image.metadata_version
    children = {"metadataVersion": lambda: Leaf(
        "Optional.empty" if version is None else f"Optional[{METADATA_VERSIONS[version]}]")}
    for name, level in image.features.items():
        children[f"finalized_{name}"] = lambda v=level: Leaf(str(v))
    return Dir(children)


def config_resource_name(kind: int, name: str) -> str:
    """``TOPIC:orders``, or the bare type for a default resource (``BROKER``)."""
    type_name = RESOURCE_TYPES.get(kind, "UNKNOWN")
    return type_name if name == "" else f"{type_name}:{name}"


def _configs(image: MetadataImage) -> Node:
    """``ConfigurationsImageNode``: a child per resource, named as
    :func:`config_resource_name` (which ``resourceFromName`` parses back)."""
    return Dir({config_resource_name(kind, name): (lambda c=configs: Dir({
        key: (lambda e=entry: Leaf(e.value)) for key, entry in c.items()}))
        for (kind, name), configs in image.supported_configs().items()})


def client_quota_entity_name(entity: tuple[tuple[str, Optional[str]], ...]) -> str:
    """``ClientQuotasImageNode.clientQuotaEntityToString``: clientId(..)_ip(..)_user(..)."""
    names = dict(entity)
    parts = []
    for kind, label in (("client-id", "clientId"), ("ip", "ip"), ("user", "user")):
        value = names.get(kind)
        if value is not None:
            escaped = value.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            parts.append(f"{label}({escaped})")
    return "_".join(parts)


def decode_client_quota_entity(name: str) -> Optional[tuple[tuple[str, str], ...]]:
    """``ClientQuotasImageNode.decodeEntity``: the entity a child name denotes, None when it
    denotes none (the name of a default entity, ``""``, included)."""
    entries: dict[str, str] = {}
    kind: Optional[str] = None
    value: list[str] = []
    escaping = False
    i = 0
    while True:
        if i >= len(name):
            return None
        if kind is None:
            for label, entity_type in (("clientId(", "client-id"), ("ip(", "ip"),
                                       ("user(", "user")):
                if name.startswith(label, i):
                    kind, i = entity_type, i + len(label)
                    break
            else:
                return None
            continue
        c = name[i]
        i += 1
        if escaping:
            value.append(c)
            escaping = False
        elif c == ")":
            entries[kind], kind, value = "".join(value), None, []
        elif c == "\\":
            escaping = True
        else:
            value.append(c)
        if kind is not None:
            continue
        if i >= len(name):
            return tuple(sorted(entries.items()))
        if name[i] != "_":
            return None
        i += 1


class _ClientQuotas(Node):
    """``ClientQuotasImageNode``: children named by :func:`client_quota_entity_name`, found
    back by :func:`decode_client_quota_entity` as Kafka finds them."""

    def __init__(self, image: MetadataImage) -> None:
        self.quotas = image.client_quotas

    def child_names(self) -> Iterable[str]:
        return [client_quota_entity_name(entity) for entity in self.quotas]

    def child(self, name: str) -> Optional[Node]:
        entity = decode_client_quota_entity(name)
        quotas = None if entity is None else self.quotas.get(entity)
        if quotas is None:
            return None
        return Dir({key: (lambda v=value: Leaf(java_double_str(v)))
                    for key, value in quotas.items()})


def _client_quotas(image: MetadataImage) -> Node:
    return _ClientQuotas(image)


def provenance_text(image: MetadataImage) -> str:
    """``ProvenanceNode``: offset, epoch and the time as ``ISO_ZONED_DATE_TIME`` in UTC."""
    p = image.provenance
    return f"offset {p.offset}, epoch {p.epoch}, time {iso_zoned_utc(p.time_ms)}"


def iso_zoned_utc(ms: int) -> str:
    """``DateTimeFormatter.ISO_ZONED_DATE_TIME`` of an epoch millisecond at ``ZoneId.of("UTC")``:
    seconds always, the fraction only as long as it needs to be."""
    when = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    fraction = f"{when.microsecond // 1000:03d}".rstrip("0")
    return (f"{when:%Y-%m-%dT%H:%M:%S}{'.' + fraction if fraction else ''}Z[UTC]")


def _ints(values: Iterable[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _endpoints(endpoints: tuple[Endpoint, ...]) -> str:
    by_name = {e.listener: e for e in endpoints}  # a HashMap by listener name
    return ", ".join(
        f"Endpoint(listenerName='{e.listener}', securityProtocol="
        f"{SECURITY_PROTOCOLS.get(e.security_protocol, 'null')}, host='{e.host}', "
        f"port={e.port})" for e in (by_name[n] for n in java_sorted(by_name)))


def _version_range(low: int, high: int) -> str:
    if low == high:
        return str(low)
    return f"{low}+" if high == 32767 else f"{low}-{high}"


def _supported(features: tuple[tuple[str, int, int], ...]) -> str:
    by_name = {name: (low, high) for name, low, high in features}
    return ", ".join(f"{n}: {_version_range(*by_name[n])}" for n in java_sorted(by_name))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _list(values: Optional[Iterable[str]]) -> str:
    return "null" if values is None else "[" + ", ".join(values) + "]"


def broker_text(b: BrokerRegistration) -> str:
    """``BrokerRegistration.toString()``."""
    rack = "Optional.empty" if b.rack is None else f"Optional[{b.rack}]"
    return (f"BrokerRegistration(id={b.id}, epoch={b.epoch}, incarnationId={b.incarnation_id}, "
            f"listeners=[{_endpoints(b.endpoints)}], supportedFeatures={{"
            f"{_supported(b.features)}}}, rack={rack}, fenced={_bool(b.fenced)}, "
            f"inControlledShutdown={_bool(b.in_controlled_shutdown)}, "
            f"isMigratingZkBroker={_bool(b.is_migrating_zk_broker)}, "
            f"directories={_list(b.directories)}, "
            f"cordonedDirectories={_list(b.cordoned_directories)})")


def controller_text(c: ControllerRegistration) -> str:
    """``ControllerRegistration.toString()``."""
    return (f"ControllerRegistration(id={c.id}, incarnationId={c.incarnation_id}, "
            f"zkMigrationReady={_bool(c.zk_migration_ready)}, listeners=["
            f"{_endpoints(c.endpoints)}], supportedFeatures={{{_supported(c.features)}}})")


def partition_text(p: PartitionRegistration) -> str:
    """``PartitionRegistration.toString()``."""
    return (f"PartitionRegistration(replicas={_ints(p.replicas)}, directories="
            f"{_list(p.directories)}, isr={_ints(p.isr)}, removingReplicas="
            f"{_ints(p.removing_replicas)}, addingReplicas={_ints(p.adding_replicas)}, "
            f"elr={_ints(p.elr)}, lastKnownElr={_ints(p.last_known_elr)}, leader={p.leader}, "
            f"leaderRecoveryState={'RECOVERING' if p.leader_recovery_state else 'RECOVERED'}, "
            f"leaderEpoch={p.leader_epoch}, partitionEpoch={p.partition_epoch})")


def _name(names: tuple[str, ...], code: int) -> str:
    return names[code] if 0 <= code < len(names) else "UNKNOWN"


def acl_text(a) -> str:
    """The record ``StandardAcl``'s ``toString()`` (unknown codes are UNKNOWN, as
    ``fromCode`` maps them)."""
    return (f"StandardAcl[resourceType={_name(RESOURCE_TYPE_NAMES, a.resource_type)}, "
            f"resourceName={a.resource_name}, patternType="
            f"{_name(PATTERN_TYPE_NAMES, a.pattern_type)}, principal={a.principal}, "
            f"host={a.host}, operation={_name(OPERATION_NAMES, a.operation)}, "
            f"permissionType={_name(PERMISSION_NAMES, a.permission_type)}]")


def scram_text(c) -> str:
    """``ScramCredentialDataNode`` unredacted: the byte arrays in hex."""
    return (f"ScramCredentialData(salt={c.salt.hex()}, storedKey={c.stored_key.hex()}, "
            f"serverKey={c.server_key.hex()}, iterations={c.iterations})")


def token_text(t) -> str:
    """``DelegationTokenDataNode`` unredacted, parentheses as Kafka leaves them."""
    return (f"DelegationTokenDatatokenId={t.token_id}(owner={t.owner}(tokenRequester="
            f"{t.requester}(renewers={' '.join(t.renewers)}, issueTimestamp="
            f"{t.issue_timestamp}, maxTimestamp={t.max_timestamp}), expiryTimestamp="
            f"{t.expiry_timestamp}")
