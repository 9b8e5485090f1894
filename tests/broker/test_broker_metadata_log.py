"""The broker's ``__cluster_metadata-0`` as a raft log: every start is an epoch this node wins
alone (``quorum-state`` first, then a ``LeaderChangeMessage`` control batch), an empty log
starts with ``metadata.version`` and ``group.version``, and the partitions it serves are led, in the metadata log's
replay, by this node in the very epoch its data is written with: the invariants the real
broker relies on when it starts on the dir (``test_broker_switch_vs_kafka.py``)."""

from __future__ import annotations

import json

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker_support import BrokerThread
from pylogctl.broker import metadata_log
from pylogctl.broker.kafka_apis import api_versions_list
from pylogctl.broker.metadata_log import GROUP_VERSION, METADATA_VERSION
from pylogctl.format.control import ControlRecordType, decode_control_value, parse_control_key
from pylogctl.format.metadata_records import decode_metadata_record
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.kraft_configs import PartitionState, read_kraft_configs
from pylogctl.storage.leader_epoch_cache import LeaderEpochFileCache

STARTS = 4


def _batches(metadata_dir):
    for path in sorted(metadata_dir.glob("*.log")):
        with FileRecords(str(path)) as records:
            for batch in records.batches():
                yield batch, list(batch.records())


def test_every_start_leads_a_new_raft_epoch(tmp_path):
    log_dir = tmp_path / "logs"
    metadata_dir = log_dir / "__cluster_metadata-0"
    for start in range(1, STARTS + 1):
        with BrokerThread(log_dir):
            pass
        state = json.loads((metadata_dir / "quorum-state").read_text())
        assert (state["leaderId"], state["leaderEpoch"], state["data_version"]) == (1, start, 0)
    changes, features = [], []
    for batch, records in _batches(metadata_dir):
        for record in records:
            if batch.is_control:
                _, kind = parse_control_key(record.key)
                assert kind == ControlRecordType.LEADER_CHANGE
                value = decode_control_value(ControlRecordType.LEADER_CHANGE, record.value)
                changes.append((batch.partition_leader_epoch, value["leaderId"],
                                value["voters"], value["grantingVoters"]))
            else:
                decoded = decode_metadata_record(record.value)
                if decoded.type_name == "FEATURE_LEVEL_RECORD":
                    features.append((record.offset, decoded.data))
    voters = [{"voterId": 1}]
    assert changes == [(e, 1, voters, voters) for e in range(1, STARTS + 1)]
    # the bootstrap records right after the first epoch opened, and only then
    assert features == [(1, {"name": "metadata.version", "featureLevel": METADATA_VERSION}),
                        (2, {"name": "group.version", "featureLevel": GROUP_VERSION})]


def test_a_metadata_log_without_group_version_gets_it_when_its_metadata_version_allows(
        tmp_path, monkeypatch):
    log_dir = tmp_path / "logs"
    metadata_dir = log_dir / "__cluster_metadata-0"
    # a log as pylogctl wrote it before it served KIP-848 groups: metadata.version only
    with monkeypatch.context() as m:
        m.setattr(metadata_log, "GROUP_VERSION_MIN_METADATA_VERSION", 10**6)
        with BrokerThread(log_dir):
            pass
    assert read_kraft_configs(metadata_dir).features == {"metadata.version": METADATA_VERSION}
    with BrokerThread(log_dir) as broker:
        assert broker.broker.configs.features["group.version"] == GROUP_VERSION
    assert read_kraft_configs(metadata_dir).features == {"metadata.version": METADATA_VERSION,
                                                         "group.version": GROUP_VERSION}
    # below 4.0-IV0 (a Kafka 3.x cluster's log) the level stays unset, and the KIP-848 APIs
    # are not advertised
    with monkeypatch.context() as m:
        m.setattr(metadata_log, "GROUP_VERSION_MIN_METADATA_VERSION", 10**6)
        with BrokerThread(tmp_path / "old") as broker:
            keys = {k["api_key"] for k in broker.call(
                lambda: api_versions_list(broker.broker.configs.features))}
    assert 68 not in keys and 69 not in keys and 1 in keys


def test_served_partitions_are_led_in_the_epoch_their_data_is_written_with(tmp_path):
    log_dir = tmp_path / "logs"
    for start in range(STARTS):
        with BrokerThread(log_dir) as broker:
            if start == 0:
                admin = AdminClient({"bootstrap.servers": broker.bootstrap})
                admin.create_topics([NewTopic("t", 2, 1)])["t"].result(30)
            producer = Producer({"bootstrap.servers": broker.bootstrap})
            for i in range(10):
                producer.produce("t", b"v%d" % i, partition=i % 2)
            assert producer.flush(30) == 0
        replay = read_kraft_configs(log_dir / "__cluster_metadata-0")
        [topic_id] = [i for i, name in replay.topic_names.items() if name == "t"]
        for p in range(2):
            cache = LeaderEpochFileCache.for_partition_dir(log_dir / f"t-{p}", persist=False)
            latest = cache.latest_epoch()
            assert latest == start, (start, p)  # one new leader epoch per start
            assert replay.partitions[(topic_id, p)] == PartitionState(1, latest, (1,)), (start, p)


def test_partitions_added_by_create_partitions_are_recorded_and_kept(tmp_path):
    from confluent_kafka.admin import NewPartitions

    log_dir = tmp_path / "logs"
    with BrokerThread(log_dir) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("t", 2, 1)])["t"].result(30)
        admin.create_partitions([NewPartitions("t", 4)])["t"].result(30)
    replay = read_kraft_configs(log_dir / "__cluster_metadata-0")
    [topic_id] = [i for i, name in replay.topic_names.items() if name == "t"]
    assert {p: s for (i, p), s in replay.partitions.items() if i == topic_id} == {
        p: PartitionState(1, 0, (1,)) for p in range(4)}
    for p in range(4):
        assert f"topic_id: {topic_id}" in (log_dir / f"t-{p}" / "partition.metadata").read_text()
    with BrokerThread(log_dir) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        assert sorted(admin.list_topics("t", timeout=30).topics["t"].partitions) == [0, 1, 2, 3]
