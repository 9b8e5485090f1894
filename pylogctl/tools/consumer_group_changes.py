"""What ``consumer-groups --reset-offsets``, ``--delete`` and ``--delete-offsets`` change, and
changing it: records appended to ``__consumer_offsets`` of a stopped cluster.

Each action is planned from the groups as loaded (:class:`ConsumerGroups`), with Kafka's
rules and messages (``ConsumerGroupCommand``, the coordinator's ``validateDeleteGroup`` and
``deleteOffsets``), and the plan is what prints, with or without ``--execute``. Executing
appends each group's records as one batch to the group's offsets partition
(:func:`~pylogctl.groups.offsets_append.append_group_batches`), then loads the partitions
again and checks that the coordinator would now see exactly what was planned.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Sequence

from ..errors import ExitCode, PylogctlError, UsageError
from ..format.group_coordinator_records import TOPIC
from ..groups.group_metadata import Group, GroupState
from ..groups.java_hash_map import group_order, partition_order
from ..groups.offset_commits import TopicPartition
from ..groups.offset_reset import LogOffsets, ResetPlan, ResetPlanner, ResetSpec, parse_topic_args
from ..groups.offsets_append import AppendOutcome, append_group_batches
from ..groups.record_helpers import (KeyValue, group_tombstones, offset_commit_record,
                                     offset_tombstones)
from ..storage.clock import wall_clock_ms
from .consumer_groups import ConsumerGroups

class GroupError(NamedTuple):
    """A Kafka error as the Admin client reports it: its ``Errors`` name, the exception's
    class and message (pylogctl's own refusals have the name ``PYLOGCTL``)."""

    name: str
    exception: str
    message: str

    def __str__(self) -> str:
        return f"{self.exception}: {self.message}"


_E = "org.apache.kafka.common.errors."
GROUP_ID_NOT_FOUND = GroupError("GROUP_ID_NOT_FOUND", _E + "GroupIdNotFoundException",
                                "The group id does not exist.")
NON_EMPTY_GROUP = GroupError("NON_EMPTY_GROUP", _E + "GroupNotEmptyException",
                             "The group is not empty.")
GROUP_SUBSCRIBED_TO_TOPIC = GroupError("GROUP_SUBSCRIBED_TO_TOPIC",
                                       _E + "GroupSubscribedToTopicException",
                                       "The consumer group is actively subscribed to the topic")
UNKNOWN_TOPIC_OR_PARTITION = GroupError("UNKNOWN_TOPIC_OR_PARTITION",
                                        _E + "UnknownTopicOrPartitionException",
                                        "This server does not host this topic-partition.")


def _refusal(message: str) -> GroupError:
    return GroupError("PYLOGCTL", "pylogctl", message)


class VerificationError(PylogctlError):
    """After executing, the offsets partition does not load as planned: a bug."""

    exit_code = ExitCode.INTERNAL


@dataclass
class GroupDeletion:
    group: str
    error: GroupError | None = None


@dataclass
class OffsetDeletion:
    """``--delete-offsets`` of one group: the top-level error and each partition's."""

    group: str
    topics: list[str]
    error: GroupError | None = None
    partitions: dict[TopicPartition, GroupError | None] = field(default_factory=dict)
    deleted: list[TopicPartition] = field(default_factory=list)


class GroupChanges:
    """Plans and executes the group-changing actions over one :class:`ConsumerGroups`."""

    def __init__(self, groups: ConsumerGroups, now_ms: int | None = None) -> None:
        self.groups = groups
        self.now_ms = wall_clock_ms() if now_ms is None else now_ms
        self.writes: dict[int, list[tuple[str, list[KeyValue]]]] = {}
        self.expected: dict[str, dict[TopicPartition, int | None]] = {}
        self.deleted_groups: list[str] = []

    # -- group selection ------------------------------------------------------------------
    def _selected(self, group_ids: Sequence[str] | None) -> tuple[dict[str, Group], list[str]]:
        loaded = self.groups.load_groups(group_ids)
        if group_ids is None:
            ids = [g.group_id for g in loaded.values() if g.is_consumer_group]
        else:
            ids = list(dict.fromkeys(group_ids))
        return loaded, ids

    def _unwritable(self, group_id: str) -> str | None:
        """Why records of ``group_id`` cannot be written (its partition is missing)."""
        partition = self.groups.topic.partition_for(group_id)
        if partition is None:
            return f"no {TOPIC} partitions in the log dirs: nothing can be written"
        if partition not in self.groups.topic.present:
            return (f"Consumer group '{group_id}' would be stored in {TOPIC}-{partition}, which "
                    f"is in none of the log dirs given.")
        return None

    def _partitions(self, topics: Sequence[str] | None) -> list[TopicPartition]:
        """``--topic`` arguments as partitions (a bare topic: every partition on disk)."""
        out: list[TopicPartition] = []
        for topic, partitions in parse_topic_args(topics or []):
            if partitions is None:
                found = self.groups.log_dirs.partitions(topic)
                if not found:
                    raise UsageError(f"Topic '{topic}' is in none of the log dirs given "
                                     f"({UNKNOWN_TOPIC_OR_PARTITION})")
                partitions = found
            out += [TopicPartition(topic, p) for p in partitions]
        return list(dict.fromkeys(out))

    def _write(self, group_id: str, records: list[KeyValue]) -> None:
        if records:
            partition = self.groups.topic.partition_for(group_id)
            assert partition is not None
            self.writes.setdefault(partition, []).append((group_id, records))

    # -- --reset-offsets ------------------------------------------------------------------
    def plan_reset(self, group_ids: Sequence[str] | None, topics: Sequence[str] | None,
                   all_topics: bool, spec: ResetSpec) -> ResetPlan:
        """Kafka's reset plan; for ``--from-file`` without groups, the file's groups."""
        groups, ids = self._selected(group_ids)
        selected = None if all_topics else self._partitions(topics)
        planner = ResetPlanner(LogOffsets(self.groups.log_dirs, self.groups.end_offsets),
                               spec, self.now_ms)

        def partitions_for(group_id: str, group: Group | None) -> list[TopicPartition]:
            if selected is not None:
                return selected
            return sorted(group.offsets) if group is not None else []

        plan = planner.plan_groups(groups, ids, partitions_for, self._unwritable)
        for reset in plan.resets:
            if reset.error is not None:
                continue
            self.expected[reset.group] = dict(reset.offsets)
            self._write(reset.group, [offset_commit_record(reset.group, tp, offset, self.now_ms)
                                      for tp, offset in reset.offsets.items()])
        return plan

    # -- --delete ---------------------------------------------------------------------------
    def plan_delete(self, group_ids: Sequence[str] | None) -> list[GroupDeletion]:
        """``DeleteGroups``: only groups that exist and are Empty (in Kafka's order)."""
        groups, ids = self._selected(group_ids)
        out = []
        for group_id in group_order(ids):
            group = groups.get(group_id)
            unwritable = self._unwritable(group_id)
            if group is None or group.state == GroupState.DEAD:
                out.append(GroupDeletion(group_id, GROUP_ID_NOT_FOUND))
            elif group.state != GroupState.EMPTY:
                out.append(GroupDeletion(group_id, NON_EMPTY_GROUP))
            elif unwritable is not None:
                out.append(GroupDeletion(group_id, _refusal(unwritable)))
            else:
                out.append(GroupDeletion(group_id))
                self.deleted_groups.append(group_id)
                self.expected[group_id] = {tp: None for tp in group.offsets}
                self._write(group_id, group_tombstones(group))
        return out

    # -- --delete-offsets -------------------------------------------------------------------
    def plan_delete_offsets(self, group_id: str, topics: Sequence[str]) -> OffsetDeletion:
        """``OffsetDelete``: tombstones for the committed offsets of the partitions given,
        unless the group is subscribed to their topic."""
        groups, _ = self._selected([group_id])
        group = groups.get(group_id)
        result = OffsetDeletion(group_id, list(topics))
        requested: list[TopicPartition] = []
        for topic, partitions in parse_topic_args(topics):
            if partitions is None:
                found = self.groups.log_dirs.partitions(topic)
                if not found:
                    result.partitions[TopicPartition(topic, -1)] = UNKNOWN_TOPIC_OR_PARTITION
                    continue
                partitions = found
            requested += [TopicPartition(topic, p) for p in partitions]
        requested = list(dict.fromkeys(requested))
        unwritable = self._unwritable(group_id)
        if group is None or group.state == GroupState.DEAD or unwritable is not None:
            error = GROUP_ID_NOT_FOUND if unwritable is None else _refusal(unwritable)
            result.error = error
            result.partitions.update({tp: error for tp in requested})
        else:
            subscribed = _subscribed_topics(group)
            for tp in requested:
                result.partitions[tp] = (GROUP_SUBSCRIBED_TO_TOPIC if tp.topic in subscribed
                                         else None)
            if any(result.partitions[tp] is not None for tp in requested):
                result.error = GROUP_SUBSCRIBED_TO_TOPIC
            pending = {tp for p in group.pending_offsets.values() for tp in p}
            result.deleted = [tp for tp in sorted(requested) if result.partitions[tp] is None
                              and (tp in group.offsets or tp in pending)]
            self.expected[group_id] = {tp: None for tp in result.deleted}
            self._write(group_id, offset_tombstones(group_id, result.deleted))
        result.partitions = {tp: result.partitions[tp]
                             for tp in partition_order(result.partitions)}
        return result

    # -- executing --------------------------------------------------------------------------
    @property
    def record_count(self) -> int:
        return sum(len(r) for batches in self.writes.values() for _, r in batches)

    def execute(self, backup_dir: str | os.PathLike[str] | None = None) -> list[AppendOutcome]:
        """Append the planned records, then check what a coordinator would load."""
        load = self.groups.load
        assert load is not None, "plan first"
        ends = {p.partition: p.next_offset for p in load.partitions}
        outcomes = []
        for partition, batches in sorted(self.writes.items()):
            outcomes.append(append_group_batches(
                self.groups.log_dirs, partition, [records for _, records in batches],
                expected_end=ends[partition], now_ms=self.now_ms, backup_dir=backup_dir))
        if outcomes:
            self._verify()
        return outcomes

    def _verify(self) -> None:
        again = ConsumerGroups([d.path for d in self.groups.log_dirs.log_dirs],
                               self.groups.lag_from, self.groups.topic.given_count)
        groups = again.load_groups(list(self.expected))
        for group_id, offsets in self.expected.items():
            group = groups.get(group_id)
            if group_id in self.deleted_groups:
                if group is not None:
                    raise VerificationError(f"group {group_id} still loads after its deletion")
                continue
            for tp, offset in offsets.items():
                found = None if group is None else group.offsets.get(tp)
                if (found.offset if found is not None else None) != offset:
                    raise VerificationError(
                        f"after the append, {group_id} {tp} loads as "
                        f"{None if found is None else found.offset}, not {offset}")


def _subscribed_topics(group: Group) -> set[str]:
    """The topics a group's members subscribe to (Kafka's ``isSubscribedToTopic``); an Empty
    group subscribes to none."""
    if group.state == GroupState.EMPTY:
        return set()
    topics: set[str] = set()
    for m in group.members:
        subscribed = m.subscribed_topics
        topics.update(subscribed if subscribed is not None else {tp.topic for tp in m.assignment})
    return topics


def deletion_rows(deletions: Sequence[GroupDeletion]) -> list[dict[str, Any]]:
    return [{"group": d.group, "deleted": d.error is None,
             "error": None if d.error is None else str(d.error)} for d in deletions]


def offset_deletion_rows(result: OffsetDeletion) -> list[dict[str, Any]]:
    return [{"group": result.group, "topic": tp.topic,
             "partition": None if tp.partition < 0 else tp.partition,
             "status": "Successful" if error is None else f"Error: {error}"}
            for tp, error in result.partitions.items()]


def reset_rows(plan: ResetPlan) -> list[dict[str, Any]]:
    return [{"group": r.group, "topic": tp.topic, "partition": tp.partition,
             "newOffset": offset} for r in plan.resets for tp, offset in r.offsets.items()]
