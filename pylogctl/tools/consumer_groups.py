"""What ``pylogctl consumer-groups`` computes: kafka-consumer-groups.sh's rows, from disk.

Kafka's tool (``ConsumerGroupCommand``, newest trunk) asks the coordinators to describe each
group and the leaders for end offsets; here both come from the log dirs: the groups from
``__consumer_offsets`` (:mod:`pylogctl.groups`), the end offsets from the data partitions.
The rows follow the tool's rules:

- groups in ``TreeMap`` order (Java string order); ``--list`` shows groups whose protocol type
  is ``consumer`` or none, and KIP-848 groups, as ``Admin.listGroups`` for consumer groups;
- offsets view: for each member with partitions (most partitions first) a row per partition,
  sorted by topic then partition, then the committed partitions nobody owns, with ``-`` for
  owner; LAG is the end offset minus the committed offset, when both are known (topic names
  are ASCII, so Python's order is Java's there);
- members view: one row per member, with GROUP-INSTANCE-ID only when a member has one;
- state view: one row; the coordinator is Kafka's ``host:port  (id)`` of the broker holding the
  replica read, its endpoint as registered in the KRaft metadata log of the log dirs given (the
  first advertised listener: offline there is no connection to say which listener a client
  would use); without a metadata log (ZooKeeper-mode dirs) the offsets partition stands in for
  ``host:port``.

A group that does not exist is ``Dead`` (Kafka's describe answers that for an unknown group);
one of another protocol type (Connect workers, Schema Registry) is reported as Kafka's Admin
client reports it. The rows are plain dicts with the camelCase column names (None for ``-``),
ready for the text, JSON and YAML formatters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import UsageError
from ..format.group_coordinator_records import TOPIC
from ..format.java_string import java_order
from ..groups.committed_offsets import CommittedOffsets, Provenance
from ..groups.group_metadata import Group, GroupState, GroupType
from ..groups.offset_commits import TopicPartition
from .group_columns import check_view


def parse_states(text: str, valid: Sequence[str] = GroupState.ALL) -> set[str]:
    """``--state stable,empty``: Kafka's case-insensitive parse and its error; ``valid``: the
    states of the group type, in the order Kafka names them."""
    by_upper = {s.upper(): s for s in valid}
    states = {by_upper.get(s.strip().upper()) for s in text.split(",")}
    if None in states:
        raise UsageError(f"Invalid state list '{text}'. Valid states are: {', '.join(valid)}")
    return states  # type: ignore[return-value]


def parse_types(text: str) -> set[str]:
    """``--type classic,consumer``: Kafka's case-insensitive parse and its error."""
    by_lower = {t.lower(): t for t in GroupType.ALL}
    types = {by_lower.get(t.strip().lower()) for t in text.split(",")}
    if None in types:
        raise UsageError(f"Invalid types list '{text}'. Valid types are: "
                         f"{', '.join(t.lower() for t in GroupType.ALL)}")
    return types  # type: ignore[return-value]


@dataclass
class GroupReport:
    """One group of a describe: its state (None: it does not exist), the rows of the view,
    and Kafka's message for it (``error`` goes to stdout, as Kafka prints it)."""

    group: str
    state: str | None
    rows: list[dict[str, Any]]
    error: str | None = None

    @property
    def notice(self) -> str | None:
        """Kafka's stderr line for an empty or rebalancing group."""
        if self.error is not None:
            return None
        if self.state == GroupState.EMPTY:
            return f"Consumer group '{self.group}' has no active members."
        if self.state in GroupState.REBALANCING:
            return f"Warning: Consumer group '{self.group}' is rebalancing."
        return None


class ConsumerGroups(CommittedOffsets):
    """The groups of the given log dirs (their reading and lag: :class:`CommittedOffsets`),
    described as kafka-consumer-groups.sh would."""

    def provenance(self, view: str, verbose: bool = False) -> Provenance:
        """What the last list or describe read, and what the columns of ``view`` (``list``,
        ``list-states`` or one of :data:`~.group_columns.VIEWS`) mean; the replicas chosen among
        several in one line, or with ``verbose`` one per partition."""
        meaning = []
        if view != "list":
            meaning.append("as last persisted in __consumer_offsets: states and members are "
                           "those of the last rebalance written to disk, not live ones")
        if view == "offsets":
            meaning.append("LOG-END-OFFSET is " + (
                "each partition's high watermark (replication-offset-checkpoint, at most the "
                "log end offset)" if self.lag_from == "hw" else
                "each partition's log end offset (--lag-from leo)"))
        return self.reading_provenance(meaning, verbose)

    # -- --list -------------------------------------------------------------------------
    def list(self, states: set[str] | None = None, types: set[str] | None = None
             ) -> list[dict[str, Any]]:
        """``--list``: ``{group, type, state}`` per consumer group, filtered."""
        rows = []
        for group in sorted(self.load_groups(None).values(), key=lambda g: java_order(g.group_id)):
            if not group.is_consumer_group:
                continue
            if (states and group.state not in states) or (types and group.group_type not in types):
                continue
            rows.append({"group": group.group_id, "type": group.group_type,
                         "state": group.state})
        return rows

    # -- --describe ---------------------------------------------------------------------
    def describe(self, group_ids: Sequence[str] | None, view: str = "offsets",
                 verbose: bool = False) -> list[GroupReport]:
        """``--describe`` of ``group_ids`` (None: ``--all-groups``) in one of
        :data:`~.group_columns.VIEWS`."""
        check_view(view)
        groups = self.load_groups(group_ids)
        if group_ids is None:
            ids = [g.group_id for g in groups.values() if g.is_consumer_group]
        else:
            ids = list(dict.fromkeys(group_ids))
        reports = []
        absent = set(self.load.absent) if self.load else set()
        for group_id in sorted(ids, key=java_order):
            group = groups.get(group_id)
            partition = self.topic.partition_for(group_id)
            if group is None and partition in absent:
                reports.append(GroupReport(group_id, None, [], (
                    f"Consumer group '{group_id}' would be stored in {TOPIC}-{partition}, "
                    f"which is in none of the log dirs given.")))
            elif group is None:
                reports.append(GroupReport(group_id, None, [], f"Consumer group '{group_id}' "
                                           f"does not exist."))
            elif not group.is_consumer_group:
                reports.append(GroupReport(group_id, group.state, [], (
                    f"Executing consumer group command failed due to GroupId {group_id} is "
                    f"not a consumer group ({group.protocol_type}).")))
            else:
                rows = getattr(self, f"_{view}_rows")(group, verbose)
                reports.append(GroupReport(group_id, group.state, rows))
        return reports

    def _offsets_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        rows = []
        for p in self.partition_lags(group):
            owner = (None, None, None) if p.member is None else (
                p.member.member_id, p.member.client_host, p.member.client_id)
            row: dict[str, Any] = {"group": group.group_id, "topic": p.topic,
                                   "partition": p.partition}
            if verbose:
                row["leaderEpoch"] = None if p.commit is None else p.commit.leader_epoch
            row.update(currentOffset=p.offset, logEndOffset=p.end, lag=p.lag)
            row.update(zip(("consumerId", "host", "clientId"), owner))
            rows.append(row)
        return rows

    def _members_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        rows = []
        for m in group.members:
            row: dict[str, Any] = {"group": group.group_id, "consumerId": m.member_id,
                                   "groupInstanceId": m.group_instance_id, "host": m.client_host,
                                   "clientId": m.client_id, "numPartitions": len(m.assignment)}
            if verbose:
                row.update(currentEpoch=m.member_epoch,
                           currentAssignment=assignment_json(m.assignment),
                           targetEpoch=group.target_assignment_epoch,
                           targetAssignment=assignment_json(m.target_assignment or ()),
                           upgraded=m.upgraded)
            rows.append(row)
        return rows

    def broker_endpoints(self) -> dict[int, str]:
        """``broker id -> host:port`` from the KRaft metadata logs of the log dirs given."""
        found: dict[int, str] = {}
        for configs in self.kraft_configs():
            for broker, endpoints in configs.broker_endpoints.items():
                if endpoints:
                    found.setdefault(broker, f"{endpoints[0].host}:{endpoints[0].port}")
        return found

    def group_config(self, group_id: str, name: str) -> str | None:
        """A dynamic group config (``kafka-configs --entity-type groups``), if set."""
        for configs in self.kraft_configs():
            entry = configs.groups.get(group_id, {}).get(name)
            if entry is not None:
                return entry.value
        return None

    def coordinator(self, group: Group, separator: str = "  ") -> str:
        """Kafka's ``host:port  (id)`` of the broker holding the group's offsets partition
        (kafka-streams-groups.sh separates them by one space)."""
        choice = self.load.replicas.get(group.coordinator_partition) if self.load else None
        broker = None if choice is None else choice.chosen.broker_id
        where = self.broker_endpoints().get(broker) if broker is not None else None
        return (f"{where or f'{TOPIC}-{group.coordinator_partition}'}{separator}"
                f"({'-' if broker is None else broker})")

    def _state_rows(self, group: Group, verbose: bool) -> list[dict[str, Any]]:
        row: dict[str, Any] = {
            "group": group.group_id,
            "coordinator": self.coordinator(group),
            "assignmentStrategy": _strategy(group), "state": group.state}
        if verbose:
            modern = group.group_type == GroupType.CONSUMER
            row.update(groupEpoch=group.generation if modern else None,
                       targetAssignmentEpoch=group.target_assignment_epoch if modern else None)
        row["numMembers"] = len(group.members)
        return [row]


def _strategy(group: Group) -> str | None:
    """What DescribeGroups reports as the assignor: a classic group's protocol only while it
    is Stable (Kafka sends "" otherwise); a KIP-848 group's server assignor."""
    if group.group_type == GroupType.CLASSIC and group.state != GroupState.STABLE:
        return None
    return group.protocol or None


def assignment_json(partitions: Iterable[TopicPartition]) -> list[dict[str, Any]]:
    """``[{topic, partitions}]`` by topic, partitions sorted: the JSON of an assignment."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(by_topic.items())]
