"""Log dirs written by the real Apache Kafka broker with real clients, for the differential tests.

:func:`generated_scenario` drives a real KRaft broker (:mod:`kafka_jvm`) with confluent-kafka
(librdkafka) and Kafka's own Java tools, records what Kafka's live tools say about it
(``kafka-consumer-groups``, ``kafka-share-groups``, ``kafka-configs`` ...), stops the broker
cleanly and keeps the log dir. What it writes:

- ``codecs``: a batch per codec (none, gzip, snappy, lz4, zstd), headers, null keys, a tombstone;
- ``rolled``: 1 MiB segments (Kafka 4's least), so several segments with their indexes and producer snapshots;
- ``retained``: size and time retention that deleted segments (log start offset above 0);
- ``compacted``: a compacted topic with tombstones that Kafka's cleaner has cleaned;
- ``txn``: an idempotent producer and transactions committed and aborted (``.txnindex``);
- ``doomed``: a topic created, written and deleted;
- groups: classic (``classic-group``), the consumer protocol of KIP-848 (``modern-group``),
  a share group (``share-group``, KIP-932) and a streams group (``streams-group``, KIP-1071)
  with their commits and acknowledgements, all left empty; and groups whose members are still connected when Kafka's live tools describe
  them and when the broker stops (``live-classic`` with two members, ``live-modern``, the
  streams group ``live-streams`` of KIP-1071, a Kafka Streams application with two stream
  threads reading ``rolled`` (two partitions), and the share
  group ``live-share``, Kafka's console share consumer reading ``rolled``);
- configs set with ``kafka-configs`` on a topic and on the broker.

The result is cached per Kafka version and generator source under ``~/.cache/pylogctl-tests``
(or ``$PYLOGCTL_TEST_CACHE``), so one machine generates it once; tests read it in place and
copy it before writing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kafka_jvm import (KAFKA_DIR, KAFKA_VERSION, TEST_CACHE, KafkaBroker, java_command,
                       require_kafka)

CACHE = TEST_CACHE / "kafka-scenarios"
LIVE_FILE = "live.json"  # what Kafka's live tools printed, keyed by command


@dataclass(frozen=True)
class Scenario:
    root: Path

    @property
    def log_dir(self) -> Path:
        return self.root / "logs"

    @property
    def live(self) -> dict:
        return json.loads((self.root / LIVE_FILE).read_text())

    def partition(self, name: str) -> Path:
        return self.log_dir / name


def _generator_key(version: str) -> str:
    sources = [Path(__file__), Path(__file__).with_name("kafka_jvm.py"),
               KAFKA_DIR / "clients" / "StreamsGroupApp.java"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:12]
    return f"{version}-{digest}"


def generated_scenario(version: str = KAFKA_VERSION) -> Scenario:
    """The cached scenario dir, generated now if this machine has none for this generator."""
    return _cached("served", _generate, version)


def killed_scenario(version: str = KAFKA_VERSION) -> Scenario:
    """A log dir left by a real broker SIGKILLed in the middle of a produce storm (cached)."""
    return _cached("killed", _generate_killed, version)


def raft_scenario(version: str = KAFKA_VERSION) -> Scenario:
    """A log dir whose KRaft metadata log has several segments and snapshots, left by a real
    broker SIGKILLed (cached)."""
    return _cached("raft", _generate_raft, version)


def _cached(kind: str, generate, version: str) -> Scenario:
    require_kafka(version)
    root = CACHE / f"{kind}-{_generator_key(version)}"
    if (root / "done").exists():
        return Scenario(root)
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # pytest-xdist workers or two runs: one generates
        if not (root / "done").exists():
            tmp = root.with_name(root.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            generate(tmp, version)
            (tmp / "done").write_text("")
            shutil.rmtree(root, ignore_errors=True)
            tmp.rename(root)
    return Scenario(root)


def _generate(root: Path, version: str) -> None:
    broker = KafkaBroker(log_dir=root / "logs", work_dir=root / "broker", version=version,
                         overrides={"log.cleaner.min.compaction.lag.ms": 0,
                                    "log.cleaner.dedupe.buffer.size": 4 * 1024 * 1024,
                                    "group.consumer.min.heartbeat.interval.ms": 500,
                                    "group.consumer.heartbeat.interval.ms": 500,
                                    "group.share.min.heartbeat.interval.ms": 500,
                                    "group.share.heartbeat.interval.ms": 500})
    broker.format()
    broker.start()
    members = LiveMembers(broker)
    try:
        _drive(broker)
        members.start()
        live = _record_live(broker)
        (root / LIVE_FILE).write_text(json.dumps(live, indent=1, sort_keys=True))
    finally:
        broker.stop()  # with the live members still connected, as a broker dies under load
        members.stop()


STORM_TOPICS = ("storm", "storm-txn")


def _generate_killed(root: Path, version: str) -> None:
    """Several segments per partition, transactions committed and aborted and one left open,
    consumer groups of both protocols with commits, then SIGKILL while idempotent acks=all
    producers are mid-storm."""
    broker = KafkaBroker(log_dir=root / "logs", work_dir=root / "broker", version=version)
    broker.format()
    broker.start()
    try:
        # an index entry every 1 KiB, not 4: recovery must rebuild indexes with the topic's
        # own index.interval.bytes, as Kafka does
        _topic(broker, "storm", 3, segment_bytes=1048576, index_interval_bytes=1024)
        _topic(broker, "storm-txn", 2, segment_bytes=1048576)
        # the open transaction times out soon after a restart (the round trips wait for it)
        t = _producer(broker, **{"transactional.id": "storm-txn", "compression.type": "zstd",
                                 "transaction.timeout.ms": 10000})
        t.init_transactions(30)
        for n in range(12):  # ~1.1 MiB per partition: two segments each
            t.begin_transaction()
            for i in range(600):
                t.produce("storm-txn", key=f"{n}-{i}".encode(), value=os.urandom(300),
                          partition=i % 2)
            t.flush(30)  # sent before the abort: an abort purges what is still queued
            (t.commit_transaction if n % 3 else t.abort_transaction)(30)
        t.begin_transaction()  # left open: the kill finds it ongoing
        for i in range(50):
            t.produce("storm-txn", key=f"open-{i}".encode(), value=b"open", partition=i % 2)
        t.flush(30)
        p = _producer(broker, **{"enable.idempotence": True, "compression.type": "lz4",
                                 "acks": "all"})
        for i in range(12000):  # ~4 MiB per partition: three or four segments each
            p.produce("storm", key=f"k{i}".encode(), value=os.urandom(600), partition=i % 3)
            if i % 1000 == 999:
                p.flush(30)
        # groups of both protocols with commits, in __consumer_offsets when the kill comes
        _consume(broker, "storm-readers", ["storm"], "classic", 1, 3000)
        _consume(broker, "storm-modern", ["storm", "storm-txn"], "consumer", 1, 2000)
        stop = threading.Event()

        def storm() -> None:
            i = 0
            while not stop.is_set():
                p.produce("storm", key=f"s{i}".encode(), value=os.urandom(200),
                          partition=i % 3)
                p.poll(0)
                i += 1
                if i % 200 == 0:
                    time.sleep(0.01)
        thread = threading.Thread(target=storm, daemon=True)
        thread.start()
        time.sleep(3)
        broker.kill()
        stop.set()
        thread.join(10)
    finally:
        broker.kill()


def _generate_raft(root: Path, version: str) -> None:
    """A snapshot every second and a new metadata segment every 1.5 s (the raft layer's
    no-op records keep the log growing), a few topics, then SIGKILL."""
    broker = KafkaBroker(log_dir=root / "logs", work_dir=root / "broker", version=version,
                         overrides={"metadata.log.max.snapshot.interval.ms": 1000,
                                    "metadata.log.segment.ms": 1500})
    broker.format()
    broker.start()
    meta = root / "logs" / "__cluster_metadata-0"
    try:
        for i in range(3):
            _topic(broker, f"raft-{i}", 2)
        _wait_until("wrote six metadata segments and six snapshots",
                    lambda: len(list(meta.glob("*.log"))) >= 6
                    and len(list(meta.glob("*-*.checkpoint"))) >= 6, timeout=120)
    finally:
        broker.kill()


def _topic(broker: KafkaBroker, name: str, partitions: int = 1, **configs) -> None:
    args = ["--create", "--topic", name, "--partitions", str(partitions)]
    for k, v in configs.items():
        args += ["--config", f"{k.replace('_', '.')}={v}"]
    broker.tool("kafka-topics", *args)


def _producer(broker: KafkaBroker, **conf):
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, **conf})


def _drive(broker: KafkaBroker) -> dict:
    _topic(broker, "codecs", 1)
    _topic(broker, "rolled", 2, segment_bytes=1048576)  # Kafka 4's smallest segment
    _topic(broker, "retained", 1, segment_bytes=1048576, retention_bytes=1500000)
    _topic(broker, "compacted", 1, cleanup_policy="compact",
           min_cleanable_dirty_ratio="0.01", delete_retention_ms=100,
           min_compaction_lag_ms=0, segment_ms=1000)
    _topic(broker, "txn", 2)
    _topic(broker, "doomed", 1)
    _topic(broker, "streams-out", 1)

    now = int(time.time() * 1000)  # retention.ms counts from the record timestamps
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        p = _producer(broker, **{"compression.type": codec, "enable.idempotence": False,
                                 "acks": "all"})
        for i in range(20):
            headers = [("codec", codec.encode()), ("n", str(i).encode())] if i % 3 else None
            key = None if i % 7 == 0 else f"{codec}-{i}".encode()
            value = None if i == 13 else (f'{{"codec":"{codec}","i":{i}}}' * (1 + i % 4)).encode()
            p.produce("codecs", value=value, key=key, headers=headers,
                      timestamp=now - 60_000 + i)
        p.flush(30)

    p = _producer(broker, **{"enable.idempotence": True, "compression.type": "lz4"})
    for i in range(8000):  # ~2.5 MiB per partition after lz4: three segments each
        p.produce("rolled", key=f"k{i % 50}".encode(), value=os.urandom(400).hex().encode(),
                  partition=i % 2)
        if i % 500 == 0:
            p.flush(30)
    p.flush(30)
    for i in range(3500):
        p.produce("retained", key=f"r{i}".encode(), value=os.urandom(500).hex().encode())
        if i % 300 == 0:
            p.flush(30)
    p.flush(30)

    p = _producer(broker, **{"enable.idempotence": True})
    for rnd in range(6):
        for i in range(60):
            live_key = i % 10
            p.produce("compacted", key=f"c{live_key}".encode(),
                      value=None if (rnd == 4 and live_key == 3) else f"v{rnd}-{i}".encode())
        p.flush(30)
        time.sleep(1.1)  # segment.ms rolls, so the cleaner has closed segments to clean

    t = _producer(broker, **{"transactional.id": "txn-writer", "enable.idempotence": True})
    t.init_transactions(30)
    for n in range(4):
        t.begin_transaction()
        for i in range(25):
            t.produce("txn", key=f"t{n}-{i}".encode(), value=f"txn {n} record {i}".encode(),
                      partition=i % 2)
        t.flush(30)  # sent before the abort: an abort purges what is still queued
        if n % 2 == 0:
            t.commit_transaction(30)
        else:
            t.abort_transaction(30)
    t2 = _producer(broker, **{"transactional.id": "txn-open", "enable.idempotence": True,
                              "transaction.timeout.ms": 600000})
    t2.init_transactions(30)

    p = _producer(broker)
    for i in range(30):
        p.produce("doomed", value=f"doomed {i}".encode())
    p.flush(30)

    _consume(broker, "classic-group", ["codecs", "rolled", "txn"], "classic", 2, 1000)
    _consume(broker, "modern-group", ["codecs", "compacted"], "consumer", 1, 150)
    _share_consume(broker, "share-group", "codecs")
    _streams_run(broker, "streams-group", "codecs", "streams-out")

    broker.tool("kafka-topics", "--delete", "--topic", "doomed")
    broker.tool("kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", "codecs",
                "--add-config", "retention.ms=604800001,max.message.bytes=2000000")
    broker.tool("kafka-configs", "--alter", "--entity-type", "brokers", "--entity-name", "1",
                "--add-config", "log.cleaner.threads=1")
    broker.tool("kafka-configs", "--alter", "--entity-type", "brokers", "--entity-default",
                "--add-config", "log.retention.bytes=1073741824")

    _wait_cleaned(broker, "compacted-0")
    _wait_retained(broker, "retained-0")


def _consume(broker: KafkaBroker, group: str, topics: list[str], protocol: str,
             members: int, limit: int) -> None:
    """Members that join, consume part of the topics, commit and leave."""
    from confluent_kafka import Consumer

    conf = {"bootstrap.servers": broker.bootstrap, "group.id": group,
            "enable.auto.commit": False, "group.protocol": protocol,
            "client.id": f"{group}-client"}
    if protocol == "classic":
        conf.update({"auto.offset.reset": "earliest", "session.timeout.ms": 10000})
    else:
        conf["auto.offset.reset"] = "earliest"
    consumers = [Consumer(dict(conf)) for _ in range(members)]
    for c in consumers:
        c.subscribe(topics)
    seen = 0
    deadline = time.monotonic() + 60
    idle_since = time.monotonic()
    while seen < limit and time.monotonic() < deadline and time.monotonic() - idle_since < 5:
        for c in consumers:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                seen += 1
                idle_since = time.monotonic()
                if seen % 40 == 0:
                    c.commit(asynchronous=False)
    for c in consumers:
        try:
            c.commit(asynchronous=False)
        except Exception:  # nothing consumed by this member since its last commit
            pass
    for c in consumers:
        c.close()


class LiveMembers:
    """Group members that stay connected while Kafka's tools describe their groups."""

    def __init__(self, broker: KafkaBroker) -> None:
        self.broker = broker
        self.consumers: list = []
        self.streams: subprocess.Popen | None = None
        self.share: subprocess.Popen | None = None
        self.running = threading.Event()
        self.committing = True  # until the groups settle; then offsets stay put for the tools
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def start(self) -> None:
        from confluent_kafka import Consumer

        base = {"bootstrap.servers": self.broker.bootstrap, "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "log_level": 0}  # quiet once the broker stops under them
        for i in range(2):
            self.consumers.append(Consumer({**base, "group.id": "live-classic",
                                            "group.protocol": "classic",
                                            "client.id": f"live-classic-{i}",
                                            "partition.assignment.strategy": "range"}))
        self.consumers.append(Consumer({**base, "group.id": "live-modern",
                                        "group.protocol": "consumer",
                                        "client.id": "live-modern-0"}))
        for c in self.consumers[:2]:
            c.subscribe(["rolled"])
        self.consumers[2].subscribe(["txn", "codecs"])
        self.running.set()
        self.thread.start()
        app = KAFKA_DIR / "clients" / "StreamsGroupApp.java"
        self.streams = subprocess.Popen(
            java_command(str(app), [self.broker.bootstrap, "live-streams", "rolled",
                                    "streams-out", "300", "2"], self.broker.version),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.broker.tool("kafka-configs", "--alter", "--entity-type", "groups", "--entity-name",
                         "live-share", "--add-config", "share.auto.offset.reset=earliest")
        self.share = subprocess.Popen(
            java_command("org.apache.kafka.tools.consumer.ConsoleShareConsumer",
                         ["--bootstrap-server", self.broker.bootstrap, "--topic", "rolled",
                          "--group", "live-share",
                          "--consumer-property", "client.id=live-share-0"],
                         self.broker.version),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_settled()

    def _poll(self) -> None:
        while self.running.is_set():
            for c in self.consumers:
                try:
                    msg = c.poll(0.05)
                    if (msg is not None and msg.error() is None and self.committing
                            and msg.offset() % 25 == 0):
                        c.commit(message=msg, asynchronous=True)
                except Exception:  # the broker went away under us: that is the point
                    pass

    def _wait_settled(self) -> None:
        """Until every group is Stable with its members and each has committed something."""
        def settled() -> bool:
            out = self.broker.tool("kafka-consumer-groups", "--describe", "--state",
                                   "--group", "live-classic", "--group", "live-modern",
                                   check=False).stdout
            streams = self.broker.tool("kafka-streams-groups", "--describe", "--group",
                                       "live-streams", "--state", check=False).stdout
            offsets = self.broker.tool("kafka-consumer-groups", "--describe", "--group",
                                       "live-classic", "--group", "live-modern",
                                       check=False).stdout
            share = self.broker.tool("kafka-share-groups", "--describe", "--group",
                                     "live-share", "--state", check=False).stdout
            rows = [ln.split() for ln in out.splitlines()]
            stable = {r[0]: r for r in rows if len(r) > 3 and "Stable" in r}
            return (stable.get("live-classic", [""])[-1] == "2"
                    and stable.get("live-modern", [""])[-1] == "1"
                    and "STABLE" in streams.upper() and "Stable" in share
                    and offsets.count("live-classic") >= 2 and offsets.count("live-modern") >= 2)
        _wait_until("settled the live groups", settled, timeout=120)
        self.committing = False
        time.sleep(1)  # the last asynchronous commits land

    def stop(self) -> None:
        self.running.clear()
        for app in (self.streams, self.share):
            if app is not None:
                app.kill()
                app.wait(30)
        # close() would try to leave the group on a broker that is gone: let them go
        threading.Thread(target=lambda: [c.close() for c in self.consumers], daemon=True).start()


def _streams_run(broker: KafkaBroker, app_id: str, source: str, sink: str) -> None:
    """A Kafka Streams application that runs, commits and closes: its members leave, the
    streams group stays (Empty) with its topology and offsets."""
    app = KAFKA_DIR / "clients" / "StreamsGroupApp.java"
    proc = subprocess.Popen(java_command(str(app), [broker.bootstrap, app_id, source, sink, "120"],
                                         broker.version),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        _wait_until(f"ran the streams app {app_id}",
                    lambda: "Stable" in broker.tool("kafka-streams-groups", "--describe",
                                                    "--group", app_id, "--state",
                                                    check=False).stdout, timeout=120)
        time.sleep(3)  # a few commit intervals
        proc.stdin.close()  # the app closes and leaves its group
        proc.wait(60)
    finally:
        proc.kill()


def _share_consume(broker: KafkaBroker, group: str, topic: str) -> None:
    broker.tool("kafka-configs", "--alter", "--entity-type", "groups", "--entity-name", group,
                "--add-config", "share.auto.offset.reset=earliest")
    broker.tool("kafka-console-share-consumer", "--topic", topic, "--group", group,
                "--max-messages", "40", "--timeout-ms", "30000", check=False)


def _wait_until(what: str, predicate, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"Kafka never {what} within {timeout}s")


def _checkpoint(broker: KafkaBroker, name: str) -> dict:
    path = broker.log_dir / name
    if not path.exists():
        return {}
    lines = path.read_text().split("\n")[2:]
    return {f"{t}-{p}": int(o) for t, p, o in (ln.split() for ln in lines if ln.strip())}


def _wait_cleaned(broker: KafkaBroker, partition: str) -> None:
    _wait_until(f"cleaned {partition}",
                lambda: _checkpoint(broker, "cleaner-offset-checkpoint").get(partition, 0) > 0)


def _wait_retained(broker: KafkaBroker, partition: str) -> None:
    # Kafka checkpoints a log start only above the first segment's base: look at the segments
    _wait_until(f"deleted old segments of {partition}",
                lambda: "00000000000000000000.log" not in
                {p.name for p in (broker.log_dir / partition).iterdir()})


# What Kafka's live tools print, recorded while the broker serves, compared with pylogctl's
# offline answers from the stopped broker's files.
LIVE_COMMANDS = {
    "consumer-groups --list": ("kafka-consumer-groups", "--list"),
    "consumer-groups --list --state": ("kafka-consumer-groups", "--list", "--state"),
    "consumer-groups --describe": ("kafka-consumer-groups", "--describe", "--all-groups"),
    "consumer-groups --describe --offsets": ("kafka-consumer-groups", "--describe",
                                             "--all-groups", "--offsets"),
    "consumer-groups --describe --members": ("kafka-consumer-groups", "--describe",
                                             "--all-groups", "--members"),
    "consumer-groups --describe --members --verbose": ("kafka-consumer-groups", "--describe",
                                                       "--all-groups", "--members",
                                                       "--verbose"),
    "consumer-groups --describe --state": ("kafka-consumer-groups", "--describe",
                                           "--all-groups", "--state"),
    "consumer-groups --describe --state --verbose": ("kafka-consumer-groups", "--describe",
                                                     "--all-groups", "--state", "--verbose"),
    "streams-groups --list": ("kafka-streams-groups", "--list"),
    "streams-groups --describe": ("kafka-streams-groups", "--describe", "--all-groups"),
    "streams-groups --describe --members": ("kafka-streams-groups", "--describe",
                                            "--all-groups", "--members"),
    "streams-groups --describe --members --verbose": ("kafka-streams-groups", "--describe",
                                                      "--all-groups", "--members", "--verbose"),
    "streams-groups --describe --state": ("kafka-streams-groups", "--describe", "--all-groups",
                                          "--state"),
    "streams-groups --describe --offsets": ("kafka-streams-groups", "--describe",
                                            "--all-groups", "--offsets"),
    "streams-groups --list --state": ("kafka-streams-groups", "--list", "--state"),
    "streams-groups --describe --state --verbose": ("kafka-streams-groups", "--describe",
                                                    "--all-groups", "--state", "--verbose"),
    "streams-groups --describe --offsets --verbose": ("kafka-streams-groups", "--describe",
                                                      "--all-groups", "--offsets", "--verbose"),
    "streams-groups --describe --group streams-group --state": (
        "kafka-streams-groups", "--describe", "--group", "streams-group", "--state"),
    "streams-groups --describe --group no-such-group": (
        "kafka-streams-groups", "--describe", "--group", "no-such-group"),
    "consumer-groups --list --type": ("kafka-consumer-groups", "--list", "--type"),
    "share-groups --list": ("kafka-share-groups", "--list"),
    "share-groups --describe": ("kafka-share-groups", "--describe", "--all-groups"),
    "share-groups --describe --members": ("kafka-share-groups", "--describe", "--all-groups",
                                          "--members"),
    "share-groups --describe --state": ("kafka-share-groups", "--describe", "--all-groups",
                                        "--state"),
    "share-groups --describe --members --verbose": ("kafka-share-groups", "--describe",
                                                    "--all-groups", "--members", "--verbose"),
    "share-groups --describe --state --verbose": ("kafka-share-groups", "--describe",
                                                  "--all-groups", "--state", "--verbose"),
    "share-groups --describe --offsets --verbose": ("kafka-share-groups", "--describe",
                                                    "--all-groups", "--offsets", "--verbose"),
    "configs --describe --all topics codecs": ("kafka-configs", "--describe", "--all",
                                               "--entity-type", "topics", "--entity-name",
                                               "codecs"),
    "configs --describe topics codecs": ("kafka-configs", "--describe", "--entity-type",
                                         "topics", "--entity-name", "codecs"),
    "transactions list": ("kafka-transactions", "list"),
}


def _record_live(broker: KafkaBroker) -> dict:
    live = {}
    for name, (tool, *args) in LIVE_COMMANDS.items():
        out = broker.tool(tool, *args, check=False)
        live[name] = {"stdout": out.stdout, "stderr": out.stderr, "code": out.returncode}
    return live
