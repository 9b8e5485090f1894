"""Kafka's own command-line tools (4.4) pointed at ``pylogctl broker``, judged by the real
broker: the same session of ``kafka-topics``, ``kafka-console-producer``,
``kafka-console-consumer`` (in a classic group and in a KIP-848 one), ``kafka-consumer-groups``
(both groups), ``kafka-configs``, ``kafka-get-offsets``,
``kafka-transactions``, ``kafka-delete-records``, ``kafka-producer-perf-test`` and
``kafka-consumer-perf-test`` runs against a fresh real Kafka broker and a fresh ``pylogctl
broker``; every invocation must exit with the same code and print the same lines.

The tools run one after another in one JVM (``apache_kafka/clients/ToolSession.java``), each
with its own standard streams. Only what differs between any two runs of one broker is masked
before the comparison: topic ids, ports, producer ids, timestamps and durations, and the
figures of the perf tests (their lines must still have the same shape). The console consumer's
lines are compared as a set, since the order in which partitions are fetched is not defined.
Standard error may differ only in lines that are not errors: any line naming an exception or
an error that pylogctl's run prints, the real broker's run prints too.

The real broker runs with the settings a ``pylogctl broker`` has: ``transaction.version=1`` (the
transaction protocol pylogctl implements), KIP-966's eligible leader replicas off (their
format-time ``min.insync.replicas`` cluster config would show in every topic's configs), and no
``log.*`` setting in its ``server.properties`` (a static broker config shows in every topic's
configs too).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from broker_support import BrokerProcess
from kafka_jvm import KAFKA_DIR, KafkaBroker, java_program, main_class, require_kafka

PROGRAM = KAFKA_DIR / "clients" / "ToolSession.java"
DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"


def session(bootstrap: str, work: Path) -> list[tuple[str, Path | None, list[str]]]:
    """(tool, standard input, arguments) of every invocation, in order."""
    b = ["--bootstrap-server", bootstrap]
    produce = work / "produce.txt"
    produce.write_text("".join(f"k{i}:v{i}\n" for i in range(12)))
    delete = work / "delete.json"
    delete.write_text(json.dumps({"partitions": [{"topic": "tools", "partition": 0, "offset": 2}],
                                  "version": 1}))
    group = ["--group", "tools-group"]
    modern = ["--group", "tools-modern"]
    configs = ["--entity-type", "topics", "--entity-name", "tools"]
    return [
        ("kafka-topics", None, [*b, "--create", "--topic", "tools", "--partitions", "3",
                                "--replication-factor", "1", "--config", "retention.ms=86400000"]),
        ("kafka-topics", None, [*b, "--create", "--topic", "tools", "--partitions", "3"]),
        ("kafka-topics", None, [*b, "--create", "--topic", "twice", "--replica-assignment",
                                "1:1"]),
        ("kafka-topics", None, [*b, "--create", "--topic", "elsewhere", "--replica-assignment",
                                "1,5"]),
        ("kafka-topics", None, [*b, "--list"]),
        ("kafka-topics", None, [*b, "--describe", "--topic", "tools"]),
        ("kafka-topics", None, [*b, "--alter", "--topic", "tools", "--partitions", "4"]),
        ("kafka-topics", None, [*b, "--alter", "--topic", "tools", "--partitions", "2"]),
        ("kafka-topics", None, [*b, "--describe", "--topic", "tools"]),
        ("kafka-console-producer", produce, [*b, "--topic", "tools", "--reader-property",
                                             "parse.key=true", "--reader-property",
                                             "key.separator=:"]),
        ("kafka-console-consumer", None, [*b, "--topic", "tools", "--from-beginning",
                                          "--max-messages", "12", "--timeout-ms", "30000",
                                          "--formatter-property", "print.key=true",
                                          "--formatter-property", "print.partition=true",
                                          "--formatter-property", "print.offset=true", *group]),
        ("kafka-consumer-groups", None, [*b, "--list"]),
        ("kafka-consumer-groups", None, [*b, "--describe", *group]),
        ("kafka-consumer-groups", None, [*b, "--describe", *group, "--state"]),
        ("kafka-consumer-groups", None, [*b, "--describe", *group, "--members"]),
        # a KIP-848 group (group.protocol=consumer): described through ConsumerGroupDescribe
        ("kafka-console-consumer", None, [*b, "--topic", "tools", "--from-beginning",
                                          "--max-messages", "12", "--timeout-ms", "30000",
                                          "--formatter-property", "print.key=true", *modern,
                                          "--consumer-property", "group.protocol=consumer"]),
        ("kafka-consumer-groups", None, [*b, "--list", "--type"]),
        ("kafka-consumer-groups", None, [*b, "--describe", *modern, "--state"]),
        ("kafka-consumer-groups", None, [*b, "--describe", *modern, "--members", "--verbose"]),
        ("kafka-consumer-groups", None, [*b, "--describe", *modern, "--offsets"]),
        ("kafka-consumer-groups", None, [*b, "--delete", *modern]),
        ("kafka-consumer-groups", None, [*b, "--reset-offsets", *group, "--topic", "tools",
                                         "--to-earliest", "--execute"]),
        ("kafka-consumer-groups", None, [*b, "--reset-offsets", *group, "--topic", "tools:0",
                                         "--shift-by", "2", "--execute"]),
        ("kafka-consumer-groups", None, [*b, "--reset-offsets", *group, "--all-topics",
                                         "--to-offset", "1", "--dry-run"]),
        ("kafka-consumer-groups", None, [*b, "--describe", *group, "--offsets"]),
        ("kafka-consumer-groups", None, [*b, "--delete-offsets", *group, "--topic", "tools:3"]),
        ("kafka-consumer-groups", None, [*b, "--describe", *group, "--offsets"]),
        ("kafka-configs", None, [*b, *configs, "--describe"]),
        ("kafka-configs", None, [*b, *configs, "--alter", "--add-config",
                                 "retention.ms=3600000,segment.bytes=1048576"]),
        ("kafka-configs", None, [*b, *configs, "--alter", "--delete-config", "segment.bytes"]),
        ("kafka-configs", None, [*b, *configs, "--alter", "--add-config", "retention.ms=soon"]),
        ("kafka-configs", None, [*b, *configs, "--describe"]),
        ("kafka-configs", None, [*b, "--entity-type", "brokers", "--entity-name", "1",
                                 "--describe"]),
        ("kafka-get-offsets", None, [*b, "--topic", "tools"]),
        ("kafka-get-offsets", None, [*b, "--topic", "tools", "--time", "-2"]),
        ("kafka-transactions", None, [*b, "describe-producers", "--topic", "tools",
                                      "--partition", "0"]),
        (DELETE_RECORDS, None, [*b, "--offset-json-file", str(delete)]),
        ("kafka-get-offsets", None, [*b, "--topic", "tools", "--time", "-2"]),
        ("kafka-producer-perf-test", None, ["--topic", "perf", "--num-records", "2000",
                                            "--record-size", "100", "--throughput", "-1",
                                            "--command-property", f"bootstrap.servers={bootstrap}",
                                            "acks=all"]),
        ("kafka-producer-perf-test", None, ["--topic", "perf", "--num-records", "500",
                                            "--record-size", "50", "--throughput", "-1",
                                            "--command-property", f"bootstrap.servers={bootstrap}",
                                            "--transactional-id", "perf-txn",
                                            "--transaction-duration-ms", "100"]),
        ("kafka-consumer-perf-test", None, [*b, "--topic", "perf", "--num-records", "2500"]),
        ("kafka-transactions", None, [*b, "list"]),
        ("kafka-transactions", None, [*b, "describe", "--transactional-id", "perf-txn"]),
        ("kafka-transactions", None, [*b, "find-hanging", "--broker-id", "1"]),
        ("kafka-consumer-groups", None, [*b, "--delete", *group]),
        ("kafka-consumer-groups", None, [*b, "--list"]),
        ("kafka-topics", None, [*b, "--delete", "--topic", "tools"]),
        ("kafka-topics", None, [*b, "--list", "--exclude-internal"]),
    ]


@dataclass
class Ran:
    title: str
    rc: int
    out: str
    err: str


def run_session(bootstrap: str, work: Path) -> list[Ran]:
    work.mkdir(parents=True, exist_ok=True)
    steps = session(bootstrap, work)
    lines = ["\t".join([tool if "." in tool else main_class(tool), str(stdin or "-"),
                        *args]) for tool, stdin, args in steps]
    (work / "session.tsv").write_text("\n".join(lines) + "\n")
    out = subprocess.run([*java_program(PROGRAM), str(work / "session.tsv"), str(work / "out")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    ran = []
    for n, (tool, _, args) in enumerate(steps):
        shown = [a for a in args if bootstrap not in a and a != "--bootstrap-server"]
        title = " ".join([tool.rsplit(".", 1)[-1], *shown]).replace(str(work), "WORK")
        read = lambda suffix: (work / "out" / f"{n}.{suffix}").read_text()  # noqa: E731
        ran.append(Ran(title, int(read("rc")), normalise(tool, read("out")),
                       normalise(tool, read("err"))))
    return ran


NUMBER = re.compile(r"\d+(\.\d+)?")
MASKED_COLUMNS = {"ProducerId", "LastTimestamp", "CurrentTransactionStartTimeMs",
                  "TransactionDurationMs", "TransactionStartTimeMs", "Duration", "StartTime",
                  "CONSUMER-ID", "HOST", "CLIENT-ID"}


def normalise(tool: str, text: str) -> str:
    text = re.sub(r"127\.0\.0\.1[:/]\d+", "127.0.0.1:PORT", text)
    text = re.sub(r"TopicId: [A-Za-z0-9_-]{22}", "TopicId: ID", text)
    text = re.sub(r"/tmp/\S+", "PATH", text)
    text = re.sub(r"perf-consumer-\d+", "perf-consumer-N", text)  # a random group id
    if tool.endswith("perf-test"):
        text = NUMBER.sub("N", text)
    if tool in ("kafka-transactions", "kafka-consumer-groups"):
        text = _mask_columns(text)
    if tool == "kafka-console-consumer":
        text = "\n".join(sorted(text.splitlines()))
    return text


def _mask_columns(text: str) -> str:
    """Tables (tab- or space-padded): cells of :data:`MASKED_COLUMNS` masked, padding dropped
    (column widths follow the values)."""
    out, header = [], None
    for line in text.splitlines():
        if "\t" in line:  # kafka-transactions: tab-separated, an empty cell is a value
            cells = [c.strip() for c in line.rstrip("\t").split("\t")]
        else:
            cells = line.split()
        if not any(cells):
            header = None
            out.append("")
            continue
        if header is None and any(c in MASKED_COLUMNS for c in cells):
            header = cells
        elif header is not None:
            cells += [""] * (len(header) - len(cells))
            cells = ["*" if h in MASKED_COLUMNS else c for h, c in zip(header, cells)]
        out.append(" ".join(cells))
    return "\n".join(out)


def _errors(text: str) -> set[str]:
    return {ln.strip() for ln in text.splitlines()
            if re.search(r"Exception|ERROR|Error", ln) and not ln.lstrip().startswith("at ")}


class _KafkaLikePylogctl(KafkaBroker):
    """The real broker without ``log.*`` settings in its ``server.properties``."""

    def properties(self) -> dict:
        return {k: v for k, v in super().properties().items()
                if not k.startswith("log.") or k == "log.dirs"}


def test_kafkas_tools_see_pylogctl_broker_as_they_see_kafka(tmp_path):
    require_kafka()
    kafka = _KafkaLikePylogctl(log_dir=tmp_path / "kafka" / "logs", work_dir=tmp_path / "kafka")
    kafka.format(None, "--feature", "transaction.version=1",
                 "--feature", "eligible.leader.replicas.version=0")
    kafka.start()
    try:
        theirs = run_session(kafka.bootstrap, tmp_path / "kafka" / "session")
    finally:
        kafka.stop()
    with BrokerProcess(tmp_path / "pylogctl" / "logs") as broker:
        ours = run_session(broker.bootstrap, tmp_path / "pylogctl" / "session")
    assert [r.title for r in ours] == [r.title for r in theirs]
    for mine, kafkas in zip(ours, theirs):
        assert (mine.rc, mine.out) == (kafkas.rc, kafkas.out), mine.title
        assert _errors(mine.err) <= _errors(kafkas.err), mine.title
    failed = [r.title for r in theirs if r.rc != 0]
    assert failed == ["kafka-topics --create --topic tools --partitions 3",
                      "kafka-topics --create --topic twice --replica-assignment 1:1",
                      "kafka-topics --create --topic elsewhere --replica-assignment 1,5",
                      "kafka-topics --alter --topic tools --partitions 2",
                      "kafka-configs --entity-type topics --entity-name tools --alter "
                      "--add-config retention.ms=soon"]
