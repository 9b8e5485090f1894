"""kafka-delete-records' request file (DeleteRecordsCommand's parse) and the offline command
on several replicas: the in-step ones changed alike, one that is not left alone, a locked log
dir refused in every mode."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pylogctl.errors import UsageError
from pylogctl.storage.lock import LogDirLock
from pylogctl.tools.delete_records import parse_offset_json
from pylogctl.tools.sample import write_sample_log_dir
from support import run_pylogctl


def test_kafkas_request_file():
    text = json.dumps({"partitions": [{"topic": "t", "partition": 0, "offset": 10},
                                      {"topic": "u", "partition": 3, "offset": -1}]})
    assert parse_offset_json(text, "f") == [("t", 0, 10), ("u", 3, -1)]  # version 1 if absent


@pytest.mark.parametrize("text,message", [
    ('{"partitions": [', "f: The input string is not a valid JSON: Expecting value (line 1 "
                         "column 17, byte position 16)"),
    ('{"version": 2, "partitions": []}', "f: Not supported version field value 2"),
    ('{"version": 1}', "f: Missing partitions field"),
    ('{"partitions": [{"topic": "t", "offset": 1}]}',
     "f: partitions[0]: No such field exists: 'partition'"),
    ('{"partitions": [{"topic": "t", "partition": "0", "offset": 1}]}',
     'f: partitions[0]: partition "0" is not an integer'),
    ('{"partitions": [{"topic": "t", "partition": 0, "offset": 1}, '
     '{"topic": "t", "partition": 0, "offset": 2}]}',
     "f: Offset json file contains duplicate topic partitions: t-0"),
])
def test_bad_request_files(text, message):
    with pytest.raises(UsageError) as e:
        parse_offset_json(text, "f")
    assert str(e.value) == message


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    """Three brokers' copies of the sample: the third one behind (its last batch lost)."""
    for b in (1, 2, 3):
        write_sample_log_dir(tmp_path / f"b{b}")
    log = tmp_path / "b3" / "orders-0" / "00000000000000000000.log"
    log.write_bytes(log.read_bytes()[:-100])
    return tmp_path


def test_in_step_replicas_change_alike_the_others_are_left_alone(cluster):
    behind = (cluster / "b3" / "orders-0" / "00000000000000000000.log").read_bytes()
    run = run_pylogctl("delete-records", cluster, "--topic", "orders", "--partition", "0",
                       "--offset", "9", "--execute", "-o", "json")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert [(r["lowWatermark"], r["lowWatermarkBefore"]) for r in rows] == [(9, 0)]
    assert len(rows[0]["replicas"]) == 2 and "not in step" in run.stderr
    for b in ("b1", "b2"):
        assert (cluster / b / "log-start-offset-checkpoint").read_text().endswith("orders 0 9\n")
        assert run_pylogctl("get-offsets", cluster / b, "--time", "-2").stdout == "orders:0:9\n"
    assert (cluster / "b3" / "orders-0" / "00000000000000000000.log").read_bytes() == behind
    assert "orders" not in (cluster / "b3" / "log-start-offset-checkpoint").read_text()


def test_the_plan_writes_nothing_and_a_locked_log_dir_is_refused(cluster):
    before = {p: p.read_bytes() for p in cluster.rglob("*") if p.is_file()}
    plan = run_pylogctl("delete-records", cluster / "b1", "--topic", "orders", "--partition",
                        "0", "--offset", "-1")
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout == ("Records delete plan (nothing changed; --execute deletes):\n"
                           "partition: orders-0\tlow_watermark: 19\n")
    assert {p: p.read_bytes() for p in cluster.rglob("*") if p.is_file()} == before
    with LogDirLock(cluster / "b1"):
        for mode in ((), ("--execute",)):
            run = run_pylogctl("delete-records", cluster / "b1", "--topic", "orders",
                               "--partition", "0", "--offset", "3", *mode)
            assert run.returncode == 4 and "Failed to acquire lock" in run.stderr
            assert len(run.stderr.splitlines()) == 1


def test_options_are_either_the_file_or_one_partition(cluster):
    for args in (("--topic", "orders"), ("--offset-json-file", "x", "--offset", "1")):
        run = run_pylogctl("delete-records", cluster / "b1", *args)
        assert run.returncode == 2 and len(run.stderr.splitlines()) == 1, run.stderr


def test_backup_dir_keeps_what_changed(cluster, tmp_path):
    backup = tmp_path / "backup"
    shutil.copyfile(cluster / "b1" / "orders-0" / "leader-epoch-checkpoint",
                    tmp_path / "b1-before")
    shutil.rmtree(cluster / "b2")
    shutil.rmtree(cluster / "b3")
    run = run_pylogctl("delete-records", cluster / "b1", "--topic", "orders", "--partition", "0",
                       "--offset", "4", "--execute", "--backup-dir", backup)
    assert run.returncode == 0, run.stderr
    saved = sorted(str(p.relative_to(backup)) for p in backup.rglob("*") if p.is_file())
    assert saved == ["log-start-offset-checkpoint", "orders-0/leader-epoch-checkpoint",
                     "recovery-point-offset-checkpoint"]
    assert (backup / "orders-0" / "leader-epoch-checkpoint").read_text() == (
        tmp_path / "b1-before").read_text()
