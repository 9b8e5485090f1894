"""``pylogctl compact``: plan, execute, formats, partition selection, exit codes and locks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cleaner_support import (BASE_TS, DAY, cleaner_checkpoint, data_records,
                             expected_after_first_clean, random_workload, write_log)
from load_support import copy_partition, fingerprint
from rebuild_index_support import lock_held

NOW = str(BASE_TS + DAY)
COMPACT = ("--config", "cleanup.policy=compact")


@pytest.fixture
def log_dir(tmp_path) -> Path:
    write_log(tmp_path / "logs", random_workload(40))
    return tmp_path / "logs"


def test_the_plan_shows_the_dirty_section_and_the_saving_and_writes_nothing(cli, log_dir):
    before = fingerprint(log_dir)
    r = cli("compact", log_dir, "--now-ms", NOW, *COMPACT)
    assert r.code == 0, r.err
    assert fingerprint(log_dir) == before
    assert r.lines[0].startswith(f"t-0 ({log_dir / 't-0'}): log start 0, log end ")
    assert r.lines[1].startswith("  dirty section [0, ") and "dirty ratio 1.0000 (min 0.5)" in r.lines[1]
    assert r.lines[2] == "  clean: dirty ratio 1.0000 > min.cleanable.dirty.ratio 0.5"
    assert r.lines[3].startswith("  round 1: [0, ")
    assert " saved, " in r.lines[3] and " removed); 0 invalid; offset map " in r.lines[3]
    assert r.lines[4].startswith("  checkpoint cleaner-offset-checkpoint: absent -> ")
    assert r.lines[-1] == "  would clean (nothing changed)"
    assert r.err.splitlines()[-1].startswith("plan: would compact 1 of 1 partition, ")
    assert r.err.splitlines()[-1].endswith("(run with --execute to clean)")


def test_execute_cleans_checkpoints_and_a_second_run_has_nothing_to_do(cli, log_dir):
    w = random_workload(40)
    r = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "--execute", "-o", "json")
    assert r.code == 0, r.err
    section, = json.loads(r.out)
    assert section["executed"] and section["clean"] and section["error"] is None
    assert section["spaceSaved"] == section["bytesBefore"] - section["bytesAfter"] > 0
    stats = section["rounds"][0]["stats"]
    assert stats["recordsRemoved"] == stats["messagesRead"] - stats["messagesWritten"] > 0
    assert stats["mbPerSec"] is not None and stats["elapsedSecs"] >= stats["indexSecs"]
    end = cleaner_checkpoint(log_dir)
    assert section["checkpointUpdates"] == [{"checkpoint": "cleaner-offset-checkpoint",
                                             "topic": "t", "partition": 0, "old": None,
                                             "new": end}]
    assert data_records(log_dir / "t-0") == expected_after_first_clean(w, end)
    assert r.err.splitlines()[-1].startswith("executed: compacted 1 of 1 partition")
    assert cli("rebuild-index", "--verify", log_dir).code == 0
    files = fingerprint(log_dir)
    again = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "--execute", "-v")
    assert again.code == 0 and again.lines[-1] == "  nothing to change"
    assert fingerprint(log_dir) == files


def test_ndjson_has_a_round_per_line_and_yaml_parses(cli, log_dir):
    nd = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "-o", "ndjson")
    rounds = [json.loads(line) for line in nd.lines]
    assert [r["round"] for r in rounds] == [1] and rounds[0]["complete"]
    y = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "-o", "yaml")
    doc = yaml.safe_load(y.out)
    assert doc[0]["partition"] == "t-0" and doc[0]["rounds"][0]["round"] == 1


def test_a_topic_not_compacted_is_skipped_unless_named(cli, log_dir):
    r = cli("compact", log_dir, "--now-ms", NOW, "-v")
    assert r.lines[1] == "  skip: not a compacted topic (cleanup.policy=delete)"
    assert r.err.splitlines()[-1].startswith("plan: would compact 0 of 1 partition")
    forced = cli("compact", log_dir, "--now-ms", NOW, "--partition", "t-0")
    assert "  clean: forced (dirty ratio 1.0000)" in forced.lines


def test_bad_partitions_are_usage_errors(cli, log_dir):
    assert cli("compact", log_dir, "--partition", "t0").code == 2
    missing = cli("compact", log_dir, "--partition", "t-7")
    assert missing.code == 2 and "No partition t-7" in missing.err


def test_a_running_brokers_lock_stops_every_mode(cli, log_dir):
    with lock_held(log_dir):
        for extra in ((), ("--execute",)):
            r = cli("compact", log_dir, *COMPACT, *extra)
            assert r.code == 4 and "lock" in r.err


def test_backup_dir_keeps_the_replaced_segments(cli, log_dir, tmp_path):
    warn = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "--backup-dir", tmp_path / "b")
    assert "--backup-dir has no effect without --execute" in warn.err
    logs = {p.name: p.read_bytes() for p in (log_dir / "t-0").glob("*.log")}
    r = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "--execute", "--backup-dir",
            tmp_path / "b")
    assert r.code == 0, r.err
    kept = {p.name: p.read_bytes() for p in (tmp_path / "b" / "t-0").glob("*.log")}
    assert kept and all(logs[name] == data for name, data in kept.items())
    assert not (tmp_path / "b" / "cleaner-offset-checkpoint").exists()  # there was none


def test_bad_data_is_reported_with_its_file_and_position(cli, log_dir):
    first = sorted((log_dir / "t-0").glob("*.log"))[0]
    size = first.stat().st_size
    with open(first, "ab") as f:  # below the recovery point: loading does not cut it
        f.write(bytes(30))
    for extra in ((), ("--execute",)):
        r = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, *extra)
        assert r.code == 1
        assert f"{first}. (byte position {size})" in r.err
        assert r.err.splitlines()[-1].split(":")[1].startswith(" would compact 0" if not extra
                                                              else " compacted 0")


@pytest.mark.corpus
def test_the_kraft_metadata_log_is_never_cleaned(cli, corpus, tmp_path):
    root, _ = copy_partition(corpus, "ksql-kraft-2023", "__cluster_metadata-0", tmp_path)
    r = cli("compact", root, "--partition", "__cluster_metadata-0", "-o", "json")
    section, = json.loads(r.out)
    assert not section["clean"] and "KRaft" in section["reason"]


def test_without_a_high_watermark_the_plan_says_why_and_log_end_cleans(cli, log_dir):
    """No replication-offset-checkpoint: a broker loads the high watermark as the log start,
    so nothing is cleanable offline; the plan says so and --high-watermark log-end cleans."""
    (log_dir / "replication-offset-checkpoint").unlink()
    r = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "-v")
    assert r.code == 0, r.err
    assert "high watermark 0, last stable offset 0" in r.lines[0]
    assert r.lines[-2] == (
        "  note: replication-offset-checkpoint is missing: the high watermark is 0, so nothing "
        "above it is cleanable; if every record up to the log end 391 is known to be "
        "committed, rerun with --high-watermark log-end")
    assert ("pylogctl: 1 partition has no high watermark in replication-offset-checkpoint: "
            "nothing above the log start is cleanable; --high-watermark log-end cleans up to "
            "the log end if the data is known to be committed") in r.err.splitlines()
    r = cli("compact", log_dir, "--now-ms", NOW, *COMPACT, "--high-watermark", "log-end",
            "--execute", "-o", "json")
    assert r.code == 0, r.err
    section, = json.loads(r.out)
    assert section["clean"] and section["executed"] and section["highWatermark"] == 391
    assert cleaner_checkpoint(log_dir) == 391
    assert data_records(log_dir / "t-0") == expected_after_first_clean(random_workload(40), 391)
    assert not (log_dir / "replication-offset-checkpoint").exists()  # left as it was
    r = cli("compact", log_dir, "--high-watermark", "leo")
    assert r.code == 2 and r.err == ("pylogctl: --high-watermark is checkpoint or log-end, "
                                     "not 'leo'\n")
