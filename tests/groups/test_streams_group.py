"""Streams groups (KIP-1071) as the group coordinator rebuilds them from records 17 and 19-23:
the state Kafka's ``StreamsGroup.maybeUpdateGroupState`` derives, members and their tasks, the
topology, and tombstones."""

from __future__ import annotations

from pathlib import Path

import pytest

from groups_support import OffsetsLog, encode_group_record
from pylogctl.groups.group_loader import load_offsets_partition
from pylogctl.groups.group_metadata import GroupState, GroupType
from pylogctl.groups.streams_group import TaskAssignment


@pytest.fixture
def log(tmp_path: Path) -> OffsetsLog:
    return OffsetsLog(tmp_path)


TOPOLOGY = {"epoch": 2, "subtopologies": [
    {"subtopologyId": "0", "sourceTopics": ["in"],
     "repartitionSinkTopics": ["app-rekey-repartition"]},
    {"subtopologyId": "1", "sourceTopics": [],
     "repartitionSourceTopics": [{"name": "app-rekey-repartition", "partitions": 2}]}]}


def streams_group(log: OffsetsLog, group: str, *, epoch: int, target: int, validated: int = 2,
                  topology: dict | None = TOPOLOGY, members: dict[str, tuple]) -> None:
    """``members``: id -> (member epoch, member state, active tasks {subtopology: parts})."""
    records = [encode_group_record(17, {"groupId": group}, 0,
                                   {"epoch": epoch, "metadataHash": 7,
                                    "validatedTopologyEpoch": validated}),
               encode_group_record(20, {"groupId": group}, 0, {"assignmentEpoch": target})]
    if topology is not None:
        records.append(encode_group_record(23, {"groupId": group}, 0, topology))
    for member_id, (member_epoch, state, active) in members.items():
        key = {"groupId": group, "memberId": member_id}
        tasks = [{"subtopologyId": s, "partitions": ps} for s, ps in active.items()]
        records += [
            encode_group_record(19, key, 0, {"clientId": f"{group}-{member_id}", "clientHost":
                                             "/127.0.0.1", "processId": "proc-1",
                                             "topologyEpoch": 2}),
            encode_group_record(21, key, 0, {"activeTasks": tasks}),
            encode_group_record(22, key, 0, {"memberEpoch": member_epoch,
                                             "previousMemberEpoch": member_epoch - 1,
                                             "state": state, "activeTasks": tasks})]
    log.batch(records)


def load_group(log: OffsetsLog, group: str = "app"):
    return load_offsets_partition(log.dir, 0).groups[group]


@pytest.mark.parametrize("epoch, target, validated, members, state", [
    (5, 5, 2, {"a": (5, 1, {"0": [0], "1": [0]}), "b": (5, 1, {"0": [1]})}, GroupState.STABLE),
    (6, 5, 2, {"a": (5, 1, {"0": [0]})}, GroupState.ASSIGNING),
    (5, 5, 2, {"a": (5, 1, {"0": [0]}), "b": (4, 1, {"0": [1]})}, GroupState.RECONCILING),
    (5, 5, 2, {"a": (5, 2, {"0": [0]})}, GroupState.RECONCILING),  # revoking tasks
    (5, 5, 1, {"a": (5, 1, {"0": [0]})}, GroupState.NOT_READY),  # topology 2 not validated
    (5, 5, 2, {}, GroupState.EMPTY),
])
def test_streams_group_state_is_derived_as_kafka_does(log, epoch, target, validated, members,
                                                      state):
    streams_group(log, "app", epoch=epoch, target=target, validated=validated, members=members)
    group = load_group(log)
    assert (group.group_type, group.protocol_type, group.state, group.generation,
            group.target_assignment_epoch) == (GroupType.STREAMS, "streams", state, epoch,
                                               target)
    assert {m.member_id for m in group.streams.members} == set(members)


def test_a_group_without_its_topology_is_not_ready(log):
    streams_group(log, "app", epoch=5, target=5, topology=None,
                  members={"a": (5, 1, {"0": [0]})})
    assert load_group(log).state == GroupState.NOT_READY


def test_tasks_read_source_and_repartition_topics(log):
    streams_group(log, "app", epoch=5, target=5,
                  members={"a": (5, 1, {"1": [1, 0], "0": [0]})})
    group = load_group(log)
    (member,) = group.streams.members
    assert member.assignment == TaskAssignment(active=(("0", (0,)), ("1", (0, 1))))
    assert member.target_assignment == member.assignment
    assert [tuple(tp) for tp in group.members[0].assignment] == [
        ("in", 0), ("app-rekey-repartition", 0), ("app-rekey-repartition", 1)]
    assert (member.process_id, member.client_id) == ("proc-1", "app-a")
    assert [s.input_topics for s in group.streams.subtopologies] == [
        ("in",), ("app-rekey-repartition",)]


def test_member_tombstones_leave_an_empty_group_and_group_tombstones_delete_it(log):
    streams_group(log, "app", epoch=5, target=5, members={"a": (5, 1, {"0": [0]})})
    key = {"groupId": "app", "memberId": "a"}
    log.batch([encode_group_record(t, key) for t in (21, 22, 19)])
    assert (load_group(log).state, load_group(log).members) == (GroupState.EMPTY, ())
    log.batch([encode_group_record(t, {"groupId": "app"}) for t in (23, 20, 17)])
    assert "app" not in load_offsets_partition(log.dir, 0).groups


def test_streams_groups_are_not_consumer_groups(log):
    streams_group(log, "app", epoch=5, target=5, members={"a": (5, 1, {"0": [0]})})
    log.commit("app", {("in", 0): 12})
    group = load_group(log)
    assert not group.is_consumer_group
    assert {tuple(tp): om.offset for tp, om in group.offsets.items()} == {("in", 0): 12}
