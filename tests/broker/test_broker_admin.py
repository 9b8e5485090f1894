"""Admin APIs with kafka-python's admin client: CreateTopics (and its refusals), DeleteRecords
(the log start offset survives a restart, as its checkpoint entry), ListGroups and
DescribeGroups after a group session, DeleteTopics, ListOffsets earliest/latest/by time."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError

from broker_support import BrokerThread
from pylogctl.storage.checkpoint import read_offset_checkpoint


def produce(bootstrap: str, topic: str, count: int, partition: int = 0,
            timestamp: int | None = None) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(count):
        producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, partition=partition,
                      timestamp_ms=None if timestamp is None else timestamp + i)
    producer.flush(30)
    producer.close()


def test_create_topics_and_its_refusals(tmp_path):
    with BrokerThread(tmp_path / "logs") as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.create_topics([NewTopic("orders", 3, 1)])
        assert sorted(p.name for p in (tmp_path / "logs").glob("orders-*")) == \
            ["orders-0", "orders-1", "orders-2"]
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([NewTopic("orders", 1, 1)])
        with pytest.raises(InvalidReplicationFactorError):
            admin.create_topics([NewTopic("replicated", 1, 3)])
        admin.close()
    metadata = (tmp_path / "logs" / "orders-0" / "partition.metadata").read_text()
    assert metadata.startswith("version: 0\ntopic_id: ")


def test_delete_records_moves_the_log_start_and_survives_a_restart(tmp_path):
    log_dir = tmp_path / "logs"
    tp = TopicPartition("events", 0)
    with BrokerThread(log_dir) as broker:
        produce(broker.bootstrap, "events", 10)
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.delete_records({tp: 4})
        admin.close()
    entries = read_offset_checkpoint(log_dir / "log-start-offset-checkpoint").entries
    assert [(e.topic, e.partition, e.offset) for e in entries] == [("events", 0, 4)]
    with BrokerThread(log_dir) as broker:
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
        assert consumer.beginning_offsets([tp]) == {tp: 4}
        assert consumer.end_offsets([tp]) == {tp: 10}
        consumer.close()


def test_list_offsets_by_timestamp(tmp_path):
    tp = TopicPartition("timed", 0)
    with BrokerThread(tmp_path / "logs") as broker:
        produce(broker.bootstrap, "timed", 10, timestamp=1_700_000_000_000)
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
        found = consumer.offsets_for_times({tp: 1_700_000_000_005})[tp]
        assert (found.offset, found.timestamp) == (5, 1_700_000_000_005)
        assert consumer.offsets_for_times({tp: 1_800_000_000_000})[tp] is None
        consumer.close()


def test_groups_are_listed_and_described(tmp_path):
    with BrokerThread(tmp_path / "logs") as broker:
        produce(broker.bootstrap, "g-topic", 3)
        consumer = KafkaConsumer("g-topic", bootstrap_servers=broker.bootstrap,
                                 group_id="watchers", auto_offset_reset="earliest",
                                 enable_auto_commit=False, consumer_timeout_ms=10_000)
        assert len([m for _, m in zip(range(3), consumer)]) == 3
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        listed = admin.list_groups()
        assert "watchers" in str(listed)
        described = admin.describe_groups(["watchers"])
        assert "Stable" in str(described) and "range" in str(described)
        consumer.close()
        admin.close()


def test_delete_topics_removes_the_partition_dirs(tmp_path):
    log_dir = tmp_path / "logs"
    with BrokerThread(log_dir) as broker:
        produce(broker.bootstrap, "doomed", 2)
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.delete_topics(["doomed"])
        assert "doomed" not in admin.list_topics()
        admin.close()
    assert not list(log_dir.glob("doomed-*"))
    entries = read_offset_checkpoint(log_dir / "replication-offset-checkpoint").entries
    assert all(e.topic != "doomed" for e in entries)
