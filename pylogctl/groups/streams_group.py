"""KIP-1071 streams groups: records 17 and 19-23 of ``__consumer_offsets`` folded into a
:class:`Group`.

A streams group is persisted as the consumer protocol's groups are, one record per thing, each
the full current state of it: the group epoch and the topology epoch its topics were validated
for (StreamsGroupMetadata, 17), each member's metadata (19: client, process id), the target
assignment epoch (20) and each member's target tasks (21), each member's current tasks and
epoch (22), and the topology (23: subtopologies and their source and repartition topics).
Tasks are ``(subtopology id, partitions)``: a task reads that partition of each of its
subtopology's source topics.

The state is derived as Kafka's ``StreamsGroup.maybeUpdateGroupState`` derives it: ``Empty``
without members, ``NotReady`` while the topology is missing or not the validated one,
``Assigning`` while the group epoch is ahead of the target assignment epoch, ``Reconciling``
while a member is not stable at the target epoch, else ``Stable``. Members are listed in the
order the coordinator's ``TimelineHashMap`` iterates them (:func:`timeline_order`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..format.group_coordinator_records import GroupRecordType as T
from .group_metadata import Group, GroupState, GroupType, Member, topic_partitions
from .java_hash_map import timeline_order
from .partitioner import java_string_hash

STREAMS_GROUP_TYPES = frozenset({T.STREAMS_GROUP_METADATA, T.STREAMS_GROUP_MEMBER_METADATA,
                                 T.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA,
                                 T.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
                                 T.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                                 T.STREAMS_GROUP_TOPOLOGY})
MEMBER_STATE_STABLE = 1  # streams.MemberState.STABLE (the consumer protocol's is 0)

Tasks = tuple[tuple[str, tuple[int, ...]], ...]  # (subtopology id, partitions), sorted


@dataclass(frozen=True)
class TaskAssignment:
    """Kafka's ``TasksTuple``: active, standby and warm-up tasks."""

    active: Tasks = ()
    standby: Tasks = ()
    warmup: Tasks = ()

    @classmethod
    def from_record(cls, value: dict[str, Any]) -> TaskAssignment:
        return cls(*(_tasks(value.get(name) or ())
                     for name in ("activeTasks", "standbyTasks", "warmupTasks")))


def _tasks(task_ids: Iterable[dict[str, Any]]) -> Tasks:
    """As the describe response lists them: subtopologies sorted, partitions sorted."""
    merged: dict[str, set[int]] = {}
    for t in task_ids:
        merged.setdefault(t["subtopologyId"], set()).update(t["partitions"])
    return tuple((s, tuple(sorted(merged[s]))) for s in sorted(merged))


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...]
    repartition_source_topics: tuple[str, ...]

    @property
    def input_topics(self) -> tuple[str, ...]:
        """What each of its tasks reads a partition of (kafka-streams-groups' offsets view)."""
        return self.source_topics + self.repartition_source_topics


@dataclass(frozen=True)
class StreamsMember:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    process_id: str
    topology_epoch: int
    member_epoch: int
    state: int
    assignment: TaskAssignment
    target_assignment: TaskAssignment

    def is_reconciled_to(self, assignment_epoch: int) -> bool:
        return self.state == MEMBER_STATE_STABLE and self.member_epoch == assignment_epoch


@dataclass(frozen=True)
class StreamsGroupDetail:
    """What a streams group holds beyond :class:`Group`'s common fields."""

    topology_epoch: int  # -1: no topology
    validated_topology_epoch: int
    subtopologies: tuple[Subtopology, ...]
    members: tuple[StreamsMember, ...]  # in the coordinator's iteration order

    def input_partitions(self, tasks: Tasks) -> list[tuple[str, int]]:
        """The topic partitions ``tasks`` read (an unknown subtopology reads nothing)."""
        by_id = {s.subtopology_id: s for s in self.subtopologies}
        return [(topic, p) for sid, parts in tasks if sid in by_id
                for topic in by_id[sid].input_topics for p in parts]


@dataclass
class StreamsGroupRecords:
    """The live streams-group records of one group, collected by the loader in any order."""

    group_id: str
    epoch: int = 0
    validated_topology_epoch: int = -1
    assignment_epoch: int = -1
    topology: dict[str, Any] | None = None
    members: dict[str, dict[int, tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    last_offset: int = -1

    def add(self, record_type: int, key: dict[str, Any], value: dict[str, Any],
            offset: int) -> None:
        self.last_offset = max(self.last_offset, offset)
        if record_type == T.STREAMS_GROUP_METADATA:
            self.epoch = value["epoch"]
            self.validated_topology_epoch = value.get("validatedTopologyEpoch", -1)
        elif record_type == T.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = value["assignmentEpoch"]
        elif record_type == T.STREAMS_GROUP_TOPOLOGY:
            self.topology = value
        else:
            self.members.setdefault(key["memberId"], {})[record_type] = (offset, value)

    def build(self, partition: int) -> Group:
        detail = StreamsGroupDetail(
            topology_epoch=-1 if self.topology is None else self.topology["epoch"],
            validated_topology_epoch=self.validated_topology_epoch,
            subtopologies=tuple(
                Subtopology(s["subtopologyId"], tuple(s["sourceTopics"]),
                            tuple(t["name"] for t in s["repartitionSourceTopics"]))
                for s in (self.topology or {}).get("subtopologies", ())),
            members=tuple(self._members()))
        members = tuple(Member(
            member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
            client_host=m.client_host, member_epoch=m.member_epoch,
            assignment=topic_partitions((t, [p]) for t, p in
                                        detail.input_partitions(m.assignment.active)))
            for m in detail.members)
        return Group(self.group_id, partition, GroupType.STREAMS, "streams",
                     self._state(detail), generation=self.epoch,
                     target_assignment_epoch=self.assignment_epoch, members=members,
                     registration_offset=self.last_offset, streams=detail)

    def _members(self) -> list[StreamsMember]:
        found = []
        for member_id, records in self.members.items():
            meta = records.get(T.STREAMS_GROUP_MEMBER_METADATA, (None, None))[1]
            current = records.get(T.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, (None, None))[1]
            target = records.get(T.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, (None, None))[1]
            if meta is None and current is None:
                continue  # only a target assignment left: not a member
            meta = meta or {}
            joined = min(o for t, (o, _) in records.items()
                         if t != T.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER)
            found.append((joined, StreamsMember(
                member_id=member_id, instance_id=meta.get("instanceId"),
                client_id=meta.get("clientId", ""), client_host=meta.get("clientHost", ""),
                process_id=meta.get("processId", ""),
                topology_epoch=meta.get("topologyEpoch", -1),
                member_epoch=current["memberEpoch"] if current else 0,
                state=current["state"] if current else MEMBER_STATE_STABLE,
                assignment=TaskAssignment.from_record(current or {}),
                target_assignment=TaskAssignment.from_record(target or {}))))
        found.sort(key=lambda f: f[0])  # insertion order: the first record of each member
        return timeline_order([m for _, m in found], lambda m: java_string_hash(m.member_id))

    def _state(self, detail: StreamsGroupDetail) -> str:
        if not detail.members:
            return GroupState.EMPTY
        if detail.topology_epoch == -1 or detail.topology_epoch != self.validated_topology_epoch:
            return GroupState.NOT_READY
        if self.epoch > self.assignment_epoch:
            return GroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in detail.members):
            return GroupState.RECONCILING
        return GroupState.STABLE
