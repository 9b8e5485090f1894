"""What ``pylogctl share-groups`` computes: kafka-share-groups.sh's rows, from disk.

Share groups (KIP-932) are loaded from ``__consumer_offsets`` like every group
(:mod:`pylogctl.groups.share_group`), their partitions' acknowledged offsets from
``__share_group_state`` (:mod:`pylogctl.groups.share_group_state`), end offsets from the data
partitions (the high watermark, as for consumer groups). The rows follow Kafka's
``ShareGroupCommand``: groups in ``TreeMap`` order; the offsets view a row per share partition
(topic, then partition) with the start offset and lag; the members view a row per member by
member id, with its assignment as ``topic:0,1;other:2``; the state view one row, with the
coordinator's ``host:port  (id)`` as ``consumer-groups`` finds it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

from ..groups.group_metadata import Group, GroupType
from ..groups.share_group_state import SharePartitionState, load_share_states
from .consumer_groups import ConsumerGroups, java_order
from .group_columns import check_view


@dataclass
class ShareGroupReport:
    """One group of a describe: its state (None: no such share group) and the view's rows."""

    group: str
    state: str | None
    rows: list[dict[str, Any]]


def assignment_text(partitions: Sequence[Any]) -> str:
    """Kafka's ``topic:0,1;other:2``: topics sorted as strings, partitions numerically."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ";".join(sorted(f"{t}:{','.join(map(str, sorted(ps)))}"
                           for t, ps in by_topic.items()))


class ShareGroups:
    """The share groups of the given log dirs, described as kafka-share-groups.sh would."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        self.groups = ConsumerGroups(paths)
        self._states: dict[tuple[str, str, int], SharePartitionState] | None = None
        self.notes: list[str] = []

    def share_groups(self) -> dict[str, Group]:
        loaded = self.groups.load_groups(None)
        return {g: group for g, group in loaded.items() if group.group_type == GroupType.SHARE}

    def states(self) -> dict[tuple[str, str, int], SharePartitionState]:
        if self._states is None:
            self._states, notes = load_share_states(self.groups.log_dirs)
            self.notes += notes
        return self._states

    def list(self, states: set[str] | None = None) -> list[dict[str, Any]]:
        return [{"group": g.group_id, "state": g.state}
                for g in sorted(self.share_groups().values(), key=lambda g: java_order(g.group_id))
                if not states or g.state in states]

    def describe(self, group_ids: Sequence[str] | None, view: str = "offsets",
                 verbose: bool = False) -> list[ShareGroupReport]:
        check_view(view)
        groups = self.share_groups()
        ids = list(groups) if group_ids is None else list(dict.fromkeys(group_ids))
        reports = []
        for group_id in sorted(ids, key=java_order):
            group = groups.get(group_id)
            if group is None:
                reports.append(ShareGroupReport(group_id, None, []))
            else:
                rows = getattr(self, f"_{view}_rows")(group, verbose)
                reports.append(ShareGroupReport(group_id, group.state, rows))
        return reports

    def _offsets_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        states = self.states()
        rows = []
        for topic_id, topic, partition in sorted(group.share_partitions,
                                                 key=lambda t: (t[1], t[2])):
            state = states.get((group.group_id, topic_id, partition))
            end = self.groups.end_offsets.get(topic, partition).offset
            row: dict[str, Any] = {"group": group.group_id, "topic": topic,
                                   "partition": partition}
            if verbose:
                row["leaderEpoch"] = None if state is None else state.leader_epoch
            row.update(startOffset=None if state is None else state.start_offset,
                       lag=None if state is None else state.lag(end))
            rows.append(row)
        return rows

    def _members_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        rows = []
        for m in sorted(group.members, key=lambda m: java_order(m.member_id)):
            row: dict[str, Any] = {"group": group.group_id, "consumerId": m.member_id,
                                   "host": m.client_host, "clientId": m.client_id,
                                   "numPartitions": len(m.assignment)}
            if verbose:
                row["memberEpoch"] = m.member_epoch
            row["assignment"] = assignment_text(m.assignment)
            rows.append(row)
        return rows

    def _state_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        row: dict[str, Any] = {"group": group.group_id,
                               "coordinator": self.groups.coordinator(group),
                               "state": group.state}
        if verbose:
            row.update(groupEpoch=group.generation, assignmentEpoch=group.target_assignment_epoch)
        row["numMembers"] = len(group.members)
        return [row]
