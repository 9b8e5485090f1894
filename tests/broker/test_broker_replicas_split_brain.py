"""``replicas`` on two copies of one ``pylogctl broker`` log dir that real clients
(confluent-kafka) then wrote apart in the same leader epoch -- a split brain no epoch chain can
show: Kafka's follower would keep its records below the leader's end, so only the batch CRCs
tell; ``replicas`` reports the batch below the divergence point that differs (exit 1)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from broker_support import BrokerThread
from support import run_pylogctl

ck = pytest.importorskip("confluent_kafka")


def _produce(log_dir: Path, tag: str, count: int, node: int = 1) -> None:
    with BrokerThread(log_dir, node_id=node) as broker:
        p = ck.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        for i in range(count):
            p.produce("sb", key=f"k{i}".encode(), value=f"{tag}-{i}".encode(), partition=0)
            p.flush(30)
        assert p.flush(30) == 0


def test_records_written_apart_in_one_epoch_are_a_mismatch(tmp_path):
    one = tmp_path / "cluster" / "broker1"
    one.mkdir(parents=True)
    _produce(one, "common", 6)
    two = tmp_path / "cluster" / "broker2"
    shutil.copytree(one, two)
    meta = two / "meta.properties"
    meta.write_text(re.sub(r"(node|broker)\.id=\d+", r"\1.id=2", meta.read_text()))
    _produce(one, "one", 3)
    _produce(two, "two", 5, node=2)
    r = run_pylogctl("replicas", tmp_path / "cluster", "-o", "json")
    assert r.returncode == 1, r.stderr
    found = json.loads(r.stdout)[0]
    lead, other = found["replicas"]
    assert lead["partitionDir"].endswith("broker2/sb-0")  # same epoch, the longer log
    assert lead["leaderEpochs"] == other["leaderEpochs"]
    assert other["truncation"] is None and other["divergencePoint"] == other["logEndOffset"]
    assert other["mismatch"].startswith(f"the batch at offset {6}")
    assert other["unique"]["records"] == 3 and lead["unique"]["records"] == 5
