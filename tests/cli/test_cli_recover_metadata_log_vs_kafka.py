"""``pylogctl recover`` on the KRaft metadata log, judged by Kafka's raft layer
(``KafkaRaftLog.createLog``: ``recoverSnapshots``, then ``truncateToLatestSnapshot``).

A real Kafka 4.x broker writes a metadata log of several segments and snapshots
(:func:`raft_scenario`) and is SIGKILLed. Each variant damages two copies alike; the real
broker starts on one, ``pylogctl recover --execute`` runs on the other, and then:

- the log restarts where Kafka's did: the snapshot Kafka loads (its "Loading snapshot" line),
  the segments, and the snapshots kept are the same on both;
- a second plan is empty, and the real broker started on pylogctl's copy finds nothing of its
  own to do (no snapshot deleted or forgotten, no truncation) and loads the same snapshot;
- where Kafka cannot start ("Inconsistent snapshot state"), pylogctl says so with the same
  words, exits 1 and changes nothing.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kafka_answers import started_and_stopped
from kafka_jvm import KafkaBroker
from kafka_scenarios import raft_scenario
from support import run_pylogctl

META = "__cluster_metadata-0"
LOADING = re.compile(r"Loading snapshot \((OffsetAndEpoch\[offset=\d+, epoch=\d+\])\)")
# what Kafka's raft layer does at start-up to a log it must repair
RAFT_REPAIRS = ("Deleted unneeded snapshot file", "because the partition was fully truncated",
                "Deleting segments as part of log truncation")
TRUNCATED = re.compile(r"Deleting segments as part of log truncation: (.*) \(org\.apache")


def _snapshots(meta: Path) -> list[str]:
    return sorted(p.name for p in meta.glob("*.checkpoint"))


def _segments(meta: Path) -> list[str]:
    return sorted(p.name for p in meta.glob("*.log"))


def _lose_segments(meta: Path) -> None:
    """Every segment and index gone, a snapshot write cut short, one marked for deletion."""
    for p in meta.iterdir():
        if p.suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot"):
            p.unlink()
    latest = _snapshots(meta)[-1]
    shutil.copyfile(meta / latest, meta / (latest[:-len(".checkpoint")] + "-42.checkpoint.part"))
    first = _snapshots(meta)[1]
    (meta / first).rename(meta / (first + ".deleted"))


def _lose_tail(meta: Path) -> None:
    """The last two segments gone: the log ends before its latest snapshot."""
    for log in _segments(meta)[-2:]:
        for p in meta.glob(log[:-len(".log")] + ".*"):
            p.unlink()


def _lose_head(meta: Path) -> None:
    """The first segment gone, and every snapshot that covered it: Kafka cannot start."""
    logs = _segments(meta)
    for p in meta.glob(logs[0][:-len(".log")] + ".*"):
        p.unlink()
    for name in _snapshots(meta):
        p = meta / name
        p.unlink()


def _copies(tmp_path: Path, damage) -> tuple[Path, Path]:
    source = raft_scenario().log_dir
    theirs, ours = tmp_path / "kafka" / "logs", tmp_path / "pylogctl" / "logs"
    for target in (theirs, ours):
        shutil.copytree(source, target)
        damage(target / META)
    return theirs, ours


def _start(log_dir: Path) -> str:
    """The real broker started and stopped on ``log_dir``; its log (kept per machine for
    these very bytes: :mod:`kafka_answers`)."""
    return started_and_stopped(log_dir, log_dir.parent / "broker", [Path(__file__)])


@pytest.mark.parametrize("damage", [_lose_segments, _lose_tail], ids=["segments-lost",
                                                                       "tail-lost"])
def test_recover_restarts_the_metadata_log_where_kafka_does(tmp_path, damage):
    theirs, ours = _copies(tmp_path, damage)
    meta_before = _snapshots(ours / META)

    run = run_pylogctl("recover", str(ours / META), "--execute")
    assert run.returncode == 0, run.stderr
    assert "KafkaRaftLog.truncateToLatestSnapshot" in run.stdout
    check = run_pylogctl("recover", str(ours / META), "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    ours_snapshots, ours_segments = _snapshots(ours / META), _segments(ours / META)

    kafka_log = _start(theirs)
    assert any(line in kafka_log for line in RAFT_REPAIRS)  # the damage needed Kafka's repair
    loaded = LOADING.findall(kafka_log)
    assert loaded
    # Kafka's own result: the snapshots it kept (those it forgot are .checkpoint.deleted now)
    # and the segment the log restarted with (the records Kafka appended at start-up went into
    # it), against pylogctl's
    assert _snapshots(theirs / META) == ours_snapshots
    assert ours_segments == _segments(theirs / META)[:1]
    assert set(ours_snapshots) < set(meta_before)

    served_log = _start(ours)
    assert LOADING.findall(served_log) == loaded
    assert not [line for line in RAFT_REPAIRS[:2] if line in served_log]
    # Kafka truncates a log whose epoch cache is empty to its latest snapshot at every start,
    # its own result included: on pylogctl's, that is the one empty segment at the snapshot
    offset = re.search(r"offset=(\d+)", loaded[0]).group(1)
    for segments in TRUNCATED.findall(served_log):
        assert re.fullmatch(rf"LogSegment\(baseOffset={offset}, size=0, [^)]*\)", segments)


def test_recover_refuses_a_metadata_log_kafka_cannot_start(tmp_path):
    theirs, ours = _copies(tmp_path, _lose_head)
    before = sorted(p.name for p in (ours / META).iterdir())

    run = run_pylogctl("recover", str(ours / META), "--execute")
    assert run.returncode == 1
    ours_message = re.search(r"Inconsistent snapshot state: [^(]*", run.stderr + run.stdout)
    assert ours_message, run.stderr
    assert sorted(p.name for p in (ours / META).iterdir()) == before

    broker = KafkaBroker(log_dir=theirs, work_dir=theirs.parent / "broker")
    with pytest.raises(AssertionError, match="exited"):
        broker.start(timeout=60)
    assert ours_message.group(0).strip() in broker.log_text()
