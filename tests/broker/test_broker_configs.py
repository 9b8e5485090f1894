"""Topic configs through real admin clients: CreateTopics with configs (validated as Kafka
does), DescribeConfigs (values, sources, synonyms), IncrementalAlterConfigs and AlterConfigs,
applied to the live logs, kept across a restart in ``__cluster_metadata-0`` and reported by the
offline ``pylogctl config`` on the stopped log dir."""

from __future__ import annotations

import json
import socket
import struct

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   NewTopic)

from broker_support import BrokerProcess, BrokerThread
from pylogctl.format.metadata_records import decode_metadata_record
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.kraft_configs import read_kraft_configs
from pylogctl.storage.log_config import LogConfig

TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
CONFIGS = {"retention.ms": "3600000", "cleanup.policy": "compact,delete",
           "segment.bytes": "1048576", "min.insync.replicas": "1"}


def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap})


def create(client: AdminClient, name: str, configs: dict[str, str], partitions: int = 1
           ) -> None:
    client.create_topics([NewTopic(name, partitions, 1, config=configs)])[name].result(30)


def create_error(client: AdminClient, name: str, configs: dict[str, str]) -> KafkaError:
    with pytest.raises(KafkaException) as info:
        create(client, name, configs)
    return info.value.args[0]


def describe(client: AdminClient, name: str, kind: str = "topic") -> dict[str, ConfigEntry]:
    resource = ConfigResource(kind, name)
    return client.describe_configs([resource])[resource].result(30)


def alter(client: AdminClient, name: str, *ops: tuple[str, str | None, AlterConfigOpType]
          ) -> None:
    resource = ConfigResource("topic", name, incremental_configs=[
        ConfigEntry(n, v, incremental_operation=op) for n, v, op in ops])
    client.incremental_alter_configs([resource])[resource].result(30)


def values(entries: dict[str, ConfigEntry], *names: str) -> dict[str, tuple[str, int]]:
    return {n: (entries[n].value, entries[n].source) for n in names}


def offline_config(cli, log_dir, topic: str) -> dict[str, tuple[str, str]]:
    r = cli("config", log_dir, "--topic", topic, "-o", "json")
    assert r.code == 0, r.err
    [section] = [s for s in json.loads(r.out) if s["topic"] == topic]
    return {c["name"]: (c["value"], c["source"]) for c in section["configs"]}


def test_create_describe_alter_restart_and_offline_config(tmp_path, cli):
    log_dir = tmp_path / "logs"
    with BrokerThread(log_dir) as broker:
        client = admin(broker.bootstrap)
        create(client, "orders", CONFIGS, partitions=2)
        entries = describe(client, "orders")
        assert values(entries, *CONFIGS, "segment.ms") == {
            "retention.ms": ("3600000", TOPIC_CONFIG),
            "cleanup.policy": ("compact,delete", TOPIC_CONFIG),
            "segment.bytes": ("1048576", TOPIC_CONFIG),
            "min.insync.replicas": ("1", TOPIC_CONFIG),
            "segment.ms": ("604800000", DEFAULT_CONFIG)}
        assert not entries["retention.ms"].is_read_only
        # no log.retention.hours=168: Kafka drops the synonyms before the first one named
        # log.retention.ms (ConfigHelper.configSynonyms), and no log.retention.ms is set
        assert {n: e.value for n, e in entries["retention.ms"].synonyms.items()} == \
            {"retention.ms": "3600000"}
        config = broker.call(lambda: broker.broker.log_manager.logs[("orders", 1)].log.config)
        assert (config.retention_ms, config.segment_bytes, config.cleanup_policy) == \
            (3_600_000, 1_048_576, ("compact", "delete"))

        alter(client, "orders", ("retention.ms", "60000", AlterConfigOpType.SET),
              ("min.insync.replicas", None, AlterConfigOpType.DELETE),
              ("cleanup.policy", "delete", AlterConfigOpType.SUBTRACT))
        entries = describe(client, "orders")
        assert values(entries, "retention.ms", "min.insync.replicas", "cleanup.policy") == {
            "retention.ms": ("60000", TOPIC_CONFIG), "min.insync.replicas": ("1", DEFAULT_CONFIG),
            "cleanup.policy": ("compact", TOPIC_CONFIG)}
        live = broker.call(lambda: broker.broker.log_manager.logs[("orders", 0)].log.config)
        assert (live.retention_ms, live.cleanup_policy) == (60_000, ("compact",))

    with BrokerThread(log_dir) as broker:  # the configs come back from __cluster_metadata
        client = admin(broker.bootstrap)
        after = describe(client, "orders")
        assert values(after, "retention.ms", "cleanup.policy", "segment.bytes") == {
            "retention.ms": ("60000", TOPIC_CONFIG), "cleanup.policy": ("compact", TOPIC_CONFIG),
            "segment.bytes": ("1048576", TOPIC_CONFIG)}
        loaded = broker.call(lambda: broker.broker.log_manager.logs[("orders", 0)].log.config)
        assert (loaded.retention_ms, loaded.segment_bytes) == (60_000, 1_048_576)

    offline = offline_config(cli, log_dir, "orders")
    for name in ("retention.ms", "cleanup.policy", "segment.bytes"):
        assert offline[name] == (after[name].value, "kraft-topic")
    assert offline["min.insync.replicas"] == ("1", "default")  # deleted: back to the default
    r = cli("recover", "--check", log_dir)
    assert r.code == 0, r.out + r.err
    r = cli("dump-segment", *sorted(str(p) for p in log_dir.glob("*/*.log")))
    assert r.code == 0, r.err
    assert "isvalid: false" not in r.out


@pytest.mark.parametrize("configs, message", [
    ({"retention.ms": "soon"},
     "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
    ({"segment.bytes": "10"},
     "Invalid value 10 for configuration segment.bytes: Value must be at least 14"),
    ({"cleanup.policy": "compact,shred"},
     "Invalid value shred for configuration cleanup.policy: String must be one of: compact, "
     "delete"),
    ({"min.cleanable.dirty.ratio": "1.5"},
     "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more "
     "than 1"),
    ({"preallocate": "yes"},
     "Invalid value yes for configuration preallocate: Expected value to be either true or "
     "false"),
    ({"retention.hours": "1"}, "Unknown topic config name: retention.hours"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
     "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
])
def test_invalid_configs_are_refused_and_nothing_is_created(tmp_path, configs, message):
    with BrokerThread(tmp_path / "logs") as broker:
        client = admin(broker.bootstrap)
        error = create_error(client, "bad", configs)
        assert (error.code(), error.str()) == (KafkaError.INVALID_CONFIG, message)
        assert not list((tmp_path / "logs").glob("bad-*"))
        create(client, "good", {})
        resource = ConfigResource("topic", "good", incremental_configs=[
            ConfigEntry(n, v, incremental_operation=AlterConfigOpType.SET)
            for n, v in configs.items()])
        with pytest.raises(KafkaException) as info:
            client.incremental_alter_configs([resource])[resource].result(30)
        assert info.value.args[0].code() == KafkaError.INVALID_CONFIG
        assert describe(client, "good")["retention.ms"].source == DEFAULT_CONFIG


def test_unknown_topics_and_append_to_a_non_list(tmp_path):
    with BrokerThread(tmp_path / "logs", auto_create_topics=False) as broker:
        client = admin(broker.bootstrap)
        with pytest.raises(KafkaException) as info:
            describe(client, "missing")
        assert info.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
        with pytest.raises(KafkaException) as info:
            alter(client, "missing", ("retention.ms", "1", AlterConfigOpType.SET))
        assert info.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
        create(client, "t", {})
        with pytest.raises(KafkaException) as info:
            alter(client, "t", ("retention.ms", "1", AlterConfigOpType.APPEND))
        assert info.value.args[0].str() == \
            "Can't APPEND to key retention.ms because its type is not LIST."
        alter(client, "t", ("cleanup.policy", "compact", AlterConfigOpType.APPEND))
        assert describe(client, "t")["cleanup.policy"].value == "delete,compact"


def test_static_broker_defaults_and_the_broker_resource(tmp_path):
    defaults = LogConfig(retention_ms=120_000)
    with BrokerThread(tmp_path / "logs", log_config=defaults) as broker:
        client = admin(broker.bootstrap)
        create(client, "t", {})
        entries = describe(client, "t")
        assert values(entries, "retention.ms") == {"retention.ms": ("120000", STATIC_BROKER_CONFIG)}
        assert list(entries["retention.ms"].synonyms) == ["log.retention.ms",
                                                          "log.retention.hours"]
        assert broker.call(lambda: broker.broker.topic_config("t").retention_ms) == 120_000
        brokers = describe(client, "1", "broker")
        assert (brokers["log.retention.ms"].value, brokers["log.retention.ms"].source) == \
            ("120000", STATIC_BROKER_CONFIG)
        assert brokers["node.id"].value == "1" and brokers["node.id"].is_read_only
        assert brokers["num.partitions"].source == DEFAULT_CONFIG


def test_configuration_keys_filter(tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType

    with BrokerThread(tmp_path / "logs") as broker:
        creator = admin(broker.bootstrap)
        create(creator, "t", {"retention.ms": "5000"})
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        found = client.describe_configs([KConfigResource(
            ConfigResourceType.TOPIC, "t", {"retention.ms": None, "segment.ms": None})],
            config_filter="all")["topic"]["t"]
        assert {n: (c["value"], c["config_source"], c["config_type"]) for n, c in found.items()} \
            == {"retention.ms": ("5000", "DYNAMIC_TOPIC_CONFIG", "LONG"),
                "segment.ms": ("604800000", "DEFAULT_CONFIG", "LONG")}
        # the client's default filter keeps what the topic sets: the sources tell it
        assert list(client.describe_configs([KConfigResource(ConfigResourceType.TOPIC, "t")])
                    ["topic"]["t"]) == ["retention.ms"]
        client.close()


def _string(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def alter_configs_v0(bootstrap: str, topic: str, configs: dict[str, str]) -> tuple[int, str]:
    """A raw AlterConfigs v0 request (clients emulate incremental updates over it by sending
    the current configs too); returns the resource's (error code, message)."""
    body = struct.pack(">ib", 1, 2) + _string(topic) + struct.pack(">i", len(configs))
    body += b"".join(_string(n) + _string(v) for n, v in configs.items()) + b"\x00"
    header = struct.pack(">hhi", 33, 0, 7) + _string("test")
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(header + body)) + header + body)
        size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        frame = sock.recv(size, socket.MSG_WAITALL)
    correlation, _, count, code, length = struct.unpack(">iiihh", frame[:16])
    assert (correlation, count) == (7, 1)
    return code, frame[16:16 + length].decode() if length >= 0 else ""


def test_alter_configs_replaces_the_whole_set(tmp_path, cli):
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType

    log_dir = tmp_path / "logs"
    with BrokerThread(log_dir) as broker:
        creator = admin(broker.bootstrap)
        create(creator, "t", {"retention.ms": "5000", "segment.ms": "60000"})
        assert alter_configs_v0(broker.bootstrap, "t", {"retention.bytes": "1000000"}) == (0, "")
        entries = describe(creator, "t")
        assert values(entries, "retention.bytes", "retention.ms", "segment.ms") == {
            "retention.bytes": ("1000000", TOPIC_CONFIG),
            "retention.ms": ("604800000", DEFAULT_CONFIG),
            "segment.ms": ("604800000", DEFAULT_CONFIG)}
        assert alter_configs_v0(broker.bootstrap, "t", {"segment.ms": "0"}) == (
            40, "Invalid value 0 for configuration segment.ms: Value must be at least 1")
        # kafka-python over AlterConfigs: it sends the topic's current configs along
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        client.alter_configs([KConfigResource(ConfigResourceType.TOPIC, "t",
                                              {"segment.ms": "120000"})], incremental=False)
        client.close()
        assert values(describe(creator, "t"), "retention.bytes", "segment.ms") == {
            "retention.bytes": ("1000000", TOPIC_CONFIG), "segment.ms": ("120000", TOPIC_CONFIG)}
    offline = offline_config(cli, log_dir, "t")
    assert offline["retention.bytes"] == ("1000000", "kraft-topic")
    assert offline["segment.ms"] == ("120000", "kraft-topic")
    assert offline["retention.ms"] == ("604800000", "default")


def test_deleted_topic_loses_its_configs_and_every_topic_is_recorded(tmp_path):
    log_dir = tmp_path / "logs"
    with BrokerThread(log_dir) as broker:
        client = admin(broker.bootstrap)
        create(client, "t", {"retention.ms": "5000"})
        client.delete_topics(["t"])["t"].result(30)
        create(client, "t", {})
        assert describe(client, "t")["retention.ms"].source == DEFAULT_CONFIG
        from confluent_kafka import Producer
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce("auto", b"v")  # auto-created: recorded at the next sync
        assert producer.flush(30) == 0
    replay = read_kraft_configs(log_dir / "__cluster_metadata-0")
    assert sorted(replay.topic_names.values()) == ["auto", "t"]
    assert "t" not in replay.topics
    types = []
    for path in sorted((log_dir / "__cluster_metadata-0").glob("*.log")):
        with FileRecords(str(path)) as records:
            types += [decode_metadata_record(r.value).type_name
                      for b in records.batches() if not b.is_control for r in b.records()]
    assert types.count("REMOVE_TOPIC_RECORD") == 1
    assert types.count("TOPIC_RECORD") == 3


def test_cli_options_reach_the_broker_configs(tmp_path):
    with BrokerProcess(tmp_path / "logs", "--log-retention-ms", "90000",
                       "--log-segment-bytes", "2097152", "--transaction-max-timeout-ms",
                       "60000", "--transaction-state-partitions", "3") as broker:
        client = admin(broker.bootstrap)
        brokers = describe(client, "1", "broker")
        assert {n: brokers[n].value for n in ("log.retention.ms", "log.segment.bytes",
                                              "transaction.max.timeout.ms",
                                              "transaction.state.log.num.partitions")} == {
            "log.retention.ms": "90000", "log.segment.bytes": "2097152",
            "transaction.max.timeout.ms": "60000", "transaction.state.log.num.partitions": "3"}
        create(client, "t", {})
        assert values(describe(client, "t"), "retention.ms", "segment.bytes") == {
            "retention.ms": ("90000", STATIC_BROKER_CONFIG),
            "segment.bytes": ("2097152", STATIC_BROKER_CONFIG)}


def test_the_metadata_log_is_not_a_topic(tmp_path):
    with BrokerThread(tmp_path / "logs") as broker:
        client = admin(broker.bootstrap)
        create(client, "t", {"retention.ms": "5000"})
        error = create_error(client, "__cluster_metadata", {})
        assert (error.code(), error.str()) == (
            KafkaError.INVALID_REQUEST,
            "Creation of internal topic __cluster_metadata is prohibited.")
        topics = client.list_topics(timeout=30).topics
        assert "__cluster_metadata" not in topics
        metadata = client.list_topics("__cluster_metadata", timeout=30).topics
        assert metadata["__cluster_metadata"].error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
