"""Offline ``pylogctl transactions`` judged by Kafka 4.4's live ``kafka-transactions``, and a
hanging transaction made for real, found by both, aborted offline, and gone in Kafka's eyes.

One story per module (a real KRaft broker, started three times):

1. Transactional producers (confluent-kafka) commit (``tx-committed``), abort
   (``tx-aborted``), leave one open (``tx-open``: its process SIGKILLed mid-transaction) and
   commit after it (``tx-after``, whose records a read_committed consumer cannot reach). Kafka's
   ``list``, ``describe`` and ``describe-producers`` run live; the broker stops cleanly.
2. The coordinator is made to forget the open transaction: a tombstone for ``tx-open`` is
   appended to its ``__transaction_state`` partition with pylogctl's encoder and append. Kafka
   restarts; its ``find-hanging`` must list what pylogctl's offline ``find-hanging`` lists.
3. Kafka stopped, ``pylogctl transactions abort --execute`` writes the marker; Kafka restarts on
   the result: read_committed reads past the old last stable offset and ``find-hanging`` finds
   nothing.

Durations (measured against each tool's clock) are the only cells masked.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest

from kafka_jvm import KafkaBroker, require_kafka
from support import run_pylogctl
from transactions_support import forget, killed_mid_transaction

TOPIC = "orders"
IDS = ("tx-committed", "tx-aborted", "tx-open", "tx-after")


def _transaction(bootstrap: str, tid: str, commit: bool, n: int, partition: int = 0) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 5})
    p.init_transactions(60)
    p.begin_transaction()
    for i in range(n):
        p.produce(TOPIC, key=f"{tid}-{i}".encode(), value=b"v", partition=partition)
    p.flush(60)
    (p.commit_transaction if commit else p.abort_transaction)(60)


def _read_committed(bootstrap: str) -> int:
    """How many records a read_committed consumer reads from orders-0 (up to the LSO)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"rc-{time.monotonic_ns()}",
                  "isolation.level": "read_committed", "enable.partition.eof": True,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([TopicPartition(TOPIC, 0, 0)])
    count, deadline = 0, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            msg = c.poll(1)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return count
                raise AssertionError(msg.error())
            count += 1
    finally:
        c.close()
    raise AssertionError("no end of partition in 60s")


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    require_kafka()
    root = tmp_path_factory.mktemp("txn-vs-kafka")
    broker = KafkaBroker(log_dir=root / "logs", work_dir=root / "broker")
    broker.format()
    out: dict = {"root": root, "live": {}}
    live = out["live"]
    try:
        broker.start()
        broker.tool("kafka-topics", "--create", "--topic", TOPIC, "--partitions", "2")
        _transaction(broker.bootstrap, "tx-committed", True, 5)
        _transaction(broker.bootstrap, "tx-aborted", False, 5)
        killed_mid_transaction(broker.bootstrap, "tx-open", TOPIC)
        _transaction(broker.bootstrap, "tx-after", True, 4)
        _transaction(broker.bootstrap, "tx-committed", True, 2, partition=1)
        live["list"] = broker.tool("kafka-transactions", "list").stdout
        for tid in IDS:
            live[f"describe {tid}"] = broker.tool("kafka-transactions", "describe",
                                                  "--transactional-id", tid).stdout
        live["describe-producers"] = broker.tool("kafka-transactions", "describe-producers",
                                                 "--topic", TOPIC, "--partition", "0").stdout
        live["find-hanging before"] = broker.tool(
            "kafka-transactions", "find-hanging", "--topic", TOPIC,
            "--max-transaction-timeout", "0").stdout
        out["read_committed before"] = _read_committed(broker.bootstrap)
        broker.stop()
        shutil.copytree(broker.log_dir, root / "stopped")

        forget(broker.log_dir, "tx-open")
        shutil.copytree(broker.log_dir, root / "forgotten")
        broker.start()
        live["find-hanging"] = broker.tool("kafka-transactions", "find-hanging", "--topic",
                                           TOPIC, "--max-transaction-timeout", "0").stdout
        live["list forgotten"] = broker.tool("kafka-transactions", "list").stdout
        out["read_committed forgotten"] = _read_committed(broker.bootstrap)
        broker.stop()

        hanging = json.loads(run_pylogctl("transactions", "find-hanging", broker.log_dir,
                                          "--topic", TOPIC, "--max-transaction-timeout", "0",
                                          "-o", "json", check=True).stdout)
        out["hanging"] = hanging
        out["abort"] = run_pylogctl("transactions", "abort", broker.log_dir, "--topic", TOPIC,
                                    "--partition", "0", "--start-offset",
                                    str(hanging[0]["startOffset"]), "--execute")
        broker.start()
        out["read_committed after"] = _read_committed(broker.bootstrap)
        live["find-hanging after"] = broker.tool(
            "kafka-transactions", "find-hanging", "--topic", TOPIC,
            "--max-transaction-timeout", "0").stdout
        live["describe-producers after"] = broker.tool(
            "kafka-transactions", "describe-producers", "--topic", TOPIC,
            "--partition", "0").stdout
    finally:
        broker.stop()
    return out


def ours(*args) -> str:
    done = run_pylogctl("transactions", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def masked(text: str, column: str) -> list[list[str]]:
    """The table's cells with ``column`` dropped (a duration: each tool's own clock)."""
    rows = [line.split("\t") for line in text.splitlines()]
    i = [c.strip() for c in rows[0]].index(column)
    return [r[:i] + r[i + 1:] for r in rows]


def test_list_matches_kafka(story):
    assert ours("list", story["root"] / "stopped") == story["live"]["list"]
    assert "tx-open" in story["live"]["list"] and "Ongoing" in story["live"]["list"]


@pytest.mark.parametrize("tid", IDS)
def test_describe_matches_kafka(story, tid):
    live = story["live"][f"describe {tid}"]
    mine = ours("describe", story["root"] / "stopped", "--transactional-id", tid)
    assert masked(mine, "TransactionDurationMs") == masked(live, "TransactionDurationMs")


def test_describe_producers_matches_kafka(story):
    mine = ours("describe-producers", story["root"] / "stopped", "--topic", TOPIC,
                "--partition", "0")
    assert mine == story["live"]["describe-producers"]
    assert mine.count("\n") == 5  # the four producers of partition 0


def test_an_ongoing_transaction_is_not_hanging(story):
    header = story["live"]["find-hanging before"]
    assert header.count("\n") == 1
    assert ours("find-hanging", story["root"] / "stopped", "--topic", TOPIC,
                "--max-transaction-timeout", "0") == header


def test_the_forgotten_transaction_hangs_for_both(story):
    live = story["live"]["find-hanging"]
    mine = ours("find-hanging", story["root"] / "forgotten", "--topic", TOPIC,
                "--max-transaction-timeout", "0")
    assert masked(mine, "Duration(min)") == masked(live, "Duration(min)")
    assert len(masked(live, "Duration(min)")) == 2
    assert "tx-open" not in story["live"]["list forgotten"]
    (h,) = story["hanging"]
    assert h["lastStableOffset"] == h["startOffset"] == h["batchOffset"]
    assert story["read_committed forgotten"] == story["read_committed before"] == 5


def test_abort_unblocks_read_committed_and_kafka_finds_nothing(story):
    done = story["abort"]
    assert done.returncode == 0, done.stderr
    (row,) = [line.split("\t") for line in done.stdout.splitlines()[1:]]
    assert int(row[-2]) > int(row[7]) == story["hanging"][0]["startOffset"]
    assert story["read_committed after"] == 5 + 4
    assert story["live"]["find-hanging after"].count("\n") == 1
    producers = story["live"]["describe-producers after"]
    assert all(line.split("\t")[5].strip() == "None" for line in producers.splitlines()[1:])
