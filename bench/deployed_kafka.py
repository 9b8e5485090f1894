"""Apache Kafka as deployed, for the benchmarks' anchors: the broker with the JVM options of
``kafka-server-start.sh`` and its default thread counts, and Kafka's tools on a full JIT.

The test suite's harness (``tests/kafka_jvm.py``) starts Kafka with quick-start flags (C1 only,
serial GC, small heaps) because the tests want it up fast; a benchmark wants it as an operator
runs it. Both use the jars ``tests/install-tools.sh`` resolved.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from kafka_jvm import KafkaBroker, jar_dir, java_command, main_class  # noqa: E402

# kafka-server-start.sh's KAFKA_HEAP_OPTS and kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS
KAFKA_JVM = ["-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
             "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
             "-Djava.awt.headless=true"]
# The broker's own defaults where the test harness shortens them.
KAFKA_DEFAULTS = {"num.io.threads": 8, "num.network.threads": 3,
                  "num.recovery.threads.per.data.dir": 2,
                  "log.flush.offset.checkpoint.interval.ms": 60_000,
                  "log.flush.start.offset.checkpoint.interval.ms": 60_000,
                  "log.flush.scheduler.interval.ms": 9_223_372_036_854_775_807,
                  "log.retention.check.interval.ms": 300_000, "log.cleaner.backoff.ms": 15_000}


class DeployedKafka(KafkaBroker):
    """The real broker as deployed: kafka-server-start.sh's JVM, default threads."""

    def __init__(self, log_dir: Path, work_dir: Path, overrides: Optional[dict] = None):
        super().__init__(log_dir=log_dir, work_dir=work_dir,
                         overrides={**KAFKA_DEFAULTS, **(overrides or {})})

    def start(self, timeout: float = 120) -> "DeployedKafka":
        config = self.write_config()
        out = open(self.log_file, "ab")
        cmd = java_command("kafka.Kafka", [config], self.version, log4j="log4j2.properties")
        cmd = [cmd[0], *KAFKA_JVM, *[a for a in cmd[1:] if a.startswith("-Dlog4j")],
               "-cp", cmd[cmd.index("-cp") + 1], "kafka.Kafka", str(config)]
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        self.wait_ready(timeout)
        return self


def tool_command(tool: str, *args: str, heap: str = "1G") -> list[str]:
    """A Kafka tool (``kafka-dump-log``, ...) as its bin/ script runs it: a full JIT."""
    return ["java", f"-Xmx{heap}", "-server", "-cp", f"{jar_dir()}/*", main_class(tool),
            *map(str, args)]


def run_tool(tool: str, *args: str, timeout: float = 1800) -> str:
    """A Kafka tool on a full JIT; its standard output (an error if it fails)."""
    out = subprocess.run(tool_command(tool, *args), capture_output=True, text=True,
                         timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{tool} exited {out.returncode}: {out.stderr[-2000:]}")
    return out.stdout


def wait_for_leaders(client, topic: str, timeout: float = 60) -> bool:
    """Whether every partition of ``topic`` has a leader within ``timeout`` seconds, asked of
    ``client`` (a confluent-kafka Producer or AdminClient): a topic just created, or a
    broker just started, serves nothing before."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = client.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and meta.partitions and all(
                p.leader >= 0 for p in meta.partitions.values()):
            return True
        time.sleep(0.1)
    return False
