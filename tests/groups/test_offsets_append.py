"""Appending coordinator records offline: what a coordinator's write leaves on every replica in
step, read back by the group loader and by kafka-python's record parser (an independent
oracle), and the refusals (a locked log dir, a log that moved on)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch

from groups_support import OffsetsLog
from pylogctl.errors import LogDirLockedError
from pylogctl.format.group_coordinator_records import decode_group_record
from pylogctl.groups.offset_commits import TopicPartition
from pylogctl.groups.offsets_append import append_group_batches, replicas_in_step
from pylogctl.groups.record_helpers import (group_tombstones, offset_commit_record,
                                            offset_tombstone)
from pylogctl.groups.replicas import LogDirs
from pylogctl.storage.loader.apply import PlanOutdatedError
from pylogctl.tools.consumer_groups import ConsumerGroups
from rebuild_index_support import lock_held, tree_state

NOW = 1_800_000_000_000


def _broker(root: Path, broker_id: int, commits: int = 3) -> Path:
    log_dir = root / f"broker{broker_id}"
    log_dir.mkdir(parents=True)
    (log_dir / "meta.properties").write_text(f"version=0\nbroker.id={broker_id}\n")
    log = OffsetsLog(log_dir, 0)
    for i in range(commits):
        log.commit("g", {("t", 0): 10 + i})
    (log.dir / "leader-epoch-checkpoint").write_text("0\n1\n4 0\n")
    (log_dir / "replication-offset-checkpoint").write_text(f"0\n1\n__consumer_offsets 0 "
                                                           f"{commits}\n")
    return log_dir


@pytest.fixture
def two_brokers(tmp_path) -> list[Path]:
    return [_broker(tmp_path, 1), _broker(tmp_path, 2)]


def _records():
    return [[offset_commit_record("g", TopicPartition("t", 0), 42, NOW),
             offset_commit_record("g", TopicPartition("t", 1), 7, NOW)],
            [offset_tombstone("h", TopicPartition("u", 0))]]


def test_every_replica_in_step_gets_the_same_bytes(two_brokers):
    outcome = append_group_batches(LogDirs(two_brokers), 0, _records(), expected_end=3,
                                   now_ms=NOW)
    assert (outcome.first_offset, outcome.next_offset, outcome.batches, outcome.records) == \
        (3, 6, 2, 3)
    assert [w.broker_id for w in outcome.written] == [1, 2] and outcome.skipped == []
    segments = [{p.name: p.read_bytes() for p in (d / "__consumer_offsets-0").glob("*.log")}
                for d in two_brokers]
    assert segments[0] == segments[1]
    for d in two_brokers:
        assert "__consumer_offsets 0 6" in (d / "replication-offset-checkpoint").read_text()
        assert "__consumer_offsets 0 6" in (d / "recovery-point-offset-checkpoint").read_text()
        groups = ConsumerGroups([d]).load_groups(["g"])
        assert {tp: c.offset for tp, c in groups["g"].offsets.items()} == {
            TopicPartition("t", 0): 42, TopicPartition("t", 1): 7}


def test_kafka_python_reads_what_a_broker_would_have_written(two_brokers):
    append_group_batches(LogDirs(two_brokers[:1]), 0, _records(), expected_end=3, now_ms=NOW)
    # the segment may have rolled (by time: the first batch is old), so read the last one
    data = sorted((two_brokers[0] / "__consumer_offsets-0").glob("*.log"))[-1].read_bytes()
    pos, batches, positions = 0, [], []
    while pos < len(data):
        size = 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        batches.append(DefaultRecordBatch(data[pos:pos + size]))
        positions.append(pos)
        pos += size
    first, second = batches[-2:]
    assert first.validate_crc() and second.validate_crc()
    assert (first.base_offset, first.producer_id, first.compression_type,
            first.timestamp_type) == (3, -1, 0, 0)
    epoch_at = positions[-2] + 12  # partitionLeaderEpoch follows baseOffset and length
    assert int.from_bytes(data[epoch_at:epoch_at + 4], "big") == 4  # the partition's epoch
    records = list(first)
    assert [r.timestamp for r in records] == [NOW, NOW]
    decoded = decode_group_record(records[0].key, records[0].value)
    assert (decoded.record_type, decoded.value_version) == (1, 3)  # key v1, value v3
    assert decoded.value == {"offset": 42, "leaderEpoch": -1, "metadata": "",
                             "commitTimestamp": NOW}
    assert [r.value for r in second] == [None]


def test_a_replica_behind_is_left_alone_and_reported(tmp_path):
    dirs = [_broker(tmp_path, 1), _broker(tmp_path, 2, commits=2)]
    log_dirs = LogDirs(dirs)
    in_step, skipped = replicas_in_step(log_dirs, 0)
    assert [r.broker_id for r in in_step] == [1]
    assert len(skipped) == 1 and "broker 2" in skipped[0] and "not in step" in skipped[0]
    before = tree_state(dirs[1])
    outcome = append_group_batches(log_dirs, 0, _records(), expected_end=3, now_ms=NOW)
    assert [w.broker_id for w in outcome.written] == [1]
    assert tree_state(dirs[1]) == before


def test_a_locked_replica_stops_the_append_before_any_write(two_brokers):
    before = [_files(d) for d in two_brokers]
    with lock_held(two_brokers[1]):
        with pytest.raises(LogDirLockedError):
            append_group_batches(LogDirs(two_brokers), 0, _records(), expected_end=3,
                                 now_ms=NOW)
    assert [_files(d) for d in two_brokers] == before


def _files(log_dir: Path) -> dict:
    """The tree without ``.lock`` (taking a lock creates it, as Kafka's does)."""
    return {k: v for k, v in tree_state(log_dir).items() if k != ".lock"}


def test_a_log_that_moved_on_since_planning_is_refused(two_brokers):
    before = _files(two_brokers[0])
    with pytest.raises(PlanOutdatedError, match="not 2 as when the groups were read"):
        append_group_batches(LogDirs(two_brokers[:1]), 0, _records(), expected_end=2,
                             now_ms=NOW)
    assert _files(two_brokers[0]) == before


def test_group_tombstones_delete_a_classic_group_entirely(tmp_path):
    log_dir = _broker(tmp_path, 1)
    groups = ConsumerGroups([log_dir])
    group = groups.load_groups(["g"])["g"]
    tombstones = group_tombstones(group)
    assert tombstones == [offset_tombstone("g", TopicPartition("t", 0))]  # no registration
    append_group_batches(LogDirs([log_dir]), 0, [tombstones], expected_end=3, now_ms=NOW)
    assert "g" not in ConsumerGroups([log_dir]).load_groups(["g"])


def test_a_copy_of_a_corpus_offsets_partition_takes_an_append(corpus, tmp_path):
    """A real broker's segment (time-rolled: its first batch is years old) takes the append
    and loads back as planned."""
    log_dir = tmp_path / "b"
    shutil.copytree(corpus / "bigdata-docker-2020", log_dir, ignore=shutil.ignore_patterns(".lock"))
    groups = ConsumerGroups([log_dir])
    loaded = groups.load_groups(["nifi"])
    partition = groups.topic.partition_for("nifi")
    end = next(p.next_offset for p in groups.load.partitions if p.partition == partition)
    outcome = append_group_batches(groups.log_dirs, partition, [[offset_commit_record(
        "nifi", TopicPartition("aula", 0), 2, NOW)]], expected_end=end, now_ms=NOW)
    assert outcome.first_offset == end
    again = ConsumerGroups([log_dir]).load_groups(["nifi"])["nifi"]
    assert again.offsets[TopicPartition("aula", 0)].offset == 2
    assert again.state == loaded["nifi"].state
