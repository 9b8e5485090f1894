"""Kafka-written KRaft metadata for ``pylogctl metadata``, and Kafka's own readers of it.

:func:`metadata_scenario` (cached like tests/kafka_scenarios.py's): a real Kafka 4.4 broker in
KRaft combined mode with a snapshot every second, driven through Kafka's tools to write most
record types (topics with configs, a partition increase, a deleted topic, ACLs under the
StandardAuthorizer, client quotas, SCRAM credentials, broker, group and client-metrics
configs), with what the live ``kafka-topics --describe`` and ``kafka-features describe``
printed, then killed (SIGKILL: committed metadata is on disk, as the raft layer flushes it
before it commits).

:func:`metadata_shell` runs ``kafka-metadata-shell`` (kafka-shell's ``MetadataShell``; 4.3.1, the
newest published, on the 4.4 jars) on one file, several commands per JVM, through
tests/apache_kafka/clients/metadata_shell/.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from pathlib import Path

from kafka_jvm import KAFKA_DIR, KAFKA_VERSION, TEST_CACHE, KafkaBroker, java_command
from kafka_scenarios import LIVE_FILE, Scenario, _cached

SHELL_SOURCES = KAFKA_DIR / "clients" / "metadata_shell"
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"


def _digest(*paths: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in paths)).hexdigest()[:12]


def _shell_classes(version: str) -> Path:
    sources = sorted(SHELL_SOURCES.rglob("*.java"))
    classes = TEST_CACHE / "classes" / f"metadata-shell-{version}-{_digest(*sources)}"
    if not (classes / "MetadataShellRun.class").exists():
        tmp = classes.with_name(classes.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        lib = KAFKA_DIR / "lib" / version
        subprocess.run(["javac", "-nowarn", "-cp", f"{lib}/*", "-d", str(tmp),
                        *map(str, sources)], check=True, capture_output=True)
        shutil.rmtree(classes, ignore_errors=True)
        tmp.rename(classes)
    return classes


def metadata_shell(path: Path, commands: list[list[str]],
                   version: str = KAFKA_VERSION) -> list[list[str]]:
    """What ``kafka-metadata-shell --snapshot PATH CMD...`` prints for each command (lines),
    once its image holds the file's last record (its offset read here by pylogctl)."""
    from pylogctl.storage.metadata_loader import load_metadata_file

    args = [str(path), str(load_metadata_file(path).image.provenance.offset)]
    for i, command in enumerate(commands):
        args += (["--next"] if i else []) + command
    cmd = java_command("MetadataShellRun", args, version)
    cp = cmd.index("-cp") + 1
    cmd[cp] = f"{_shell_classes(version)}:{cmd[cp]}"
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:  # say what the shell printed before it hung
        raise AssertionError(f"kafka-metadata-shell hung on {path} {commands[:2]}...:\n"
                             f"{(exc.stderr or b'').decode(errors='replace')[-2000:]}") from exc
    out = proc.stdout.decode("utf-8", "surrogateescape")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    chunks = out.split("--end--\n")
    assert len(chunks) == len(commands) + 1, out
    return [chunk.splitlines() for chunk in chunks[:-1]]


def metadata_scenario(version: str = KAFKA_VERSION) -> Scenario:
    """The scenario (its ``log_dir``, its ``live`` outputs), generated once per machine."""
    return _cached(f"metadata-{_digest(Path(__file__))}", _generate, version)


def _generate(root: Path, version: str) -> None:
    broker = KafkaBroker(log_dir=root / "logs", work_dir=root / "broker", version=version,
                         overrides={
                             "metadata.log.max.snapshot.interval.ms": 1000,
                             "authorizer.class.name":
                                 "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                             "super.users": "User:ANONYMOUS"})
    broker.format()
    broker.start()
    try:
        _drive(broker)
        time.sleep(2.5)  # a snapshot after the changes above, and records after it
        _configs(broker, "topics", "single", "retention.bytes=1048576")
        live = {"describe": broker.tool("kafka-topics", "--describe").stdout,
                "describe-orders": broker.tool("kafka-topics", "--describe", "--topic",
                                               "orders").stdout,
                "features": broker.tool(FEATURE_COMMAND, "describe").stdout}
        (root / LIVE_FILE).write_text(json.dumps(live, indent=1, sort_keys=True))
    finally:
        # SIGKILL: a clean shutdown would have the controller move the leaders off the
        # broker (leader none, ELR 1), and the image would no longer be what was described
        broker.kill()


def _configs(broker: KafkaBroker, kind: str, name: str | None, configs: str) -> None:
    target = ["--entity-name", name] if name is not None else ["--entity-default"]
    broker.tool("kafka-configs", "--alter", "--entity-type", kind, *target,
                "--add-config", configs)


def _drive(broker: KafkaBroker) -> None:
    def topics(*args: str) -> None:
        broker.tool("kafka-topics", *args)

    topics("--create", "--topic", "orders", "--partitions", "3", "--config",
           "retention.ms=86400000", "--config", "cleanup.policy=compact,delete")
    topics("--create", "--topic", "single", "--partitions", "1")
    topics("--create", "--topic", "grown", "--partitions", "1")
    topics("--alter", "--topic", "grown", "--partitions", "3")
    topics("--create", "--topic", "gone", "--partitions", "2", "--config", "segment.ms=100000")
    topics("--delete", "--topic", "gone")
    broker.tool(ACL_COMMAND, "--add", "--allow-principal", "User:alice", "--operation", "Read",
                "--topic", "orders")
    broker.tool(ACL_COMMAND, "--add", "--deny-principal", "User:mallory", "--operation", "All",
                "--resource-pattern-type", "prefixed", "--topic", "ord")
    _configs(broker, "clients", "app-1", "producer_byte_rate=1024,consumer_byte_rate=2048")
    # a default entity (--entity-default) is named "" in Kafka's tree, and its shell's find and
    # wildcards fail on it ("Expected  to be a valid child"): named entities only
    _configs(broker, "users", "bob", "request_percentage=12.5")
    broker.tool("kafka-configs", "--alter", "--entity-type", "users", "--entity-name", "bob",
                "--entity-type", "clients", "--entity-name", "app(2)",
                "--add-config", "producer_byte_rate=4096")
    _configs(broker, "users", "alice", "SCRAM-SHA-256=[iterations=4096,password=secret]")
    _configs(broker, "brokers", "1", "log.cleaner.threads=2")
    _configs(broker, "brokers", None, "log.retention.bytes=1073741824")
    _configs(broker, "groups", "g1", "consumer.session.timeout.ms=50000")
    _configs(broker, "client-metrics", "m1",
             "interval.ms=1000,metrics=org.apache.kafka.producer")
