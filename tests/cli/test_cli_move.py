"""``pylogctl move`` on the command line: one-line errors with their exit codes, every output
format, partitions named by topic, and future replicas settled."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from pylogctl.storage.replica_move import copy_replica

CLUSTER = "EP6hyiddQNW5FPrAvR9kWw"


@pytest.fixture
def dirs(corpus, tmp_path) -> tuple[Path, Path]:
    a = tmp_path / "a"
    shutil.copytree(corpus / "kraft3-cluster" / "kafka1", a, copy_function=shutil.copyfile)
    b = tmp_path / "b"
    b.mkdir()
    (b / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id={CLUSTER}\n")
    return a, b


def one_line_error(result, code: int, text: str) -> None:
    assert result.code == code, result.err
    assert result.out == ""
    [line] = result.err.strip().splitlines()
    assert line.startswith("pylogctl: ") and text in line


def test_errors_are_one_line_with_their_exit_codes(cli, dirs, tmp_path):
    a, b = dirs
    one_line_error(cli("move", "test1-0", "--from", a, "--to", b), 2, "same file system")
    one_line_error(cli("move", "nope-3", "--from", a, "--to", b, "--same-disk"), 2,
                   "No partition nope-3")
    one_line_error(cli("move", "--from", a, "--to", b, "--same-disk"), 2,
                   "name the partitions")
    one_line_error(cli("move", "test1-0", "--from", a, "--to", tmp_path / "missing"), 3,
                   "No such file or directory")
    other = tmp_path / "other"
    other.mkdir()
    (other / "meta.properties").write_text("version=1\nnode.id=2\ncluster.id=x\n")
    one_line_error(cli("move", "test1-0", "--from", a, "--to", other, "--same-disk"), 2,
                   "cluster")
    one_line_error(cli("move", "--from", a, "--to", b, "--finish-future", "--cancel-future"), 2,
                   "at most one")
    one_line_error(cli("move", "test1-0", "--from", a, "--to", b, "--finish-future"), 2,
                   "No future replica test1-0")
    shutil.copytree(a / "test1-0", b / "test1-0")
    one_line_error(cli("move", "test1-0", "--from", a, "--to", b, "--same-disk"), 2,
                   "already in")


@pytest.mark.parametrize("output", ["json", "yaml", "ndjson", "table", "text"])
def test_a_topic_names_all_its_partitions_in_every_format(cli, dirs, output):
    a, b = dirs
    r = cli("move", "test1", "--from", a, "--to", b, "--same-disk", "-o", output)
    assert r.code == 0, r.err
    assert "plan: 5 replica(s)" in r.err
    if output == "json":
        assert [s["partition"] for s in json.loads(r.out)] == [f"test1-{p}" for p in range(5)]
    elif output == "yaml":
        assert len(yaml.safe_load(r.out)) == 5
    elif output == "ndjson":
        rows = [json.loads(line) for line in r.out.splitlines()]
        assert rows and all("description" in row or "type" in row for row in rows)
    else:
        assert all(f"test1-{p}" in r.out for p in range(5))
    assert (a / "test1-0").exists() and not (b / "test1-0").exists()


def test_execute_then_finish_and_cancel_futures(cli, dirs):
    a, b = dirs
    r = cli("move", "test1-0", "test5", "--from", a, "--to", b, "--same-disk", "--execute")
    assert r.code == 0, r.err
    assert "executed: 6 of 6 replica(s)" in r.err
    assert (b / "test1-0").is_dir() and not (a / "test1-0").exists()
    for p in (1, 2):
        copy_replica(str(a / f"test1-{p}"), str(b / f"test1-{p}.{'0' * 31}{p}-future"))
    r = cli("move", "test1-1", "--from", a, "--to", b, "--finish-future", "--execute")
    assert r.code == 0, r.err
    assert (b / "test1-1").is_dir() and not (a / "test1-1").exists()
    r = cli("move", "--from", a, "--to", b, "--cancel-future", "--execute", "-o", "json")
    assert r.code == 0, r.err
    assert [s["action"] for s in json.loads(r.out)] == ["cancel-future"]
    assert (a / "test1-2").is_dir() and not list(b.glob("*-future"))
