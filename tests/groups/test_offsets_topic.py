"""The offsets topic across log dirs: partition count, where a group lives, loading only the
partitions asked for, and the parallel load giving the in-process load's groups."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from groups_support import OffsetsLog, member
from pylogctl.groups.group_loader import load_offsets_partition
from pylogctl.groups.offset_commits import OffsetAndMetadata
from pylogctl.groups.offsets_topic import OffsetsTopic, _pack, _unpack
from pylogctl.groups.partitioner import partition_for
from pylogctl.groups.replicas import LogDirs


def cluster(tmp_path: Path, partitions: int, groups: list[str]) -> Path:
    log_dir = tmp_path / "broker"
    log_dir.mkdir()
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    logs = {p: OffsetsLog(log_dir, p) for p in range(partitions)}
    for i, g in enumerate(groups):
        log = logs[partition_for(g, partitions)]
        log.group(g, [member(f"{g}-m", {"t": [i % 3]})])
        log.commit(g, {("t", i % 3): 10 * i})
    return log_dir


def test_a_group_is_read_from_its_partition_only(tmp_path):
    topic = OffsetsTopic(LogDirs([cluster(tmp_path, 10, ["a", "b", "c"])]))
    assert topic.partition_count == 10
    load = topic.load({"b"})
    assert [p.partition for p in load.partitions] == [partition_for("b", 10)]
    assert list(load.groups) == ["b"] and load.absent == []


def test_a_group_whose_partition_is_in_no_log_dir_is_absent(tmp_path):
    log_dir = cluster(tmp_path, 10, ["a"])
    p = partition_for("zzz", 10)
    for f in (log_dir / f"__consumer_offsets-{p}").iterdir():
        f.unlink()
    (log_dir / f"__consumer_offsets-{p}").rmdir()
    topic = OffsetsTopic(LogDirs([log_dir]), partition_count=10)
    assert topic.missing_partitions == [p]
    load = topic.load({"zzz"})
    assert load.absent == [p] and load.groups == {}


def test_parallel_load_gives_the_in_process_load(tmp_path):
    groups = [f"group-{i}" for i in range(40)]
    topic = OffsetsTopic(LogDirs([cluster(tmp_path, 8, groups)]))
    serial, parallel = topic.load(workers=1), topic.load(workers=2)
    assert list(parallel.groups) == list(serial.groups)
    assert parallel.groups == serial.groups and parallel.partitions == serial.partitions
    assert [p.partition for p in parallel.partitions] == list(range(8))
    assert sorted(serial.groups) == sorted(groups)


def test_a_worker_result_crosses_the_process_boundary_intact(tmp_path):
    log = OffsetsLog(tmp_path)
    log.group("g", [member("m", {"t": [0, 1]}), member("n", {"u": [0]})])
    log.commit("g", {("t", 1): 5, ("t", 0): 7, ("u", 0): 9})
    log.commit("g", {("t", 0): 8}, producer_id=3)  # pending: no marker yet
    loaded = load_offsets_partition(log.dir, 0)
    back = _unpack(pickle.loads(pickle.dumps(_pack(load_offsets_partition(log.dir, 0)))))
    assert back == loaded and list(back.groups) == list(loaded.groups)
    group = back.groups["g"]
    assert list(group.offsets) == [("t", 1), ("t", 0), ("u", 0)]
    assert all(type(o) is OffsetAndMetadata for o in group.offsets.values())
    assert group.pending_offsets == {3: {("t", 0): loaded.groups["g"].pending_offsets[3][
        ("t", 0)]}}
    # one TopicPartition object per partition, in offsets and assignments alike
    shared = {tp: tp for tp in group.offsets}
    assert all(shared[tp] is tp for m in group.members for tp in m.assignment)


@pytest.mark.corpus
def test_parallel_load_of_a_corpus_dir(corpus):
    topic = OffsetsTopic(LogDirs([corpus / "smartassets-connect"]))
    assert topic.load(workers=2).groups == topic.load(workers=1).groups


def test_no_offsets_topic(tmp_path):
    (tmp_path / "meta.properties").write_text("version=0\nbroker.id=0\n")
    topic = OffsetsTopic(LogDirs([tmp_path]))
    assert (topic.partition_count, topic.partition_for("g"), topic.load().groups) == (0, None, {})
