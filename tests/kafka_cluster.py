"""A small real Kafka cluster on loopback, and a partition made to diverge by an unclean
election (cached).

:class:`KafkaCluster` runs one KRaft controller and two brokers (``kafka_jvm.KafkaBroker``
with its roles changed): node 1 controls, nodes 2 and 3 hold the data.
:func:`diverged_scenario` makes ``div-0`` (replicas 2 and 3, ``unclean.leader.election.enable``,
``min.insync.replicas=1``, acks=1) diverge for real:

1. ``N1`` records reach both replicas (leader 2, epoch 0);
2. broker 3 stops (cleanly), ``N2`` more records go to broker 2 alone;
3. broker 2 is killed (SIGKILL); broker 3 starts and is elected uncleanly
   (``kafka-leader-election --election-type unclean``), so leader epoch 1 starts at ``N1``;
4. ``N3`` different records go to broker 3; unclean election is turned off again (so a
   restart cannot elect broker 2), and everything stops: ``before/`` keeps the three log dirs.

Then the judge, still cached: the cluster restarts on a copy, ``after/``, broker 3 first (it
leads), then broker 2, which rejoins as a follower, truncates as Kafka's fetcher decides, and
catches up; its ``server.log`` says where it truncated. On another copy, ``elect2/``, broker 2
starts alone and is elected uncleanly in turn, then broker 3 rejoins as its follower: its
latest epoch is one broker 2 never had.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from kafka_jvm import KAFKA_VERSION, KafkaBroker, run_tool
from kafka_scenarios import _cached, _wait_until

TOPIC = "div"
N1, N2, N3 = 30, 12, 17
BROKERS = (2, 3)


@dataclass
class ClusterNode(KafkaBroker):
    """A KRaft node with one role: ``controller`` or ``broker``."""

    roles: str = "broker"
    voters: str = ""

    def properties(self) -> dict:
        props = super().properties()
        props.update({"process.roles": self.roles, "controller.quorum.voters": self.voters,
                      "broker.session.timeout.ms": 3000, "broker.heartbeat.interval.ms": 500,
                      "replica.lag.time.max.ms": 5000,
                      "offsets.topic.num.partitions": 1})
        if self.roles == "controller":
            props["listeners"] = f"CONTROLLER://127.0.0.1:{self.controller_port}"
            for key in ("advertised.listeners", "inter.broker.listener.name"):
                props.pop(key)
        else:
            props["listeners"] = f"PLAINTEXT://127.0.0.1:{self.port}"
        return props


class KafkaCluster:
    """Node 1 the controller, nodes 2 and 3 brokers, each with its log dir under ``root``."""

    def __init__(self, root: Path, version: str = KAFKA_VERSION) -> None:
        self.root = root
        self.controller = ClusterNode(root / "logs" / "node1", root / "work" / "node1",
                                      version, node_id=1, roles="controller")
        self.controller.write_config()
        voters = f"1@127.0.0.1:{self.controller.controller_port}"
        self.controller.voters = voters
        self.brokers = {n: ClusterNode(root / "logs" / f"node{n}", root / "work" / f"node{n}",
                                       version, node_id=n, voters=voters) for n in BROKERS}

    @property
    def nodes(self) -> list[ClusterNode]:
        return [self.controller, *self.brokers.values()]

    def format(self) -> None:
        from kafka_jvm import _kafka_uuid

        cluster_id = _kafka_uuid()
        for node in self.nodes:
            node.format(cluster_id)

    def log_dir(self, node: int) -> Path:
        return self.root / "logs" / f"node{node}"

    def stop_all(self) -> None:
        for node in reversed(self.nodes):
            node.stop()
        for node in self.nodes:
            node.kill()


def leader_of(bootstrap: str, topic: str = TOPIC, partition: int = 0) -> int:
    from confluent_kafka.admin import AdminClient

    meta = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    t = meta.topics.get(topic)
    if t is None or t.error is not None or partition not in t.partitions:
        return -1
    return t.partitions[partition].leader


def produce(bootstrap: str, tag: str, first: int, count: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 0,
                  "enable.idempotence": False, "batch.num.messages": 1})
    for i in range(first, first + count):
        p.produce(TOPIC, key=f"k{i}".encode(), value=f"{tag}-{i}".encode(), partition=0)
        if i % 5 == 4:
            p.flush(30)  # a few batches, not one
    assert p.flush(30) == 0


def consume_values(bootstrap: str, expected: int) -> list[str]:
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"judge-{time.time_ns()}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([TOPIC])
    values: list[str] = []
    deadline = time.monotonic() + 60
    while len(values) < expected and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is not None and msg.error() is None:
            values.append(msg.value().decode())
    c.close()
    return values


def log_end(partition_dir: Path) -> int:
    from pylogctl.groups.end_offsets import read_log_end

    return read_log_end(partition_dir).offset if partition_dir.is_dir() else -1


def _generate(root: Path, version: str) -> None:
    cluster = KafkaCluster(root / "before", version)
    cluster.format()
    c, b2, b3 = cluster.controller, cluster.brokers[2], cluster.brokers[3]
    try:
        c.start()
        b2.start()
        b3.start()
        b2.tool("kafka-topics", "--create", "--topic", TOPIC, "--replica-assignment", "2:3",
                "--config", "unclean.leader.election.enable=true",
                "--config", "min.insync.replicas=1")
        _wait_until("elected broker 2", lambda: leader_of(b2.bootstrap) == 2)
        produce(b2.bootstrap, "both", 0, N1)
        _wait_until("replicated to broker 3",
                    lambda: log_end(cluster.log_dir(3) / f"{TOPIC}-0") == N1)
        b3.stop()
        produce(b2.bootstrap, "lost", N1, N2)
        b2.kill()
        b3.start()
        _wait_until("fenced broker 2", lambda: _elect_unclean(b3, 3), timeout=60)
        produce(b3.bootstrap, "new", N1, N3)
        b3.tool("kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", TOPIC,
                "--add-config", "unclean.leader.election.enable=false")
        b3.stop()
        c.stop()
    finally:
        cluster.stop_all()
    _judge(root, version)


def _elect_unclean(broker: ClusterNode, node: int) -> bool:
    """Whether ``node`` leads, after asking for an unclean election if it does not."""
    if leader_of(broker.bootstrap) != node:
        run_tool("org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server",
                 broker.bootstrap, "--election-type", "unclean", "--topic", TOPIC,
                 "--partition", "0", timeout=60)
    return leader_of(broker.bootstrap) == node


def _judge(root: Path, version: str) -> None:
    """Restart on a copy: broker 3 leads, broker 2 rejoins, truncates and catches up. On
    another, broker 2 is elected uncleanly and broker 3 rejoins."""
    shutil.copytree(root / "before" / "logs", root / "after" / "logs")
    cluster = KafkaCluster(root / "after", version)
    try:
        rejoin(cluster, N1 + N3)
    finally:
        cluster.stop_all()
    shutil.copytree(root / "before" / "logs", root / "elect2" / "logs")
    cluster = KafkaCluster(root / "elect2", version)
    c, b2, b3 = cluster.controller, cluster.brokers[2], cluster.brokers[3]
    try:
        c.start()
        b2.start()
        b2.tool("kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", TOPIC,
                "--add-config", "unclean.leader.election.enable=true")
        _wait_until("elected broker 2 uncleanly", lambda: _elect_unclean(b2, 2), timeout=60)
        b3.start()
        _wait_until("caught broker 3 up to broker 2",
                    lambda: log_end(cluster.log_dir(3) / f"{TOPIC}-0") == N1 + N2, timeout=60)
        b3.stop()
        b2.stop()
        c.stop()
    finally:
        cluster.stop_all()


def rejoin(cluster: KafkaCluster, end: int, while_up=None) -> None:
    """Start the controller and broker 3, then broker 2; wait until broker 2's copy ends at
    ``end``, call ``while_up(cluster)``, and stop everything cleanly."""
    c, b2, b3 = cluster.controller, cluster.brokers[2], cluster.brokers[3]
    c.start()
    b3.start()
    _wait_until("elected broker 3 again", lambda: leader_of(b3.bootstrap) == 3)
    b2.start()
    _wait_until("caught broker 2 up",
                lambda: log_end(cluster.log_dir(2) / f"{TOPIC}-0") == end, timeout=60)
    if while_up is not None:
        while_up(cluster)
    b2.stop()
    b3.stop()
    c.stop()


@dataclass(frozen=True)
class Diverged:
    root: Path

    def before(self, node: int) -> Path:
        return self.root / "before" / "logs" / f"node{node}"

    def after(self, node: int) -> Path:
        return self.root / "after" / "logs" / f"node{node}"

    def elect2(self, node: int) -> Path:
        return self.root / "elect2" / "logs" / f"node{node}"

    def server_log(self, node: int, run: str = "after") -> str:
        return (self.root / run / "work" / f"node{node}" / "server.log").read_text(
            errors="replace")


def diverged_scenario(version: str = KAFKA_VERSION) -> Diverged:
    return Diverged(_cached_cluster(version).root)


def _cached_cluster(version: str):
    # keyed on this file too (kafka_scenarios keys its own scenarios on its sources)
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:8]
    return _cached(f"diverged-{digest}", _generate, version)

