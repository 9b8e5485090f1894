"""Every mutating command judged by the real Kafka broker that starts on what it wrote.

For ``truncate``, ``retention``, ``rebuild-index``, ``compact`` and ``consumer-groups
--reset-offsets``, ``--delete`` and ``--delete-offsets`` (``recover`` has
``test_cli_recover_vs_kafka.py``): a copy of a log dir the real Kafka 4.4 broker wrote
(:mod:`kafka_scenarios`, stopped cleanly, and SIGKILLed in the middle of a produce storm) is
changed by ``pylogctl ... --execute`` after its plan (``-o json``) was taken; then the real
broker starts on it, and Kafka's own consumer (``read_committed``) and Admin client read
everything it serves (:mod:`kafka_served`). That must be what the broker served from an
unchanged copy (the baseline), changed exactly as the plan said: the same records (offsets,
timestamps, keys, values, headers), log start and end offsets, and committed offsets; and the
broker's log must not show a repair of a partition pylogctl wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from kafka_scenarios import generated_scenario, killed_scenario
from kafka_served import Changed, Served
from kafka_served import baseline as served_baseline
from kafka_served import change as served_change

SCENARIOS = {"clean": generated_scenario, "sigkill": killed_scenario}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Callable[[str], Served]:
    """What the broker serves from an unchanged copy of a scenario."""
    return lambda kind: served_baseline(SCENARIOS[kind],
                                        lambda: tmp_path_factory.mktemp(f"baseline-{kind}"))


def change(kind: str, tmp_path: Path, *args, prepare=None) -> Changed:
    return served_change(SCENARIOS[kind], tmp_path, *args, prepare=prepare)


def same_except(after: Served, before: Served, changed: set[str]) -> None:
    """Every partition not in ``changed`` serves what it served before."""
    for tp in set(before.records) | set(after.records):
        if tp not in changed:
            assert after.records.get(tp) == before.records.get(tp), tp
            assert (after.start.get(tp), after.end.get(tp)) == \
                   (before.start.get(tp), before.end.get(tp)), tp


def partition_of(kind: str) -> str:
    return {"clean": "rolled-0", "sigkill": "storm-0"}[kind]


@pytest.mark.parametrize("kind", SCENARIOS)
def test_truncate_round_trip(kind, baseline, tmp_path) -> None:
    before = baseline(kind)
    tp = partition_of(kind)
    target = before.end[tp] * 2 // 3
    done = change(kind, tmp_path, "truncate", f"{{logs}}/{tp}", "--to-offset", target)
    end = done.plan[0]["truncation"]["logEndOffset"]
    assert end <= target
    assert done.served.end[tp] == end
    assert done.served.records[tp] == [r for r in before.records[tp] if r["offset"] < end]
    same_except(done.served, before, {tp})
    assert not done.served.repairs([tp])


@pytest.mark.parametrize("kind", SCENARIOS)
def test_retention_round_trip(kind, baseline, tmp_path) -> None:
    before = baseline(kind)
    topic = partition_of(kind).rsplit("-", 1)[0]
    done = change(kind, tmp_path, "retention", "{logs}", "--topic", topic, "--config",
                  "retention.bytes=1500000")
    starts = {p["partition"]: p["logStartOffset"] for p in done.plan}
    assert any(p["deletions"] for p in done.plan)
    for tp, start in starts.items():
        assert done.served.start[tp] == start, tp
        assert done.served.records.get(tp, []) == [r for r in before.records.get(tp, [])
                                                   if r["offset"] >= start], tp
        assert done.served.end[tp] == before.end[tp], tp
    same_except(done.served, before, set(starts))
    assert not done.served.repairs(list(starts))


@pytest.mark.parametrize("kind", SCENARIOS)
def test_rebuild_index_round_trip(kind, baseline, tmp_path) -> None:
    """Lost indexes of closed segments come back as Kafka wrote them, and Kafka finds them
    whole."""
    before = baseline(kind)
    tp = partition_of(kind)
    originals: dict[str, bytes] = {}

    def lose_indexes(log_dir: Path) -> None:
        for log in sorted((log_dir / tp).glob("*.log"))[:-1]:  # the closed segments
            for suffix in (".index", ".timeindex"):
                index = log.with_suffix(suffix)
                originals[index.name] = index.read_bytes()
                index.unlink()
    done = change(kind, tmp_path, "rebuild-index", f"{{logs}}/{tp}", prepare=lose_indexes)
    assert originals
    for name, data in originals.items():
        assert (done.log_dir / tp / name).read_bytes() == data, name
    assert done.served.records == before.records
    assert not done.served.repairs([tp])


@pytest.mark.parametrize("kind", SCENARIOS)
def test_compact_round_trip(kind, baseline, tmp_path) -> None:
    """The cleaner keeps each key's last record below the first uncleanable offset and
    everything above it; Kafka serves exactly those, at their offsets."""
    before = baseline(kind)
    tp = {"clean": "rolled-0", "sigkill": "storm-txn-0"}[kind]
    done = change(kind, tmp_path, "compact", "{logs}", "--partition", tp, "--config",
                  "cleanup.policy=compact")
    (plan,) = done.plan
    assert plan["clean"] and plan["recordsRemoved"] >= 0
    uncleanable = plan["firstUncleanableOffset"]
    last = {r["key"]: r["offset"] for r in before.records[tp] if r["offset"] < uncleanable}
    kept = [r for r in before.records[tp]
            if r["offset"] >= uncleanable or last.get(r["key"]) == r["offset"]]
    assert done.served.records[tp] == kept
    assert (done.served.start[tp], done.served.end[tp]) == (before.start[tp], before.end[tp])
    same_except(done.served, before, {tp})
    assert not done.served.repairs([tp])


# per scenario: (a classic group, a topic it committed to), a KIP-848 group
GROUPS = {"clean": (("classic-group", "rolled"), "modern-group"),
          "sigkill": (("storm-readers", "storm"), "storm-modern")}


@pytest.mark.parametrize("kind", SCENARIOS)
def test_reset_offsets_round_trip(kind, baseline, tmp_path) -> None:
    before = baseline(kind)
    (group, topic), _ = GROUPS[kind]
    done = change(kind, tmp_path, "consumer-groups", "{logs}", "--reset-offsets", "--group",
                  group, "--topic", topic, "--to-earliest")
    want = dict(before.committed)
    want.update({(r["group"], f"{r['topic']}-{r['partition']}"): r["newOffset"]
                 for r in done.plan})
    assert done.plan and want != before.committed
    assert done.served.committed == want
    assert done.served.records == before.records


@pytest.mark.parametrize("kind", SCENARIOS)
def test_delete_group_round_trip(kind, baseline, tmp_path) -> None:
    before = baseline(kind)
    _, group = GROUPS[kind]
    assert any(k[0] == group for k in before.committed)
    done = change(kind, tmp_path, "consumer-groups", "{logs}", "--delete", "--group", group)
    assert done.plan == [{"group": group, "deleted": True, "error": None}]
    assert done.served.committed == {k: v for k, v in before.committed.items() if k[0] != group}


@pytest.mark.parametrize("kind", SCENARIOS)
def test_delete_offsets_round_trip(kind, baseline, tmp_path) -> None:
    before = baseline(kind)
    group, topic = {"clean": ("classic-group", "txn"), "sigkill": GROUPS["sigkill"][0]}[kind]
    done = change(kind, tmp_path, "consumer-groups", "{logs}", "--delete-offsets",
                  "--group", group, "--topic", topic)
    # Kafka answers Successful for every partition of the topic, committed or not
    # (OffsetMetadataManager.deleteOffsets), and tombstones the committed ones
    assert {r["status"] for r in done.plan} == {"Successful"}
    gone = {(group, f"{topic}-{r['partition']}") for r in done.plan} & set(before.committed)
    assert gone
    assert done.served.committed == {k: v for k, v in before.committed.items() if k not in gone}


def test_a_dir_kafka_stopped_cleanly_verifies_as_it_is(tmp_path) -> None:
    """Every index a cleanly stopped Kafka leaves is fine, the metadata log's preallocated
    active ones included (the raft layer never trims them; Kafka rebuilds them at every
    start): ``rebuild-index --verify`` finds nothing missing or corrupt."""
    import shutil

    from support import run_pylogctl

    log_dir = tmp_path / "logs"
    shutil.copytree(generated_scenario().log_dir, log_dir)
    (log_dir / ".lock").unlink(missing_ok=True)
    verified = run_pylogctl("rebuild-index", log_dir, "--verify")
    assert verified.returncode == 0, verified.stderr
    assert "0 missing or corrupt" in verified.stderr + verified.stdout
    assert (log_dir / "__cluster_metadata-0" / "00000000000000000000.index").stat().st_size \
        > 1024 * 1024  # still preallocated: the case this pins
