"""Crash safety of ``delete-records --execute``: SIGKILLed at each of its file-system
mutations, then ``pylogctl recover --execute``. The log left must be the old one from a
segment boundary on, with every batch at or above the requested offset still there, byte for
byte; the log start offset is the old one or the new one; the log dir verifies and needs no
more recovery; and running the command again ends where an uninterrupted run ends.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crash_checks import check_state, recover
from crash_support import (count_kill_points, kill_each, partition_batches, read_checkpoint,
                           run_cli, segment_logs, spread, write_segmented_partition)
from pylogctl.tools.sample import write_sample_log_dir

MAX_KILLS = 24
OFFSET = 80  # inside the third segment: two go


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("crash-delete-records") / "logs"
    write_sample_log_dir(d)
    offset = write_segmented_partition(d, "ts-0", 60, 20)
    checkpoint = d / "replication-offset-checkpoint"
    entries = checkpoint.read_text().split("\n")[2:-1] + [f"ts 0 {offset}"]
    checkpoint.write_text(f"0\n{len(entries)}\n" + "".join(e + "\n" for e in entries))
    (d / ".kafka_cleanshutdown").write_text("{\"version\":0,\"brokerEpoch\":1}")
    return d


def test_a_kill_at_any_point_is_repaired_by_recover(template, tmp_path):
    part = template / "ts-0"
    before = partition_batches(part, strict=True)
    bases = [b for b, _ in segment_logs(part)]
    assert len(bases) >= 4 and bases[1] < bases[2] <= OFFSET < bases[3]

    def args(d: Path) -> list:
        return ["delete-records", d, "--topic", "ts", "--partition", "0", "--offset",
                str(OFFSET), "--execute"]

    clean = tmp_path / "uninterrupted"
    shutil.copytree(template, clean)
    count, trace = count_kill_points(args(clean), [clean], tmp_path / "tmp")
    final = partition_batches(clean / "ts-0", strict=True)
    final_bases = [b for b, _ in segment_logs(clean / "ts-0")]
    assert final_bases == bases[2:] and final == [b for b in before if b.base >= bases[2]]
    assert read_checkpoint(clean / "log-start-offset-checkpoint")[("ts", 0)] == OFFSET
    kill_at = spread(count, MAX_KILLS)
    assert len(kill_at) >= 6

    def setup(work: Path) -> tuple[Path, Path, list]:
        d = work / "logs"
        shutil.copytree(template, d)
        return d, d / "ts-0", args(d)

    def check(d: Path, part: Path, scratch: Path) -> list[str]:
        problems = recover(d, None, scratch)
        if problems:
            return problems
        after = partition_batches(part, strict=True)
        if not after or after[0].base not in bases or before[before.index(after[0]):] != after:
            problems.append("the batches left are not the old log from a segment on")
        if [b for b in final if b not in set(after)]:
            problems.append("batches at or above the new log start were lost")
        start = read_checkpoint(d / "log-start-offset-checkpoint").get(("ts", 0))
        if start not in (None, OFFSET):
            problems.append(f"log start offset checkpoint {start}")
        problems += check_state(d, scratch)
        again = run_cli(args(d), scratch)
        if again.returncode != 0:
            problems.append(f"run again, the command exited {again.returncode}: "
                            f"{again.stderr[-500:]}")
        if (partition_batches(part, strict=True), [b for b, _ in segment_logs(part)]) != (
                final, final_bases):
            problems.append("running the command again does not end as an uninterrupted run")
        return problems

    assert kill_each(kill_at, trace, tmp_path, setup, check) == []
