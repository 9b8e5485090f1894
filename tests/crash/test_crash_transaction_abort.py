"""Crash safety of ``transactions abort --execute``: SIGKILLed at each of its file-system
mutations, then ``pylogctl recover --execute``. Every batch the partition held before must
still be there, byte for byte; the transaction is either still open at its start offset or
closed by exactly one ABORT marker; the log dir verifies and needs no more recovery; and
running the command again ends where an uninterrupted run ends.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crash_checks import check_state, recover
from crash_support import count_kill_points, kill_each, partition_batches, run_cli, spread
from pylogctl.format.transaction_log_records import TransactionState as S
from pylogctl.groups.producer_states import producer_states, replica_for
from pylogctl.groups.replicas import LogDirs
from transactions_support import NOW, PartitionLog, TransactionStateLog, log_dir, metadata

MAX_KILLS = 16
START = 3  # producer 8's open transaction


def open_start(d: Path) -> int | None:
    """Where producer 8's transaction starts in the producer state (None: closed)."""
    state = producer_states(replica_for(LogDirs([d]), "orders", 0), "orders", 0, NOW)
    found = [p.current_transaction_start_offset for p in state.producers if p.producer_id == 8]
    assert found, f"producer 8 is not in the producer state of {d}"
    return found[0]


def abort_markers(part: Path, before: int) -> int:
    return len(partition_batches(part, strict=True)) - before


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    d = log_dir(tmp_path_factory.mktemp("crash-abort"))
    t = PartitionLog(d, "orders", 0, leader_epoch=2)
    t.txn(7)
    t.marker(7, True)
    t.txn(8)
    for _ in range(3):
        t.records([(b"k", b"plain")], producer_id=20)
    t.high_watermark(d)
    t.snapshot()
    log = TransactionStateLog(d)
    log.write(metadata("lost", 8, S.Ongoing, partitions=frozenset({("orders", 0)})))
    log.write(None, "lost")
    (d / ".kafka_cleanshutdown").write_text("{\"version\":0,\"brokerEpoch\":1}")
    return d


def test_a_kill_at_any_point_leaves_the_transaction_open_or_aborted(template, tmp_path):
    part = template / "orders-0"
    before = partition_batches(part, strict=True)
    assert open_start(template) == START

    def args(d: Path) -> list:
        return ["transactions", "abort", d, "--topic", "orders", "--partition", "0",
                "--start-offset", str(START), "--execute"]

    clean = tmp_path / "uninterrupted"
    shutil.copytree(template, clean)
    count, trace = count_kill_points(args(clean), [clean], tmp_path / "tmp")
    assert open_start(clean) is None and abort_markers(clean / "orders-0", len(before)) == 1
    kill_at = spread(count, MAX_KILLS)
    assert len(kill_at) >= 6

    def setup(work: Path) -> tuple[Path, Path, list]:
        d = work / "broker"
        shutil.copytree(template, d)
        return d, d / "orders-0", args(d)

    def check(d: Path, part: Path, scratch: Path) -> list[str]:
        problems = recover(d, None, scratch)
        if problems:
            return problems
        after = partition_batches(part, strict=True)
        if after[:len(before)] != before:
            problems.append("batches written before the command were lost or changed")
        start, markers = open_start(d), len(after) - len(before)
        if (start, markers) not in ((START, 0), (None, 1)):
            problems.append(f"transaction start {start} with {markers} new batches: neither "
                            f"open nor aborted once")
        problems += check_state(d, scratch)
        again = run_cli(args(d), scratch)
        if start == START and again.returncode != 0:
            problems.append(f"the command run again exited {again.returncode}: "
                            f"{again.stderr[-500:]}")
        if start is None and again.returncode != 2:
            problems.append(f"run again after the marker, the command exited "
                            f"{again.returncode}, not 2")
        if open_start(d) is not None or abort_markers(part, len(before)) != 1:
            problems.append("running the command again does not end as an uninterrupted run")
        return problems

    assert kill_each(kill_at, trace, tmp_path, setup, check) == []
