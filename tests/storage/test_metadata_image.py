"""The KRaft metadata image replayed as Kafka's MetadataLoader builds it: the delta rules for
partitions (leader and partition epochs, ELR), brokers, features, ACLs; metadata transactions
(KIP-868); records Kafka's loader skips; and where replay stops (gap, bad CRC, truncated batch,
a record that does not decode), named by file and offset. The corpus and a Kafka-written
log are compared with kafka-metadata-shell in tests/cli/test_metadata_vs_kafka.py."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.message import KafkaUuid
from pylogctl.format.metadata_records import API_KEYS, encode_metadata_record
from pylogctl.storage.metadata_image import MIGRATING_DIR, PartitionRegistration
from pylogctl.storage.metadata_loader import (bytes_to_replay, load_metadata_dir,
                                              load_metadata_file, problems)

K = API_KEYS
T1 = bytes(range(16))
T2 = bytes(range(1, 17))


def str_uuid(raw: bytes) -> str:
    return str(KafkaUuid(raw))


def rec(name: str, data: dict, version: int = 0) -> bytes:
    return encode_metadata_record(K[name], version, data)


def batches(groups: list[list[bytes]], base: int = 0, epoch: int = 1) -> bytes:
    """One batch per group of record values, offsets from ``base``."""
    out, offset = b"", base
    for group in groups:
        builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=epoch)
        for value in group:
            builder.append(1_700_000_000_000 + offset, None, value)
        out += builder.build()
        offset += len(group)
    return out


def write(root: Path, log: list[list[bytes]], *, base: int = 0,
          snapshot: tuple[int, list[list[bytes]]] | None = None) -> Path:
    metadata = root / "__cluster_metadata-0"
    metadata.mkdir(parents=True)
    (metadata / f"{base:020d}.log").write_bytes(batches(log, base))
    if snapshot is not None:
        end, groups = snapshot
        (metadata / f"{end:020d}-{1:010d}.checkpoint").write_bytes(batches(groups))
    return metadata


def topic(name: str, topic_id: bytes) -> bytes:
    return rec("TOPIC_RECORD", {"name": name, "topicId": topic_id})


def partition(topic_id: bytes, pid: int, replicas=(1, 2, 3), leader: int = 1,
              epoch: int = 0) -> bytes:
    return rec("PARTITION_RECORD", {
        "partitionId": pid, "topicId": topic_id, "replicas": list(replicas),
        "isr": list(replicas), "removingReplicas": [], "addingReplicas": [], "leader": leader,
        "leaderEpoch": epoch, "partitionEpoch": epoch}, 0)


def change(topic_id: bytes, pid: int, **fields) -> bytes:
    return rec("PARTITION_CHANGE_RECORD", {"partitionId": pid, "topicId": topic_id, **fields}, 2)


def config(kind: int, name: str, key: str, value: str | None) -> bytes:
    return rec("CONFIG_RECORD", {"resourceType": kind, "resourceName": name, "name": key,
                                 "value": value})


def test_partition_changes_follow_partition_registration_merge(tmp_path):
    metadata = write(tmp_path, [
        [topic("orders", T1), partition(T1, 0, epoch=4)],
        [change(T1, 0, isr=[1, 2])],  # ISR only: the leader epoch stays
        [change(T1, 0, leader=1)],  # the same leader again still bumps it
        [change(T1, 0, leader=2, eligibleLeaderReplicas=[3], lastKnownElr=[1])],
    ])
    replay = load_metadata_dir(metadata)
    p = replay.image.topic_by_name("orders").partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (2, 6, 7)
    assert (p.isr, p.elr, p.last_known_elr) == ((1, 2), (3,), (1,))
    assert p.directories == (MIGRATING_DIR,) * 3  # v0 records name no directory
    assert replay.records == 5 and list(problems(replay)) == []
    assert replay.image.provenance.offset == 4


def test_clear_elr_clears_every_partition_of_the_named_topic(tmp_path):
    metadata = write(tmp_path, [
        [topic("a", T1), partition(T1, 0), partition(T1, 1), topic("b", T2), partition(T2, 0)],
        [change(T1, 0, eligibleLeaderReplicas=[2]), change(T2, 0, lastKnownElr=[3])],
        [rec("CLEAR_ELR_RECORD", {"topicName": "a"})],
    ])
    image = load_metadata_dir(metadata).image
    a0, a1, b0 = (image.topics[str_id].partitions[p] for str_id, p in (
        (image.topic_ids["a"], 0), (image.topic_ids["a"], 1), (image.topic_ids["b"], 0)))
    assert (a0.elr, a0.partition_epoch) == ((), 2)  # changed, then cleared
    assert a1.partition_epoch == 0  # nothing to clear: untouched
    assert b0.last_known_elr == (3,)


def test_replay_stops_at_a_record_kafka_refuses_and_lenient_replay_skips_it(tmp_path):
    metadata = write(tmp_path, [
        [topic("t", T2), config(2, "t", "segment.ms", "1")],
        [partition(T1, 0)],  # no TopicRecord created T1
        [change(T2, 5, leader=1)],  # no partition 5
        [rec("FENCE_BROKER_RECORD", {"id": 9, "epoch": 1})],
        [rec("END_TRANSACTION_RECORD", {})],
        [config(2, "t", "retention.ms", "5")],
    ])
    replay = load_metadata_dir(metadata)
    stopped = replay.stopped
    first = batches([[topic("t", T2), config(2, "t", "segment.ms", "1")]])
    assert (stopped.offset, stopped.position) == (2, len(first))  # the batch holding it
    assert stopped.reason == (f"the record fails to apply: PartitionRecord for topic id "
                              f"{str_uuid(T1)}, which no TopicRecord created")
    assert replay.image.configs[(2, "t")]["segment.ms"].value == "1"  # what came before
    assert (2, "t") in replay.image.configs and replay.next_offset == 2
    lenient = load_metadata_dir(metadata, lenient=True)
    assert [(f.offset, f.reason.split(": ", 1)[1]) for f in lenient.faults] == [
        (2, f"PartitionRecord for topic id {str_uuid(T1)}, which no TopicRecord created"),
        (3, f"Unable to find partition {str_uuid(T2)}:5"),
        (4, "Tried to fence broker 9, but that broker was not registered."),
        (5, "Encountered EndTransactionRecord without having seen a BeginTransactionRecord"),
    ]
    assert lenient.stopped is None
    assert lenient.image.configs[(2, "t")]["retention.ms"].value == "5"  # replay went on


def test_metadata_transactions_apply_at_their_end_and_aborted_ones_never(tmp_path):
    begin = rec("BEGIN_TRANSACTION_RECORD", {"name": "create"})
    end = rec("END_TRANSACTION_RECORD", {})
    abort = rec("ABORT_TRANSACTION_RECORD", {"reason": "too big"})
    metadata = write(tmp_path, [
        [begin, topic("kept", T1)], [partition(T1, 0)], [end],
        [begin, topic("dropped", T2)], [abort],
        [begin, config(2, "kept", "retention.ms", "1")],  # never ended
    ])
    replay = load_metadata_dir(metadata)
    assert set(replay.image.topic_ids) == {"kept"}
    assert (2, "kept") not in replay.image.configs
    assert replay.open_transaction.offset == 7
    assert replay.image.provenance.offset == 6  # as published: the open one is not
    assert any("aborted at offset 6 dropped 1 records" in n for n in replay.notes)


def test_brokers_register_fence_change_and_leave(tmp_path):
    register = rec("REGISTER_BROKER_RECORD", {
        "brokerId": 1, "incarnationId": T1, "brokerEpoch": 7, "endPoints": [
            {"name": "PLAINTEXT", "host": "h", "port": 9092, "securityProtocol": 0}],
        "features": [], "rack": None, "fenced": True, "logDirs": [T2, T1]}, 3)
    metadata = write(tmp_path, [
        [register], [rec("UNFENCE_BROKER_RECORD", {"id": 1, "epoch": 7})],
        [rec("BROKER_REGISTRATION_CHANGE_RECORD",
             {"brokerId": 1, "brokerEpoch": 7, "inControlledShutdown": 1}, 1)],
        [rec("FEATURE_LEVEL_RECORD", {"name": "metadata.version", "featureLevel": 25})],
        [rec("FEATURE_LEVEL_RECORD", {"name": "group.version", "featureLevel": 1})],
    ])
    replay = load_metadata_dir(metadata)
    broker = replay.image.brokers[1]
    assert (broker.fenced, broker.in_controlled_shutdown) == (False, True)
    assert broker.directories == (str_uuid(T1), str_uuid(T2))  # sorted as Uuid.compareTo
    assert replay.stopped is None
    assert (replay.image.metadata_version, replay.image.features) == (25, {"group.version": 1})


def test_snapshot_then_log_and_the_gap_between_them(tmp_path):
    snapshot = (3, [[topic("t", T1), partition(T1, 0)]])
    ok = write(tmp_path / "ok", [[config(2, "x", "a", "1")] * 3, [change(T1, 0, leader=2)]],
               snapshot=snapshot)
    read: list[int] = []
    replay = load_metadata_dir(ok, progress=read.append)
    assert 0 < sum(read) <= bytes_to_replay(ok)  # a progress bar's steps and total
    assert replay.image.topic_by_name("t").partitions[0].leader == 2
    assert replay.image.configs == {}  # the records below the snapshot are its past
    assert replay.stopped is None and replay.next_offset == 4
    gap = write(tmp_path / "gap", [[change(T1, 0, leader=2)]], base=5, snapshot=snapshot)
    stopped = load_metadata_dir(gap).stopped
    assert stopped.path.endswith("00000000000000000005.log")
    assert (stopped.offset, stopped.reason) == (5, "gap: offsets 3 to 4 are in no file")


def test_replay_stops_at_a_bad_crc_and_at_a_truncated_batch(tmp_path):
    metadata = write(tmp_path, [[topic("t", T1)], [partition(T1, 0)]])
    log = metadata / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    first = len(batches([[topic("t", T1)]]))
    data[-1] ^= 1  # the last byte of the second batch
    log.write_bytes(bytes(data))
    replay = load_metadata_dir(metadata)
    assert (replay.stopped.offset, replay.stopped.position) == (1, first)
    assert "CRC" in replay.stopped.reason and set(replay.image.topic_ids) == {"t"}
    log.write_bytes(bytes(data[:-5]))
    stopped = load_metadata_dir(metadata).stopped
    assert stopped.position == first and "truncated" in stopped.reason


def test_a_record_that_does_not_decode_stops_replay(tmp_path):
    metadata = write(tmp_path, [[topic("t", T1)[:-2]], [topic("u", T2)]])
    replay = load_metadata_dir(metadata)
    assert replay.stopped.offset == 0 and "does not decode" in replay.stopped.reason
    assert "offset 0" in str(replay.stopped)
    assert load_metadata_dir(metadata, lenient=True).image.topic_ids.keys() == {"u"}


def test_one_file_read_as_kafka_metadata_shell_reads_it(tmp_path):
    metadata = write(tmp_path, [[topic("t", T1)], [partition(T1, 0)]],
                     snapshot=(1, [[topic("s", T2)]]))
    log = load_metadata_file(metadata / "00000000000000000000.log")
    assert set(log.image.topic_ids) == {"t"}  # the whole segment, no snapshot
    snap = load_metadata_file(metadata / "00000000000000000001-0000000001.checkpoint")
    assert set(snap.image.topic_ids) == {"s"} and snap.image.provenance.offset == 0


ids = st.lists(st.integers(0, 5), max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.fixed_dictionaries({}, optional={
    "leader": st.integers(-2, 4), "isr": ids, "replicas": st.lists(st.integers(0, 5),
                                                                      min_size=3, max_size=3),
    "eligibleLeaderReplicas": ids, "lastKnownElr": ids}), max_size=6))
def test_merge_keeps_what_a_change_leaves_null_and_counts_epochs(changes):
    p = PartitionRegistration((1, 2, 3), (MIGRATING_DIR,) * 3, (1, 2), (), (), (), (), 1, 0, 5, 9)
    leaders = 0
    for c in changes:
        before, p = p, p.merge(c)
        leaders += c.get("leader", -2) != -2
        for name, attr in (("isr", "isr"), ("replicas", "replicas"),
                           ("eligibleLeaderReplicas", "elr"), ("lastKnownElr", "last_known_elr")):
            assert getattr(p, attr) == tuple(c.get(name, getattr(before, attr)))
    assert (p.leader_epoch, p.partition_epoch) == (5 + leaders, 9 + len(changes))


def test_a_removed_topics_configs_go_unless_set_in_the_same_batch(tmp_path):
    """ConfigurationsDelta drops the configs the image held when the delta began: configs
    written in the removal's own batch outlive the topic, as in Kafka."""
    remove = rec("REMOVE_TOPIC_RECORD", {"topicId": T1})
    apart = write(tmp_path / "apart", [[topic("t", T1)], [config(2, "t", "a", "1")], [remove]])
    assert load_metadata_dir(apart).image.configs == {}
    together = write(tmp_path / "together",
                     [[topic("t", T1)], [config(2, "t", "a", "1"), remove]])
    assert load_metadata_dir(together).image.configs[(2, "t")]["a"].value == "1"
