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

import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..errors import UsageError
from ..format.group_coordinator_records import TOPIC
from ..format.java_string import java_order
from ..groups.end_offsets import EndOffsets, LagFrom
from ..groups.group_metadata import Group, GroupState, GroupType
from ..groups.offset_commits import TopicPartition
from ..groups.offsets_topic import GroupsLoad, OffsetsTopic
from ..groups.replicas import LogDirs, choices_summary
from ..groups.stranded_commits import StrandedCommit, outside
from ..storage.kraft_configs import KraftConfigs, find_metadata_dir, read_kraft_configs

VIEWS = ("offsets", "members", "state")
LIST_COLUMNS = ("group", "type", "state")


def describe_columns(view: str, verbose: bool) -> tuple[str, ...]:
    """The keys of a ``--describe`` view's rows, in order (for a table with no rows)."""
    if view == "offsets":
        return ("group", "topic", "partition", *(("leaderEpoch",) if verbose else ()),
                "currentOffset", "logEndOffset", "lag", "consumerId", "host", "clientId")
    if view == "members":
        return ("group", "consumerId", "groupInstanceId", "host", "clientId", "numPartitions",
                *(("currentEpoch", "currentAssignment", "targetEpoch", "targetAssignment",
                   "upgraded") if verbose else ()))
    if view == "state":
        return ("group", "coordinator", "assignmentStrategy", "state",
                *(("groupEpoch", "targetAssignmentEpoch") if verbose else ()), "numMembers")
    raise ValueError(f"view is one of {VIEWS}, not {view!r}")


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


@dataclass
class Provenance:
    """Where the answers came from: the lines of the note on stderr, and whether reading met
    invalid data (exit code 1)."""

    lines: list[str]
    problem: bool


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    scaled, unit = next((n / 1024 ** k, u) for k, u in ((3, "GiB"), (2, "MiB"), (1, "KiB"))
                        if n >= 1024 ** k)
    return f"{scaled:.1f} {unit}"




class ConsumerGroups:
    """The groups of the given log dirs, described as kafka-consumer-groups.sh would."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]], lag_from: LagFrom = "hw",
                 partition_count: int | None = None,
                 progress: Callable[[int], None] | None = None) -> None:
        self.log_dirs = LogDirs(paths)
        self._kraft: list[KraftConfigs] | None = None
        if partition_count is None:  # --offsets-partitions wins, then the metadata image
            partition_count = self.registered_offsets_partitions()
        self.topic = OffsetsTopic(self.log_dirs, partition_count)
        self.end_offsets = EndOffsets(self.log_dirs, lag_from)
        self.lag_from = lag_from
        self.load: GroupsLoad | None = None
        # rows described whose committed offset lies outside the partition's log (a truncation
        # or retention since the commit): the CLI warns about them
        self.stranded: list[StrandedCommit] = []
        # called with the segment bytes of each __consumer_offsets partition loaded; may be
        # set after construction, once read_size() has given a progress bar its total
        self.progress = progress

    def read_size(self, group_ids: Iterable[str] | None) -> int:
        """The __consumer_offsets bytes loading ``group_ids`` (None: every group) reads."""
        return self.topic.read_size(None if group_ids is None else set(group_ids))

    def provenance(self, view: str, verbose: bool = False) -> Provenance:
        """What the last list or describe read, and what the columns of ``view`` (``list``,
        ``list-states`` or one of :data:`VIEWS`) mean; the replicas chosen among several in
        one line, or with ``verbose`` one per partition."""
        load = self.load
        assert load is not None, "list or describe first"
        lines = []
        if not self.topic.present:
            lines.append(f"no {TOPIC} partitions in the log dirs: no group can be shown")
        if view != "list":
            lines.append("as last persisted in __consumer_offsets: states and members are "
                         "those of the last rebalance written to disk, not live ones")
        if view == "offsets":
            lines.append("LOG-END-OFFSET is " + (
                "each partition's high watermark (replication-offset-checkpoint, at most the "
                "log end offset)" if self.lag_from == "hw" else
                "each partition's log end offset (--lag-from leo)"))
        by_dir: dict[str, int] = {}
        for choice in sorted(load.replicas.values(), key=lambda c: c.chosen.log_dir):
            r = choice.chosen
            name = r.log_dir + ("" if r.broker_id is None else f" (broker {r.broker_id})")
            by_dir[name] = by_dir.get(name, 0) + 1
        if self.topic.present:
            lines.append(f"read {len(load.partitions)} of {load.partition_count} {TOPIC} "
                         f"partitions ({_size(load.bytes_read)}) from "
                         + (", ".join(f"{d}: {n}" for d, n in by_dir.items()) or "none"))
        if self.topic.missing_partitions:
            counted = ("as given" if self.topic.given_count is not None
                       else "the highest found plus one")
            lines.append(f"{TOPIC} partitions {_ranges(self.topic.missing_partitions)} are in "
                         f"none of the log dirs: groups stored there are not shown, and the "
                         f"partition count ({load.partition_count}, {counted}) may be wrong; "
                         f"give every broker's log dir, or --offsets-partitions N")
        choices = self.log_dirs.choices
        if choices:
            lines += ([c.line() for c in choices] if verbose
                      else [choices_summary(choices) + " (--verbose lists them)"])
        notes = [n for p in load.partitions for n in p.notes]
        replica_notes = [n for c in self.log_dirs.made
                         for r in (c.chosen, *c.others) for n in r.notes]
        problem = (any(n.problem for n in notes) or bool(replica_notes)
                   or bool(self.log_dirs.notes))
        lines += [str(n) for n in notes] + replica_notes + self.log_dirs.notes
        return Provenance(lines, problem)

    def load_groups(self, group_ids: Iterable[str] | None) -> dict[str, Group]:
        """Load ``group_ids`` (None: every group) and keep how they were read in ``load``."""
        self.load = self.topic.load(None if group_ids is None else set(group_ids),
                                    progress=self.progress)
        return self.load.groups

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
        """``--describe`` of ``group_ids`` (None: ``--all-groups``) in one of :data:`VIEWS`."""
        if view not in VIEWS:
            raise ValueError(f"view is one of {VIEWS}, not {view!r}")
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
        assigned: set[TopicPartition] = set()
        members = sorted((m for m in group.members if m.assignment),
                         key=lambda m: -len(m.assignment))
        for m in members:
            assigned.update(m.assignment)
            rows += self._partition_rows(group, sorted(m.assignment), verbose,
                                         m.member_id, m.client_host, m.client_id)
        unowned = sorted(tp for tp in group.offsets if tp not in assigned)
        return rows + self._partition_rows(group, unowned, verbose, None, None, None)

    def _partition_rows(self, group: Group, partitions: list[TopicPartition], verbose: bool,
                        consumer_id: str | None, host: str | None, client_id: str | None
                        ) -> list[dict[str, Any]]:
        rows = []
        end_offset = self.end_offsets.get
        for tp in partitions:
            committed = group.offsets.get(tp)
            # the Admin client hands over a committed -1 (no offset) as none at all
            offset = None if committed is None or committed.offset == -1 else committed.offset
            found = end_offset(tp.topic, tp.partition)
            end = found.offset
            if offset is not None and found.replica is not None and outside(
                    offset, found.replica.log_start_offset, found.log_end_offset):
                self.stranded.append(StrandedCommit(group.group_id, tp.topic, tp.partition,
                                                    offset, found.replica.log_start_offset,
                                                    found.log_end_offset))
            row: dict[str, Any] = {"group": group.group_id, "topic": tp.topic,
                                   "partition": tp.partition}
            if verbose:
                row["leaderEpoch"] = None if committed is None else committed.leader_epoch
            row.update(currentOffset=offset, logEndOffset=end,
                       lag=None if offset is None or end is None else end - offset,
                       consumerId=consumer_id, host=host, clientId=client_id)
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

    def kraft_configs(self) -> list[KraftConfigs]:
        """The KRaft metadata state replayed from each log dir that holds a metadata log."""
        if self._kraft is None:
            self._kraft = [read_kraft_configs(metadata_dir) for log_dir in self.log_dirs.log_dirs
                           if (metadata_dir := find_metadata_dir(log_dir.path)) is not None]
        return self._kraft

    def registered_offsets_partitions(self) -> int | None:
        """How many partitions the KRaft metadata registers for ``__consumer_offsets`` (the
        most any metadata log given says), None without a metadata log that has the topic."""
        counts = []
        for configs in self.kraft_configs():
            ids = [i for i, name in configs.topic_names.items() if name == TOPIC]
            if ids:
                counts.append(sum(1 for topic_id, _ in configs.partitions if topic_id == ids[0]))
        return max(counts) if counts else None

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


def _ranges(numbers: list[int]) -> str:
    """``1, 3-5, 9``."""
    out: list[str] = []
    for n in numbers:
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = out[-1].split("-")[0] + f"-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


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
