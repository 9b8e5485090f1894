"""``pylogctl broker`` on log dirs the real Kafka 4.4 broker wrote, read by Kafka's own Java
client: the consumer (``read_committed``, every partition from its log start) and the Admin
client (topics, transactions, groups, committed offsets), through
``apache_kafka/clients/ServedRecords.java``, the program that reads the real broker in the
round-trip tests (:mod:`kafka_served`).

Two dirs: one the real broker stopped cleanly (every codec, compacted and retention-trimmed
topics, transactions, classic, consumer-protocol, share and streams groups) and one it left
when SIGKILLed mid-storm (an open transaction, which each broker aborts when it times out).
What ``pylogctl broker`` serves from a copy must be what the real broker served from another:
every record (offset, timestamp, key, value, headers), every log start and end offset, and
every committed offset.

One difference is Kafka's: the killed dir's open transaction timed out long before the restart,
and Kafka 4.4's coordinator aborts it while loading ``__transaction_state``, before the broker
knows itself as the partitions' leader, so its markers are skipped ("Couldn't find leader
endpoint for partitions ... these partitions are likely deleted already and hence can be
skipped") and the transaction is left hanging in the data partitions: their last stable offset
stays at its first offset, which is the end a ``read_committed`` consumer sees. ``pylogctl
broker`` writes the abort markers, so its end is the log end after them; the records both
serve are the same.
"""

from __future__ import annotations

import shutil

import pytest

from broker_support import BrokerProcess
from kafka_jvm import require_kafka
from kafka_scenarios import generated_scenario, killed_scenario
from kafka_served import baseline, read_served


@pytest.mark.parametrize("scenario", [generated_scenario, killed_scenario],
                         ids=["stopped", "sigkill"])
def test_pylogctl_broker_serves_a_kafka_dir_as_kafka_does(scenario, tmp_path):
    require_kafka()
    kafka = baseline(scenario, lambda: tmp_path / "kafka")
    copy = tmp_path / "pylogctl" / "logs"
    shutil.copytree(scenario().log_dir, copy)
    # the killed dir's open transaction times out after 10 s; abort it as soon as it has
    with BrokerProcess(copy, "--transaction-abort-interval-ms", "500") as broker:
        ours = read_served(broker.bootstrap)
    assert ours.start == kafka.start
    skipped = any("Couldn't find leader endpoint" in ln and "storm-txn" in ln for ln in kafka.log)
    for tp, end in kafka.end.items():
        if ours.end[tp] != end and skipped and tp.startswith("storm-txn-"):
            # Kafka's hanging transaction: its end is the open transaction's first offset,
            # ours the log end after the abort marker pylogctl's coordinator wrote
            assert ours.end[tp] > end and ours.records[tp] == kafka.records[tp], tp
            continue
        assert ours.end[tp] == end, tp
    for tp in sorted(kafka.records):
        assert ours.records.get(tp) == kafka.records[tp], tp
    assert ours.records.keys() == kafka.records.keys()
    assert ours.committed == kafka.committed
