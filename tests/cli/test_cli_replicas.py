"""``pylogctl replicas``: formats, filters, the summary, --elect plans and --execute, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rebuild_index_support import lock_held
from replicas_support import broker_dir, unclean_election


@pytest.fixture
def cluster(tmp_path) -> Path:
    unclean_election(tmp_path / "c")
    return tmp_path / "c"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def test_a_diverging_partition_is_listed_with_its_point_and_losses(cli, cluster):
    r = cli("replicas", cluster)
    assert r.code == 0, r.err
    assert r.out.startswith("t-0: leader broker 2 (best replica: highest leader epoch)")
    assert "truncates to 10: the leader's epoch 0 ends at 10; in this log it ends at 15" \
        in r.out
    assert "loses offsets 10..14: 5 records in 2 batches" in r.out
    assert "1 partition with several replicas: 0 agree, 1 diverge, 1 with records only " \
        "one replica holds" in r.err


def test_json_ndjson_yaml_and_table_carry_the_same_replicas(cli, cluster):
    doc = json.loads(cli("replicas", cluster, "-o", "json").out)
    assert [r["brokerId"] for r in doc[0]["replicas"]] == [2, 1]
    follower = doc[0]["replicas"][1]
    assert follower["divergencePoint"] == 10 and follower["lost"]["records"] == 5
    assert follower["truncation"]["steps"][0]["kind"] == "diverging-epoch"
    lines = [json.loads(x) for x in cli("replicas", cluster, "-o", "ndjson").out.splitlines()]
    assert [(x["topic"], x["partition"], x["brokerId"]) for x in lines] == [("t", 0, 2),
                                                                             ("t", 0, 1)]
    assert "divergencePoint: 10" in cli("replicas", cluster, "-o", "yaml").out
    table = cli("replicas", cluster, "-o", "table").out
    assert "divergencePoint" in table and "leaderReason: best replica" in table


def test_agreeing_partitions_are_counted_and_listed_with_verbose(cli, tmp_path):
    for node in (1, 2):
        broker_dir(tmp_path, node, [(0, 3, "a")])
    quiet = cli("replicas", tmp_path)
    assert quiet.code == 0 and quiet.out == ""
    assert "1 partition with several replicas: 1 agree, 0 diverge" in quiet.err
    assert "replicas agree" in cli("replicas", tmp_path, "-v").out


def test_topic_and_partition_filters(cli, cluster):
    assert cli("replicas", cluster, "--topic", "other").out == ""
    assert cli("replicas", cluster, "--topic", "t", "--partition", "1").out == ""
    assert cli("replicas", cluster, "--topic", "t", "--partition", "0").out.startswith("t-0")


def test_elect_plans_without_changing_anything_then_executes(cli, cluster, tmp_path):
    before = snapshot(cluster)
    plan = cli("replicas", cluster, "--elect", "2")
    assert plan.code == 0, plan.err
    assert "plan: " in plan.out and "log end 15 -> 10" in plan.out
    assert "nothing changed (run with --execute" in plan.err
    assert snapshot(cluster) == before
    done = cli("replicas", cluster, "--elect", "2", "--execute", "--backup-dir",
               tmp_path / "bk", "-o", "json")
    assert done.code == 0, done.err
    truncated = json.loads(done.out)[0]["truncate"][0]
    assert truncated["executed"] and truncated["logEndOffset"] == 10
    assert (tmp_path / "bk" / "broker1-broker1" / "t-0" / "00000000000000000000.log"
            ).read_bytes() == before["broker1/t-0/00000000000000000000.log"]
    after = cli("replicas", cluster, "-o", "json")
    follower = json.loads(after.out)[0]["replicas"][1]
    assert follower["logEndOffset"] == 10 and follower["truncation"] is None
    assert (cluster / "broker1" / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    again = cli("replicas", cluster, "--elect", "2", "--execute")
    assert again.code == 0 and "0 replicas truncated" in again.err


def test_electing_the_other_broker_truncates_the_other_side(cli, cluster):
    lines = cli("replicas", cluster, "--elect", "1", "-o", "ndjson").out.splitlines()
    assert [json.loads(x)["truncate"] and json.loads(x)["truncate"]["offset"]
            for x in lines] == [None, 10]
    doc = json.loads(cli("replicas", cluster, "--elect", "1", "-o", "json").out)[0]
    assert doc["leaderBrokerId"] == 1 and doc["truncate"][0]["partitionDir"].endswith(
        "broker2/t-0")
    assert doc["replicas"][1]["lost"]["records"] == 7


def test_errors_are_one_line_with_documented_codes(cli, cluster, tmp_path):
    r = cli("replicas", cluster, "--elect", "7")
    assert r.code == 2 and r.err.strip() == (
        "pylogctl: unknown broker id 7: the log dirs given are brokers 1, 2")
    assert cli("replicas", cluster, "--execute").code == 2
    broker_dir(tmp_path / "other", 3, [(0, 1, "a")], cluster="AAAAAAAAAAAAAAAAAAAAAA")
    r = cli("replicas", cluster, tmp_path / "other")
    assert r.code == 2 and "different clusters" in r.err and len(r.err.splitlines()) == 1
    shutil.copytree(cluster / "broker1", tmp_path / "twice")
    r = cli("replicas", cluster / "broker1", tmp_path / "twice")
    assert r.code == 2 and "broker 1 given twice" in r.err
    r = cli("replicas", tmp_path / "nope")
    assert r.code == 3 and "No such file or directory" in r.err


def test_a_mismatch_below_the_point_exits_1(cli, tmp_path):
    broker_dir(tmp_path, 1, [(0, 5, "a"), (0, 5, "x")])
    broker_dir(tmp_path, 2, [(0, 5, "a"), (0, 5, "y"), (0, 2, "y")])
    r = cli("replicas", tmp_path)
    assert r.code == 1 and "MISMATCH: the batch at offset 5" in r.out


def test_elect_refuses_a_log_dir_a_broker_holds(cli, cluster):
    before = snapshot(cluster)
    with lock_held(cluster / "broker1"):
        r = cli("replicas", cluster, "--elect", "2", "--execute")
    assert r.code == 4 and "lock" in r.err.lower()
    assert snapshot(cluster) == before


def test_partitions_without_a_replica_on_the_elected_broker_are_left_alone(cli, cluster):
    broker_dir(cluster, 3, [(0, 2, "u")], topic="u")
    r = cli("replicas", cluster, "--elect", "3", "--execute")
    assert r.code == 0 and r.out == ""
    assert "1 partition without a replica on broker 3 left alone (t-0)" in r.err
