"""``pylogctl move`` judged by Apache Kafka 4.4 on a real JBOD broker (two log dirs).

The broker of :func:`kafka_jbod_scenario.jbod_scenario` was SIGKILLed while Kafka itself was
moving ``slow-0`` to its other log dir (a ``-future`` replica part-copied). On a copy:
``moved-0`` is moved offline to the other log dir, ``slow-0``'s future replica is refused
finishing (it has not caught up) and cancelled. Then the real broker starts on the two dirs:
it must serve every record, from the new dir, with each partition in one dir only, and its
controller must record the new dir (the broker sends AssignReplicasToDirs: the partition's
last PartitionRecord/PartitionChangeRecord names the new dir's ``directory.id``). And a copy
of ``moved-1`` cut short, as a kill during ``move`` leaves it and not repaired, is resumed and
finished by Kafka itself.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from kafka_jbod_scenario import broker_on, holder, jbod_scenario
from kafka_jvm import require_kafka, run_tool
from kafka_served import read_served
from pylogctl.storage.replica_move import copy_replica
from support import run_pylogctl


def _props(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines()
                if "=" in line and not line.startswith("#"))


def _directories(root: Path, topic_id: str, partition: int) -> list[str] | None:
    """The directories of the partition's last metadata record naming them, by Kafka's dump."""
    logs = sorted((root / "a" / "__cluster_metadata-0").glob("*.log"))
    out = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files",
                   ",".join(map(str, logs)), check=True).stdout
    found = None
    for line in out.splitlines():
        if " payload: " not in line:
            continue
        doc = json.loads(line.split(" payload: ", 1)[1])
        data = doc.get("data", {})
        if (doc.get("type") in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD")
                and data.get("topicId") == topic_id and data.get("partitionId") == partition
                and "directories" in data):
            found = data["directories"]
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    require_kafka()
    scenario = jbod_scenario()
    info = scenario.info
    root = tmp_path_factory.mktemp("jbod")
    for d in ("a", "b"):
        shutil.copytree(scenario.root / d, root / d)
    src = info["moved-0"]
    dst = "b" if src == "a" else "a"
    slow_from, slow_to = info["slow-0"], info["slow-0-future"]
    results = {
        "plan": run_pylogctl("move", "moved-0", "--from", root / src, "--to", root / dst,
                             "--same-disk"),
        "same-disk": run_pylogctl("move", "moved-0", "--from", root / src, "--to", root / dst),
        "move": run_pylogctl("move", "moved-0", "--from", root / src, "--to", root / dst,
                             "--same-disk", "--execute", "-o", "json"),
        "finish": run_pylogctl("move", "slow-0", "--from", root / slow_from, "--to",
                               root / slow_to, "--finish-future"),
        "cancel": run_pylogctl("move", "slow-0", "--from", root / slow_from, "--to",
                               root / slow_to, "--cancel-future", "--execute"),
    }
    files = {d: sorted(p.name for p in (root / d).iterdir()) for d in ("a", "b")}
    # a move of moved-1 killed mid-copy, left without `recover`: Kafka resumes it itself
    m1_from = info["moved-1"]
    m1_to = "b" if m1_from == "a" else "a"
    partial = root / m1_to / f"moved-1.{'f' * 32}-future"
    copy_replica(str(root / m1_from / "moved-1"), str(partial))
    log = next(partial.glob("*.log"))
    os.truncate(log, log.stat().st_size // 2)
    topic_id = (root / dst / "moved-0" / "partition.metadata").read_text().split(
        "topic_id:")[1].strip()
    broker = broker_on(root, root / "broker")
    broker.start()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and partial.exists():
            time.sleep(0.5)
        resumed = not partial.exists() and holder(root, "moved-1") == m1_to
        served = read_served(broker.bootstrap)
        directories = None
        deadline = time.monotonic() + 60
        want = _props(root / dst / "meta.properties")["directory.id"]
        while time.monotonic() < deadline and directories != [want]:
            directories = _directories(root, topic_id, 0)
            time.sleep(0.5)
    finally:
        broker.stop()
    return dict(root=root, info=info, src=src, dst=dst, results=results, files=files,
                served=served, directories=directories, want=want, resumed=resumed,
                log=broker.log_text())


def test_plan_writes_nothing_and_same_disk_is_refused(run):
    plan, same = run["results"]["plan"], run["results"]["same-disk"]
    assert plan.returncode == 0, plan.stderr
    assert "would apply (nothing changed)" in plan.stdout
    assert same.returncode == 2 and "same file system" in same.stderr
    assert len(same.stderr.strip().splitlines()) == 1


def test_move_leaves_the_partition_in_one_dir_only(run):
    moved = run["results"]["move"]
    assert moved.returncode == 0, moved.stderr
    [section] = json.loads(moved.stdout)
    assert section["executed"] and section["partition"] == "moved-0"
    assert "moved-0" in run["files"][run["dst"]] and "moved-0" not in run["files"][run["src"]]
    assert not [n for d in run["files"].values() for n in d if "moved-0." in n]


def test_unfinished_future_replica_is_refused_then_cancelled(run):
    finish, cancel = run["results"]["finish"], run["results"]["cancel"]
    assert finish.returncode == 5 and "not caught up" in finish.stderr, finish.stderr
    assert cancel.returncode == 0, cancel.stderr
    assert not [n for d in run["files"].values() for n in d if n.endswith("-future")]


def test_kafka_serves_every_record_from_the_new_dir(run):
    served, n = run["served"], run["info"]["records"]
    for part in (0, 1):
        values = [bytes.fromhex(r["value"]).decode() for r in served.records[f"moved-{part}"]]
        assert values == [f"moved-{part}-{i}" for i in range(n)]
    slow = served.records["slow-0"]
    assert len(slow) == n and bytes.fromhex(slow[-1]["value"]).startswith(b"slow-0-%d-" % (n - 1))
    assert holder(run["root"], "moved-0") == run["dst"]
    assert "Duplicate log directories" not in run["log"]


def test_kafka_metadata_points_at_the_new_dir(run):
    assert run["directories"] == [run["want"]]


def test_kafka_finishes_a_copy_cut_short_itself(run):
    """A kill during the copy leaves a future replica Kafka resumes (ReplicaAlterLogDirs
    Thread) and swaps in: moved-1 ends in the other dir, and every record is served."""
    assert run["resumed"]
