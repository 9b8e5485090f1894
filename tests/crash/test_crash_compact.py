"""Crash safety of ``compact --execute`` (issue 6): SIGKILLed at its file-system mutations,
then ``pylogctl recover --execute``; the log must hold exactly the batches it held before or
exactly those an uninterrupted cleaning leaves (the ``.cleaned`` -> ``.swap`` -> final protocol
commits a cleaned group at one rename), every index must verify, a second recovery must find
nothing to do, no ``.cleaned``/``.swap``/``.deleted`` file may be left, and compacting again
must leave the records an uninterrupted run leaves.

Same harness as :mod:`test_crash_safety` and :mod:`test_crash_retention`. Scenarios: a corpus
partition whose keys are all distinct (the cleaning keeps every batch byte for byte and merges
three segments into one: the swap replaces several segments), and a generated log with
tombstones and committed and aborted transactions (the cleaning drops most records; compared
after the rerun by kafka-python's reading, since a second cleaning may stamp delete horizons
on markers the first one kept).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from cleaner_support import BASE_TS, DAY, kafka_python_records, random_workload, write_log
from crash_checks import check_state, recover
from crash_support import (Batch, copy_corpus_partition, count_kill_points,
                           kill_each, partition_batches, run_cli, segment_logs,
                           prepare_scenarios, spread)

MAX_KILLS_PER_SCENARIO = 40
KILLS_WANTED = 80  # with test_crash_retention.py's 120: the 200 the issue asks
NOW = str(BASE_TS + DAY)


@dataclass(frozen=True)
class CompactScenario:
    name: str
    corpus_dir: str | None  # None: a generated log dir ``logs/gen`` holding ``t-0``
    partition: str

    def args(self, log_dir: Path, backup: Path) -> list:
        return ["compact", log_dir, "--now-ms", NOW, "--partition", self.partition,
                "--config", "cleanup.policy=compact", "--execute", "--backup-dir", backup]


SCENARIOS = [
    CompactScenario("compact-merge", "invoice-multiseg", "invoice-3"),
    CompactScenario("compact-transactions", None, "t-0"),
]


@dataclass
class Prepared:
    scenario: CompactScenario
    template: Path  # holds logs/{log dir}/{partition}
    before: list[Batch]
    final: list[Batch]
    final_records: list[tuple]
    kill_at: list[int]
    trace: list[str]

    @property
    def log_dir_name(self) -> str:
        return self.scenario.corpus_dir or "gen"

    def copy_to(self, root: Path) -> tuple[Path, Path]:
        shutil.copytree(self.template / "logs", root / "logs")
        log_dir = root / "logs" / self.log_dir_name
        return log_dir, log_dir / self.scenario.partition


def _prepare(corpus: Path, scenario: CompactScenario, root: Path) -> Prepared:
    logs = root / "template" / "logs"
    if scenario.corpus_dir is None:
        part = write_log(logs / "gen", random_workload(50, batches=80, segment_batches=20,
                                                       tombstone_rate=0.2, txn_rate=0.25))
    else:
        part = copy_corpus_partition(corpus, scenario.corpus_dir, scenario.partition, logs)
    p = Prepared(scenario, root / "template", partition_batches(part), [], [], [], [])
    log_dir, run_part = p.copy_to(root / "uninterrupted")
    count, p.trace = count_kill_points(scenario.args(log_dir, root / "backup"),
                                       [log_dir, root / "backup"], root / "tmp")
    p.final = partition_batches(run_part, strict=True)
    p.final_records = kafka_python_records(run_part)
    p.kill_at = spread(count, MAX_KILLS_PER_SCENARIO)
    return p


@pytest.fixture(scope="module")
def prepared(corpus, tmp_path_factory) -> dict[str, Prepared]:
    return prepare_scenarios(SCENARIOS, lambda s, root: _prepare(corpus, s, root),
                             tmp_path_factory.mktemp("crash-compact"))


def check(p: Prepared, log_dir: Path, part: Path, scratch: Path) -> list[str]:
    """After a kill: recover, the data and state checks, then compact again."""
    problems = recover(log_dir, None, scratch)
    if problems:
        return problems
    after = partition_batches(part, strict=True)
    if after not in (p.before, p.final):
        problems.append("the batches are neither those before nor those the uninterrupted "
                        "cleaning leaves")
    problems += check_state(log_dir, scratch)
    again = run_cli(p.scenario.args(log_dir, scratch / "backup-again"), scratch)
    if again.returncode != 0:
        problems.append(f"compact again exited {again.returncode}: {again.stderr[-1000:]}")
    elif kafka_python_records(part) != p.final_records:
        problems.append("compact run again does not leave the records an uninterrupted run "
                        "leaves")
    return problems


@pytest.mark.corpus
@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_an_uninterrupted_run_swaps_in_what_the_cleaner_writes(prepared, name):
    p = prepared[name]
    if p.scenario.corpus_dir is not None:  # distinct keys: every batch kept, three segments one
        assert p.final == p.before
    else:
        assert len(p.final) < len(p.before)
    assert len(p.kill_at) >= 8
    assert any(".swap" in line for line in p.trace)


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_a_kill_at_any_point_is_repaired_by_recover(prepared, name, tmp_path):
    p = prepared[name]

    def setup(work: Path) -> tuple[Path, Path, list]:
        log_dir, part = p.copy_to(work)
        return log_dir, part, p.scenario.args(log_dir, work / "backup")

    assert kill_each(p.kill_at, p.trace, tmp_path, setup,
                     lambda log_dir, part, scratch: check(p, log_dir, part, scratch)) == []


@pytest.mark.corpus
def test_segment_layouts(prepared):
    """The merge scenario really merges: three segments below the active one become one."""
    p = prepared["compact-merge"]
    work = p.template.parent / "layout"
    if not work.exists():
        log_dir, part = p.copy_to(work)
        run_cli(p.scenario.args(log_dir, work / "backup"), work / "tmp")
    part = work / "logs" / p.log_dir_name / p.scenario.partition
    assert [base for base, _ in segment_logs(part)] == [0, 90934]


@pytest.mark.corpus
def test_enough_kill_points_are_exercised(prepared):
    """The issue asks for at least 200 kills of compact and retention together; this file's
    share must not shrink silently."""
    assert sum(len(p.kill_at) for p in prepared.values()) >= KILLS_WANTED
