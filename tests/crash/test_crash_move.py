"""Crash safety of ``move --execute``: SIGKILLed at each of its file-system mutations, then
``pylogctl recover --execute`` on the broker's two log dirs. The partition must then be live in
exactly one of them, byte for byte as it was, with its checkpoint entries there and none in
the other dir, no future replica left, both dirs verifying and needing no more recovery; and
the move, run again if the partition is still in its source, ends as an uninterrupted run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crash_checks import check_state, recover
from crash_support import (count_kill_points, file_bytes, kill_each, read_checkpoint, run_cli,
                           spread, write_segmented_partition)
from pylogctl.storage.checkpoint import OFFSET_CHECKPOINTS
from pylogctl.storage.log_dir import LogDir
from pylogctl.tools.sample import write_sample_log_dir

MAX_KILLS = 18
MARKER = '{"version":0,"brokerEpoch":1}'


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("crash-move") / "broker"
    a, b = root / "a", root / "b"
    write_sample_log_dir(a)
    write_segmented_partition(a, "ts-0", 30, 10)
    (a / ".kafka_cleanshutdown").write_text(MARKER)
    logs = LogDir(str(a))
    logs.apply(logs.plan_all())  # the recovery point at the log end, as a clean shutdown leaves
    b.mkdir()
    meta = (a / "meta.properties").read_text()
    (b / "meta.properties").write_text(meta + "directory.id=second-dir\n")
    (b / ".kafka_cleanshutdown").write_text(MARKER)
    return root


def _args(root: Path) -> list:
    return ["move", "ts-0", "--from", root / "a", "--to", root / "b", "--same-disk",
            "--execute"]


def _state(root: Path) -> dict:
    """Where ts-0 is live, its files, and its checkpoint entries per dir."""
    where = [d for d in ("a", "b") if (root / d / "ts-0").is_dir()]
    return {"where": where,
            "files": file_bytes(root / where[0] / "ts-0") if len(where) == 1 else None,
            "entries": {d: {n: v for n in OFFSET_CHECKPOINTS if (root / d / n).exists()
                            and (v := read_checkpoint(root / d / n).get(("ts", 0))) is not None}
                        for d in ("a", "b")},
            "marker": (root / "b" / ".kafka_cleanshutdown").exists()}


def test_a_kill_at_any_point_is_repaired_by_recover(template, tmp_path):
    before = _state(template)
    assert before["where"] == ["a"] and len(list((template / "a" / "ts-0").glob("*.log"))) >= 3
    clean = tmp_path / "uninterrupted"
    shutil.copytree(template, clean)
    count, trace = count_kill_points(_args(clean), [clean], tmp_path / "tmp")
    final = _state(clean)
    assert final["where"] == ["b"] and final["files"] == before["files"]
    assert final["entries"]["b"] == before["entries"]["a"] and before["entries"]["a"]
    assert final["entries"]["a"] == {}
    assert final["marker"]
    # every rename too: each moves the partition from one state to the next
    kill_at = sorted(set(spread(count, MAX_KILLS))
                     | {n for n, line in enumerate(trace, 1) if " os.rename " in line})
    assert len(kill_at) >= 20

    def setup(work: Path) -> tuple[Path, Path, list]:
        root = work / "broker"
        shutil.copytree(template, root)
        return root, root / "a" / "ts-0", _args(root)

    def check(root: Path, part: Path, scratch: Path) -> list[str]:
        problems = recover(root, None, scratch)
        if problems:
            return problems
        now = _state(root)
        if len(now["where"]) != 1:
            return [f"ts-0 is live in {now['where']}"]
        [where] = now["where"]
        other = "b" if where == "a" else "a"
        if now["files"] != before["files"]:
            problems.append(f"ts-0's files in {where} differ from the source's")
        if now["entries"][where] != before["entries"]["a"]:
            problems.append(f"checkpoint entries in {where}: {now['entries'][where]}")
        if now["entries"][other]:
            problems.append(f"entries left in {other}: {now['entries'][other]}")
        futures = sorted(p.name for p in root.glob("*/*-future"))
        if futures:
            problems.append(f"future replicas left: {futures}")
        for d in ("a", "b"):
            problems += check_state(root / d, scratch)
        if where == "a":
            again = run_cli(_args(root), scratch)
            if again.returncode != 0:
                problems.append(f"run again, move exited {again.returncode}: "
                                f"{again.stderr[-500:]}")
        if _state(root)["where"] != ["b"] or _state(root)["files"] != final["files"]:
            problems.append("running the move again does not end as an uninterrupted run")
        return problems

    assert kill_each(kill_at, trace, tmp_path, setup, check) == []
