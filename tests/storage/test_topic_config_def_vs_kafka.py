"""pylogctl's one topic config definition judged by Kafka 4.4's own: ``LogConfig``'s ``ConfigDef``
(names in order, types, defaults as ``kafka-configs`` prints them), ``ServerTopicConfigSynonyms``
(the broker names each falls back to, with their units) and ``LogConfig.validate``'s verdict on
probe values, run in a JVM on Kafka's jars (``tests/apache_kafka/clients/TopicConfigDefs.java``).

One difference is deliberate: ``segment.bytes`` may go down to 14 bytes (Kafka's internal
minimum; Kafka 4 refuses topics below 1 MiB), so its probes between the two are left out.
"""

from __future__ import annotations

import subprocess

import pytest

from pylogctl.storage.topic_config_def import (BROKER_SYNONYMS, LEGACY_TOPIC_CONFIGS,
                                               TOPIC_CONFIG_KEYS, TYPE_NAMES, ConfigError,
                                               default_text, validate_topic_configs)

PROBES = ["-3", "-2", "-1", "0", "1", "4", "9", "10", "17", "23", "-131073", "2147483647",
          "2147483648", "9223372036854775808", "abc", "", " 7 ", "+5", "0.5", "1.5", "1e-4",
          "2.5d", "NaN", "true", "TRUE", " false ", "yes", "delete", "compact,delete",
          "delete,foo", "compact,,delete", "delete,delete", "producer", "zstd", "LZ4", "CreateTime",
          "createtime", "*", "0:1,1:2", "0:x", "*,0:1", " 0:1 , 2:3 ", "0 : 1", "*,", "0:1,,"]
# below 1 MiB, Kafka's message names its minimum, pylogctl's its own; tiered storage is off
SKIPPED = {("segment.bytes", p) for p in PROBES if p.strip().lstrip("+-").isdigit()
           and int(p) < 1048576} | {("remote.storage.enable", "true"),
                                    ("remote.storage.enable", "TRUE")}


@pytest.fixture(scope="module")
def kafka():
    from kafka_jvm import KAFKA_DIR, java_command, require_kafka

    require_kafka()
    probes = [(name, value) for name in TOPIC_CONFIG_KEYS for value in PROBES
              if (name, value) not in SKIPPED]
    out = subprocess.run(java_command(str(KAFKA_DIR / "clients" / "TopicConfigDefs.java"), []),
                         input="".join(f"{n}\t{v}\n" for n, v in probes), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    keys = [ln.split("\t")[1:] for ln in out if ln.startswith("key\t")]
    synonyms = {f[1]: tuple(f[2:]) for f in (ln.split("\t") for ln in out
                                             if ln.startswith("synonyms\t"))}
    verdicts = out[len(keys) + len(synonyms):]
    return keys, synonyms, dict(zip(probes, verdicts))


def test_topic_configs_are_kafkas_in_order_with_types_and_defaults(kafka) -> None:
    keys, _, _ = kafka
    ours = [[k.name, TYPE_NAMES[k.type], default_text(k.name)]
            for k in TOPIC_CONFIG_KEYS.values()]
    assert ours == keys


def test_broker_synonyms_are_kafkas(kafka) -> None:
    _, synonyms, _ = kafka
    units = {1: "1", 60_000: "minutes", 3_600_000: "hours"}
    ours = {name: tuple(f"{s}:{units[u]}" for s, u in syns)
            for name, syns in BROKER_SYNONYMS.items() if name not in LEGACY_TOPIC_CONFIGS}
    assert ours == synonyms


def test_values_are_validated_as_kafka_validates_them(kafka) -> None:
    _, _, verdicts = kafka
    differing = {}
    for (name, value), theirs in verdicts.items():
        try:
            validate_topic_configs({name: value})
            ours = "OK"
        except ConfigError as exc:
            ours = exc.message
        if ours != theirs:
            differing[(name, value)] = (theirs, ours)
    assert not differing, "(name, value): (kafka, pylogctl)\n" + "\n".join(
        f"{k}: {v}" for k, v in differing.items())
