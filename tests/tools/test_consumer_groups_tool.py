"""consumer-groups' rows and Kafka's text for what the corpus lacks: KIP-848 groups, static
members, rebalancing notices, Java's group order, and the column-width rules."""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from groups_support import OffsetsLog, member
from pylogctl.format.group_coordinator_records import encode_group_record
from pylogctl.formatters import get_formatter
from pylogctl.formatters.consumer_groups_text import assignment_text
from pylogctl.formatters.group_sections import describe_section
from pylogctl.tools.consumer_groups import ConsumerGroups, java_order
from pylogctl.tools.group_columns import VIEWS
from pylogctl.tools.group_columns import consumer_describe_columns as describe_columns

TOPIC_ID = bytes(range(16))


def log_dir(tmp_path: Path) -> tuple[Path, OffsetsLog]:
    d = tmp_path / "broker"
    d.mkdir()
    (d / "meta.properties").write_text("version=1\nnode.id=3\n")
    return d, OffsetsLog(d, 0)  # a single partition: every group lives in it


def text(groups: ConsumerGroups, view: str, verbose: bool, ids=None) -> tuple[str, str]:
    """What ``--describe`` prints: the section the CLI builds, through the text formatter."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        get_formatter("text").write([describe_section(groups.describe(ids, view, verbose),
                                                      view, verbose)], out)
    return out.getvalue(), err.getvalue()


def kip848_group(log: OffsetsLog, group: str, *, epoch: int, target: int,
                 members: dict[str, tuple[int, list[int], list[int], bool]]) -> None:
    """``members``: id -> (member epoch, current partitions, target partitions, classic)."""
    records = [encode_group_record(3, {"groupId": group}, 0, {"epoch": epoch}),
               encode_group_record(4, {"groupId": group}, 0, {"topics": [{
                   "topicId": TOPIC_ID, "topicName": "orders", "numPartitions": 4,
                   "partitionMetadata": []}]}),
               encode_group_record(6, {"groupId": group}, 0, {"assignmentEpoch": target})]
    for member_id, (member_epoch, current, wanted, classic) in members.items():
        key = {"groupId": group, "memberId": member_id}
        meta = {"clientId": "client-" + member_id, "clientHost": "/10.1.1.1",
                "subscribedTopicNames": ["orders"], "rebalanceTimeoutMs": 1000,
                "instanceId": "static-" + member_id if classic else None, "serverAssignor": None}
        if classic:
            meta["classicMemberMetadata"] = {"sessionTimeoutMs": 45000, "supportedProtocols": []}
        records += [
            encode_group_record(5, key, 0, meta),
            encode_group_record(7, key, 0, {"topicPartitions": [{"topicId": TOPIC_ID,
                                                                 "partitions": wanted}]}),
            encode_group_record(8, key, 0, {"memberEpoch": member_epoch,
                                            "previousMemberEpoch": member_epoch, "state": 0,
                                            "assignedPartitions": [{"topicId": TOPIC_ID,
                                                                    "partitions": current}],
                                            "partitionsPendingRevocation": []})]
    log.batch(records)


def test_kip848_members_view_with_epochs_targets_and_the_upgraded_column(tmp_path):
    d, log = log_dir(tmp_path)
    kip848_group(log, "new", epoch=7, target=7, members={
        "m-1": (6, [0, 1], [0], False), "m-2": (7, [3], [1, 3], True)})
    out, err = text(ConsumerGroups([d]), "members", True)
    header, *lines = out.split("\n")[1:4]
    # in the coordinator's TimelineHashMap order (pinned by tests/groups/test_java_hash_map.py)
    assert [ln.split()[1] for ln in lines] == ["m-2", "m-1"]
    second, first = lines
    # both kinds of member: GROUP-INSTANCE-ID (one has one) and UPGRADED appear
    assert header.split() == ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID",
                              "#PARTITIONS", "CURRENT-EPOCH", "CURRENT-ASSIGNMENT",
                              "TARGET-EPOCH", "TARGET-ASSIGNMENT", "UPGRADED"]
    assert header.startswith("GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST    ")
    assert first.split() == ["new", "m-1", "/10.1.1.1", "client-m-1", "2", "6", "orders:0,1",
                             "7", "orders:0", "true"]
    assert second.split() == ["new", "m-2", "static-m-2", "/10.1.1.1", "client-m-2", "1", "7",
                              "orders:3", "7", "orders:1,3", "false"]
    assert "rebalancing" in err  # m-1 is not at the target epoch: Reconciling


def test_kip848_state_view_and_offsets_owned_by_current_assignments(tmp_path):
    d, log = log_dir(tmp_path)
    kip848_group(log, "new", epoch=8, target=7, members={"m-1": (7, [2], [2], False)})
    log.commit("new", {("orders", 2): 40, ("orders", 0): 5})
    groups = ConsumerGroups([d])
    (state,) = groups.describe(["new"], "state", True)[0].rows
    assert state == {"group": "new", "coordinator": "__consumer_offsets-0  (3)",
                     "assignmentStrategy": "uniform", "state": "Assigning", "groupEpoch": 8,
                     "targetAssignmentEpoch": 7, "numMembers": 1}
    rows = groups.describe(["new"], "offsets", True)[0].rows
    assert [(r["partition"], r["currentOffset"], r["consumerId"], r["leaderEpoch"])
            for r in rows] == [(2, 40, "m-1", None), (0, 5, None, None)]
    _, err = text(groups, "offsets", False, ["new"])
    assert err == "\nWarning: Consumer group 'new' is rebalancing.\n"


def test_offsets_rows_follow_kafkas_order(tmp_path):
    d, log = log_dir(tmp_path)
    log.group("g", [member("small", {"b": [1]}), member("big", {"b": [0], "a": [5, 2]})])
    log.commit("g", {("b", 1): 1, ("a", 2): 2, ("z", 0): 3, ("c", 9): 4})
    rows = ConsumerGroups([d]).describe(["g"], "offsets")[0].rows
    # the member with most partitions first, each member's by topic then partition, then the
    # committed partitions nobody owns
    assert [(r["consumerId"], r["topic"], r["partition"]) for r in rows] == [
        ("big", "a", 2), ("big", "a", 5), ("big", "b", 0), ("small", "b", 1),
        (None, "c", 9), (None, "z", 0)]


def test_groups_are_described_in_java_string_order(tmp_path):
    d, log = log_dir(tmp_path)
    ids = ["\uffff", "\U00010000", "B", "a"]
    for g in ids:
        log.commit(g, {("t", 0): 1})
    described = [r.group for r in ConsumerGroups([d]).describe(None, "state")]
    assert described == ["B", "a", "\U00010000", "\uffff"]  # UTF-16: D800 DC00 < FFFF
    assert described == sorted(ids, key=java_order)
    assert sorted(ids) != described  # Python's code-point order differs here


def test_assignment_strings_sort_as_kafka_sorts_them():
    # Kafka sorts the "topic:partitions" strings, so "t2:" comes before "t:"
    assert assignment_text([{"topic": "t", "partitions": [10, 2]},
                            {"topic": "t2", "partitions": [1]}]) == "t2:1;t:2,10"
    assert assignment_text([]) == "-"


def test_offsets_columns_grow_with_their_longest_value(tmp_path):
    d, log = log_dir(tmp_path)
    long_topic = "a-topic-with-a-long-name"
    log.group("g", [member("m" * 20, {long_topic: [0]}, host="/h")])
    out, _ = text(ConsumerGroups([d]), "offsets", True, ["g"])
    header, row = out.split("\n")[1:3]
    assert header == ("GROUP           " + "TOPIC".ljust(len(long_topic)) + " PARTITION  "
                      "LEADER-EPOCH    CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
                      + "CONSUMER-ID".ljust(20) + " HOST            CLIENT-ID")
    assert row == ("g               " + long_topic + " 0          -               -        "
                   "       -               -               " + "m" * 20 + " /h              "
                   "client")


def test_a_committed_minus_one_shows_as_no_offset(tmp_path):
    d, log = log_dir(tmp_path)
    log.commit("g", {("t", 0): -1, ("t", 1): 4})
    rows = ConsumerGroups([d]).describe(["g"], "offsets")[0].rows
    assert [(r["partition"], r["currentOffset"], r["lag"]) for r in rows] == [(0, None, None),
                                                                              (1, 4, None)]


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("view", VIEWS)
def test_describe_columns_are_the_rows_keys(tmp_path, view, verbose):
    """An empty ``-o table`` prints these as its header: they must be what rows carry."""
    d, log = log_dir(tmp_path)
    kip848_group(log, "new", epoch=7, target=7, members={"m-1": (6, [0, 1], [0], False)})
    log.group("old", [member("m", {"b": [0]})])
    log.commit("old", {("b", 0): 3, ("c", 1): 1})
    reports = ConsumerGroups([d]).describe(None, view, verbose)
    rows = [row for r in reports for row in r.rows]
    assert rows and {tuple(row) for row in rows} == {describe_columns(view, verbose)}
