"""``pylogctl recover``: plan, execute, idempotence, formats, exit codes and locks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from load_support import fingerprint, writable_copy
from rebuild_index_support import lock_held
from support import corpus_params


@pytest.fixture
def invoice(corpus, tmp_path) -> Path:
    return writable_copy(corpus / "invoice-multiseg", tmp_path / "invoice")


@pytest.mark.corpus
@pytest.mark.parametrize("name", corpus_params())
def test_every_corpus_dir_recovers_and_a_second_run_is_a_no_op(cli, corpus, tmp_path, name):
    root = writable_copy(name, tmp_path / name.name)
    before = fingerprint(root)
    plan = cli("recover", root, "-o", "json")
    assert plan.code == 0, plan.err
    assert fingerprint(root) == before, "a plan wrote something"
    sections = json.loads(plan.out)
    assert sections and all(s["error"] is None for s in sections)
    assert all(not s["executed"] for s in sections)
    done = cli("recover", root, "--execute", "-o", "json")
    assert done.code == 0, done.err
    executed = json.loads(done.out)
    assert [s["partition"] for s in executed] == [s["partition"] for s in sections]
    assert [s["steps"] for s in executed] == [s["steps"] for s in sections]
    assert all(s["executed"] == s["changes"] for s in executed)
    again = cli("recover", root, "--check")
    assert again.code == 0, again.out + again.err
    assert "plan: 0 of" in again.err


def test_plan_lines_name_the_cut_and_the_checkpoint_change(cli, invoice):
    log = invoice / "invoice-2" / "00000000000000090808.log"
    size = log.stat().st_size
    with open(log, "ab") as f:
        f.write(b"\x01" * 100)
    r = cli("recover", invoice / "invoice-2")
    assert r.code == 0
    assert r.lines[0].startswith(f"invoice-2 ({invoice / 'invoice-2'}): log start 0, log end ")
    assert any(f"cut 100 bytes at byte {size}" in line for line in r.lines)
    assert r.lines[-1] == "  would apply 2 steps and 0 checkpoint entries"
    assert r.err.startswith("plan: 1 of 1 partition (2 steps, 0 checkpoint entries) to change")
    assert cli("recover", invoice / "invoice-2", "--check").code == 1
    assert log.stat().st_size == size + 100


def test_execute_with_backup_keeps_the_cut_bytes(cli, invoice, tmp_path):
    log = invoice / "invoice-2" / "00000000000000090808.log"
    original = log.read_bytes()
    log.write_bytes(original + b"garbage!")
    r = cli("recover", invoice, "--execute", "--backup-dir", tmp_path / "bk")
    assert r.code == 0, r.err
    assert log.read_bytes() == original
    assert (tmp_path / "bk" / "invoice-2" / log.name).read_bytes() == original + b"garbage!"
    assert "files backed up" in r.err
    assert cli("recover", invoice, "--check").code == 0


def test_a_checkpoint_ahead_of_the_log_is_rewritten(cli, invoice):
    hw = invoice / "replication-offset-checkpoint"
    hw.write_text(hw.read_text().replace("invoice 3 100577", "invoice 3 999999"))
    r = cli("recover", invoice / "invoice-3", "-o", "yaml")
    doc = yaml.safe_load(r.out)
    assert doc[0]["checkpointUpdates"] == [{"checkpoint": "replication-offset-checkpoint",
                                           "topic": "invoice", "partition": 3,
                                           "old": 999999, "new": 100577}]
    cli("recover", invoice / "invoice-3", "--execute")
    assert "invoice 3 100577" in hw.read_text()


def test_ndjson_has_one_step_per_line(cli, invoice):
    r = cli("recover", invoice, "-o", "ndjson")
    rows = [json.loads(line) for line in r.lines]
    assert rows and all("kind" in row for row in rows)


def test_a_partition_that_cannot_be_loaded_is_reported_and_the_rest_recovered(cli, invoice):
    (invoice / "invoice-1" / "leader-epoch-checkpoint").write_text("zz\nbad\n")
    r = cli("recover", invoice, "--execute", "-o", "json")
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"pylogctl: invoice-1: Malformed line in checkpoint file "
        f"({invoice / 'invoice-1' / 'leader-epoch-checkpoint'}): 'zz' (byte position 0)")
    assert "recovered 4 of 5 partitions" in r.err
    failed = [s for s in json.loads(r.out) if s["error"]]
    assert [s["partition"] for s in failed] == ["invoice-1"]
    assert failed[0]["error"]["position"] == 0


@pytest.mark.parametrize("mode", [(), ("--execute",), ("--check",)])
def test_a_held_lock_exits_4_and_changes_nothing(cli, invoice, mode):
    before = fingerprint(invoice)
    with lock_held(invoice):
        r = cli("recover", invoice, *mode)
    assert r.code == 4
    assert r.out == ""
    assert r.err.strip().splitlines() == [
        f"pylogctl: Failed to acquire lock on file .lock in {invoice}. A Kafka instance in "
        f"another process or thread is using this directory."]
    assert fingerprint(invoice) == before


def test_a_file_argument_is_a_usage_error(cli, invoice):
    r = cli("recover", invoice / "invoice-0" / "00000000000000000000.log")
    assert r.code == 2
    assert "is not a directory: recover takes partition dirs" in r.err


@pytest.mark.parametrize("command", ["recover", "retention", "compact", "config"])
def test_a_file_argument_names_the_command_refusing_it(cli, invoice, command):
    r = cli(command, invoice / "invoice-0" / "00000000000000000000.log")
    assert r.code == 2
    assert f"is not a directory: {command} takes partition dirs" in r.err


@pytest.mark.corpus
def test_threads_recover_the_same_as_one_thread_and_keep_the_order(cli, corpus, tmp_path):
    # a broker's dir of 87 partitions, every recovery point lost and some tails torn: what
    # four threads write, and print, is what one thread does
    runs = {}
    for threads in ("1", "4"):
        root = writable_copy(corpus / "smartassets-connect", tmp_path / threads)
        (root / "recovery-point-offset-checkpoint").unlink()
        for part in ("docker-connect-offsets-18", "docker-connect-status-0",
                     "__consumer_offsets-49"):
            log = sorted((root / part).glob("*.log"))[-1]
            with open(log, "ab") as f:
                f.write(b"\x00" * 40)
        r = cli("recover", root, "--execute", "--threads", threads, "-o", "json")
        assert r.code == 0, r.err
        runs[threads] = (r.out.replace(str(root), "LOGDIR"), fingerprint(root),
                         r.err.replace(str(root), "LOGDIR"))
    assert runs["1"] == runs["4"]
    assert sum(len(s["steps"]) for s in json.loads(runs["1"][0])) > 3
