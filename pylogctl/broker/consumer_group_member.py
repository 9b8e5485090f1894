"""One member of a KIP-848 consumer group (Kafka's ``ConsumerGroupMember``): what it subscribes
to and how it reached the coordinator (its ``ConsumerGroupMemberMetadata`` record), and where
its assignment stands (its ``ConsumerGroupCurrentMemberAssignment`` record: epoch, previous
epoch, state, assigned partitions with the epoch each was assigned in, partitions pending
revocation). Immutable: the coordinator builds the next member and writes its records, then
replays them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import Any

# MemberState values as the current-assignment record stores them
STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS, UNKNOWN = 0, 1, 2, 127
LEFT_STATIC_EPOCH = -2  # a static member that left for now (its instance id stays reserved)

EpochAssignment = dict[uuid.UUID, dict[int, int]]  # topic id -> partition -> assignment epoch


@dataclass(frozen=True)
class ConsumerGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: int = STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = ""
    server_assignor: str | None = None
    classic_member_metadata: dict[str, Any] | None = None
    assigned: EpochAssignment = field(default_factory=dict, compare=True)
    pending_revocation: EpochAssignment = field(default_factory=dict, compare=True)

    # -- what Kafka compares and asks --------------------------------------------------------
    def metadata_key(self) -> tuple[Any, ...]:
        """The fields of the member metadata record: a change means a new record."""
        return (self.instance_id, self.rack_id, self.rebalance_timeout_ms, self.client_id,
                self.client_host, self.subscribed_topic_names, self.subscribed_topic_regex,
                self.server_assignor, self.classic_member_metadata is not None)

    def assignment_key(self) -> tuple[Any, ...]:
        return (self.member_epoch, self.previous_member_epoch, self.state, self.assigned,
                self.pending_revocation)

    def is_reconciled_to(self, assignment_epoch: int) -> bool:
        return self.state == STABLE and self.member_epoch == assignment_epoch

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic_member_metadata is not None

    def assignment_epoch(self, topic_id: uuid.UUID, partition: int) -> int | None:
        epoch = self.assigned.get(topic_id, {}).get(partition)
        if epoch is None:
            epoch = self.pending_revocation.get(topic_id, {}).get(partition)
        return epoch

    def owned_subset_of_assigned(self, owned: dict[uuid.UUID, frozenset[int]] | None) -> bool:
        """Kafka's ``isSubset(ownedTopicPartitions, assignedPartitions)``."""
        if owned is None:
            return False
        return all(p in self.assigned.get(t, {}) for t, ps in owned.items() for p in ps)

    # -- records ------------------------------------------------------------------------------
    def metadata_value(self) -> dict[str, Any]:
        return {"instanceId": self.instance_id, "rackId": self.rack_id,
                "clientId": self.client_id, "clientHost": self.client_host,
                "subscribedTopicNames": sorted(self.subscribed_topic_names),
                "subscribedTopicRegex": self.subscribed_topic_regex,
                "rebalanceTimeoutMs": self.rebalance_timeout_ms,
                "serverAssignor": self.server_assignor,
                "classicMemberMetadata": self.classic_member_metadata}

    def assignment_value(self) -> dict[str, Any]:
        return {"memberEpoch": self.member_epoch, "previousMemberEpoch": self.previous_member_epoch,
                "state": self.state, "assignedPartitions": _with_epochs(self.assigned),
                "partitionsPendingRevocation": _with_epochs(self.pending_revocation)}

    def with_metadata(self, value: dict[str, Any]) -> "ConsumerGroupMember":
        return replace(self, instance_id=value.get("instanceId"), rack_id=value.get("rackId"),
                        client_id=value.get("clientId", ""),
                        client_host=value.get("clientHost", ""),
                        subscribed_topic_names=frozenset(value.get("subscribedTopicNames", ())),
                        subscribed_topic_regex=value.get("subscribedTopicRegex"),
                        rebalance_timeout_ms=value.get("rebalanceTimeoutMs", -1),
                        server_assignor=value.get("serverAssignor"),
                        classic_member_metadata=value.get("classicMemberMetadata"))

    def with_assignment(self, value: dict[str, Any]) -> "ConsumerGroupMember":
        return replace(self, member_epoch=value["memberEpoch"],
                        previous_member_epoch=value["previousMemberEpoch"],
                        state=value["state"] if value["state"] in (
                            STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS) else UNKNOWN,
                        assigned=_from_epochs(value["assignedPartitions"], value["memberEpoch"]),
                        pending_revocation=_from_epochs(value["partitionsPendingRevocation"],
                                                        value["memberEpoch"]))


def _with_epochs(assignment: EpochAssignment) -> list[dict[str, Any]]:
    return [{"topicId": topic_id.bytes, "partitions": list(partitions),
             "assignmentEpochs": list(partitions.values())}
            for topic_id, partitions in assignment.items()]


def _from_epochs(entries: list[dict[str, Any]], member_epoch: int) -> EpochAssignment:
    """Records older than the per-partition epochs (before Kafka 4.2) have none: the member's
    epoch stands for all, as Kafka reads them."""
    result: EpochAssignment = {}
    for entry in entries:
        epochs = entry.get("assignmentEpochs") or [member_epoch] * len(entry["partitions"])
        result[uuid_field(entry["topicId"])] = dict(zip(entry["partitions"], epochs))
    return result


def uuid_field(value: Any) -> uuid.UUID:
    """A decoded uuid field (16 bytes) as a UUID."""
    return value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value))
