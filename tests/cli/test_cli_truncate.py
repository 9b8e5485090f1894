"""``pylogctl truncate``: plan, execute, formats, exit codes and locks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from load_support import fingerprint, writable_copy
from rebuild_index_support import lock_held
from pylogctl.format.log_stream import iter_batches


@pytest.fixture
def invoice(corpus, tmp_path) -> Path:
    return writable_copy(corpus / "invoice-multiseg", tmp_path / "invoice")


def offsets(part: Path) -> list[int]:
    out = []
    for log in sorted(part.glob("*.log")):
        data = log.read_bytes()
        for b in iter_batches(data, 0, len(data), str(log)):
            out += list(range(b.base_offset, b.last_offset + 1))
    return out


def test_plan_then_execute_drops_exactly_what_the_plan_says(cli, invoice):
    part = invoice / "invoice-0"
    before = fingerprint(invoice)
    plan = cli("truncate", part, "--to-offset", 45000, "-o", "json")
    assert plan.code == 0, plan.err
    assert fingerprint(invoice) == before
    planned = json.loads(plan.out)[0]
    t = planned["truncation"]
    assert t["deletedSegments"] == [60611, 90867] and t["truncatedSegment"] == 30626
    assert planned["executed"] is False
    done = cli("truncate", part, "--to-offset", 45000, "--execute", "-o", "json")
    assert done.code == 0, done.err
    executed = json.loads(done.out)[0]
    assert executed["truncation"] == t and executed["mismatches"] == []
    kept = offsets(part)
    assert kept == list(range(t["logEndOffset"]))
    assert "invoice 0 44739" in (invoice / "replication-offset-checkpoint").read_text()
    assert cli("recover", invoice, "--execute").code == 0
    assert offsets(part) == kept


def test_start_at_empties_the_log(cli, invoice, tmp_path):
    part = invoice / "invoice-4"
    r = cli("truncate", part, "--start-at", 123, "--execute", "--backup-dir", tmp_path / "bk")
    assert r.code == 0, r.err
    assert [p.name for p in part.glob("*.log")] == ["00000000000000000123.log"]
    assert offsets(part) == []
    assert "applied (" in r.out
    assert (tmp_path / "bk" / "invoice-4" / "00000000000000090690.log").exists()
    assert cli("recover", part, "--check").code == 0


def test_text_plan(cli, invoice):
    r = cli("truncate", invoice / "invoice-0", "--to-offset", 100294)
    assert r.code == 0
    assert r.lines[0] == f"invoice-0 ({invoice / 'invoice-0'}): truncate to offset 100294"
    assert "  nothing to truncate: the log ends at 100294" in r.lines
    assert r.err.startswith("plan: nothing to truncate; nothing changed")


@pytest.mark.parametrize("args, message", [
    ((), "give exactly one of --to-offset N and --start-at N"),
    (("--to-offset", "1", "--start-at", "2"), "give exactly one of"),
    (("--to-offset", "1", "--log-start-offset", "0"), "--log-start-offset goes with --start-at"),
])
def test_usage_errors(cli, invoice, args, message):
    r = cli("truncate", invoice / "invoice-0", *args)
    assert r.code == 2 and message in r.err


def test_a_log_dir_is_not_a_partition(cli, invoice):
    r = cli("truncate", invoice, "--to-offset", 5)
    assert r.code == 2 and "is not a partition dir" in r.err


@pytest.mark.parametrize("mode", [(), ("--execute",)])
def test_a_held_lock_exits_4(cli, invoice, mode):
    before = fingerprint(invoice)
    with lock_held(invoice):
        r = cli("truncate", invoice / "invoice-0", "--to-offset", 5, *mode)
    assert r.code == 4 and "Failed to acquire lock on file .lock" in r.err
    assert fingerprint(invoice) == before
