"""A real Kafka 4.4 broker with two log dirs (JBOD), left SIGKILLed in the middle of an
intra-broker move, for ``pylogctl move`` (cached like :mod:`kafka_scenarios`).

- ``moved``: two partitions of 3000 records each (values ``moved-{p}-{i}``);
- ``slow``: one partition of 3000 records of 1 KiB, which ``kafka-reassign-partitions`` with
  ``log_dirs`` and a 40 kB/s alter-log-dirs throttle was moving to the other log dir when
  the broker was killed: a ``-future`` replica holding part of it.

``jbod.json`` says which log dir (``a`` or ``b``) holds each partition and the record counts.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from kafka_jvm import KAFKA_VERSION, KafkaBroker, run_tool
from kafka_scenarios import _cached, _producer, _topic

REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
RECORDS = 3000


@dataclass(frozen=True)
class JbodScenario:
    root: Path

    @property
    def info(self) -> dict:
        return json.loads((self.root / "jbod.json").read_text())


def jbod_scenario(version: str = KAFKA_VERSION) -> JbodScenario:
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:8]
    return JbodScenario(_cached(f"jbod-{key}", _generate, version).root)


def broker_on(root: Path, work: Path, version: str = KAFKA_VERSION) -> KafkaBroker:
    return KafkaBroker(log_dir=root / "a", work_dir=work, version=version,
                       overrides={"log.dirs": f"{root / 'a'},{root / 'b'}"})


def holder(root: Path, partition: str) -> str:
    """``a`` or ``b``: the log dir holding ``partition`` live."""
    return next(d for d in ("a", "b") if (root / d / partition).is_dir())


def _generate(root: Path, version: str) -> None:
    broker = broker_on(root, root / "broker", version)
    broker.format()
    broker.start()
    try:
        _topic(broker, "moved", 2)
        _topic(broker, "slow", 1)
        p = _producer(broker, acks="all")
        for i in range(RECORDS):
            for part in (0, 1):
                p.produce("moved", value=f"moved-{part}-{i}".encode(), partition=part)
            p.produce("slow", value=(f"slow-0-{i}-".encode() + b"x" * 1024), partition=0)
            if i % 500 == 0:
                p.flush(30)
        p.flush(30)
        slow_from = holder(root, "slow-0")
        slow_to = "b" if slow_from == "a" else "a"
        plan = root / "reassign.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": "slow", "partition": 0, "replicas": [broker.node_id],
             "log_dirs": [str(root / slow_to)]}]}))
        run_tool(REASSIGN, "--bootstrap-server", broker.bootstrap, "--execute",
                 "--reassignment-json-file", str(plan),
                 "--replica-alter-log-dirs-throttle", "40000", version=version, check=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            futures = list((root / slow_to).glob("slow-0.*-future"))
            if futures and sum(f.stat().st_size for f in futures[0].glob("*.log")) > 100_000:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"no future replica of slow-0 grew:\n{broker.log_tail()}")
    finally:
        broker.kill()
    info = {"moved-0": holder(root, "moved-0"), "moved-1": holder(root, "moved-1"),
            "slow-0": slow_from, "slow-0-future": slow_to, "records": RECORDS}
    (root / "jbod.json").write_text(json.dumps(info))
