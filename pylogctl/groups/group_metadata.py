"""A consumer group as the coordinator rebuilds it from ``__consumer_offsets``.

:class:`Group` is what a load yields per group id: its type, state, members and committed
offsets. Classic groups come from their last ``GroupMetadataValue`` (record type 2, value
versions 0-4); the state is ``Empty`` when that value lists no members, else ``Stable``, as
Kafka's loader restores it (``GroupMetadataManager.replay``). Liveness is not on disk: a group
shown ``Stable`` is the membership of the last completed rebalance, whose members may be gone.
A group with committed offsets and no registration is a "simple" group: ``Empty``, protocol
type ``""``. Members of ``consumer`` groups have their assignment decoded from the embedded
consumer protocol (their subscription on demand).

KIP-848 groups (records 3-8) are folded by :mod:`pylogctl.groups.consumer_group` into the same
:class:`Group`, as are share groups (:mod:`.share_group`) and streams groups
(:mod:`.streams_group`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import CorruptRecordError
from ..format.group_coordinator_records import (CONSUMER_PROTOCOL_ASSIGNMENT,
                                                CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                decode_consumer_protocol)
from .offset_commits import OffsetAndMetadata, TopicPartition

if TYPE_CHECKING:
    from .streams_group import StreamsGroupDetail

CONSUMER_PROTOCOL_TYPE = "consumer"


class GroupType:
    """Kafka's ``GroupType`` names, as the tools print them."""

    CLASSIC = "Classic"
    CONSUMER = "Consumer"
    ALL = (CLASSIC, CONSUMER)  # what kafka-consumer-groups.sh lists and describes
    SHARE = "Share"  # KIP-932: kafka-share-groups.sh
    STREAMS = "Streams"  # KIP-1071: kafka-streams-groups.sh


class GroupState:
    """Kafka's group state names (``ConsumerGroupState`` / ``GroupState``; ``NotReady`` is
    ``StreamsGroupState``'s alone)."""

    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    NOT_READY = "NotReady"
    ALL = (PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD, EMPTY, ASSIGNING,
           RECONCILING)  # the order Kafka lists them in its errors
    REBALANCING = (PREPARING_REBALANCE, COMPLETING_REBALANCE, ASSIGNING, RECONCILING)
    STREAMS = (EMPTY, NOT_READY, ASSIGNING, RECONCILING, STABLE, DEAD)  # StreamsGroupState's


@dataclass(frozen=True)
class Member:
    """A group member. ``subscription`` holds a classic member's protocol metadata (decoded
    on demand by :attr:`subscribed_topics`, as nothing the tool prints needs it); the epochs,
    target assignment and ``upgraded`` (a KIP-848 member not speaking the classic protocol)
    exist for KIP-848 members only."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[TopicPartition, ...]
    subscription: bytes | None = None
    subscribed_topic_names: tuple[str, ...] | None = None  # KIP-848 members
    rebalance_timeout_ms: int | None = None
    session_timeout_ms: int | None = None
    member_epoch: int | None = None
    target_assignment: tuple[TopicPartition, ...] | None = None
    upgraded: bool | None = None

    @property
    def subscribed_topics(self) -> tuple[str, ...] | None:
        """The topics the member subscribes to (None: unknown or undecodable)."""
        if self.subscribed_topic_names is not None or not self.subscription:
            return self.subscribed_topic_names
        try:
            _, sub = decode_consumer_protocol(self.subscription, CONSUMER_PROTOCOL_SUBSCRIPTION)
        except CorruptRecordError:
            return None
        return tuple(sub["topics"])


@dataclass
class Group:
    """One group id's state after a load.

    ``protocol`` is the classic group's selected assignor (the KIP-848 group's server
    assignor); ``generation`` the classic generation (the KIP-848 group epoch).
    ``pending_offsets`` are transactional commits whose transaction has no marker yet: not
    visible to consumers. ``registration_offset`` is where the registration record sits in
    ``__consumer_offsets`` (None for a simple group).
    """

    group_id: str
    coordinator_partition: int
    group_type: str = GroupType.CLASSIC
    protocol_type: str = ""
    state: str = GroupState.EMPTY
    generation: int | None = None
    protocol: str | None = None
    leader: str | None = None
    current_state_timestamp: int | None = None
    target_assignment_epoch: int | None = None
    members: tuple[Member, ...] = ()
    offsets: dict[TopicPartition, OffsetAndMetadata] = field(default_factory=dict)
    pending_offsets: dict[int, dict[TopicPartition, OffsetAndMetadata]] = field(
        default_factory=dict)
    registration_offset: int | None = None
    notes: list[str] = field(default_factory=list)
    # a share group's partitions with share state (ShareGroupStatePartitionMetadata), as
    # (topic id, topic name, partition)
    share_partitions: tuple[tuple[str, str, int], ...] = ()
    streams: StreamsGroupDetail | None = None  # a streams group's topology and tasks
    # a KIP-848 group's resolved subscription regexes (ConsumerGroupRegularExpression, 16)
    regular_expressions: tuple[str, ...] = ()

    @property
    def is_consumer_group(self) -> bool:
        """Listed by ``kafka-consumer-groups.sh`` (protocol type ``consumer`` or none; not a
        share or streams group, which have tools of their own)."""
        return self.group_type in GroupType.ALL and self.protocol_type in (CONSUMER_PROTOCOL_TYPE,
                                                                           "")


def classic_group(group_id: str, partition: int, value: dict[str, Any],
                  registration_offset: int) -> Group:
    """The group a ``GroupMetadataValue`` restores (offsets are attached by the loader)."""
    protocol_type = value["protocolType"] or ""
    members = []
    notes: list[str] = []
    for m in value["members"]:
        assignment: tuple[TopicPartition, ...] = ()
        if protocol_type == CONSUMER_PROTOCOL_TYPE and m["assignment"]:
            assignment = _assignment(m, notes)
        timeout = m.get("rebalanceTimeout", -1)
        members.append(Member(
            member_id=m["memberId"], group_instance_id=m.get("groupInstanceId"),
            client_id=m["clientId"], client_host=m["clientHost"], assignment=assignment,
            subscription=m["subscription"] if protocol_type == CONSUMER_PROTOCOL_TYPE else None,
            rebalance_timeout_ms=m["sessionTimeout"] if timeout == -1 else timeout,
            session_timeout_ms=m["sessionTimeout"]))
    stamp = value.get("currentStateTimestamp", -1)
    return Group(group_id, partition, GroupType.CLASSIC, protocol_type,
                 GroupState.STABLE if members else GroupState.EMPTY,
                 generation=value["generation"], protocol=value["protocol"],
                 leader=value["leader"], current_state_timestamp=None if stamp == -1 else stamp,
                 members=tuple(members), registration_offset=registration_offset, notes=notes)


def _assignment(member: dict[str, Any], notes: list[str]) -> tuple[TopicPartition, ...]:
    """The partitions in a member's consumer-protocol assignment bytes."""
    try:
        _, assigned = decode_consumer_protocol(member["assignment"], CONSUMER_PROTOCOL_ASSIGNMENT)
    except CorruptRecordError as exc:
        notes.append(f"member {member['memberId']}: undecodable assignment ({exc.message})")
        return ()
    return topic_partitions((a["topic"], a["partitions"]) for a in assigned["assignedPartitions"])


def topic_partitions(pairs: Iterable[tuple[str, Iterable[int]]]) -> tuple[TopicPartition, ...]:
    """Flatten ``(topic, partitions)`` pairs, each partition once, in the order given."""
    return tuple(dict.fromkeys(TopicPartition(t, p) for t, ps in pairs for p in ps))
