"""Crash safety judged by the real Kafka broker: kill a mutating command, recover, serve.

On copies of a dir the real Kafka 4.4 broker left when SIGKILLed mid-storm
(:func:`kafka_scenarios.killed_scenario`), ``truncate``, ``retention``, ``compact``,
``consumer-groups --reset-offsets`` and ``--delete`` are SIGKILLed, truncate, retention and
reset-offsets halfway through their file-system mutations, compact and delete at the last one
(``crashpoint.py``; ``tests/crash``'s other modules kill them at every point and judge with
their own oracle; one point each here keeps the real broker's start-ups affordable); ``pylogctl recover --execute`` then repairs the
dir, and the real broker starts on it. What Kafka serves (:mod:`kafka_served`, its own consumer
and Admin client) must be what it served from the untouched copy, or what it serves after the
uninterrupted command, partition by partition:

- a data partition serves a contiguous run of the records it served before (compaction: some
  of them, at their offsets), holding every record the uninterrupted command keeps; no offset beyond what the killed run's files still
  held comes back (what the command had already removed stays removed);
- committed offsets are either all as before or all as the command sets them (its records
  are appended in one batch);
- every other partition, and the broker's log, shows nothing was repaired.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from crash_support import KILLED, count_kill_points, read_batches, run_crashpoint
from kafka_scenarios import killed_scenario
from kafka_served import Served, baseline, change, serve
from support import run_pylogctl



@dataclass(frozen=True)
class Command:
    name: str
    partitions: tuple[str, ...]  # the data partitions it changes (none: committed offsets)
    args: tuple[str, ...]  # "{logs}" stands for the log dir; "{2/3}": 2/3 of storm-0's end
    cuts_ends: bool = True  # removes records only at the log's ends (not compaction)
    at_last: bool = False  # killed before its last mutation, else halfway through them

    def resolved(self, before: Served) -> tuple[str, ...]:
        return tuple(a.replace("{2/3}", str(before.end["storm-0"] * 2 // 3)) for a in self.args)


# the round trips' commands on the same dir (test_cli_round_trips_vs_kafka.py): an
# uninterrupted run is served once for both
COMMANDS = [
    Command("truncate", ("storm-0",), ("truncate", "{logs}/storm-0", "--to-offset", "{2/3}")),
    Command("retention", ("storm-0", "storm-1", "storm-2"),
            ("retention", "{logs}", "--topic", "storm", "--config", "retention.bytes=1500000")),
    Command("compact", ("storm-txn-0",), ("compact", "{logs}", "--partition", "storm-txn-0",
                                          "--config", "cleanup.policy=compact"),
            cuts_ends=False, at_last=True),
    Command("reset-offsets", (), ("consumer-groups", "{logs}", "--reset-offsets", "--group",
                                  "storm-readers", "--topic", "storm", "--to-earliest")),
    Command("delete", (), ("consumer-groups", "{logs}", "--delete", "--group",
                           "storm-modern"), at_last=True),
]


SEGMENT_OR_SWAP = re.compile(r"^\d{20}\.log(\.swap)?$")


def offsets_in_files(part: Path) -> set[int]:
    """Every offset some whole batch covers in the partition's segments and ``.swap`` files
    (which recovery completes); ``.deleted`` and ``.cleaned`` files are gone after it."""
    return {o for f in part.iterdir() if SEGMENT_OR_SWAP.match(f.name)
            for b in read_batches(f, strict=False) for o in range(b.base, b.last + 1)}


@pytest.fixture(scope="module")
def before(tmp_path_factory) -> Served:
    return baseline(killed_scenario, lambda: tmp_path_factory.mktemp("baseline"))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_a_killed_command_then_recover_leaves_what_kafka_serves(command, before,
                                                                tmp_path) -> None:
    source = killed_scenario().log_dir
    args = command.resolved(before)
    after = change(killed_scenario, tmp_path / "uninterrupted", *args).served
    count_dir = tmp_path / "count" / "logs"
    shutil.copytree(source, count_dir)
    argv = [a.replace("{logs}", str(count_dir)) for a in args] + ["--execute"]
    count, _ = count_kill_points(argv, [count_dir], tmp_path / "count")
    assert count > 0
    for n in [count if command.at_last else max(1, count // 2)]:
        work = tmp_path / f"kill-{n}"
        log_dir = work / "logs"
        shutil.copytree(source, log_dir)
        argv = [a.replace("{logs}", str(log_dir)) for a in args] + ["--execute"]
        killed = run_crashpoint(["--kill-at", str(n)], [log_dir], argv, work / "tmp")
        assert killed.returncode == KILLED, (n, killed.returncode, killed.stderr[-500:])
        left = {tp: offsets_in_files(log_dir / tp) for tp in command.partitions}
        recovered = run_pylogctl("recover", log_dir, "--execute")
        assert recovered.returncode == 0, (n, recovered.stderr)
        served = serve(log_dir, work / "broker")
        check(command, n, served, before, after, left)
        shutil.rmtree(work)


def check(command: Command, n: int, served: Served, before: Served, after: Served,
          left: dict[str, set[int]]) -> None:
    where = f"{command.name} killed at mutation {n}"
    assert served.committed in (before.committed, after.committed), where
    for tp in set(before.records) | set(served.records):
        mine, old = served.records.get(tp, []), before.records.get(tp, [])
        if tp not in command.partitions:
            assert mine == old, f"{where}: {tp} changed"
            continue
        kept = after.records.get(tp, [])
        if command.cuts_ends:
            first = old.index(mine[0]) if mine else 0
            assert mine == old[first:first + len(mine)], f"{where}: {tp} is not a run of records"
        else:
            assert _frozen(mine) <= _frozen(old), f"{where}: {tp} serves records it never had"
        assert _frozen(kept) <= _frozen(mine), f"{where}: {tp} lost records the command keeps"
        assert {r["offset"] for r in mine} <= left[tp], f"{where}: {tp} records came back"
    assert not served.repairs(list(command.partitions) or None), where


def _frozen(records: list[dict]) -> set[str]:
    """Records as a set (tens of thousands per partition: list membership is quadratic)."""
    return {json.dumps(r, sort_keys=True) for r in records}
