"""A topic's effective configuration: the sources in order of precedence, broker-level names
mapped onto topic names as Kafka maps them, and the source of every value."""

from __future__ import annotations

from pathlib import Path

import pytest

from pylogctl.errors import UsageError
from pylogctl.storage.topic_config import (COMMAND_LINE, COMMAND_LINE_BROKER, CONFIG_FILE,
                                           CONFIG_FILE_BROKER, DEFAULT, INTERNAL_TOPIC_DEFAULT,
                                           KRAFT_BROKER, KRAFT_CLUSTER_DEFAULT, KRAFT_TOPIC,
                                           ConfigSources, parse_overrides)
from pylogctl.tools.config import ConfigOptions, TopicConfigs
from pylogctl.storage.log_dir import LogDir

from retention_support import config_record, metadata_batches


def kraft_log_dir(root: Path, records: list[bytes], node_id: str = "1",
                  cluster: str = "c1") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "meta.properties").write_text(f"version=1\nnode.id={node_id}\ncluster.id={cluster}\n")
    metadata = root / "__cluster_metadata-0"
    metadata.mkdir()
    (metadata / "00000000000000000000.log").write_bytes(metadata_batches(records))
    return root


ALL_LAYERS = [config_record(2, "t", "retention.ms", "3"),
              config_record(4, "1", "log.retention.ms", "4"),
              config_record(4, "", "log.retention.ms", "5")]


@pytest.mark.parametrize("layers, expected", [
    (dict(cli="1", file="2", kraft=ALL_LAYERS), ("1", COMMAND_LINE)),
    (dict(file="2", kraft=ALL_LAYERS), ("2", CONFIG_FILE)),
    (dict(kraft=ALL_LAYERS, cli_broker="6", file_broker="7"), ("3", KRAFT_TOPIC)),
    (dict(kraft=ALL_LAYERS[1:], cli_broker="6", file_broker="7"), ("4", KRAFT_BROKER)),
    (dict(kraft=ALL_LAYERS[2:], cli_broker="6", file_broker="7"), ("5", KRAFT_CLUSTER_DEFAULT)),
    (dict(cli_broker="6", file_broker="7"), ("6", COMMAND_LINE_BROKER)),
    (dict(file_broker="7"), ("7", CONFIG_FILE_BROKER)),
    (dict(), ("604800000", DEFAULT)),
])
def test_sources_in_order_of_precedence(tmp_path, layers, expected):
    log_dir = kraft_log_dir(tmp_path / "logs", layers.get("kraft", []))
    overrides = {}
    if "cli" in layers:
        overrides["retention.ms"] = layers["cli"]
    if "cli_broker" in layers:
        overrides["log.retention.ms"] = layers["cli_broker"]
    lines = []
    if "file" in layers:
        lines.append(f"retention.ms={layers['file']}")
    if "file_broker" in layers:
        lines.append(f"log.retention.ms={layers['file_broker']}")
    config_file = tmp_path / "server.properties"
    config_file.write_text("\n".join(["# a broker's file", "listeners=PLAINTEXT://:9092",
                                      *lines]) + "\n")
    topic = ConfigSources.for_log_dir(log_dir, overrides, config_file).topic("t")
    v = topic.get("retention.ms")
    assert (v.value, v.source) == expected
    assert topic.log_config.retention_ms == int(expected[0])


def test_broker_names_merge_by_name_then_ms_beats_minutes_beats_hours(tmp_path):
    """Kafka merges dynamic over static configs name by name, then reads log.retention.ms
    before .minutes before .hours: a static ms beats a dynamic hours."""
    log_dir = kraft_log_dir(tmp_path / "logs", [config_record(4, "", "log.retention.hours", "1"),
                                                config_record(4, "", "log.roll.hours", "2")])
    config_file = tmp_path / "server.properties"
    config_file.write_text("log.retention.ms=7\nlog.retention.minutes=3\nlog.roll.hours=5\n"
                           "log.segment.bytes=1048576\nlog.cleanup.policy=compact,delete\n")
    topic = ConfigSources.for_log_dir(log_dir, {}, config_file).topic("t")
    retention = topic.get("retention.ms")
    assert (retention.value, retention.source, retention.synonym) == (
        "7", CONFIG_FILE_BROKER, "log.retention.ms")
    assert retention.origin == f"{config_file} line 1"
    roll = topic.get("segment.ms")
    assert (roll.value, roll.source, roll.synonym) == ("7200000", KRAFT_CLUSTER_DEFAULT,
                                                       "log.roll.hours")
    assert topic.log_config.segment_bytes == 1048576 and topic.log_config.compact


def test_minutes_and_hours_convert_to_ms(tmp_path):
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    sources = ConfigSources.for_log_dir(log_dir, {"log.retention.minutes": "3"})
    assert sources.topic("t").get("retention.ms").value == "180000"
    sources = ConfigSources.for_log_dir(log_dir, {"log.retention.hours": "2"})
    assert sources.topic("t").log_config.retention_ms == 7_200_000


def test_a_broker_name_never_overrides_a_topic_config(corpus, tmp_path):
    """ksqlDB's command topic keeps its data forever (retention.ms=-1 in the metadata log): a
    server.properties with log.retention.hours=1 must not change that."""
    config_file = tmp_path / "server.properties"
    config_file.write_text("log.retention.hours=1\n")
    sources = ConfigSources.for_log_dir(corpus / "ksql-kraft-2023", {}, config_file)
    command = sources.topic("_confluent-ksql-default__command_topic")
    assert (command.get("retention.ms").value, command.get("retention.ms").source) == (
        "-1", KRAFT_TOPIC)
    other = sources.topic("locations")  # has its own retention.ms too
    assert other.get("retention.ms").value == "604800000"
    no_override = sources.topic("default_ksql_processing_log")
    assert (no_override.get("retention.ms").value, no_override.get("retention.ms").source) == (
        "3600000", CONFIG_FILE_BROKER)
    extra = command.get("min.insync.replicas")  # not a LogConfig field: shown, kept as text
    assert (extra.value, extra.source) == ("1", KRAFT_TOPIC)


def test_internal_topics_are_compacted_when_nothing_on_disk_says_so(corpus):
    sources = ConfigSources.for_log_dir(corpus / "bheem-cities")  # ZooKeeper: nothing on disk
    offsets = sources.topic("__consumer_offsets")
    assert (offsets.get("cleanup.policy").value, offsets.get("cleanup.policy").source) == (
        "compact", INTERNAL_TOPIC_DEFAULT)
    assert not offsets.log_config.delete
    assert sources.topic("cities").log_config.delete
    assert any("no __cluster_metadata log" in n for n in sources.notes)


def test_command_line_names_must_be_topic_configs_or_broker_synonyms(tmp_path):
    with pytest.raises(UsageError, match="Unknown topic config name: retention.mss"):
        ConfigSources.for_log_dir(tmp_path, {"retention.mss": "1"})
    with pytest.raises(UsageError, match="NAME=VALUE"):
        parse_overrides(["retention.ms"])
    assert parse_overrides(["a=1", "a = 2", "b=x=y"]) == {"a": "2", "b": "x=y"}


def test_file_names_that_are_not_topic_configs_are_ignored_with_a_note(tmp_path):
    config_file = tmp_path / "server.properties"
    config_file.write_text("node.id=1\nlisteners=PLAINTEXT://:9092\nretention.bytes=10\n")
    sources = ConfigSources.for_log_dir(tmp_path, {}, config_file)
    assert sources.topic("t").log_config.retention_bytes == 10
    assert any("2 names" in n and "node.id" in n for n in sources.notes)


def test_an_invalid_value_names_its_source(tmp_path):
    config_file = tmp_path / "topic.properties"
    config_file.write_text("# comment\nsegment.bytes=5\n")
    sources = ConfigSources.for_log_dir(tmp_path, {}, config_file)
    with pytest.raises(UsageError, match=rf"segment.bytes: Value must be at least 14 \(from "
                                         rf"config-file, {config_file} line 2\)"):
        sources.topic("t")
    with pytest.raises(UsageError, match="log.retention.hours"):
        ConfigSources.for_log_dir(tmp_path, {"log.retention.hours": "x"}).topic("t")


def test_a_log_dir_without_a_metadata_log_uses_another_of_the_same_cluster(tmp_path):
    with_log = kraft_log_dir(tmp_path / "a", [config_record(2, "t", "retention.ms", "9")])
    other = tmp_path / "b"
    other.mkdir()
    (other / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=c1\n")
    stranger = tmp_path / "c"
    stranger.mkdir()
    (stranger / "meta.properties").write_text("version=1\nnode.id=2\ncluster.id=c2\n")
    configs = TopicConfigs([str(with_log), str(other), str(stranger)], ConfigOptions())
    assert configs.sources(LogDir(other)).topic("t").get("retention.ms").value == "9"
    assert configs.sources(LogDir(stranger)).topic("t").get("retention.ms").source == DEFAULT


def test_broker_settings_for_the_cleaner_come_from_the_strongest_source(tmp_path):
    log_dir = kraft_log_dir(tmp_path / "logs",
                            [config_record(4, "", "log.cleaner.dedupe.buffer.size", "1000"),
                             config_record(4, "1", "log.cleaner.threads", "2")])
    config_file = tmp_path / "server.properties"
    config_file.write_text("log.cleaner.dedupe.buffer.size=5\nlog.cleaner.io.buffer.size=7\n")
    sources = ConfigSources.for_log_dir(log_dir, {"log.cleaner.io.buffer.size": "8"},
                                        config_file)
    found = sources.broker_settings(["log.cleaner.dedupe.buffer.size", "log.cleaner.threads",
                                     "log.cleaner.io.buffer.size", "log.cleaner.backoff.ms"])
    assert {n: (v.value, v.source) for n, v in found.items()} == {
        "log.cleaner.dedupe.buffer.size": ("1000", KRAFT_CLUSTER_DEFAULT),
        "log.cleaner.threads": ("2", KRAFT_BROKER),
        "log.cleaner.io.buffer.size": ("8", COMMAND_LINE_BROKER)}
