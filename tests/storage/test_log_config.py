"""LogConfig: Kafka's topic config names, defaults and ranges; LogOffsetMetadata comparisons."""

from __future__ import annotations

import pytest

from pylogctl.errors import UsageError
from pylogctl.storage.log_config import (LOG_CONFIG_NAMES, OFFSETS_TOPIC_CONFIG,
                                         TRANSACTION_STATE_TOPIC_CONFIG, LogConfig)
from pylogctl.storage.topic_config_def import ConfigError, validate_topic_configs
from pylogctl.storage.log_offset_metadata import LogOffsetMetadata


def test_defaults_are_kafkas():
    props = LogConfig().to_properties()
    assert {k: props[k] for k in ("segment.bytes", "segment.ms", "segment.jitter.ms",
                                  "segment.index.bytes", "index.interval.bytes", "preallocate",
                                  "retention.ms", "retention.bytes", "cleanup.policy",
                                  "max.message.bytes", "file.delete.delay.ms")} == {
        "segment.bytes": "1073741824", "segment.ms": "604800000", "segment.jitter.ms": "0",
        "segment.index.bytes": "10485760", "index.interval.bytes": "4096",
        "preallocate": "false", "retention.ms": "604800000", "retention.bytes": "-1",
        "cleanup.policy": "delete", "max.message.bytes": "1048588",
        "file.delete.delay.ms": "60000"}
    assert LogConfig.from_properties(props) == LogConfig()


def test_from_properties_parses_kafka_names():
    config = LogConfig.from_properties({"segment.bytes": "1048576", "preallocate": "true",
                                        "cleanup.policy": "compact, delete",
                                        "min.cleanable.dirty.ratio": "0.25",
                                        "max.compaction.lag.ms": 60000, "segment.ms": "3600000"})
    assert config.segment_bytes == 1048576 and config.preallocate and config.compact
    assert config.delete and config.min_cleanable_dirty_ratio == 0.25
    assert config.init_file_size == 1048576
    assert config.max_segment_ms() == 60000  # a compacted log rolls within its max lag
    assert LogConfig(segment_ms=100).max_segment_ms() == 100


@pytest.mark.parametrize("props, message", [
    ({"segment.bytes": "13"}, "segment.bytes: Value must be at least 14"),
    ({"segment.index.bytes": "3"}, "segment.index.bytes: Value must be at least 4"),
    ({"retention.ms": "-2"}, "retention.ms: Value must be at least -1"),
    ({"cleanup.policy": "forever"}, "cleanup.policy"),
    ({"preallocate": "yes"}, "Invalid value yes for configuration preallocate"),
    ({"segment.byte": "1"}, "Unknown topic config name: segment.byte"),
])
def test_invalid_configs_are_refused(props, message):
    with pytest.raises(UsageError, match=message):
        LogConfig.from_properties(props)


PROBES = ["-2", "-1", "0", "1", "13", "14", "0.5", "1.5", "2147483648", "9223372036854775808",
          "abc", "", " 7 ", "+5", "1_000", "true", "yes", "delete", "compact,delete",
          "compact,", "delete,delete", "producer", "zstd", "LZ4", "CreateTime", "inf"]


@pytest.mark.parametrize("name", LOG_CONFIG_NAMES)
def test_log_config_parses_and_validates_as_the_topic_config_definition(name):
    """LogConfig takes what Kafka's ConfigDef takes (one parser, one set of validators), with
    Kafka's message for what it refuses."""
    for probe in PROBES:
        try:
            validate_topic_configs({name: probe})
            expected = None
        except ConfigError as exc:
            expected = exc.message
        try:
            LogConfig.from_properties({name: probe})
            got = None
        except UsageError as exc:
            got = exc.message
        assert got == expected, (name, probe)


def test_internal_topics_are_created_as_kafkas_coordinators_create_them():
    for config in (OFFSETS_TOPIC_CONFIG, TRANSACTION_STATE_TOPIC_CONFIG):
        assert config.compact and not config.delete and config.segment_bytes == 100 * 1024 * 1024
    assert OFFSETS_TOPIC_CONFIG.compression_type == "producer"
    assert TRANSACTION_STATE_TOPIC_CONFIG.compression_type == "uncompressed"


def test_log_offset_metadata_with_and_without_a_position():
    a = LogOffsetMetadata(10, 0, 500)
    only = LogOffsetMetadata(40)
    assert only.message_offset_only and not a.message_offset_only
    assert str(a) == "(offset=10, segment=[0:500])"
