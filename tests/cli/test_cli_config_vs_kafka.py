"""Offline ``pylogctl config`` judged by Kafka's live ``kafka-configs --describe --all``.

The broker of :mod:`kafka_scenarios` had topic configs set (``kafka-configs --alter``) and broker
and cluster-default configs set dynamically, on top of its ``server.properties``. From the
stopped broker's files and that ``server.properties`` (as an operator would pass it), pylogctl
must show the configs Kafka showed while it served, each with Kafka's value.
"""

from __future__ import annotations

import json

from support import run_pylogctl as pylogctl


def kafka_values(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines()[1:]:
        name, value = line.strip().split(" sensitive=")[0].split("=", 1)
        values[name] = value
    return values


def test_topic_configs_match_kafka_live(kafka_scenario) -> None:
    theirs = kafka_values(kafka_scenario.live["configs --describe --all topics codecs"]["stdout"])
    ours = pylogctl("config", str(kafka_scenario.log_dir), "--topic", "codecs", "--config-file",
                    str(kafka_scenario.root / "broker" / "server.properties"), "-o", "json")
    assert ours.returncode == 0, ours.stderr
    shown = {c["name"]: c["value"] for c in json.loads(ours.stdout)[0]["configs"]}
    assert sorted(shown) == sorted(theirs)  # every config Kafka describes, no other
    differing = {n: (theirs.get(n), v) for n, v in shown.items() if theirs.get(n) != v}
    assert not differing, f"name: (kafka, pylogctl) {differing}"
