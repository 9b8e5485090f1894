"""Offline ``pylogctl consumer-groups`` judged by Kafka's live ``kafka-consumer-groups``.

The real Kafka 4.x broker of :mod:`kafka_scenarios` served groups of both protocols (classic and
KIP-848's consumer protocol), some empty and some with members connected; Kafka's tool described
them while it served, then the broker stopped. pylogctl, reading the stopped broker's files,
must print the same: same groups, rows, offsets, lag, members, states and columns.

One deliberate difference: ``--list`` prints groups in the live coordinator's in-memory hash
order, which depends on its hash tables' history; pylogctl sorts them, so lists are compared
as sets (header first).
"""

from __future__ import annotations

import pytest

from support import run_pylogctl as pylogctl

VIEWS = [
    ("--describe", "--all-groups"),
    ("--describe", "--all-groups", "--offsets"),
    ("--describe", "--all-groups", "--members"),
    ("--describe", "--all-groups", "--members", "--verbose"),
    ("--describe", "--all-groups", "--state"),
    ("--describe", "--all-groups", "--state", "--verbose"),
]
LISTS = [("--list",), ("--list", "--state"), ("--list", "--type")]


def live(scenario, args: tuple[str, ...]) -> str:
    key = "consumer-groups " + " ".join(a for a in args if a != "--all-groups")
    return scenario.live[key]["stdout"]


@pytest.mark.parametrize("args", VIEWS, ids=lambda a: " ".join(a[2:]) or "offsets-default")
def test_describe_matches_kafka_live(args, kafka_scenario) -> None:
    ours = pylogctl("consumer-groups", str(kafka_scenario.log_dir), *args)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == live(kafka_scenario, args)


@pytest.mark.parametrize("args", LISTS, ids=lambda a: " ".join(a))
def test_list_matches_kafka_live(args, kafka_scenario) -> None:
    ours = pylogctl("consumer-groups", str(kafka_scenario.log_dir), *args)
    assert ours.returncode == 0, ours.stderr
    theirs = live(kafka_scenario, args).splitlines()
    mine = ours.stdout.splitlines()
    if len(args) > 1:  # a header line leads
        assert mine[:1] == theirs[:1]
        mine, theirs = mine[1:], theirs[1:]
    assert sorted(mine) == sorted(theirs)


def test_scenario_has_both_protocols_with_members(kafka_scenario) -> None:
    """The comparison above is only as strong as what the broker wrote: pin it."""
    types = live(kafka_scenario, ("--list", "--type"))
    assert "Classic" in types and "Consumer" in types
    members = live(kafka_scenario, VIEWS[3])
    assert "live-classic" in members and "live-modern" in members
