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

Then the dir goes back: pylogctl's metadata log must have taken every partition over (this
node its leader and whole ISR, KIP-966's eligible leaders cleared, a leader epoch no data has
passed), and on the cleanly stopped dir the real broker, started again on what pylogctl left,
serves what it served before pylogctl ran, with nothing to repair.
"""

from __future__ import annotations

import shutil

import pytest

from broker_support import BrokerProcess
from kafka_jvm import require_kafka
from kafka_scenarios import generated_scenario, killed_scenario
from kafka_served import baseline, read_served, serve
from pylogctl.storage.kraft_configs import PartitionState, read_kraft_configs
from pylogctl.storage.leader_epoch_cache import LeaderEpochFileCache
from pylogctl.storage.metadata_files import read_partition_metadata


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
    _check_taken_over(copy)
    if scenario is generated_scenario:
        back = serve(copy, tmp_path / "kafka-again")
        assert not back.repairs()
        assert (back.records, back.start, back.end, back.committed) == (
            kafka.records, kafka.start, kafka.end, kafka.committed)


def _check_taken_over(log_dir) -> None:
    """Every partition in the metadata log's replay is led by node 1, in the epoch its data
    was last written with or a later one."""
    replay = read_kraft_configs(log_dir / "__cluster_metadata-0")
    assert replay.features["metadata.version"] >= 25
    checked = 0
    for partition_dir in sorted(log_dir.glob("*-[0-9]*")):
        if partition_dir.name.startswith("__cluster_metadata"):
            continue
        topic_id = read_partition_metadata(partition_dir / "partition.metadata")["topicId"]
        index = int(partition_dir.name.rsplit("-", 1)[1])
        state = replay.partitions[(topic_id, index)]
        latest = LeaderEpochFileCache.for_partition_dir(partition_dir, persist=False).latest_epoch()
        assert state == PartitionState(1, state.leader_epoch, (1,)), partition_dir.name
        assert latest is None or state.leader_epoch >= latest, partition_dir.name
        checked += 1
    assert checked >= 10
