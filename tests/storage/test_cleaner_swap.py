"""A ``compact --execute`` killed (SIGKILL) at each step of its segment swap is repaired by
``pylogctl recover``: the log holds either every record it held before or exactly what the
uninterrupted cleaning leaves, its indexes verify, and cleaning again ends where the
uninterrupted run ended. Kill points come from ``tests/crash/crashpoint.py`` (the mutation
counter of the crash harness)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cleaner_support import BASE_TS, DAY, batches_of, data_records, random_workload, write_log
from pylogctl.storage.lock import LogDirLock

CRASHPOINT = Path(__file__).resolve().parents[1] / "crash" / "crashpoint.py"
NOW = BASE_TS + DAY
pytestmark = pytest.mark.skipif(not CRASHPOINT.exists(), reason="needs tests/crash/crashpoint.py")


def _compact_args(log_dir: Path) -> list[str]:
    return ["compact", str(log_dir), "--now-ms", str(NOW), "--config", "cleanup.policy=compact",
            "--execute"]


def _crashpoint(mode: list[str], log_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CRASHPOINT), *mode, "--under", str(log_dir), "--",
                           *_compact_args(log_dir)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """The log, the uninterrupted result, and the kill points of the swap phase: every one,
    and the boundaries between its steps."""
    root = tmp_path_factory.mktemp("swap")
    w = random_workload(21, batches=60, segment_batches=20)
    write_log(root / "pristine", w)
    done = root / "done"
    shutil.copytree(root / "pristine", done)
    counted = _crashpoint(["--count", str(root / "count"), "--trace", str(root / "trace")], done)
    assert counted.returncode == 0, counted.stderr
    events = [line.split() for line in (root / "trace").read_text().splitlines()]

    def first(test) -> int:
        return next(int(e[0]) for e in events if test(e))

    renames = [e for e in events if e[1] == "os.rename"]
    to_swap = first(lambda e: e[1] == "os.rename" and e[2].endswith(".cleaned"))
    to_deleted = first(lambda e: e[1] == "os.rename" and e[3].endswith(".deleted"))
    to_final = first(lambda e: e[1] == "os.rename" and e[2].endswith(".swap"))
    removed = first(lambda e: e[1] == "os.remove" and e[2].endswith(".deleted"))
    boundaries = sorted({to_swap - 1, to_swap, to_swap + 1, to_deleted, to_deleted + 1, to_final,
                         to_final + 1, removed, int(renames[-1][0]) - 1, int(renames[-1][0])})
    return (root, data_records(root / "pristine" / "t-0"), data_records(done / "t-0"),
            batches_of(done / "t-0"), boundaries, list(range(to_swap - 1, len(events) + 1)))


def test_the_swap_phase_has_kafkas_renames_in_kafkas_order(scenario):
    root, *_ = scenario
    renames = [line.split()[2:] for line in (root / "trace").read_text().splitlines()
               if line.split()[1] == "os.rename" and "/t-0/" in line]
    kinds = [(Path(a).suffix, Path(b).suffix) for a, b in renames]
    cleaned_to_swap = [i for i, k in enumerate(kinds) if k == (".cleaned", ".swap")]
    to_deleted = [i for i, k in enumerate(kinds) if k[1] == ".deleted" and k[0] != ".snapshot"]
    swap_to_final = [i for i, k in enumerate(kinds) if k[0] == ".swap"]
    assert cleaned_to_swap and to_deleted and swap_to_final
    assert max(cleaned_to_swap) < min(to_deleted) and max(to_deleted) < min(swap_to_final)


def test_a_kill_at_each_swap_step_is_repaired_by_recover(scenario, tmp_path, cli):
    root, before, after, after_batches, boundaries, _ = scenario
    _kill_and_repair(root, before, after, after_batches, boundaries, tmp_path, cli)


@pytest.mark.slow
def test_a_kill_at_every_mutation_from_the_swap_on_is_repaired_by_recover(scenario, tmp_path,
                                                                          cli):
    root, before, after, after_batches, _, points = scenario
    _kill_and_repair(root, before, after, after_batches, points, tmp_path, cli)


def _kill_and_repair(root, before, after, after_batches, points, tmp_path, cli) -> None:
    outcomes = set()
    for point in points:
        log_dir = tmp_path / f"kill-{point}"
        shutil.copytree(root / "pristine", log_dir)
        killed = _crashpoint(["--kill-at", str(point)], log_dir)
        assert killed.returncode == -9, (point, killed.stderr)
        recovered = cli("recover", log_dir, "--execute")
        assert recovered.code == 0, (point, recovered.err)
        now = data_records(log_dir / "t-0")
        assert now in (before, after), point
        outcomes.add("before" if now == before else "after")
        verify = cli("rebuild-index", "--verify", log_dir)
        assert verify.code == 0, (point, verify.err)
        with LogDirLock(log_dir):
            pass  # the killed process's lock died with it
        again = cli(*_compact_args(log_dir))
        assert again.code == 0, (point, again.err)
        assert data_records(log_dir / "t-0") == after, point
        if now == before:  # cleaned from scratch: the uninterrupted run's very batches
            assert batches_of(log_dir / "t-0") == after_batches, point
        assert cli("rebuild-index", "--verify", log_dir).code == 0, point
    assert outcomes == {"before", "after"}
