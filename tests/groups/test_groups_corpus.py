"""Every corpus log dir, loaded by the coordinator replay, against an independent replay
written here from the raw records: kafka-python's record parser (an unrelated implementation
of the batch formats, legacy ones included) and a dict per key, in file order. The values are
read with the format layer's decoder, which tests/tools/test_coordinator_parsers.py pins
against Kafka's own output."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.record import MemoryRecords

from pylogctl.format.group_coordinator_records import decode_group_record
from pylogctl.groups.group_loader import load_offsets_partition
from pylogctl.groups.offsets_topic import OffsetsTopic
from pylogctl.groups.partitioner import partition_for
from pylogctl.groups.replicas import LogDirs
from support import corpus_params

OFFSETS = "__consumer_offsets"


def independent_replay(partition_dir: Path) -> dict[str, dict]:
    """``group -> {"offsets": {(topic, partition): offset}, "members": {...} | None}``: the last
    record of each key wins, a null value deletes, transactional commits wait for COMMIT."""
    latest: dict[tuple, bytes | None] = {}
    pending: dict[int, dict[tuple, bytes | None]] = {}
    for segment in sorted(partition_dir.glob("*.log")):
        records = MemoryRecords(segment.read_bytes())
        while (batch := records.next_batch()) is not None:
            control = getattr(batch, "is_control_batch", False)
            txn = getattr(batch, "is_transactional", False)
            for record in batch:
                if control:
                    commit = record.key[2:4] == b"\x00\x01"
                    done = pending.pop(batch.producer_id, {})
                    if commit:
                        latest.update(done)
                    continue
                kind = int.from_bytes(record.key[:2], "big")
                rec = decode_group_record(bytes(record.key), None)
                if kind in (0, 1):
                    key = ("offset", rec.key["group"], rec.key["topic"], rec.key["partition"])
                elif kind == 2:
                    key = ("group", rec.key["group"])
                else:
                    continue
                value = None if record.value is None else bytes(record.value)
                (pending.setdefault(batch.producer_id, {}) if txn else latest)[key] = value
    groups: dict[str, dict] = {}
    for key, value in latest.items():
        if value is None:
            continue
        if key[0] == "offset":
            offset = decode_group_record(b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00",
                                         value).value["offset"]
            entry = groups.setdefault(key[1], {"offsets": {}, "members": None})
            entry["offsets"][(key[2], key[3])] = offset
        else:
            members = decode_group_record(b"\x00\x02\x00\x00", value).value["members"]
            entry = groups.setdefault(key[1], {"offsets": {}, "members": None})
            entry["members"] = sorted(m["memberId"] for m in members)
    return groups


def offsets_partitions(corpus_dir: Path) -> list[Path]:
    return sorted(corpus_dir.rglob(f"{OFFSETS}-*"))


@pytest.mark.corpus
@pytest.mark.parametrize("corpus_dir", corpus_params())
def test_groups_and_offsets_match_an_independent_replay(corpus_dir):
    for partition_dir in offsets_partitions(corpus_dir):
        partition = int(partition_dir.name.rsplit("-", 1)[1])
        loaded = load_offsets_partition(partition_dir, partition)
        assert loaded.notes == [], loaded.notes
        expected = independent_replay(partition_dir)
        got = {g.group_id: {"offsets": {tuple(tp): om.offset for tp, om in g.offsets.items()},
                            "members": None if g.registration_offset is None
                            else sorted(m.member_id for m in g.members)}
               for g in loaded.groups.values()}
        assert got == expected, partition_dir
        for group_id in got:
            assert partition_for(group_id, 50) == partition  # every corpus topic has 50


@pytest.mark.corpus
@pytest.mark.parametrize("corpus_dir", corpus_params())
def test_loading_the_log_dirs_finds_every_partition_once(corpus_dir):
    partitions = offsets_partitions(corpus_dir)
    if not partitions:
        pytest.skip(f"{corpus_dir.name} has no {OFFSETS}")
    topic = OffsetsTopic(LogDirs([corpus_dir]))
    assert topic.partition_count == 50 and topic.missing_partitions == []
    load = topic.load()
    assert len(load.partitions) == 50
    expected = {}
    for partition_dir in partitions:
        expected.update(independent_replay(partition_dir))
    assert sorted(load.groups) == sorted(expected)
