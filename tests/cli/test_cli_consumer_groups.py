"""``pylogctl consumer-groups``: kafka-consumer-groups.sh's output from the files, checked
against values read by hand from the corpus (``dump-segment --offsets-decoder`` and the
checkpoints), Kafka's option rules, the JSON/YAML rows, and the notes on stderr."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from groups_support import data_partition, synthetic_log_dir

pytestmark = pytest.mark.corpus

XPX_MEMBER = "consumer-1-d32a0691-ea42-487b-88b8-d5943bffd3fd"  # 47 characters


@pytest.fixture
def xpx(corpus) -> Path:
    return corpus / "xpx-2016"


# -- hand-verified tables ------------------------------------------------------------------------
# xpx-2016: GroupA (__consumer_offsets-40, broker.id 0) committed foo-0 at 204 in its last
# record (value v1); replication-offset-checkpoint has foo 0 204; its last registration
# (generation 5, "range") has one member on foo-0 from /192.168.2.20.

def test_offsets_view_of_a_stable_group(cli, xpx):
    r = cli("consumer-groups", xpx, "--describe", "--group", "GroupA")
    assert r.code == 0
    assert r.out == (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG      "
        "       CONSUMER-ID                                     HOST            CLIENT-ID"
        "\nGroupA          foo             0          204             204             0        "
        f"       {XPX_MEMBER} /192.168.2.20   consumer-1\n")
    assert "as last persisted" in r.err and "high watermark" in r.err
    assert "read 1 of 50 __consumer_offsets partitions" in r.err


def test_members_view_verbose(cli, xpx):
    r = cli("consumer-groups", xpx, "--describe", "--group", "GroupA", "--members", "--verbose")
    assert r.out == (
        "\nGROUP           CONSUMER-ID                                     HOST            "
        "CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    "
        "TARGET-ASSIGNMENT   \n"
        f"GroupA          {XPX_MEMBER} /192.168.2.20   consumer-1      1               "
        "-               foo:0                -               -                   \n")
    plain = cli("consumer-groups", xpx, "--describe", "--group", "GroupA", "--members")
    assert plain.out == (
        "\nGROUP           CONSUMER-ID                                     HOST            "
        "CLIENT-ID       #PARTITIONS     \n"
        f"GroupA          {XPX_MEMBER} /192.168.2.20   consumer-1      1               \n")


def test_state_view(cli, xpx):
    r = cli("consumer-groups", xpx, "--describe", "--group", "GroupA", "--state")
    assert r.out == (
        "\nGROUP           COORDINATOR (ID)           ASSIGNMENT-STRATEGY  STATE                "
        "#MEMBERS"
        "\nGroupA          __consumer_offsets-40  (0) range                Stable               1"
        "\n")
    verbose = cli("consumer-groups", xpx, "--describe", "--group", "GroupA", "--state",
                  "--verbose")
    assert verbose.lines[1].endswith("STATE                GROUP-EPOCH     "
                                     "TARGET-ASSIGNMENT-EPOCH   #MEMBERS")
    assert verbose.lines[2].endswith("Stable               -               -        "
                                     "                 1")


def test_empty_simple_group_with_lag(cli, corpus):
    # iechenyb-2019: flink-group only commits (no registration): test-0921-0 at 100;
    # the checkpointed high watermark of test-0921-0 is 1521
    r = cli("consumer-groups", corpus / "iechenyb-2019", "--describe", "--all-groups")
    assert r.out == (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG      "
        "       CONSUMER-ID     HOST            CLIENT-ID"
        "\nflink-group     test-0921       0          100             1521            1421     "
        "       -               -               -\n")
    assert "\nConsumer group 'flink-group' has no active members.\n" in r.err


def test_partitions_without_commits_show_dashes(cli, corpus):
    # airquality-kraft: one rdkafka member owns air_quality_data 0-2, only 1 was committed
    r = cli("consumer-groups", corpus / "airquality-kraft", "--describe", "--all-groups",
            "-o", "json")
    rows = json.loads(r.out)
    assert [(x["partition"], x["currentOffset"], x["logEndOffset"], x["lag"]) for x in rows] \
        == [(0, None, 0, None), (1, 281, 281, 0), (2, None, 0, None)]
    assert {x["clientId"] for x in rows} == {"rdkafka"}


def test_json_and_yaml_rows_have_the_columns_in_camel_case(cli, xpx):
    r = cli("consumer-groups", xpx, "--describe", "--group", "GroupA", "-o", "json")
    assert json.loads(r.out) == [{
        "group": "GroupA", "topic": "foo", "partition": 0, "currentOffset": 204,
        "logEndOffset": 204, "lag": 0, "consumerId": XPX_MEMBER, "host": "/192.168.2.20",
        "clientId": "consumer-1"}]
    y = cli("consumer-groups", xpx, "--describe", "--group", "GroupA", "-o", "yaml")
    assert yaml.safe_load(y.out) == json.loads(r.out)
    members = json.loads(cli("consumer-groups", xpx, "--describe", "--group", "GroupA",
                             "--members", "--verbose", "-o", "json").out)
    assert members == [{"group": "GroupA", "consumerId": XPX_MEMBER, "groupInstanceId": None,
                        "host": "/192.168.2.20", "clientId": "consumer-1", "numPartitions": 1,
                        "currentEpoch": None,
                        "currentAssignment": [{"topic": "foo", "partitions": [0]}],
                        "targetEpoch": None, "targetAssignment": [], "upgraded": None}]
    state = json.loads(cli("consumer-groups", xpx, "--describe", "--group", "GroupA", "--state",
                           "-o", "json").out)
    assert state == [{"group": "GroupA", "coordinator": "__consumer_offsets-40  (0)",
                      "assignmentStrategy": "range", "state": "Stable", "numMembers": 1}]


def test_ndjson_gives_a_row_per_line_and_empty_outputs_stay_valid(cli, corpus):
    bheem = corpus / "bheem-cities"
    lines = cli("consumer-groups", bheem, "--list", "-o", "ndjson").lines
    assert [json.loads(x)["group"] for x in lines] == [
        "console-consumer-14897", "console-consumer-2399", "console-consumer-76901",
        "console-consumer-89616"]
    for fmt, empty in (("json", []), ("yaml", [])):
        r = cli("consumer-groups", bheem, "--describe", "--all-groups", "-o", fmt)
        assert (json.loads(r.out) if fmt == "json" else yaml.safe_load(r.out)) == empty


# -- groups that cannot be described --------------------------------------------------------

def test_group_that_does_not_exist(cli, xpx):
    r = cli("consumer-groups", xpx, "--describe", "--group", "nope", "--group", "GroupA")
    assert r.code == 0  # as Kafka: groups in Java string order, upper case first
    assert r.out.startswith("\nGROUP  ")
    assert r.out.endswith("consumer-1\n\nError: Consumer group 'nope' does not exist.\n")
    members = cli("consumer-groups", xpx, "--describe", "--group", "nope", "--members")
    assert members.out == ("\nError: Consumer group 'nope' does not exist.\n"  # Kafka's quirk:
                           "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       "
                           "#PARTITIONS     \n")  # the header still prints
    assert cli("consumer-groups", xpx, "--describe", "--group", "nope", "--state").out == \
        "\nError: Consumer group 'nope' does not exist.\n"
    as_json = cli("consumer-groups", xpx, "--describe", "--group", "nope", "-o", "json")
    assert as_json.out == "[]\n" and "'nope' does not exist" in as_json.err


def test_connect_group_is_not_a_consumer_group(cli, corpus):
    r = cli("consumer-groups", corpus / "spooldir-cp512", "--describe", "--group",
            "compose-connect-group")
    assert r.out == ("\nError: Executing consumer group command failed due to GroupId "
                     "compose-connect-group is not a consumer group (connect).\n")
    listed = cli("consumer-groups", corpus / "spooldir-cp512", "--list")
    assert listed.lines == ["_confluent-controlcenter-5-1-2-1",
                            "_confluent-controlcenter-5-1-2-1-command"]  # no connect, no sr


# -- --list ------------------------------------------------------------------------------------

def cells(*pairs: tuple[str, int]) -> str:
    """A --list line: each value left-aligned in its width, one space between."""
    return " ".join(v.ljust(w) for v, w in pairs)


def test_list_with_state_and_type_columns(cli, corpus):
    bheem = corpus / "bheem-cities"
    r = cli("consumer-groups", bheem, "--list", "--state")
    width = len("console-consumer-14897") + 10  # the longest id (at least 15) plus 10
    assert r.lines == [cells(("GROUP", width), ("STATE", 20))] + [
        cells((g, width), ("Empty", 20)) for g in ("console-consumer-14897",
                                                    "console-consumer-2399",
                                                    "console-consumer-76901",
                                                    "console-consumer-89616")]
    both = cli("consumer-groups", bheem, "--list", "--type", "--state")
    assert both.lines[:2] == [cells(("GROUP", width), ("TYPE", 20), ("STATE", 20)),
                              cells(("console-consumer-14897", width), ("Classic", 20),
                                    ("Empty", 20))]


def test_list_state_filter_as_kafka_takes_it(cli, corpus):
    kraft3 = corpus / "kraft3-cluster"
    assert cli("consumer-groups", kraft3, "--list", "--state", "STABLE,empty").lines[1:] == [
        cells(("console-consumer-12753", 32), ("Stable", 20)),
        cells(("console-consumer-90254", 32), ("Stable", 20))]
    assert cli("consumer-groups", "--list", "--state", "empty", kraft3).lines == [
        cells(("GROUP", 25), ("STATE", 20))]  # no group: 15 + 10
    bad = cli("consumer-groups", kraft3, "--list", "--state", "stabel")
    assert bad.code == 2
    assert ("Invalid state list 'stabel'. Valid states are: PreparingRebalance, "
            "CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling") in bad.err
    typed = cli("consumer-groups", kraft3, "--list", "--type", "consumer")
    assert typed.lines == [cells(("GROUP", 25), ("TYPE", 20))]
    assert json.loads(cli("consumer-groups", kraft3, "--list", "-o", "json").out) == [
        {"group": "console-consumer-12753", "type": "Classic", "state": "Stable"},
        {"group": "console-consumer-90254", "type": "Classic", "state": "Stable"}]


# -- option rules (Kafka's messages), exit code 2 ---------------------------------------------

@pytest.mark.parametrize("args, message", [
    ([], "exactly one action"),
    (["--list", "--describe", "--all-groups"], "exactly one action"),
    (["--describe"], "Option [describe] takes one of these options: [all-groups], [group]"),
    (["--describe", "--all-groups", "--members", "--state"], "takes at most one of these"),
    (["--describe", "--group", "g", "--all-groups"], "can't be used with option"),
    (["--list", "--group", "g"], 'Option "[group]" can\'t be used with option "[list]"'),
    (["--list", "--members"], "Option(s) [members] are unavailable"),
    (["--describe", "--all-groups", "--type"], "Option(s) [type] are unavailable"),
    (["--describe", "--all-groups", "--state", "stable"], "does not take a value for [state]"),
    (["--describe", "--all-groups", "--lag-from", "hwm"], "--lag-from is hw or leo"),
])
def test_option_errors(cli, xpx, args, message):
    r = cli("consumer-groups", xpx, *args)
    assert r.code == 2 and message in r.err and r.out == ""


def test_missing_log_dir_is_unreadable(cli, tmp_path):
    r = cli("consumer-groups", tmp_path / "nope", "--list")
    assert r.code == 3 and "No such file or directory" in r.err
    assert cli("consumer-groups", "--list").code == 2


def test_log_dir_without_an_offsets_topic_has_no_groups(cli, corpus):
    r = cli("consumer-groups", corpus / "node-logx", "--list")
    assert (r.code, r.out) == (0, "")
    assert "no __consumer_offsets partitions in the log dirs" in r.err


def test_server_config_names_the_log_dirs(cli, xpx, tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(f"broker.id=0\n# a comment\nlog.dirs={xpx}\n")
    r = cli("consumer-groups", "--server-config", config, "--list")
    assert (r.code, r.lines) == (0, ["GroupA"])


# -- several brokers, end offsets, invalid data ---------------------------------------------------

def test_kraft3_says_which_replicas_were_read(cli, corpus):
    r = cli("consumer-groups", corpus / "kraft3-cluster", "--describe", "--group",
            "console-consumer-90254", "--verbose")
    assert r.code == 0
    assert "read 1 of 50 __consumer_offsets partitions (353 bytes) from" in r.err
    assert "kafka1 (broker 1): 1" in r.err
    # test1-4 has a replica on each broker, alike: the first log dir's is read
    line = next(x for x in r.err.splitlines() if x.startswith("pylogctl: test1-4: read"))
    assert "kafka1 (broker 1): leader epoch 0, log end 1 (identical epochs and log ends" in line
    assert "kafka2 (broker 2)" in line and "kafka3 (broker 3)" in line
    rows = [row.split() for row in r.out.splitlines() if row.split()[1:2] == ["test1"]]
    # PARTITION, CURRENT-OFFSET, LOG-END-OFFSET (--verbose adds LEADER-EPOCH before them)
    assert [[row[i] for i in (2, 4, 5)] for row in rows] == [
        ["0", "-", "0"], ["1", "-", "0"], ["2", "-", "0"], ["3", "-", "0"], ["4", "-", "1"]]


def test_one_broker_of_three_warns_about_missing_partitions(cli, corpus):
    r = cli("consumer-groups", corpus / "kraft3-cluster" / "kafka2", "--list")
    assert "are in none of the log dirs" in r.err and "--offsets-partitions" in r.err
    found = cli("consumer-groups", corpus / "kraft3-cluster" / "kafka1", "--describe",
                "--group", "console-consumer-90254", "--state", "--offsets-partitions", "50")
    assert "Stable" in found.out


def test_lag_from_leo_uses_the_log_end(cli, tmp_path):
    log_dir = synthetic_log_dir(tmp_path, hw=7)
    data_partition(log_dir, "t", 0, end=10)
    hw = json.loads(cli("consumer-groups", log_dir, "--describe", "--all-groups", "-o", "json").out)
    leo = cli("consumer-groups", log_dir, "--describe", "--all-groups", "--lag-from", "leo",
              "-o", "json")
    assert [(x["logEndOffset"], x["lag"]) for x in hw] == [(7, 4)]
    assert [(x["logEndOffset"], x["lag"]) for x in json.loads(leo.out)] == [(10, 7)]
    assert "log end offset (--lag-from leo)" in leo.err


def test_invalid_bytes_in_the_offsets_topic_are_reported_with_exit_1(cli, corpus, tmp_path):
    copy = tmp_path / "xpx"
    shutil.copytree(corpus / "xpx-2016", copy)
    segment = copy / "__consumer_offsets-40" / "00000000000000000000.log"
    size = segment.stat().st_size
    with open(segment, "r+b") as f:
        f.truncate(size - 10)
    r = cli("consumer-groups", copy, "--describe", "--group", "GroupA")
    assert r.code == 1
    assert "GroupA          foo             0          204" in r.out  # still described
    note = next(x for x in r.err.splitlines() if "invalid bytes at the end" in x)
    assert str(segment) in note and "byte position" in note


def test_an_empty_table_still_names_its_columns(cli, xpx):
    """A runbook's `-o table | awk` must see the header even when nothing matches."""
    listed = cli("consumer-groups", xpx, "--list", "--state", "Dead", "-o", "table")
    assert listed.out == "group  type  state\n"
    missing = cli("consumer-groups", xpx, "--describe", "--group", "nope", "--state",
                  "-o", "table")
    assert missing.out == "group  coordinator  assignmentStrategy  state  numMembers\n"
    assert "Consumer group 'nope' does not exist." in missing.err
