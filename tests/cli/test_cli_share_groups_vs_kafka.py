"""Offline ``pylogctl share-groups`` judged by Kafka's live ``kafka-share-groups``.

The broker of :mod:`kafka_scenarios` served two share groups (KIP-932): one left empty after
Kafka's console share consumer acknowledged part of a topic, one with that consumer still
connected when the broker stopped. Kafka's tool described them live; pylogctl, reading the
stopped broker's ``__consumer_offsets`` and ``__share_group_state``, must print the same bytes,
and the same notices on stderr.
"""

from __future__ import annotations

import pytest

from support import run_pylogctl

VIEWS = [("--list",), ("--describe", "--all-groups"),
         ("--describe", "--all-groups", "--offsets", "--verbose"),
         ("--describe", "--all-groups", "--members"),
         ("--describe", "--all-groups", "--members", "--verbose"),
         ("--describe", "--all-groups", "--state"),
         ("--describe", "--all-groups", "--state", "--verbose")]


def notices(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("Share group ")]


@pytest.mark.parametrize("args", VIEWS, ids=lambda a: " ".join(a))
def test_share_groups_match_kafka_live(args, kafka_scenario) -> None:
    live = kafka_scenario.live["share-groups " + " ".join(a for a in args
                                                           if a != "--all-groups")]
    ours = run_pylogctl("share-groups", kafka_scenario.log_dir, *args)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == live["stdout"]
    assert notices(ours.stderr) == notices(live["stderr"])


def test_scenario_has_share_groups_with_and_without_members(kafka_scenario) -> None:
    state = kafka_scenario.live["share-groups --describe --state"]["stdout"]
    assert "Stable" in state and "Empty" in state


def test_an_unknown_share_group_is_an_error(kafka_scenario) -> None:
    ours = run_pylogctl("share-groups", kafka_scenario.log_dir, "--describe", "--group", "nope")
    assert ours.returncode == 1 and ours.stdout == ""
    assert "Error: Share group 'nope' does not exist." in ours.stderr
