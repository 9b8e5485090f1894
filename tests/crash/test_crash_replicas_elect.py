"""Crash safety of ``replicas --elect --execute``: SIGKILLed at each of its file-system
mutations (the old leader's truncation, its checkpoints, its epoch cache), then ``pylogctl
recover --execute`` on the log dir. The replica left must be the old log cut at a batch
boundary, holding at least everything below the divergence point, byte for byte; the log dir
verifies and needs no more recovery; and running the command again ends where an
uninterrupted run ends, with the replicas in step.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crash_checks import check_state, recover
from crash_support import count_kill_points, kill_each, partition_batches, run_cli, spread
from replicas_support import broker_dir

MAX_KILLS = 12
POINT = 40  # where broker 1's lone epoch 0 records begin


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("crash-replicas") / "cluster"
    common = [(0, 10, "a")] * 4
    broker_dir(root, 1, common + [(0, 5, "lost")] * 6, hw=POINT)
    broker_dir(root, 2, common + [(1, 4, "new")] * 3)
    return root


def test_a_kill_at_any_point_is_repaired_by_recover(template, tmp_path):
    part = template / "broker1" / "t-0"
    before = partition_batches(part, strict=True)
    assert before[-1].last + 1 == POINT + 30

    def args(d: Path) -> list:
        return ["replicas", d, "--elect", "2", "--execute", "--backup-dir", d.parent / "backup"]

    clean = tmp_path / "uninterrupted" / "cluster"
    shutil.copytree(template, clean)
    count, trace = count_kill_points(args(clean), [clean.parent], tmp_path / "tmp")
    final = partition_batches(clean / "broker1" / "t-0", strict=True)
    assert final == [b for b in before if b.last < POINT] and final[-1].last + 1 == POINT
    assert (clean / "broker1" / ".kafka_cleanshutdown").exists()  # set aside, then put back
    kill_at = spread(count, MAX_KILLS)
    assert len(kill_at) >= 5

    def setup(work: Path) -> tuple[Path, Path, list]:
        d = work / "cluster"
        shutil.copytree(template, d)
        return d, d / "broker1" / "t-0", args(d)

    def check(d: Path, part: Path, scratch: Path) -> list[str]:
        problems = []
        for broker in ("broker1", "broker2"):
            problems += recover(d / broker, None, scratch)
        if problems:
            return problems
        after = partition_batches(part, strict=True)
        if after != before[:len(after)]:
            problems.append("the batches left are not the old log cut at a batch boundary")
        if after[:len(final)] != final:
            problems.append("batches below the divergence point were lost")
        for broker in ("broker1", "broker2"):
            problems += check_state(d / broker, scratch)
        again = run_cli(args(d), scratch)
        if again.returncode != 0:
            problems.append(f"run again, the command exited {again.returncode}: "
                            f"{again.stderr[-500:]}")
        if partition_batches(part, strict=True) != final:
            problems.append("running the command again does not end as an uninterrupted run")
        status = run_cli(["replicas", d, "-v", "-o", "json"], scratch)
        follower = json.loads(status.stdout)[0]["replicas"][1]
        if follower["truncation"] is not None:
            problems.append(f"still diverging after the rerun: {follower['truncation']}")
        return problems

    assert kill_each(kill_at, trace, tmp_path, setup, check) == []
