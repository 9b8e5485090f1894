"""Apache Kafka itself, as the judge: its tools and a real KRaft broker on the pinned jars.

``tests/install-tools.sh`` resolves the jars of ``tests/apache_kafka/pom.xml`` into
``tests/apache_kafka/lib/<version>/`` (cached; nothing is downloaded while tests run). Where Java
or the jars are absent, tests that need them skip with the reason; ``.ci/run`` sets
``PYLOGCTL_REQUIRE_KAFKA=1``, which turns that skip into a failure.

- :func:`run_tool` runs any Kafka main class (``kafka-dump-log``, ``kafka-consumer-groups``, ...)
  the way ``bin/kafka-run-class.sh`` does: ``java -cp 'lib/*' CLASS ARGS``.
- :class:`KafkaBroker` formats a log dir (``kafka-storage format``) and runs ``kafka.Kafka`` in
  KRaft combined mode on free loopback ports; ``stop()`` is SIGTERM (a clean shutdown),
  ``kill()`` SIGKILL.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import pytest

KAFKA_DIR = Path(__file__).resolve().parent / "apache_kafka"
KAFKA_VERSION = "4.4.0"     # the release every text format is compared with by default
LEGACY_VERSION = "3.9.1"    # the last 3.x: the transaction-log decoder's pre-4.0 strings
OFFSETS_LEGACY_VERSION = "3.7.2"  # the last before 3.8: the offsets decoder's strings
VERSIONS = (KAFKA_VERSION, LEGACY_VERSION, OFFSETS_LEGACY_VERSION)

# main classes, as the bin/ scripts of each release name them
TOOLS = {
    "4": {
        "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
        "kafka-storage": "kafka.tools.StorageTool",
        "kafka-configs": "org.apache.kafka.tools.ConfigCommand",
        "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
        "kafka-streams-groups": "org.apache.kafka.tools.streams.StreamsGroupCommand",
        "kafka-topics": "org.apache.kafka.tools.TopicCommand",
        "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
        "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "kafka-console-share-consumer": "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
        "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
        "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
        "kafka-metadata-shell": "org.apache.kafka.shell.MetadataShell",
        "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
        "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    },
    "3": {
        "kafka-dump-log": "kafka.tools.DumpLogSegments",
        "kafka-storage": "kafka.tools.StorageTool",
        "kafka-configs": "kafka.admin.ConfigCommand",
    },
}

JVM_OPTS = ["-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m"]


def jar_dir(version: str = KAFKA_VERSION) -> Path:
    return KAFKA_DIR / "lib" / version


def missing_reason(version: str = KAFKA_VERSION) -> Optional[str]:
    """Why Kafka's jars cannot run here, or None when they can."""
    if shutil.which("java") is None:
        return "no java on PATH (tests/install-tools.sh installs a JRE)"
    lib = jar_dir(version)
    if not (lib / ".complete").exists():
        return (f"Apache Kafka {version}'s jars are not in {lib} "
                f"(tests/install-tools.sh resolves them from Maven Central)")
    return None


def require_kafka(version: str = KAFKA_VERSION) -> None:
    """Skip the calling test where Kafka cannot run; fail instead under .ci/run."""
    reason = missing_reason(version)
    if reason is None:
        return
    if os.environ.get("PYLOGCTL_REQUIRE_KAFKA") == "1":
        pytest.fail(f"PYLOGCTL_REQUIRE_KAFKA=1 but {reason}")
    pytest.skip(reason)


def main_class(tool: str, version: str = KAFKA_VERSION) -> str:
    return TOOLS[version.split(".")[0]].get(tool) or TOOLS["4"][tool]


def java_command(cls: str, args: Sequence[str], version: str = KAFKA_VERSION,
                 heap: str = "256m", log4j: str = "tools-log4j2.properties") -> list[str]:
    log4j = KAFKA_DIR / log4j
    return ["java", f"-Xmx{heap}", *JVM_OPTS, f"-Dlog4j2.configurationFile={log4j}",
            "-cp", f"{jar_dir(version)}/*", cls, *map(str, args)]


TEST_CACHE = Path(os.environ.get("PYLOGCTL_TEST_CACHE",
                                Path.home() / ".cache" / "pylogctl-tests"))


def java_program(source: Path, version: str = KAFKA_VERSION) -> list[str]:
    """The java command running the program in ``source`` (one class, on the Kafka jars),
    compiled once per machine and source text (javac), so each run does not compile it."""
    import hashlib

    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    classes = TEST_CACHE / "classes" / f"{source.stem}-{version}-{digest}"
    if not (classes / f"{source.stem}.class").exists():
        tmp = classes.with_name(classes.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        subprocess.run(["javac", "-nowarn", "-cp", f"{jar_dir(version)}/*", "-d", str(tmp),
                        str(source)], check=True, capture_output=True)
        shutil.rmtree(classes, ignore_errors=True)
        tmp.rename(classes)
    command = java_command(source.stem, [], version)
    cp = command.index("-cp") + 1
    command[cp] = f"{classes}:{command[cp]}"
    return command


def run_tool(tool: str, *args: str, version: str = KAFKA_VERSION, check: bool = False,
             timeout: float = 300, input: Optional[str] = None) -> subprocess.CompletedProcess:
    """Run a Kafka tool by its script name (``kafka-dump-log``) or a main class; text output."""
    cls = main_class(tool, version) if "." not in tool else tool
    proc = subprocess.run(java_command(cls, args, version), capture_output=True, timeout=timeout,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL)
    out = subprocess.CompletedProcess(proc.args, proc.returncode,
                                      proc.stdout.decode("utf-8", "surrogateescape"),
                                      proc.stderr.decode("utf-8", "surrogateescape"))
    if check and out.returncode != 0:
        raise AssertionError(f"{tool} {' '.join(args)} exited {out.returncode}:\n{out.stderr}")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class KafkaBroker:
    """A real Apache Kafka broker+controller (KRaft combined mode) on one log dir."""

    log_dir: Path
    work_dir: Path
    version: str = KAFKA_VERSION
    node_id: int = 1
    overrides: dict = field(default_factory=dict)
    port: int = 0
    controller_port: int = 0
    proc: Optional[subprocess.Popen] = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.work_dir / "server.log"

    def properties(self) -> dict:
        props = {
            "process.roles": "broker,controller",
            "node.id": self.node_id,
            "controller.quorum.voters": f"{self.node_id}@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},"
                         f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            "num.partitions": 1,
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 3,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 2,
            "share.coordinator.state.topic.replication.factor": 1,
            "share.coordinator.state.topic.min.isr": 1,
            "share.coordinator.state.topic.num.partitions": 2,
            "group.initial.rebalance.delay.ms": 0,
            "group.share.enable": "true",
            "log.cleaner.backoff.ms": 1000,
            "log.retention.check.interval.ms": 1000,
            "log.initial.task.delay.ms": 500,
            "log.segment.delete.delay.ms": 500,
            "auto.create.topics.enable": "true",
            "num.io.threads": 2,
            "num.network.threads": 2,
            "num.recovery.threads.per.data.dir": 1,
            "log.flush.offset.checkpoint.interval.ms": 1000,
            "log.flush.start.offset.checkpoint.interval.ms": 1000,
            "log.flush.scheduler.interval.ms": 1000,
        }
        props.update(self.overrides)
        return props

    def write_config(self) -> Path:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        while not self.controller_port or self.controller_port == self.port:
            self.controller_port = free_port()  # two free ports in a row can be the same one
        path = self.work_dir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in self.properties().items()))
        return path

    def format(self, cluster_id: Optional[str] = None, *extra: str) -> None:
        """``kafka-storage format`` the log dir (a new cluster id unless one is given)."""
        config = self.write_config()
        cid = cluster_id or _kafka_uuid()
        run_tool("kafka-storage", "format", f"--cluster-id={cid}", "-c", str(config), *extra,
                 version=self.version, check=True)

    def start(self, timeout: float = 90) -> "KafkaBroker":
        config = self.write_config()
        out = open(self.log_file, "ab")
        cmd = java_command("kafka.Kafka", [config], self.version, heap="768m",
                           log4j="log4j2.properties")
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        marker = "Kafka Server started"
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"Kafka exited {self.proc.returncode} on start:\n"
                                     f"{self.log_tail()}")
            text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
            if text.count(marker) > self._starts_seen():
                self._seen = text.count(marker)
                return
            time.sleep(0.2)
        self.kill()
        raise AssertionError(f"Kafka did not start in {timeout}s:\n{self.log_tail()}")

    _seen: int = 0

    def _starts_seen(self) -> int:
        return self._seen

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_file.exists():
            return "(no log)"
        return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])

    def log_text(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM: Kafka's controlled shutdown, leaving ``.kafka_cleanshutdown``."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"Kafka did not stop in {timeout}s:\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL: a crash, as the power going out would leave the dir."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def tool(self, tool: str, *args: str, check: bool = True, timeout: float = 120,
             input: Optional[str] = None) -> subprocess.CompletedProcess:
        """A Kafka tool pointed at this broker (``--bootstrap-server`` added)."""
        return run_tool(tool, "--bootstrap-server", self.bootstrap, *args, version=self.version,
                        check=check, timeout=timeout, input=input)


def _kafka_uuid() -> str:
    """A random id in Kafka's text form (URL-safe base64 of 16 bytes, no padding)."""
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
