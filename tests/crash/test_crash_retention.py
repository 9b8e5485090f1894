"""Crash safety of ``retention --execute`` (issue 6): SIGKILLed at its file-system mutations,
then ``pylogctl recover --execute``; no data at or above the new log start may be lost, the
log left must be a suffix of the old one starting at a segment boundary, every index must
verify, a second recovery must find nothing to do, and running retention again must end
exactly where an uninterrupted run ends.

Same harness as :mod:`test_crash_safety` (``crashpoint.py`` kills the real CLI in a child
process at its N-th mutating audit event; the oracle reads the ``.log`` files without
pylogctl). The expectations come from the scenario (which segments Kafka's rules delete on
these corpus partitions), not from retention's plan.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from crash_checks import check_state, recover
from crash_support import (LEFTOVER_SUFFIXES, Batch, copy_corpus_partition,
                           count_kill_points, kill_each, partition_batches, run_cli, segment_logs,
                           prepare_scenarios, spread, write_checkpoint_entry)

MAX_KILLS_PER_SCENARIO = 40
KILLS_WANTED = 120  # with test_crash_compact.py's 80: the 200 the issue asks
INVOICE = "invoice-multiseg"
NOW = "1718500000000"  # a day after invoice-multiseg was written

pytestmark = pytest.mark.corpus


@dataclass(frozen=True)
class RetentionScenario:
    name: str
    partition: str
    options: tuple[str, ...]
    keep_from: int | None  # the first segment kept; None: every segment goes (a roll)
    log_start: int | None = None  # a DeleteRecords log start offset to checkpoint first

    def args(self, log_dir: Path) -> list[str]:
        return ["retention", log_dir, "--now-ms", NOW, *self.options, "--execute"]


SCENARIOS = [
    # sizes 999252, 989360, 998265, 311092: diff 1997969 takes the first two (Kafka's rule)
    RetentionScenario("retention-bytes", "invoice-0", ("--config", "retention.bytes=1300000",
                                                        "--backup-dir", "BACKUP"), 60611),
    RetentionScenario("retention-ms-all", "invoice-1", ("--config", "retention.ms=1000"), None),
    RetentionScenario("retention-log-start", "invoice-2", ("--config", "retention.ms=-1"),
                      30587, log_start=45000),
]


@dataclass
class Prepared:
    scenario: RetentionScenario
    template: Path  # holds logs/{log dir}/{partition}
    batches: list[Batch]
    bases: list[int]
    final: list[Batch]  # what an uninterrupted run leaves
    final_bases: list[int]
    kill_at: list[int]
    trace: list[str]

    def copy_to(self, root: Path) -> tuple[Path, Path]:
        shutil.copytree(self.template / "logs", root / "logs")
        log_dir = root / "logs" / INVOICE
        return log_dir, log_dir / self.scenario.partition

    def args(self, log_dir: Path, backup: Path) -> list[str]:
        return [str(backup) if a == "BACKUP" else a for a in self.scenario.args(log_dir)]


def _prepare(corpus: Path, scenario: RetentionScenario, root: Path) -> Prepared:
    part = copy_corpus_partition(corpus, INVOICE, scenario.partition, root / "template" / "logs")
    if scenario.log_start is not None:
        write_checkpoint_entry(part.parent / "log-start-offset-checkpoint", "invoice",
                               int(scenario.partition[-1]), scenario.log_start)
    batches = partition_batches(part)
    bases = [b for b, _ in segment_logs(part)]
    prepared = Prepared(scenario, root / "template", batches, bases, [], [], [], [])
    log_dir, run_part = prepared.copy_to(root / "uninterrupted")
    count, prepared.trace = count_kill_points(prepared.args(log_dir, root / "backup"),
                                              [log_dir, root / "backup"], root / "tmp")
    prepared.final = partition_batches(run_part, strict=True)
    prepared.final_bases = [b for b, _ in segment_logs(run_part)]
    prepared.kill_at = spread(count, MAX_KILLS_PER_SCENARIO)
    return prepared


@pytest.fixture(scope="module")
def prepared(corpus, tmp_path_factory) -> dict[str, Prepared]:
    return prepare_scenarios(SCENARIOS, lambda s, root: _prepare(corpus, s, root),
                             tmp_path_factory.mktemp("crash-retention"))


def check(p: Prepared, log_dir: Path, part: Path, scratch: Path) -> list[str]:
    """After a kill: recover, then the data and state checks, then retention again."""
    problems = recover(log_dir, None, scratch)
    if problems:
        return problems
    after = partition_batches(part, strict=True)
    start = next((i for i, b in enumerate(p.batches) if after and b.base == after[0].base), None)
    if after and (start is None or p.batches[start:] != after):
        problems.append("the batches left are not the old log from some batch on")
    elif after and after[0].base not in p.bases:
        problems.append(f"the log starts at {after[0].base}, not at a segment base")
    kept = set(after)
    lost = [b for b in p.final if b not in kept]
    if lost:
        problems.append(f"{len(lost)} batches at or above the new log start lost, the first at "
                        f"offset {lost[0].base}")
    problems += [p for p in check_state(log_dir, scratch) if not p.startswith("files left")]
    problems += leftovers(log_dir)
    again = run_cli(p.args(log_dir, scratch / "backup-again"), scratch)
    if again.returncode != 0:
        problems.append(f"retention again exited {again.returncode}: {again.stderr[-1000:]}")
    elif (partition_batches(part, strict=True), [b for b, _ in segment_logs(part)]) != (
            p.final, p.final_bases):
        problems.append("retention run again does not end where an uninterrupted run ends")
    return problems


def leftovers(log_dir: Path) -> list[str]:
    """Files an interrupted operation leaves, except a checkpoint's temp file: a kill inside
    ``write_file_atomically`` leaves ``{checkpoint}.tmp`` (a log dir's offset checkpoints,
    ``leader-epoch-checkpoint``), which only the next write of that checkpoint replaces, for
    every command, as with Kafka's own checkpoint files; ``recover`` does not remove it unless
    it rewrites that checkpoint."""
    left = sorted(str(p.relative_to(log_dir)) for p in log_dir.rglob("*")
                  if p.name.endswith(LEFTOVER_SUFFIXES) and not p.name.endswith("checkpoint.tmp"))
    return [f"files left over: {left}"] if left else []


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_an_uninterrupted_run_deletes_what_kafka_deletes(prepared, name):
    p = prepared[name]
    s = p.scenario
    if s.keep_from is None:
        assert p.final == [] and p.final_bases == [p.batches[-1].last + 1]
    else:
        assert p.final == [b for b in p.batches if b.base >= s.keep_from]
        assert p.final_bases == [b for b in p.bases if b >= s.keep_from]
    assert len(p.kill_at) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_a_kill_at_any_point_is_repaired_by_recover(prepared, name, tmp_path):
    p = prepared[name]

    def setup(work: Path) -> tuple[Path, Path, list]:
        log_dir, part = p.copy_to(work)
        return log_dir, part, p.args(log_dir, work / "backup")

    assert kill_each(p.kill_at, p.trace, tmp_path, setup,
                     lambda log_dir, part, scratch: check(p, log_dir, part, scratch)) == []


@pytest.mark.corpus
def test_enough_kill_points_are_exercised(prepared):
    """The issue asks for at least 200 kills of compact and retention together; this file's
    share must not shrink silently."""
    assert sum(len(p.kill_at) for p in prepared.values()) >= KILLS_WANTED
