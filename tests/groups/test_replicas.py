"""Several brokers' log dirs: per partition, the replica with the highest leader epoch, then the
highest log end offset, then the first log dir given; kraft3-cluster holds three brokers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from groups_support import OffsetsLog, member
from pylogctl.errors import FileUnreadableError, UsageError
from pylogctl.groups.offsets_topic import OffsetsTopic
from pylogctl.groups.replicas import LogDirs, expand_log_dirs

pytestmark = pytest.mark.corpus


@pytest.fixture
def kraft3(corpus) -> Path:
    return corpus / "kraft3-cluster"


@pytest.fixture
def cluster(kraft3, tmp_path) -> Path:
    copy = tmp_path / "cluster"
    shutil.copytree(kraft3, copy)
    return copy


def test_a_dir_holding_log_dirs_stands_for_them(kraft3):
    assert [Path(p).name for p in expand_log_dirs([kraft3])] == ["kafka1", "kafka2", "kafka3"]
    assert expand_log_dirs([kraft3 / "kafka2", kraft3]) == [
        str(kraft3 / n) for n in ("kafka2", "kafka1", "kafka3")]


def test_paths_that_are_not_log_dirs_are_refused(tmp_path):
    with pytest.raises(FileUnreadableError, match="No such file or directory"):
        expand_log_dirs([tmp_path / "nope"])
    with pytest.raises(UsageError, match="neither a log dir"):
        expand_log_dirs([tmp_path])


def test_kraft3_offsets_partitions_are_each_on_one_broker(kraft3):
    log_dirs = LogDirs([kraft3])
    topic = OffsetsTopic(log_dirs)
    assert topic.partition_count == 50 and topic.missing_partitions == []
    load = topic.load()
    brokers = {p: c.chosen.broker_id for p, c in load.replicas.items()}
    assert sorted(brokers.values()).count(1) == 16 and set(brokers.values()) == {1, 2, 3}
    assert all(not c.others for c in load.replicas.values())
    assert {g: load.groups[g].coordinator_partition for g in load.groups} == {
        "console-consumer-90254": 11, "console-consumer-12753": 29}  # 77531 was deleted
    assert (brokers[11], brokers[24], brokers[29]) == (1, 1, 1)


def test_kraft3_replicated_data_partition_ties_go_to_the_first_log_dir(kraft3):
    for order in (["kafka1", "kafka2", "kafka3"], ["kafka3", "kafka1", "kafka2"]):
        choice = LogDirs([kraft3 / n for n in order]).choose("test1", 4)
        assert choice.chosen.broker_id == int(order[0][-1])
        assert [r.broker_id for r in choice.others] == [int(n[-1]) for n in order[1:]]
        assert (choice.chosen.leader_epoch, choice.chosen.log_end.offset) == (0, 1)
        assert choice.reason == "identical epochs and log ends: the first log dir given"


def _stale_copy(cluster: Path, epoch: int) -> Path:
    """kafka2 gets __consumer_offsets-24 holding only the first batch of kafka1's."""
    source = cluster / "kafka1" / "__consumer_offsets-24"
    stale = cluster / "kafka2" / source.name
    shutil.copytree(source, stale)
    log = stale / "00000000000000000000.log"
    data = log.read_bytes()
    first = int.from_bytes(data[8:12], "big") + 12
    log.write_bytes(data[:first])
    (stale / "leader-epoch-checkpoint").write_text(f"0\n1\n{epoch} 0\n")
    return stale


def test_same_epoch_the_longer_log_wins(cluster):
    _stale_copy(cluster, epoch=0)
    for order in (["kafka2", "kafka1"], ["kafka1", "kafka2"]):
        choice = LogDirs([cluster / n for n in order]).choose("__consumer_offsets", 24)
        assert choice.chosen.broker_id == 1
        assert choice.reason == "same leader epoch, highest log end offset"
        assert choice.chosen.log_end.offset > choice.others[0].log_end.offset


def test_a_later_leader_epoch_wins_over_a_longer_log(cluster):
    _stale_copy(cluster, epoch=1)
    topic = OffsetsTopic(LogDirs([cluster]))
    load = topic.load({"console-consumer-77531"})
    choice = load.replicas[24]
    assert (choice.chosen.broker_id, choice.reason) == (2, "highest leader epoch")
    assert load.partitions[0].path == str(cluster / "kafka2" / "__consumer_offsets-24")
    assert load.partitions[0].next_offset == 1  # kafka2's copy holds one batch
    assert load.groups["console-consumer-77531"].state == "Stable"  # not yet deleted there


def test_log_dirs_of_one_broker_show_missing_partitions(kraft3):
    topic = OffsetsTopic(LogDirs([kraft3 / "kafka2"]))
    assert 0 < len(topic.missing_partitions) < topic.partition_count
    assert OffsetsTopic(LogDirs([kraft3 / "kafka2"]), partition_count=50).partition_count == 50


def test_topic_ids_are_named_from_partition_metadata(kraft3):
    log_dirs = LogDirs([kraft3])
    text = (kraft3 / "kafka1" / "test1-4" / "partition.metadata").read_text()
    topic_id = text.split("topic_id:")[1].strip()
    assert log_dirs.topic_ids(topic_id) == "test1"
    assert log_dirs.topic_ids("AAAAAAAAAAAAAAAAAAAAAA") is None


def test_replicas_of_synthetic_log_dirs(tmp_path):
    for name in ("b1", "b2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "meta.properties").write_text(f"version=0\nbroker.id={name[1]}\n")
    OffsetsLog(tmp_path / "b1").group("g", [member("m", {"t": [0]})])
    longer = OffsetsLog(tmp_path / "b2")
    longer.group("g", [member("m", {"t": [0]})])
    longer.group("g", [])
    choice = LogDirs([tmp_path / "b1", tmp_path / "b2"]).choose("__consumer_offsets", 0)
    assert choice.chosen.broker_id == 2
    assert choice.reason == "same leader epoch, highest log end offset"
