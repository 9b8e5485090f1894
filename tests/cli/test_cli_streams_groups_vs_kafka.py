"""Offline ``pylogctl streams-groups`` judged by Kafka's live ``kafka-streams-groups``.

The broker of :mod:`kafka_scenarios` served two Kafka Streams applications (KIP-1071 streams
groups, two subtopologies joined by a repartition topic): ``streams-group``, run and closed
(Empty), and ``live-streams``, two stream threads (two members) still running when the broker
stopped. Kafka's tool described them live; pylogctl, reading the stopped broker's
``__consumer_offsets`` and data partitions, must print the same bytes.

``--all-groups`` describes groups in the order the broker lists them, which is not sorted;
pylogctl sorts them. So each view is compared twice: with the groups named in the broker's
order (byte for byte), and with ``--all-groups`` (the same lines).
"""

from __future__ import annotations

import pytest

from support import run_pylogctl

VIEWS = [(), ("--offsets", "--verbose"), ("--members",), ("--members", "--verbose"),
         ("--state",), ("--state", "--verbose")]


def live_order(scenario) -> list[str]:
    return scenario.live["streams-groups --list"]["stdout"].split()


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: " ".join(v) or "offsets")
def test_streams_groups_describe_matches_kafka_live(view, kafka_scenario) -> None:
    live = kafka_scenario.live[" ".join(("streams-groups --describe", *view))]
    assert live["code"] == 0, live["stderr"]
    named = [a for g in live_order(kafka_scenario) for a in ("--group", g)]
    ours = run_pylogctl("streams-groups", kafka_scenario.log_dir, "--describe", *named, *view)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == live["stdout"]
    every = run_pylogctl("streams-groups", kafka_scenario.log_dir, "--describe",
                         "--all-groups", *view)
    assert sorted(every.stdout.splitlines()) == sorted(live["stdout"].splitlines())


def test_streams_groups_offsets_is_the_default_view(kafka_scenario) -> None:
    live = kafka_scenario.live
    assert (live["streams-groups --describe"]["stdout"]
            == live["streams-groups --describe --offsets"]["stdout"])


@pytest.mark.parametrize("args", [("--list",), ("--list", "--state")], ids=" ".join)
def test_streams_groups_list_matches_kafka_live(args, kafka_scenario) -> None:
    live = kafka_scenario.live["streams-groups " + " ".join(args)]["stdout"]
    ours = run_pylogctl("streams-groups", kafka_scenario.log_dir, *args)
    assert ours.returncode == 0, ours.stderr
    head, *rows = ours.stdout.splitlines(keepends=True)
    live_head, *live_rows = live.splitlines(keepends=True)
    if args == ("--list",):
        head, live_head = "", ""
        rows, live_rows = ours.stdout.splitlines(), live.splitlines()
    assert head == live_head and sorted(rows) == sorted(live_rows)


def test_streams_groups_list_filters_by_state(kafka_scenario) -> None:
    ours = run_pylogctl("streams-groups", kafka_scenario.log_dir, "--list", "--state",
                        "empty,notready")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.splitlines()[1:] == ["streams-group   Empty"]


def test_scenario_has_streams_groups_with_and_without_members(kafka_scenario) -> None:
    state = kafka_scenario.live["streams-groups --describe --state"]["stdout"]
    assert "Stable" in state and "Empty" in state
    members = kafka_scenario.live["streams-groups --describe --members"]["stdout"]
    assert members.count("live-streams ") == 2  # two stream threads: two members


def test_an_unknown_streams_group_is_kafkas_error(kafka_scenario) -> None:
    live = kafka_scenario.live["streams-groups --describe --group no-such-group"]
    ours = run_pylogctl("streams-groups", kafka_scenario.log_dir, "--describe", "--group",
                        "no-such-group")
    assert (ours.returncode, ours.stdout) == (live["code"], live["stdout"]) == (1, live["stdout"])
    assert "Traceback" not in ours.stderr


def test_streams_groups_json_rows(kafka_scenario) -> None:
    import json

    ours = run_pylogctl("streams-groups", kafka_scenario.log_dir, "--describe",
                        "--all-groups", "--members", "--verbose", "-o", "json")
    assert ours.returncode == 0, ours.stderr
    doc = json.loads(ours.stdout)
    rows = doc["items"] if isinstance(doc, dict) else doc
    assert {r["memberProtocol"] for r in rows} == {"streams"}
    assert all(r["assignments"].startswith("ACTIVE: ") for r in rows)
