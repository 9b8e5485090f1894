"""``pylogctl recover`` judged by Apache Kafka's own start-up recovery, on a real broker's dir.

A real Kafka 4.x broker is SIGKILLed in the middle of a produce storm (:func:`killed_scenario`:
several segments per partition, idempotent and transactional producers, a transaction left
open). Two copies of its log dir: on one ``pylogctl recover --execute``; on the other the real
broker starts (its LogLoader recovers) and stops cleanly. The partitions' files must then be the
same, byte for byte, except what a broker does beyond recovery, each named here:

- ``leader-epoch-checkpoint``: becoming leader again at start-up appends the new epochs at the
  log end (``Partition.makeLeader``); Kafka's file is pylogctl's plus those entries;
- the high watermark: the restarted single-replica leader moves it to the log end;
- the recovery point: Kafka's clean shutdown flushes every log, so it is the log end;
- ``__cluster_metadata-0``: the raft layer appends its own records at start-up; pylogctl's log
  is a prefix of Kafka's.

The "torn" variant also cuts 37 bytes off some active segments and deletes their indexes and
latest producer snapshot, as a power loss can leave them, so that both have to truncate and
rebuild. The "unclean" variant is another scenario (:func:`generated_scenario`: every codec,
compacted and retention-trimmed topics, a deleted topic, transactions, consumer, share and
streams groups), stopped cleanly but then with its clean-shutdown marker gone and every
recovery point at 0, so both recover every segment of every partition. Then the real broker
starts on pylogctl's result and must find nothing to repair.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kafka_answers import cached_json, dir_key, started_and_stopped
from kafka_jvm import KafkaBroker
from kafka_scenarios import generated_scenario, killed_scenario
from kafka_served import REPAIR_LINES
from support import run_pylogctl

CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
               "log-start-offset-checkpoint")


def tear(log_dir: Path) -> None:
    """A power loss's leftovers: torn tails, lost indexes and snapshots."""
    for part in ("storm-0", "storm-1", "storm-txn-0"):
        d = log_dir / part
        last = sorted(d.glob("*.log"))[-1]
        os.truncate(last, last.stat().st_size - 37)
        for ext in (".index", ".timeindex"):
            last.with_suffix(ext).unlink(missing_ok=True)
        snapshots = sorted(d.glob("*.snapshot"))
        if snapshots:
            snapshots[-1].unlink()


def checkpoint(path: Path) -> dict[str, int]:
    lines = path.read_text().split("\n")[2:]
    return {f"{t}-{p}": int(o) for t, p, o in (ln.split() for ln in lines if ln.strip())}


def epochs(path: Path) -> list[str]:
    return path.read_text().split("\n")[2:]


def log_end(partition: Path) -> int:
    """The offset after the last batch of the last segment (its base offset when empty)."""
    last = sorted(partition.glob("*.log"))[-1]
    batches = json.loads(run_pylogctl("dump-segment", "-o", "json", last).stdout)[0]["batches"]
    return batches[-1]["lastOffset"] + 1 if batches else int(last.stem)


def serve(log_dir: Path, work: Path) -> list[str]:
    """Start the real broker on ``log_dir``, check it serves every data partition up to the
    log end in the files, stop it; its log lines. (Kept per machine for these very bytes:
    :mod:`kafka_answers`.)"""
    def ask() -> dict:
        kafka = KafkaBroker(log_dir=log_dir, work_dir=work / "broker")
        kafka.start()
        try:
            offsets = kafka.tool("kafka-get-offsets", "--exclude-internal-topics", "--time",
                                 "-1").stdout
        finally:
            kafka.stop()
        ends = {f"{t}-{p}": int(o) for t, p, o in (ln.rsplit(":", 2) for ln in offsets.split())}
        # the files' ends as the broker left them (it may have appended abort markers)
        return {"ends": ends, "in_files": {tp: log_end(log_dir / tp) for tp in ends},
                "log": kafka.log_text().splitlines()}

    answer = cached_json("recover-served", dir_key(log_dir, [Path(__file__)]), ask)
    assert answer["ends"] == answer["in_files"] and len(answer["ends"]) >= 3
    return answer["log"]


def unclean(log_dir: Path) -> None:
    """A cleanly stopped dir as if it had not been: no marker, every recovery point at 0."""
    (log_dir / ".kafka_cleanshutdown").unlink()
    path = log_dir / "recovery-point-offset-checkpoint"
    path.write_text("".join(f"{ln.rsplit(' ', 1)[0]} 0\n" if i >= 2 else ln + "\n"
                            for i, ln in enumerate(path.read_text().splitlines())))


@pytest.fixture(scope="module", params=["sigkill", "torn", "unclean"])
def recovered(request, tmp_path_factory):
    scenario = generated_scenario if request.param == "unclean" else killed_scenario
    source = scenario().log_dir
    work = tmp_path_factory.mktemp(request.param)
    ours, theirs = work / "pylogctl" / "logs", work / "kafka" / "logs"
    shutil.copytree(source, ours)
    shutil.copytree(source, theirs)
    damage = {"torn": tear, "unclean": unclean}.get(request.param)
    if damage is not None:
        damage(ours)
        damage(theirs)
    result = run_pylogctl("recover", ours, "--execute")
    assert result.returncode == 0, result.stderr
    # Kafka's own recovery (kept per machine for these very bytes: kafka_answers)
    started_and_stopped(theirs, work / "kafka" / "broker", [Path(__file__)])
    return ours, theirs


def test_partition_files_are_kafkas_after_its_own_recovery(recovered) -> None:
    ours, theirs = recovered
    compared = 0
    for part in sorted(p.name for p in ours.iterdir() if p.is_dir()):
        if part == "__cluster_metadata-0" or part.endswith("-delete"):
            continue  # (a deleted topic's dir: Kafka removes it at start-up)
        mine, kafkas = ours / part, theirs / part
        if log_end(kafkas) > log_end(mine):
            # Kafka's coordinators wrote after recovering (a transaction that expired while
            # the broker was down is aborted at start-up): what we recovered is its prefix
            assert_appended_to(mine, kafkas)
            continue
        assert sorted(os.listdir(mine)) == sorted(os.listdir(kafkas)), part
        for name in os.listdir(mine):
            if name == "leader-epoch-checkpoint":
                old, new = epochs(mine / name), epochs(kafkas / name)
                assert [e for e in new if e not in old and e] and \
                       all(e in new for e in old if e), (part, old, new)
                continue
            assert (mine / name).read_bytes() == (kafkas / name).read_bytes(), f"{part}/{name}"
            compared += 1
    assert compared >= 30


def assert_appended_to(mine: Path, kafkas: Path) -> None:
    """Every segment of ours is Kafka's, the last one as a prefix of Kafka's."""
    segments = sorted(mine.glob("*.log"))
    for segment in segments:
        theirs = (kafkas / segment.name).read_bytes()
        ours = segment.read_bytes()
        if segment == segments[-1]:
            assert theirs.startswith(ours), segment
        else:
            assert theirs == ours, segment


def test_log_dir_checkpoints_differ_only_as_a_restart_moves_them(recovered) -> None:
    ours, theirs = recovered
    assert checkpoint(ours / "log-start-offset-checkpoint") == \
           checkpoint(theirs / "log-start-offset-checkpoint")
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        mine, kafkas = checkpoint(ours / name), checkpoint(theirs / name)
        assert mine.keys() == kafkas.keys()
        for tp, offset in kafkas.items():
            assert mine[tp] <= offset == log_end(theirs / tp), (name, tp)


def test_cluster_metadata_log_is_a_prefix_of_kafkas(recovered) -> None:
    ours, theirs = recovered
    mine = (ours / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()
    kafkas = (theirs / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()
    assert mine and kafkas.startswith(mine)


def test_kafka_starts_on_the_recovered_dir_and_repairs_nothing(recovered, tmp_path) -> None:
    ours, _ = recovered
    copy = tmp_path / "logs"
    shutil.copytree(ours, copy)
    lines = serve(copy, tmp_path)
    assert not [ln for ln in lines if any(p in ln for p in REPAIR_LINES)]


def test_mark_clean_lets_kafka_start_without_recovering(recovered, tmp_path) -> None:
    """``--mark-clean`` leaves what a clean shutdown leaves: Kafka then loads every log as
    cleanly shut down, recovers no segment, and serves the same log ends."""
    ours, _ = recovered
    copy = tmp_path / "logs"
    shutil.copytree(ours, copy)
    (copy / ".kafka_cleanshutdown").unlink(missing_ok=True)
    result = run_pylogctl("recover", copy, "--execute", "--mark-clean")
    assert result.returncode == 0, result.stderr
    assert "marked clean" in result.stderr
    assert checkpoint(copy / "recovery-point-offset-checkpoint") == {
        tp: log_end(copy / tp) for tp in checkpoint(copy / "recovery-point-offset-checkpoint")}
    lines = serve(copy, tmp_path)
    assert any("since clean shutdown file was found" in ln for ln in lines)
    recovering = [ln for ln in lines if "Recovering unflushed segment" in ln
                  and "__cluster_metadata" not in ln]
    assert not recovering and not [ln for ln in lines if any(p in ln for p in REPAIR_LINES)]
