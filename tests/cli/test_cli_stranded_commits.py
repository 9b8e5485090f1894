"""Committed offsets left outside the log by ``truncate`` and ``retention``: warned about before
and after, and marked by ``consumer-groups --describe`` (on a real Kafka broker's log dir)."""

from __future__ import annotations

import json
import shutil

import pytest

from support import run_pylogctl

WARNING = "committed offset"


@pytest.fixture
def log_dir(kafka_scenario, tmp_path):
    copy = tmp_path / "logs"
    shutil.copytree(kafka_scenario.log_dir, copy)
    (copy / ".lock").unlink(missing_ok=True)
    return copy


def stranded_lines(stderr: str) -> list[str]:
    return [ln.split("pylogctl:   ", 1)[1] for ln in stderr.splitlines()
            if ln.startswith("pylogctl:   group ")]


def test_truncate_lists_the_groups_it_strands(log_dir) -> None:
    plan = run_pylogctl("truncate", log_dir / "codecs-0", "--to-offset", "50", "-o", "json")
    assert plan.returncode == 0, plan.stderr
    commits = json.loads(plan.stdout)[0]["strandedCommits"]
    end = json.loads(plan.stdout)[0]["truncation"]["logEndOffset"]
    assert commits and all(c["offset"] > end == c["logEndOffset"] for c in commits)
    assert {c["group"] for c in commits} >= {"modern-group", "live-modern"}
    assert "the truncation would leave" in plan.stderr
    assert len(stranded_lines(plan.stderr)) == len(commits)
    done = run_pylogctl("truncate", log_dir / "codecs-0", "--to-offset", "50", "--execute")
    assert "the truncation left" in done.stderr
    assert stranded_lines(done.stderr) == stranded_lines(plan.stderr)
    described = run_pylogctl("consumer-groups", log_dir, "--describe", "--all-groups")
    marked = stranded_lines(described.stderr)
    # the streams groups' commits too, but consumer-groups shows no streams group
    streams = run_pylogctl("streams-groups", log_dir, "--list").stdout.split()
    consumer_groups = {ln for ln in stranded_lines(plan.stderr)
                       if ln.split()[1].rstrip(":") not in streams}
    assert consumer_groups and consumer_groups <= set(marked)
    assert all("above the log end" in m for m in marked if "codecs-0" in m)


def test_retention_lists_the_groups_it_strands(log_dir) -> None:
    plan = run_pylogctl("retention", log_dir, "--topic", "rolled", "--config",
                        "retention.bytes=1048576")
    assert plan.returncode == 0, plan.stderr
    lines = stranded_lines(plan.stderr)
    assert lines and all("below the log start" in ln and "rolled-" in ln for ln in lines)
    run_pylogctl("retention", log_dir, "--topic", "rolled", "--config",
                 "retention.bytes=1048576", "--execute")
    described = run_pylogctl("consumer-groups", log_dir, "--describe", "--all-groups")
    assert set(lines) <= set(stranded_lines(described.stderr))
    # stats leaves them out of the lag: the consumers resume where auto.offset.reset says
    stats = run_pylogctl("stats", log_dir, "-o", "json")
    groups = {g["group"]: g for g in json.loads(stats.stdout)["groups"]}
    stranded = {ln.split(":")[0].split()[1] for ln in lines}
    assert stranded and all(groups[g]["partitionsOutOfRange"] > 0 for g in stranded)
    assert all(groups[g]["partitionsWithLag"] + groups[g]["partitionsOutOfRange"]
               <= groups[g]["partitions"] for g in stranded)


def test_nothing_is_said_when_every_commit_stays_in_range(log_dir) -> None:
    plan = run_pylogctl("truncate", log_dir / "codecs-0", "--to-offset", "100")
    assert WARNING not in plan.stderr
    described = run_pylogctl("consumer-groups", log_dir, "--describe", "--all-groups")
    assert WARNING not in described.stderr
