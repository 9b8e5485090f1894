"""``pylogctl rebuild-index``: modes, output formats, exit codes, locks, and a SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rebuild_index_support import (copy_tree, lock_held, tree_state,
                                   write_transactional_partition)
from pylogctl.storage.naming import log_filename

INDEX_KEYS = {"kind", "indexFile", "status", "existingEntries", "rebuiltEntries",
              "firstDifference", "verdict", "explanation", "problem", "action", "done",
              "backup"}


@pytest.fixture
def part(tmp_path: Path) -> Path:
    """``logs/t-0``: three segments with transactions across them, no index files."""
    path = tmp_path / "logs" / "t-0"
    write_transactional_partition(path)
    return path


def test_plan_prints_what_would_be_written_and_changes_nothing(cli, part):
    before = tree_state(part.parent)
    r = cli("rebuild-index", part)
    assert r.code == 0
    assert r.out.startswith(f"{part / log_filename(0)}: base offset 0, ")
    assert "  .index      missing    rebuilt 0 entries" in r.lines
    assert "  .txnindex   missing    rebuilt 2 entries" in r.lines
    assert r.out.count("would write") == 7  # 3 x (.index, .timeindex) + one .txnindex
    assert r.err == ("plan: 7 index files to write; 9 index files of 3 segments: 7 missing or "
                     "corrupt, 0 benign differences; nothing changed (run with --execute to "
                     "write them)\n")
    assert tree_state(part.parent) == before


def test_verify_exits_1_on_missing_indexes_and_0_once_executed(cli, part):
    r = cli("rebuild-index", "--verify", part)
    assert r.code == 1
    assert f"pylogctl: missing: {part / '00000000000000000008.txnindex'}" in r.err.splitlines()
    r = cli("rebuild-index", "--execute", part)
    assert r.code == 0 and r.out.count("written") == 7
    assert r.err.startswith("executed: wrote 7 index files (0 old ones backed up); ")
    r = cli("rebuild-index", "--verify", part)
    assert (r.code, r.err) == (0, "verify: 9 index files of 3 segments: 0 missing or corrupt, "
                                  "0 benign differences\n")
    r = cli("rebuild-index", "--execute", part / log_filename(8))
    assert r.code == 0 and "wrote 0 index files" in r.err


def test_corrupt_index_is_reported_on_one_line_and_replaced_with_a_backup(cli, part, tmp_path):
    cli("rebuild-index", "--execute", part)
    index = part / "00000000000000000000.timeindex"
    good = index.read_bytes()
    index.write_bytes(good + b"\0" * 12)
    r = cli("rebuild-index", "--verify", part)
    assert r.code == 1
    assert [line for line in r.err.splitlines() if line.startswith("pylogctl: corrupt: ")] == [
        f"pylogctl: corrupt: {index} (entries 1 to 1 are zero bytes: the preallocated tail a "
        f"broker leaves when it stops uncleanly (Kafka rebuilds the index on its next start))"]
    backups = tmp_path / "backups"
    r = cli("rebuild-index", "--execute", "--backup-dir", backups, part)
    assert r.code == 0 and "replaced (old file kept as " in r.out
    assert index.read_bytes() == good
    assert (backups / "t-0" / index.name).read_bytes() == good + b"\0" * 12


def test_json_output_is_one_object_per_segment(cli, part):
    r = cli("rebuild-index", "-o", "json", part)
    doc = json.loads(r.out)
    assert [d["baseOffset"] for d in doc] == [0, 8, 14]
    first = doc[1]
    assert list(first) == ["file", "type", "baseOffset", "size", "indexes", "validBytes",
                           "invalidBytes", "notes", "error"]
    assert first["file"] == str(part / log_filename(8)) and first["type"] == "segment"
    assert first["validBytes"] == first["size"] and first["invalidBytes"] == 0
    assert [set(i) for i in first["indexes"]] == [INDEX_KEYS] * 3
    txn = first["indexes"][2]
    assert (txn["kind"], txn["status"], txn["rebuiltEntries"], txn["action"], txn["done"]) == (
        "txn-index", "missing", 2, "write", False)
    assert txn["indexFile"] == str(part / "00000000000000000008.txnindex")


def test_json_difference_names_the_first_differing_entry(cli, part):
    cli("rebuild-index", "--execute", part)
    index = part / "00000000000000000008.txnindex"
    index.write_bytes(index.read_bytes()[34:])
    doc = json.loads(cli("rebuild-index", "-o", "json", part / log_filename(8)).out)
    txn = doc[0]["indexes"][2]
    assert (txn["status"], txn["verdict"], txn["existingEntries"], txn["rebuiltEntries"]) == (
        "different", "corrupt", 1, 2)
    assert txn["firstDifference"] == {
        "entry": 0,
        "existing": {"producerId": 7, "firstOffset": 12, "lastOffset": 13, "lastStableOffset": 14},
        "rebuilt": {"producerId": 7, "firstOffset": 3, "lastOffset": 8, "lastStableOffset": 5}}


def test_ndjson_and_yaml(cli, part):
    lines = cli("rebuild-index", "-o", "ndjson", part).lines
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 9 and all(set(r) == INDEX_KEYS | {"file"} for r in rows)
    assert rows[3]["file"] == str(part / log_filename(8))
    doc = yaml.safe_load(cli("rebuild-index", "-o", "yaml", part).out)
    assert doc == json.loads(cli("rebuild-index", "-o", "json", part).out)


def test_invalid_bytes_exit_1_and_the_log_stays(cli, part):
    log = part / log_filename(14)
    data = log.read_bytes()
    log.write_bytes(data + b"\0" * 20)
    r = cli("rebuild-index", "--execute", part)
    assert r.code == 1
    assert f"pylogctl: 20 invalid bytes at the end of {log} (byte position {len(data)})" in r.err
    assert "note: 20 invalid bytes at the end from byte position" in r.out
    assert log.read_bytes() == data + b"\0" * 20


@pytest.mark.parametrize("mode", [[], ["--verify"], ["--execute"]])
def test_a_held_lock_exits_4_with_one_line_in_every_mode(cli, part, mode):
    before = tree_state(part.parent)
    with lock_held(part.parent):
        r = cli("rebuild-index", *mode, part)
    assert r.code == 4 and r.out == ""
    assert r.err == (f"pylogctl: Failed to acquire lock on file .lock in {part.parent}. A Kafka "
                     f"instance in another process or thread is using this directory.\n")
    after = tree_state(part.parent)
    assert after == before or set(after) - set(before) == {".lock"}


@pytest.mark.parametrize("args, code, message", [
    (["--verify", "--execute", "{part}"], 2, "--verify writes nothing"),
    (["--index-interval-bytes", "-1", "{part}"], 2, "-1"),
    (["{part}/leader-epoch-checkpoint"], 2, "is not a segment"),
    (["{part}/00000000000000000099.log"], 3, "No such file"),
    (["{part}/.."], 0, "plan: 7 index files to write"),  # the log dir
])
def test_paths_and_usage(cli, part, args, code, message):
    (part / "leader-epoch-checkpoint").write_text("0\n0\n")
    r = cli("rebuild-index", *(a.format(part=part) for a in args))
    assert r.code == code and message in r.err and "Traceback" not in r.err


def test_help_documents_the_exit_codes(cli):
    r = cli("rebuild-index", "--help")
    text = " ".join(r.out.split())
    assert "4 when a broker holds a log dir's .lock" in text
    assert "Exit codes: 0 success; 1 data problem found" in text


@pytest.mark.corpus
def test_sigkill_at_any_moment_is_repaired_by_a_rerun(corpus, tmp_path):
    """Kill ``--execute`` at several moments of a run over a whole log dir whose indexes are
    all gone; each rerun leaves the indexes Kafka wrote (where a rebuild reproduces them)."""
    source = corpus / "smartassets-connect"
    reference = copy_tree(source, tmp_path / "ref")
    subprocess.run([sys.executable, "-m", "pylogctl", "rebuild-index", "--execute",
                    str(reference)], check=True, capture_output=True)
    wanted = {k: v[0] for k, v in tree_state(reference).items() if not k.endswith(".lock")}
    for delay in (0.05, 0.15, 0.3, 0.6):
        root = tmp_path / f"kill-{delay}"
        copy_tree(source, root)
        for p in root.rglob("*"):
            if p.suffix in (".index", ".timeindex"):
                p.unlink()
        scratch = tmp_path / "scratch"  # where a killed run leaves its scratch dir
        scratch.mkdir(exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-m", "pylogctl", "rebuild-index", "--execute",
                                 str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "TMPDIR": str(scratch)})
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        rerun = subprocess.run([sys.executable, "-m", "pylogctl", "rebuild-index", "--execute",
                                str(root)], capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stderr
        got = {k: v[0] for k, v in tree_state(root).items() if not k.endswith(".lock")}
        assert got == wanted, delay
        shutil.rmtree(root)
        assert not os.path.exists(root)
