"""``pylogctl broker`` with kafkajs (Node): tests/broker/js/round_trip.js creates the topic,
produces keyed records with the idempotent producer, consumes them in a group and commits; the
broker restarts on the same log dir and the group resumes from its commit; then the offline
commands read the files (committed offsets with lag 0, every batch valid).

kafkajs is installed into tests/broker/js by tests/install-tools.sh (npm); without node or
that install the test skips and says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from broker_support import round_trip_across_restart

JS = Path(__file__).parent / "js"
PARTITIONS = 3


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH (kafkajs test); install Node.js and run tests/install-tools.sh")
    if not (JS / "node_modules" / "kafkajs").is_dir():
        pytest.skip("kafkajs not installed in tests/broker/js; run tests/install-tools.sh")
    return node


def _session(node: str, bootstrap: str, first: int, count: int) -> set[tuple[str, str]]:
    done = subprocess.run([node, str(JS / "round_trip.js"), bootstrap, "kj", "kj-group",
                           str(first), str(count), str(PARTITIONS)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "KAFKAJS_NO_PARTITIONER_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    return {tuple(pair) for pair in json.loads(done.stdout)["records"]}


def test_kafkajs_round_trip(tmp_path, cli):
    node = _node()
    log_dir = tmp_path / "logs"
    round_trip_across_restart(cli, log_dir, lambda *a: _session(node, *a), group="kj-group",
                              topic="kj", partitions=PARTITIONS, text=True)
