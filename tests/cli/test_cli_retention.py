"""``pylogctl retention``: plan, execute, skips, formats, exit codes and locks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from load_support import fingerprint, writable_copy
from rebuild_index_support import lock_held
from retention_support import (DAY, NOW, Seg, build_log, checkpoint_entry, kafka_python_offsets,
                               segment_bases)

INVOICE_NOW = 1_718_500_000_000  # a day after invoice-multiseg was written


@pytest.fixture
def invoice(corpus, tmp_path) -> Path:
    return writable_copy(corpus / "invoice-multiseg", tmp_path / "invoice")


def test_plan_then_execute_then_nothing_left_to_do(cli, tmp_path):
    log_dir = tmp_path / "logs"
    part = build_log(log_dir, [Seg(3, NOW - 10 * DAY), Seg(3, NOW - 9 * DAY), Seg(3, NOW)])
    args = ["retention", log_dir, "--now-ms", NOW, "--config", f"retention.ms={7 * DAY}"]
    before = fingerprint(log_dir)
    plan = cli(*args, "-o", "json")
    assert plan.code == 0, plan.err
    assert fingerprint(log_dir) == before
    planned = json.loads(plan.out)[0]
    assert [(d["baseOffset"], d["rule"]) for d in planned["deletions"]] == [
        (0, "retention.ms"), (3, "retention.ms")]
    assert (planned["logStartOffset"], planned["executed"]) == (6, False)
    assert planned["config"]["retention.ms"] == {"value": str(7 * DAY), "source": "command-line"}
    done = cli(*args, "--execute", "-o", "json")
    assert done.code == 0, done.err
    executed = json.loads(done.out)[0]
    assert executed["mismatches"] == [] and executed["executed"] is True
    assert executed["deletions"] == planned["deletions"]
    assert segment_bases(part) == [6] and kafka_python_offsets(part) == [6, 7, 8]
    assert checkpoint_entry(log_dir, "log-start-offset-checkpoint") is None  # the first base
    assert "executed: deleted 2 segments" in done.err
    again = cli(*args, "-v")
    assert again.code == 0 and "  nothing to delete" in again.out
    assert cli("recover", log_dir, "--check").code == 0


def test_text_plan_names_each_segment_and_rule(cli, invoice):
    done = cli("retention", invoice, "--partition", 1, "--now-ms", INVOICE_NOW,
               "--config", "retention.bytes=2000000")
    assert done.code == 0, done.err
    lines = done.lines
    assert lines[0].startswith(f"invoice-1 ({invoice / 'invoice-1'}): cleanup.policy=delete "
                               f"(default), retention.ms=604800000 (default), "
                               f"retention.bytes=2000000 (command-line)")
    deletion = next(line for line in lines if line.startswith("  1. delete segment 0 ("))
    assert "by retention.bytes" in deletion
    assert any(line.startswith("  pass retention.ms (retention.ms=604800000): nothing to "
                               "delete; segment 30620 is kept:") for line in lines)
    # the new log start is the first segment's base: no entry, as in Kafka
    assert not [line for line in lines if "checkpoint log-start-offset-checkpoint" in line]
    assert lines[-1] == "  would delete 1 segment (nothing changed)"
    assert "plan: 1 segment" in done.err and "run with --execute" in done.err


def test_execute_with_a_backup_on_the_corpus(cli, invoice, tmp_path):
    before = {p.name: p.read_bytes() for p in (invoice / "invoice-0").iterdir()}
    done = cli("retention", invoice / "invoice-0", "--now-ms", INVOICE_NOW, "--config",
               "retention.bytes=1300000", "--execute", "--backup-dir", tmp_path / "bk", "-o",
               "json")
    assert done.code == 0, done.err
    result = json.loads(done.out)[0]
    assert [d["baseOffset"] for d in result["deletions"]] == [0, 30626]
    assert result["mismatches"] == []
    saved = tmp_path / "bk" / "invoice-0" / "00000000000000000000.log"
    assert saved.read_bytes() == before["00000000000000000000.log"]
    assert segment_bases(invoice / "invoice-0") == [60611, 90867]
    assert kafka_python_offsets(invoice / "invoice-0")[0] == 60611
    assert cli("recover", invoice / "invoice-0", "--check").code == 0


def test_compacted_topics_and_the_metadata_log_are_skipped(cli, corpus):
    done = cli("retention", corpus / "ksql-kraft-2023", "--now-ms", NOW + 3650 * DAY, "-o",
               "json")
    assert done.code == 0, done.err
    sections = {s["partition"]: s for s in json.loads(done.out)}
    assert "cleanup.policy=compact" in sections["__consumer_offsets-0"]["skipped"]
    assert "KRaft metadata log" in sections["__cluster_metadata-0"]["skipped"]
    command = sections["_confluent-ksql-default__command_topic-0"]  # retention.ms=-1
    assert command["skipped"] is None and command["deletions"] == []
    assert command["passes"][2]["skippedBecause"] == "no time limit"
    locations = sections["locations-0"]  # the whole log is old: rolled, then deleted
    assert [d["baseOffset"] for d in locations["deletions"]] == [0]
    assert locations["createdSegment"] == locations["logEndOffset"] == 6


def test_topic_and_partition_filters(cli, invoice):
    done = cli("retention", invoice, "--topic", "invoice", "--partition", 2, "--partition", 4,
               "-o", "json", "--now-ms", INVOICE_NOW)
    assert [s["partition"] for s in json.loads(done.out)] == ["invoice-2", "invoice-4"]
    none = cli("retention", invoice, "--topic", "other")
    assert none.code == 0 and "no partitions found" in none.err


def test_ndjson_is_one_deleted_segment_per_line(cli, invoice):
    done = cli("retention", invoice, "--now-ms", INVOICE_NOW, "--config", "retention.ms=1000",
               "-o", "ndjson")
    items = [json.loads(line) for line in done.lines]
    assert len(items) == 20 and {i["rule"] for i in items} == {"retention.ms"}


def test_a_locked_log_dir_is_refused_in_every_mode(cli, invoice):
    with lock_held(invoice):
        for extra in ([], ["--execute"]):
            done = cli("retention", invoice, "--config", "retention.ms=1000", *extra)
            assert done.code == 4 and done.out == ""
            assert ".lock" in done.err


def test_a_partition_that_cannot_be_loaded_is_reported(cli, invoice):
    (invoice / "invoice-3" / "leader-epoch-checkpoint").write_text("0\n1\nnot a line\n")
    done = cli("retention", invoice, "--now-ms", INVOICE_NOW, "--config", "retention.ms=1000",
               "--execute")
    assert done.code == 1
    assert "invoice-3" in done.err and "leader-epoch-checkpoint" in done.err
    assert segment_bases(invoice / "invoice-0") == [100294]  # the others were done
