"""What ``pylogctl streams-groups`` computes: kafka-streams-groups.sh's rows, from disk.

Streams groups (KIP-1071) are loaded from ``__consumer_offsets`` like every group
(:mod:`pylogctl.groups.streams_group`); their committed offsets are offset commits as any
group's; earliest and end offsets come from the data partitions (log start offset and high
watermark). The rows follow Kafka 4.4's ``StreamsGroupCommand``:

- offsets: a row per partition that a member's active tasks read (each task's partition of its
  subtopology's source and repartition-source topics), in ``HashMap`` order, with the committed
  offset and leader epoch of the group's commit to it (commits to topics outside the topology
  are not shown), the end offset, and the lag: end minus committed offset, or end minus log
  start offset when nothing is committed;
- members: a row per member, with its tasks as ``ACTIVE: 0:[0,1]; STANDBY: ...`` (and the
  target assignment's, ``TARGET-ACTIVE: ...``, with ``--verbose``);
- state: one row, with the coordinator's ``host:port (id)`` and the group's task assignor:
  the group config ``streams.assignor.name`` from the metadata log, else ``sticky``, the
  broker's default (``group.streams.assignors``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

from ..groups.group_metadata import Group, GroupState, GroupType
from ..groups.java_hash_map import partition_order
from ..groups.offset_commits import TopicPartition
from ..groups.streams_group import TaskAssignment, Tasks
from .consumer_groups import ConsumerGroups, java_order
from .consumer_groups import parse_states as parse_consumer_group_states
from .group_columns import check_view

DEFAULT_ASSIGNOR = "sticky"  # StickyTaskAssignor, the first of group.streams.assignors
ASSIGNOR_CONFIG = "streams.assignor.name"  # GroupConfig.STREAMS_ASSIGNOR_NAME_CONFIG
STATES = GroupState.STREAMS


def parse_states(text: str) -> set[str]:
    """``--state notready,stable``: the states a streams group can be in."""
    return parse_consumer_group_states(text, STATES)


@dataclass
class StreamsGroupReport:
    """One group of a describe: its state (None: no such streams group) and the view's rows."""

    group: str
    state: str | None
    num_members: int
    rows: list[dict[str, Any]]


def _task_text(tasks: Tasks, kind: str) -> str:
    """Kafka's ``prepareTaskType``: ``ACTIVE: 0:[0,1]; 1:[0]; `` (nothing without tasks)."""
    if not tasks:
        return ""
    return f"{kind}: " + "".join(f"{s}:[{','.join(map(str, ps))}]; " for s, ps in tasks)


def tasks_text(assignment: TaskAssignment, target: TaskAssignment | None) -> str:
    """Kafka's ``getTasksForPrinting``: current tasks, then the target's with ``--verbose``."""
    text = (_task_text(assignment.active, "ACTIVE") + _task_text(assignment.standby, "STANDBY")
            + _task_text(assignment.warmup, "WARMUP"))
    if target is not None:
        text += (_task_text(target.active, "TARGET-ACTIVE")
                 + _task_text(target.standby, "TARGET-STANDBY")
                 + _task_text(target.warmup, "TARGET-WARMUP"))
    return text


class StreamsGroups:
    """The streams groups of the given log dirs, described as kafka-streams-groups.sh would."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        self.groups = ConsumerGroups(paths)

    def streams_groups(self) -> dict[str, Group]:
        loaded = self.groups.load_groups(None)
        return {g: group for g, group in loaded.items()
                if group.group_type == GroupType.STREAMS}

    def list(self) -> list[dict[str, Any]]:
        return [{"group": g.group_id, "state": g.state}
                for g in sorted(self.streams_groups().values(), key=lambda g: java_order(g.group_id))]

    def describe(self, group_ids: Sequence[str] | None, view: str = "offsets",
                 verbose: bool = False) -> list[StreamsGroupReport]:
        check_view(view)
        groups = self.streams_groups()
        ids = sorted(groups, key=java_order) if group_ids is None else list(group_ids)
        reports = []
        for group_id in ids:
            group = groups.get(group_id)
            if group is None:
                reports.append(StreamsGroupReport(group_id, None, 0, []))
            else:
                rows = getattr(self, f"_{view}_rows")(group, verbose)
                reports.append(StreamsGroupReport(group_id, group.state, len(group.members),
                                                  rows))
        return reports

    def _offsets_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        detail = group.streams
        assert detail is not None
        read = {TopicPartition(t, p) for m in detail.members
                for t, p in detail.input_partitions(m.assignment.active)}
        inputs = {t for s in detail.subtopologies for t in s.input_topics}
        rows = []
        for tp in partition_order(sorted(read)):
            end = self.groups.end_offsets.get(tp.topic, tp.partition)
            committed = group.offsets.get(tp) if tp.topic in inputs else None
            if committed is not None:
                lag = None if end.offset is None else end.offset - committed.offset
            elif end.offset is not None and end.replica is not None:
                lag = end.offset - end.replica.log_start_offset
            else:
                lag = None
            row: dict[str, Any] = {"group": group.group_id, "topic": tp.topic,
                                   "partition": tp.partition}
            if verbose:
                epoch = None if committed is None else committed.leader_epoch
                row.update(currentOffset=None if committed is None else committed.offset,
                           leaderEpoch=None if epoch is None or epoch < 0 else epoch,
                           logEndOffset=end.offset)
            row["lag"] = lag
            rows.append(row)
        return rows

    def _members_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        detail = group.streams
        assert detail is not None
        rows = []
        for m in detail.members:
            row: dict[str, Any] = {"group": group.group_id}
            if verbose:
                row.update(targetAssignmentEpoch=group.target_assignment_epoch,
                           topologyEpoch=detail.topology_epoch)
            row["memberId"] = m.member_id
            if verbose:
                row.update(memberProtocol="streams", memberEpoch=m.member_epoch)
            row.update(processId=m.process_id, clientId=m.client_id,
                       assignments=tasks_text(m.assignment,
                                              m.target_assignment if verbose else None))
            rows.append(row)
        return rows

    def _state_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        row: dict[str, Any] = {"group": group.group_id,
                               "coordinator": self.groups.coordinator(group, separator=" "),
                               "assignor": self.groups.group_config(group.group_id,
                                                                    ASSIGNOR_CONFIG)
                               or DEFAULT_ASSIGNOR,
                               "state": group.state}
        if verbose:
            row.update(groupEpoch=group.generation,
                       targetAssignmentEpoch=group.target_assignment_epoch)
        row["numMembers"] = len(group.members)
        return [row]
