"""Crash safety of ``consumer-groups --reset-offsets/--delete --execute`` (issue 5): SIGKILLed
at each of its file-system mutations, then ``pylogctl recover --execute``. Every batch the
offsets partition held before must still be there, byte for byte; the group must load either
as before or as planned (never half-changed: one batch per group); the log dir must verify
and need no more recovery; and running the command again must end where an uninterrupted run
ends.

The corpus dir bigdata-docker-2020 holds group ``nifi`` (Empty, offset 4 on ``aula-0``) in
``__consumer_offsets-32``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from crash_checks import check_state, recover
from crash_support import (count_kill_points, kill_each, partition_batches, run_cli, spread)
from pylogctl.tools.consumer_groups import ConsumerGroups

CORPUS_DIR = "bigdata-docker-2020"
OFFSETS = "__consumer_offsets-32"
MAX_KILLS = 20

pytestmark = pytest.mark.corpus


@dataclass(frozen=True)
class GroupScenario:
    name: str
    options: tuple[str, ...]
    before: int | None  # nifi's offset of aula-0 before (None: the group does not load)
    after: int | None  # and after

    def args(self, log_dir: Path) -> list:
        return ["consumer-groups", log_dir, *self.options, "--execute"]


SCENARIOS = [
    GroupScenario("reset-to-offset", ("--reset-offsets", "--group", "nifi", "--all-topics",
                                      "--to-offset", "1"), 4, 1),
    GroupScenario("delete-group", ("--delete", "--group", "nifi"), 4, None),
]


def nifi_offset(log_dir: Path) -> int | None:
    group = ConsumerGroups([log_dir]).load_groups(["nifi"]).get("nifi")
    if group is None:
        return None
    commit = next((c for tp, c in group.offsets.items() if tp.topic == "aula"), None)
    return None if commit is None else commit.offset


@pytest.fixture(scope="module")
def template(corpus, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("crash-groups")
    shutil.copytree(corpus / CORPUS_DIR, root / CORPUS_DIR, copy_function=shutil.copyfile,
                    ignore=shutil.ignore_patterns(".lock"))
    return root / CORPUS_DIR


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_a_kill_at_any_point_leaves_the_group_before_or_after(template, scenario, tmp_path):
    before = partition_batches(template / OFFSETS, strict=True)
    assert nifi_offset(template) == scenario.before
    clean = tmp_path / "uninterrupted"
    shutil.copytree(template, clean)
    count, trace = count_kill_points(scenario.args(clean), [clean], tmp_path / "tmp")
    assert nifi_offset(clean) == scenario.after
    final = partition_batches(clean / OFFSETS, strict=True)
    assert final[:len(before)] == before and len(final) > len(before)
    kill_at = spread(count, MAX_KILLS)
    assert len(kill_at) >= 8

    def setup(work: Path) -> tuple[Path, Path, list]:
        log_dir = work / CORPUS_DIR
        shutil.copytree(template, log_dir)
        return log_dir, log_dir / OFFSETS, scenario.args(log_dir)

    def check(log_dir: Path, part: Path, scratch: Path) -> list[str]:
        problems = recover(log_dir, None, scratch)
        if problems:
            return problems
        after = partition_batches(part, strict=True)
        if after[:len(before)] != before:
            problems.append("batches written before the command were lost or changed")
        found = nifi_offset(log_dir)
        if found not in (scenario.before, scenario.after):
            problems.append(f"nifi loads with offset {found}: neither before nor after")
        problems += check_state(log_dir, scratch)
        again = run_cli(scenario.args(log_dir), scratch)
        if found == scenario.before and again.returncode != 0:
            problems.append(f"the command run again exited {again.returncode}: "
                            f"{again.stderr[-500:]}")
        if nifi_offset(log_dir) != scenario.after:
            problems.append("running the command again does not finish the change")
        return problems

    assert kill_each(kill_at, trace, tmp_path, setup, check) == []
