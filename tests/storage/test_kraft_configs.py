"""Replaying topic and broker ConfigRecords from a KRaft ``__cluster_metadata`` log: the corpus
against the records ``pylogctl dump-segment --cluster-metadata-decoder`` prints, and built logs
for what the corpus lacks (broker configs, deletes, removed topics, snapshot vs log)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pylogctl.storage.kraft_configs import find_metadata_dir, read_kraft_configs

from retention_support import (config_record, metadata_batches, remove_topic_record,
                               topic_record)

FULL_LOGS = ["ksql-kraft-2023", "airquality-kraft", "kraft3-cluster/kafka1",
             "kraft3-cluster/kafka2", "kraft3-cluster/kafka3"]


def dumped(cli, path: Path):
    """``(offset, type, data)`` of every metadata record, as dump-segment decodes it."""
    done = cli("dump-segment", "--cluster-metadata-decoder", "-o", "ndjson", path)
    assert done.code == 0, done.err
    for line in done.lines:
        for record in json.loads(line).get("records", []):
            value = record.get("value")
            if isinstance(value, dict):
                yield record["offset"], value["type"], value["data"]


def replay_naively(records) -> tuple[dict, dict]:
    """Last write wins, in the order given: the oracle."""
    topics: dict = {}
    brokers: dict = {}
    names: dict = {}
    for _, kind, data in records:
        if kind == "TOPIC_RECORD":
            names[data["topicId"]] = data["name"]
        elif kind == "REMOVE_TOPIC_RECORD":
            topics.pop(names.pop(data["topicId"], None), None)
        elif kind == "CONFIG_RECORD" and data["resourceType"] in (2, 4):
            target = topics if data["resourceType"] == 2 else brokers
            configs = target.setdefault(data["resourceName"], {})
            if data["value"] is None:
                configs.pop(data["name"], None)
            else:
                configs[data["name"]] = data["value"]
    return topics, brokers


def values(configs: dict) -> dict:
    return {resource: {n: e.value for n, e in c.items()} for resource, c in configs.items() if c}


@pytest.mark.parametrize("name", FULL_LOGS)
def test_snapshot_and_tail_replay_equals_the_whole_log_dumped(corpus, cli, name):
    """These dirs keep their metadata log from offset 0: replaying all of it as dumped must
    give what the latest snapshot plus the records after it give."""
    metadata = corpus / name / "__cluster_metadata-0"
    topics, brokers = replay_naively(dumped(cli, metadata / "00000000000000000000.log"))
    state = read_kraft_configs(metadata)
    assert values(state.topics) == {t: c for t, c in topics.items() if c}
    assert values(state.brokers) == {b: c for b, c in brokers.items() if c}
    assert state.notes == []
    assert values(state.topics)["__consumer_offsets"] == {
        "compression.type": "producer", "cleanup.policy": "compact", "segment.bytes": "104857600"}


def test_only_the_latest_snapshot_when_the_log_is_gone(corpus, cli):
    metadata = corpus / "stocksys-kraft" / "__cluster_metadata-0"
    latest = metadata / "00000000000000039002-0000000004.checkpoint"
    topics, _ = replay_naively(dumped(cli, latest))
    state = read_kraft_configs(metadata)
    assert state.snapshot == str(latest)
    assert values(state.topics) == {t: c for t, c in topics.items() if c}


def test_ksql_values_and_where_they_come_from(corpus):
    state = read_kraft_configs(corpus / "ksql-kraft-2023" / "__cluster_metadata-0")
    assert state.snapshot.endswith("00000000000000014707-0000000001.checkpoint")
    command = state.topics["_confluent-ksql-default__command_topic"]
    assert command["retention.ms"].value == "-1"
    assert command["retention.ms"].origin == ("__cluster_metadata-0/"
                                              "00000000000000014707-0000000001.checkpoint "
                                              "offset 152")
    locations = state.topics["locations"]  # created after the snapshot
    assert (locations["retention.ms"].value, locations["cleanup.policy"].value) == (
        "604800000", "delete")
    assert locations["retention.ms"].origin == ("__cluster_metadata-0/00000000000000000000.log "
                                                "offset 14784")
    assert state.topic_names["tf6CnK1HSDernPms-o05Xg"] == "CURRENTLOCATION"


def write_metadata(root: Path, log: list[bytes], snapshot: tuple[int, list[bytes]] | None = None,
                   ) -> Path:
    metadata = root / "__cluster_metadata-0"
    metadata.mkdir(parents=True)
    (metadata / "00000000000000000000.log").write_bytes(metadata_batches(log))
    if snapshot is not None:
        end, values_ = snapshot
        (metadata / f"{end:020d}-{1:010d}.checkpoint").write_bytes(metadata_batches(values_))
    return metadata


TOPIC_ID = bytes(range(16))


def test_broker_configs_deletes_and_removed_topics(tmp_path):
    metadata = write_metadata(tmp_path, [
        topic_record("orders", TOPIC_ID),
        config_record(2, "orders", "retention.ms", "1000"),
        config_record(2, "orders", "retention.bytes", "5"),
        config_record(4, "", "log.retention.hours", "1"),
        config_record(4, "7", "log.retention.ms", "2000"),
        config_record(2, "orders", "retention.bytes", None),  # a null value deletes
        config_record(4, "", "log.retention.hours", "2"),  # last write wins
        config_record(2, "gone", "retention.ms", "1"),
        topic_record("gone", b"\x01" * 16),
        remove_topic_record(b"\x01" * 16),
        config_record(8, "client", "consumer_byte_rate", "1"),  # a quota: not a log config
    ])
    state = read_kraft_configs(metadata)
    assert values(state.topics) == {"orders": {"retention.ms": "1000"}}
    assert values(state.brokers) == {"": {"log.retention.hours": "2"},
                                      "7": {"log.retention.ms": "2000"}}
    assert state.topics["orders"]["retention.ms"].origin.endswith(".log offset 1")
    assert find_metadata_dir(tmp_path) == str(metadata)


def test_the_snapshot_replaces_the_records_below_its_end_offset(tmp_path):
    """Records 0..2 are in the snapshot's past (ending at 3): the snapshot's state wins over
    them; records from offset 3 on are replayed over it."""
    metadata = write_metadata(
        tmp_path,
        [config_record(2, "t", "retention.ms", "1"), config_record(2, "t", "segment.ms", "2"),
         config_record(2, "t", "retention.bytes", "3"), config_record(2, "t", "segment.ms", "4")],
        snapshot=(3, [config_record(2, "t", "retention.ms", "10"),
                      config_record(2, "t", "retention.bytes", "30")]))
    state = read_kraft_configs(metadata)
    assert values(state.topics) == {"t": {"retention.ms": "10", "retention.bytes": "30",
                                          "segment.ms": "4"}}
    assert state.snapshot.endswith("00000000000000000003-0000000001.checkpoint")


def test_a_record_that_does_not_decode_is_skipped_with_a_note(tmp_path):
    bad = config_record(2, "t", "retention.ms", "1")[:-3]
    metadata = write_metadata(tmp_path, [bad, config_record(2, "t", "segment.ms", "2")])
    state = read_kraft_configs(metadata)
    assert values(state.topics) == {"t": {"segment.ms": "2"}}
    assert len(state.notes) == 1 and "offset 0 skipped" in state.notes[0]
