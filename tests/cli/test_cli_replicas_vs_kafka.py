"""``pylogctl replicas`` against a real Kafka 4.4 cluster whose partition diverged for real.

The cached scenario (:mod:`kafka_cluster`): broker 2 led ``div-0`` alone for ``N2`` records
after broker 3 stopped, was killed, and broker 3 was elected uncleanly and wrote ``N3`` records
of its own. The judge is Kafka itself: restarted with broker 3 leading, broker 2 rejoins as a
follower and truncates where its fetcher decides (its ``server.log`` says where), which must be
the point ``replicas`` predicts from the files left before (and likewise when broker 2 is
elected back and broker 3, whose latest epoch broker 2 never had, follows it); and after
``--elect 3 --execute`` on a copy, Kafka serves broker 3's records and broker 2 rejoins with
nothing to truncate.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from kafka_cluster import N1, N2, N3, TOPIC, KafkaCluster, consume_values, diverged_scenario, \
    rejoin
from pylogctl.groups.replica_divergence import loaded_batches
from pylogctl.storage.log_dir import LogDir
from support import run_pylogctl

TRUNCATING = re.compile(r"Truncating partition div-0 with TruncationState\(offset=(\d+), "
                        r"completed=true\)")


@pytest.fixture(scope="module")
def diverged():
    return diverged_scenario()


def _batches(log_dir) -> list:
    d = LogDir(log_dir)
    return [b.key for b in loaded_batches(d.plan(d.partition(TOPIC, 0)))]


def _replicas(*args) -> dict:
    r = run_pylogctl("replicas", *map(str, args), "-o", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)[0]


def test_the_predicted_divergence_point_is_where_kafka_truncates(diverged):
    found = _replicas(diverged.before(2), diverged.before(3))
    lead, old_leader = found["replicas"]
    assert lead["brokerId"] == 3 and found["leaderReason"].startswith("best replica")
    assert old_leader["brokerId"] == 2 and old_leader["divergencePoint"] == N1
    assert (old_leader["lost"]["firstOffset"], old_leader["lost"]["endOffset"],
            old_leader["lost"]["records"]) == (N1, N1 + N2, N2)
    assert old_leader["mismatch"] is None
    elect = _replicas(diverged.before(2), diverged.before(3), "--elect", "3")
    assert elect["truncate"][0]["offset"] == old_leader["truncation"]["offset"] == N1
    # the judge: where Kafka's fetcher truncated broker 2 when it rejoined
    assert [int(x) for x in TRUNCATING.findall(diverged.server_log(2))] == [N1]
    before2, before3, after2 = (_batches(diverged.before(2)), _batches(diverged.before(3)),
                                _batches(diverged.after(2)))
    assert [k for k in after2 if k.base_offset < N1] == [
        k for k in before2 if k.base_offset < N1]
    assert [k for k in after2 if k.base_offset >= N1] == [
        k for k in before3 if k.base_offset >= N1]
    agreed = _replicas(diverged.after(2), diverged.after(3), "-v")
    assert agreed["agree"] and not agreed["singleCopies"]


def test_electing_the_old_leader_truncates_where_kafka_does(diverged):
    # broker 3's latest epoch is one broker 2 never had: Kafka answers the epoch below it
    found = _replicas(diverged.before(2), diverged.before(3), "--elect", "2")
    lead, other = found["replicas"]
    assert lead["brokerId"] == 2 and other["brokerId"] == 3
    assert other["divergencePoint"] == N1 and other["truncate"]["offset"] == N1
    assert other["lost"]["records"] == N3
    assert [int(x) for x in TRUNCATING.findall(diverged.server_log(3, "elect2"))] == [N1]
    after3 = _batches(diverged.elect2(3))
    assert [k for k in after3 if k.base_offset < N1] == [
        k for k in _batches(diverged.before(3)) if k.base_offset < N1]
    assert [k for k in after3 if k.base_offset >= N1] == [
        k for k in _batches(diverged.before(2)) if k.base_offset >= N1]


def test_elect_execute_then_kafka_serves_the_elected_leaders_records(diverged, tmp_path):
    shutil.copytree(diverged.root / "before" / "logs", tmp_path / "logs")
    logs = tmp_path / "logs"
    r = run_pylogctl("replicas", logs / "node2", logs / "node3", "--elect", "3", "--execute")
    assert r.returncode == 0, r.stderr
    assert "1 replica truncated" in r.stderr
    assert _batches(logs / "node2") == [k for k in _batches(diverged.before(2))
                                        if k.base_offset < N1]
    served: list[str] = []

    def consume(c: KafkaCluster) -> None:
        served.extend(consume_values(c.brokers[3].bootstrap, N1 + N3))

    cluster = KafkaCluster(tmp_path)
    try:
        rejoin(cluster, N1 + N3, consume)
    finally:
        cluster.stop_all()
    assert served == [f"both-{i}" for i in range(N1)] + [f"new-{i}" for i in
                                                         range(N1, N1 + N3)]
    log = (tmp_path / "work" / "node2" / "server.log").read_text(errors="replace")
    assert "Truncating to offset" not in log  # nothing left for Kafka's fetcher to cut
    assert _batches(logs / "node2") == _batches(logs / "node3")
