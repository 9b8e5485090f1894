"""A hanging transaction made for real on ``pylogctl broker``, found and aborted offline.

A confluent-kafka producer is SIGKILLed mid-transaction on a compacted topic with small
segments, another commits after it; the broker stops and its coordinator is made to forget
the open transaction (a tombstone in ``__transaction_state``). Offline, ``find-hanging`` lists
exactly that transaction and ``compact`` stops at its first offset; ``abort --execute`` ends
it; then ``compact`` cleans past the old last stable offset and, on the restarted broker, a
read_committed consumer reads the records committed after it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker_support import BrokerThread
from pylogctl.broker.transaction_coordinator import TransactionConfig
from support import run_pylogctl
from transactions_support import forget, killed_mid_transaction

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

TIMEOUT = 30
TOPIC = "ledger"


def commit(bootstrap: str, tid: str, keys: range) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "log_level": 0})
    p.init_transactions(TIMEOUT)
    for key in keys:  # one transaction per key: a batch each, so segments roll between them
        p.begin_transaction()
        p.produce(TOPIC, key=b"k%d" % key, value=b"v%d" % key, partition=0)
        p.commit_transaction(TIMEOUT)


def read_committed(bootstrap: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "rc", "log_level": 0,
                  "isolation.level": "read_committed", "enable.partition.eof": True,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(TOPIC, 0, 0)])
    count = 0
    try:
        while True:
            m = c.poll(TIMEOUT)
            assert m is not None, "no end of partition reached"
            if m.error():
                assert m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF
                return count
            count += 1
    finally:
        c.close()


def cleanable_end(log_dir: Path) -> int:
    """Where ``compact --partition`` would stop cleaning (its first uncleanable offset)."""
    done = run_pylogctl("compact", log_dir, "--partition", f"{TOPIC}-0", "-o", "json")
    assert done.returncode == 0, done.stderr
    (section,) = json.loads(done.stdout)
    return section["firstUncleanableOffset"]


def test_a_hanging_transaction_found_and_aborted_offline(tmp_path):
    log_dir = tmp_path / "logs"
    with BrokerThread(log_dir, transaction=TransactionConfig(state_log_partitions=3)) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        for future in admin.create_topics([NewTopic(TOPIC, 1, 1, config={
                "cleanup.policy": "compact", "segment.bytes": "200",
                "min.cleanable.dirty.ratio": "0.01"})]).values():
            future.result(TIMEOUT)
        commit(b.bootstrap, "tx-before", range(4))
        killed_mid_transaction(b.bootstrap, "tx-open", TOPIC)
        commit(b.bootstrap, "tx-after", range(4, 12))
        assert read_committed(b.bootstrap) == 4
    forget(log_dir, "tx-open")

    found = json.loads(run_pylogctl("transactions", "find-hanging", log_dir, "--topic", TOPIC,
                                    "--max-transaction-timeout", "0", "-o", "json",
                                    check=True).stdout)
    (hanging,) = found
    start = hanging["startOffset"]
    assert hanging["lastStableOffset"] == start and hanging["transactionalId"] is None
    assert cleanable_end(log_dir) <= start

    done = run_pylogctl("transactions", "abort", log_dir, "--all-hanging",
                        "--max-transaction-timeout", "0", "--execute", "-o", "json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert (row["startOffset"], row["lastStableOffset"]) == (start, start)
    assert row["newLastStableOffset"] == row["markerOffset"] + 1
    assert cleanable_end(log_dir) > start
    assert json.loads(run_pylogctl("transactions", "find-hanging", log_dir, "--topic", TOPIC,
                                   "--max-transaction-timeout", "0", "-o", "json").stdout) == []

    with BrokerThread(log_dir, transaction=TransactionConfig(state_log_partitions=3)) as b:
        assert read_committed(b.bootstrap) == 4 + 8
