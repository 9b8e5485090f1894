"""What ``consumer-groups --reset-offsets/--delete --execute`` appends to a stopped broker's
``__consumer_offsets`` is what ``pylogctl broker`` sees when it loads the partition again: a
real consumer (confluent-kafka) commits in a group, the broker stops cleanly, the offline
command moves or deletes the group, the broker restarts on the same log dir, and a consumer in
the group resumes exactly where the offline command put it. ``--describe`` on the stopped
broker's dir reports what the client itself reported as committed.

The two halves are independent implementations of the same rules (the offline writer in
pylogctl.groups, the coordinator's loader in pylogctl.broker), so this pins them to each other
through the files alone. Waiting is on the client's own calls -- no sleeps."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from broker_support import BrokerThread

ck = pytest.importorskip("confluent_kafka")

TOPIC = "orders"
GROUP = "billing"
PARTITIONS = 2
PER_PARTITION = 20
DEADLINE_S = 30


def _produce(bootstrap: str) -> None:
    """PER_PARTITION keyed records to each partition (explicit partitions: exact end offsets)."""
    producer = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                            "linger.ms": 5})
    errors: list = []
    for partition in range(PARTITIONS):
        for i in range(PER_PARTITION):
            producer.produce(TOPIC, key=f"key-{partition}-{i}".encode(),
                             value=f"value-{partition}-{i}".encode(), partition=partition,
                             on_delivery=lambda e, m: errors.append(e) if e else None)
    assert producer.flush(DEADLINE_S) == 0 and errors == []


def _consume(bootstrap: str, count: int, reset: str = "earliest"
             ) -> tuple[dict[int, int], dict[int, int]]:
    """Consume ``count`` records in GROUP, commit synchronously; returns ({partition: first
    offset seen}, {partition: committed offset as the client reports it})."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                            "auto.offset.reset": reset, "enable.auto.commit": False})
    consumer.subscribe([TOPIC])
    first: dict[int, int] = {}
    seen = 0
    deadline = time.monotonic() + DEADLINE_S
    try:
        while seen < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None or message.error() is not None:
                continue
            first.setdefault(message.partition(), message.offset())
            seen += 1
        assert seen == count, f"consumed {seen} of {count}"
        consumer.commit(asynchronous=False)
        tps = [ck.TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
        committed = {tp.partition: tp.offset for tp in consumer.committed(tps, DEADLINE_S)}
    finally:
        consumer.close()
    return first, committed


def _describe(cli, log_dir: Path) -> dict[int, tuple[int, int]]:
    """{partition: (currentOffset, lag)} of GROUP on TOPIC, from the files; {} without a group."""
    r = cli("consumer-groups", log_dir, "--describe", "--group", GROUP, "-o", "json")
    if r.code != 0:
        assert "does not exist" in r.out + r.err, r.out + r.err
        return {}
    return {row["partition"]: (row["currentOffset"], row["lag"])
            for row in json.loads(r.out) if row["topic"] == TOPIC}


def _first_session(log_dir: Path, cli) -> None:
    """Produce, consume everything in GROUP and commit; the files agree with the client."""
    with BrokerThread(log_dir, num_partitions=PARTITIONS) as broker:
        _produce(broker.bootstrap)
        first, committed = _consume(broker.bootstrap, PARTITIONS * PER_PARTITION)
    assert first == {p: 0 for p in range(PARTITIONS)}
    assert committed == {p: PER_PARTITION for p in range(PARTITIONS)}
    assert _describe(cli, log_dir) == {p: (committed[p], 0) for p in range(PARTITIONS)}


def _resume(log_dir: Path, count: int, reset: str = "earliest") -> dict[int, int]:
    """Restart on the same log dir; the first offset a consumer in GROUP gets per partition."""
    with BrokerThread(log_dir, num_partitions=PARTITIONS) as broker:
        first, committed = _consume(broker.bootstrap, count, reset)
    assert committed == {p: PER_PARTITION for p in range(PARTITIONS)}
    return first


def test_reset_to_offset_offline_is_where_the_group_resumes(tmp_path, cli):
    log_dir = tmp_path / "logs"
    _first_session(log_dir, cli)
    k = 7
    r = cli("consumer-groups", log_dir, "--reset-offsets", "--group", GROUP, "--topic", TOPIC,
            "--to-offset", k, "--execute")
    assert r.code == 0, r.out + r.err
    assert _describe(cli, log_dir) == {p: (k, PER_PARTITION - k) for p in range(PARTITIONS)}
    assert _resume(log_dir, PARTITIONS * (PER_PARTITION - k)) == {p: k for p in range(PARTITIONS)}
    assert _describe(cli, log_dir) == {p: (PER_PARTITION, 0) for p in range(PARTITIONS)}


def test_shift_by_one_partition_offline_is_where_the_group_resumes(tmp_path, cli):
    log_dir = tmp_path / "logs"
    _first_session(log_dir, cli)
    r = cli("consumer-groups", log_dir, "--reset-offsets", "--group", GROUP,
            "--topic", f"{TOPIC}:1", "--shift-by", -5, "--execute")
    assert r.code == 0, r.out + r.err
    assert _describe(cli, log_dir) == {0: (PER_PARTITION, 0), 1: (PER_PARTITION - 5, 5)}
    assert _resume(log_dir, 5) == {1: PER_PARTITION - 5}


def test_delete_group_offline_makes_the_group_start_over(tmp_path, cli):
    log_dir = tmp_path / "logs"
    _first_session(log_dir, cli)
    r = cli("consumer-groups", log_dir, "--delete", "--group", GROUP, "--execute")
    assert r.code == 0, r.out + r.err
    assert _describe(cli, log_dir) == {}
    # No committed offset left: auto.offset.reset=earliest applies again, from offset 0.
    assert _resume(log_dir, PARTITIONS * PER_PARTITION) == {p: 0 for p in range(PARTITIONS)}
