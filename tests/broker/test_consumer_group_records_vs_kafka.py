"""KIP-848 group records, judged by what the real Kafka 4.4 broker wrote: groups Kafka left in
``__consumer_offsets`` load into pylogctl's coordinator in the state the offline tools show,
with the metadata hash Kafka computed (xxh3 over the subscribed topics, as ``ModernGroup``
does), and a member joining ``pylogctl broker`` is written as the same record types, in the same
order and with the same fields, as Kafka wrote a join."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from broker_support import BrokerThread
from pylogctl.broker.consumer_group import metadata_hash
from pylogctl.broker.consumer_group_coordinator import ConsumerGroupCoordinator, HeartbeatRequest
from pylogctl.broker.log_manager import uuid_from_kafka
from pylogctl.format.group_coordinator_records import decode_group_record
from pylogctl.groups.group_loader import load_offsets_partition
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.metadata_files import read_partition_metadata

KIP848_TYPES = {3, 4, 5, 6, 7, 8, 16}


def _topics(log_dir):
    counts: dict[str, int] = defaultdict(int)
    ids = {}
    for path in log_dir.glob("*-*/partition.metadata"):
        name = path.parent.name.rsplit("-", 1)[0]
        counts[name] += 1
        ids[name] = uuid_from_kafka(read_partition_metadata(path)["topicId"])
    return {name: (ids[name], counts[name]) for name in ids}


def _batches(partition_dir):
    """Each batch of a partition as a list of (record type, decoded record)."""
    for path in sorted(partition_dir.glob("*.log")):
        with FileRecords(str(path)) as records:
            for batch in records.batches():
                if batch.is_control:
                    continue
                yield [(int.from_bytes(r.key[:2], "big"), decode_group_record(r.key, r.value))
                       for r in batch.records()]


def test_groups_kafka_wrote_load_in_their_state_with_kafkasmetadata_hash(kafka_scenario):
    logs = kafka_scenario.log_dir
    topics = _topics(logs)
    checked = 0

    async def load_all():
        nonlocal checked
        for partition_dir in sorted(logs.glob("__consumer_offsets-*")):
            loaded = load_offsets_partition(partition_dir, int(partition_dir.name.rsplit("-")[1]))
            coordinator = ConsumerGroupCoordinator(lambda *_: None, lambda: topics)
            for group_id, records in loaded.consumer_group_records.items():
                coordinator.load(group_id, records)
                group = coordinator.groups[group_id]
                offline = loaded.groups[group_id]
                assert group.state == offline.state, group_id
                assert group.group_epoch == offline.generation, group_id
                assert {m: g.member_epoch for m, g in group.members.items()} == {
                    m.member_id: m.member_epoch for m in offline.members}, group_id
                if group.members:  # the hash of the subscriptions Kafka last wrote
                    assert metadata_hash(coordinator.subscribed_names(group), topics) == \
                        group.metadata_hash, group_id
                checked += 1
            coordinator.shutdown()

    asyncio.run(load_all())
    assert checked >= 2  # the scenario's "modern-group" and "live-modern"


def _first_join(partition_dirs, group_id):
    for partition_dir in partition_dirs:
        for batch in _batches(partition_dir):
            if any(t == 5 and rec.group_id == group_id for t, rec in batch):
                return batch
    raise AssertionError(f"no join of {group_id}")


def test_a_join_is_written_as_kafka_writes_it(kafka_scenario, tmp_path):
    theirs = _first_join(sorted(kafka_scenario.log_dir.glob("__consumer_offsets-*")),
                         "modern-group")
    with BrokerThread(tmp_path / "logs") as broker:
        broker.call(lambda: broker.broker.groups.replicas.create_topic(
            "codecs", 1, broker.broker.topic_config("codecs")))
        response = broker.call(lambda: broker.broker.groups.consumer_group_heartbeat(
            HeartbeatRequest("joiner", "m-1", 0, rebalance_timeout_ms=300000,
                             subscribed_topic_names=("codecs",), topic_partitions={}),
            1, "joiner-client", "/127.0.0.1"))
        assert (response["error_code"], response["member_epoch"]) == (0, 2)
    ours = _first_join(sorted((tmp_path / "logs").glob("__consumer_offsets-*")), "joiner")
    assert [t for t, _ in ours] == [t for t, _ in theirs] == [5, 3, 7, 6, 8]
    for (_, mine), (_, kafkas) in zip(ours, theirs):
        assert mine.value_version == kafkas.value_version
        assert set(mine.value) == set(kafkas.value), mine.record_type
    member = dict(ours)[5].value
    assert (member["clientId"], member["subscribedTopicNames"], member["subscribedTopicRegex"],
            member["serverAssignor"]) == ("joiner-client", ["codecs"], "", None)
    current = dict(ours)[8].value
    assert (current["memberEpoch"], current["previousMemberEpoch"], current["state"]) == (2, 0, 0)
    assert current["assignedPartitions"][0]["assignmentEpochs"] == [2]
