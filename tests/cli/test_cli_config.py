"""``pylogctl config``: the effective configuration per topic and the source of each value."""

from __future__ import annotations

import json
from pathlib import Path

from rebuild_index_support import lock_held


def rows(out: str) -> dict[str, list[str]]:
    """NAME -> [VALUE, SOURCE, ORIGIN...] from the plain text listing."""
    found = {}
    for line in out.splitlines():
        if line.startswith("  ") and not line.strip().startswith("NAME"):
            name, *rest = line.split()
            found[name] = rest
    return found


def test_text_lists_every_config_with_its_source(cli, corpus):
    done = cli("config", corpus / "ksql-kraft-2023", "--topic", "locations")
    assert done.code == 0, done.err
    assert done.lines[0] == f"locations ({corpus / 'ksql-kraft-2023'}, partition 0)"
    assert done.lines[1].split() == ["NAME", "VALUE", "SOURCE", "ORIGIN"]
    found = rows(done.out)
    assert found["retention.ms"] == ["604800000", "kraft-topic",
                                     "__cluster_metadata-0/00000000000000000000.log", "offset",
                                     "14784"]
    assert found["retention.bytes"] == ["-1", "default", "-"]
    assert len(found) == 37  # every topic config Kafka 4.4 describes


def test_json_with_command_line_and_file_sources(cli, corpus, tmp_path):
    config_file = tmp_path / "server.properties"
    config_file.write_text("broker.id=0\nlog.retention.hours=1\nsegment.bytes=1048576\n")
    done = cli("config", corpus / "ksql-kraft-2023", "--topic", "_schemas", "--topic",
               "default_ksql_processing_log", "--config", "retention.bytes=100",
               "--config-file", config_file, "-o", "json")
    assert done.code == 0, done.err
    sections = json.loads(done.out)
    assert [s["topic"] for s in sections] == ["_schemas", "default_ksql_processing_log"]
    configs = {c["name"]: c for c in sections[1]["configs"]}
    assert configs["retention.bytes"]["source"] == "command-line"
    assert (configs["retention.ms"]["value"], configs["retention.ms"]["synonym"]) == (
        "3600000", "log.retention.hours")
    assert configs["retention.ms"]["origin"] == f"{config_file} line 2"
    assert configs["segment.bytes"]["source"] == "config-file"
    schemas = {c["name"]: c["value"] for c in sections[0]["configs"]}
    assert schemas["cleanup.policy"] == "compact"
    assert "1 names that are neither" in done.err  # broker.id


def test_one_section_per_broker_of_a_cluster_copy(cli, corpus):
    done = cli("config", corpus / "kraft3-cluster", "--topic", "__consumer_offsets", "-o",
               "ndjson")
    assert done.code == 0, done.err
    items = [json.loads(line) for line in done.lines]
    assert {i["name"] for i in items if i["source"] == "kraft-topic"} == {
        "cleanup.policy", "compression.type", "segment.bytes"}
    text = cli("config", corpus / "kraft3-cluster", "--topic", "__consumer_offsets")
    titles = [line for line in text.lines if line.startswith("__consumer_offsets (")]
    assert [t.split()[1] for t in titles] == [f"({corpus / 'kraft3-cluster' / b}," for b in
                                              ("kafka1", "kafka2", "kafka3")]


def test_zookeeper_dirs_say_configs_are_not_on_disk(cli, corpus):
    done = cli("config", corpus / "bheem-cities" / "cities-0")
    assert done.code == 0
    assert done.lines[0].startswith("cities (")
    assert "no __cluster_metadata log" in done.err


def test_an_invalid_value_is_a_usage_error(cli, corpus):
    done = cli("config", corpus / "bheem-cities", "--config", "segment.bytes=1", "--topic",
               "cities")
    assert done.code == 2
    assert "segment.bytes: Value must be at least 14 (from command-line, --config)" in done.err
    unknown = cli("config", corpus / "bheem-cities", "--config", "nope=1")
    assert unknown.code == 2 and "Unknown topic config name: nope" in unknown.err


def test_a_locked_log_dir_is_refused(cli, tmp_path: Path):
    log_dir = tmp_path / "logs"
    (log_dir / "t-0").mkdir(parents=True)
    (log_dir / "t-0" / "00000000000000000000.log").write_bytes(b"")
    with lock_held(log_dir):
        done = cli("config", log_dir)
    assert done.code == 4 and done.out == ""
