"""The truncation plan (read-only prediction) against the truncation itself, field by field."""

from __future__ import annotations

from pathlib import Path

import pytest

from pylogctl.format.log_stream import iter_batches
from pylogctl.storage.log_dir import LogDir

from load_support import copy_partition, fingerprint

INVOICE = ("invoice-multiseg", "invoice-0")  # segments 0, 30626, 60611, 90867; log end 100294
KSQL_COMMANDS = ("ksql-kraft-2023", "_confluent-ksql-default__command_topic-0")  # transactional


def batch_bounds(partition: Path) -> list[tuple[int, int]]:
    """(base offset, last offset) of every batch, in log order."""
    out = []
    for log in sorted(partition.glob("*.log")):
        data = log.read_bytes()
        out += [(b.base_offset, b.last_offset) for b in iter_batches(data, 0, len(data), str(log))]
    return out


def predicted_and_done(tmp_path: Path, where: tuple[str, str], corpus: Path, target: int,
                       start_at: bool = False):
    log_dir, part = copy_partition(corpus, *where, tmp_path)
    before = fingerprint(log_dir)
    d = LogDir(log_dir)
    entry = d.entry_for_dir(str(part))
    plan = d.plan_truncation(entry, target, start_at=start_at)
    assert fingerprint(log_dir) == before, "planning wrote something"
    if start_at:
        outcome = d.truncate_fully_and_start_at(entry, target)
    else:
        outcome = d.truncate(entry, target)
    return plan, outcome, part


def assert_matches(plan, outcome) -> None:
    p, t = plan.truncation, outcome.truncation
    for name in ("target_offset", "log_end_offset_before", "log_end_offset", "deleted_segments",
                 "truncated_segment", "truncated_bytes", "created_segment",
                 "leader_epochs_removed", "log_start_offset", "recovery_point", "high_watermark"):
        assert getattr(p, name) == getattr(t, name), name
    assert p.changed == t.changed
    assert plan.checkpoint_updates == outcome.checkpoint_updates


@pytest.mark.parametrize("target", [0, 1, 17, 30625, 30626, 30627, 45000, 60611, 90866, 90867,
                                    99999, 100293, 100294, 100295, 10**12])
def test_truncate_to_is_predicted_exactly(corpus, tmp_path, target):
    plan, outcome, part = predicted_and_done(tmp_path, INVOICE, corpus, target)
    assert_matches(plan, outcome)
    snapshots = {int(f.name.split(".")[0]) for f in part.glob("*.snapshot")}
    assert not snapshots & set(plan.truncation.snapshots_deleted)


@pytest.mark.parametrize("target", [0, 5, 30626, 100294, 200000])
def test_start_at_is_predicted_exactly(corpus, tmp_path, target):
    plan, outcome, part = predicted_and_done(tmp_path, INVOICE, corpus, target, start_at=True)
    assert_matches(plan, outcome)
    assert plan.truncation.created_segment == target
    assert [f.name for f in part.glob("*.log")] == [f"{target:020d}.log"]


def test_a_target_inside_a_batch_drops_the_whole_batch(corpus, tmp_path):
    src = corpus / INVOICE[0] / INVOICE[1]
    base, last = next((b, l) for b, l in batch_bounds(src) if l - b >= 2 and b > 40000)
    plan, outcome, part = predicted_and_done(tmp_path, INVOICE, corpus, base + 1)
    assert_matches(plan, outcome)
    assert outcome.truncation.log_end_offset == base
    assert batch_bounds(part)[-1][1] == base - 1


def test_truncating_a_transactional_log_is_predicted(corpus, tmp_path):
    src = corpus / KSQL_COMMANDS[0] / KSQL_COMMANDS[1]
    bounds = batch_bounds(src)
    for i, (base, _) in enumerate(bounds[1::3]):
        plan, outcome, _ = predicted_and_done(tmp_path / str(i), KSQL_COMMANDS, corpus, base)
        assert_matches(plan, outcome)
        assert outcome.truncation.log_end_offset == base


def test_a_damaged_log_is_predicted_after_its_recovery(corpus, tmp_path):
    log_dir, part = copy_partition(corpus, *INVOICE, tmp_path)
    last = part / "00000000000000090867.log"
    with open(last, "ab") as f:
        f.write(b"\x00garbage" * 7)
    d = LogDir(log_dir)
    entry = d.entry_for_dir(str(part))
    plan = d.plan_truncation(entry, 95000)
    assert not plan.load.is_empty
    outcome = d.truncate(entry, 95000)
    assert_matches(plan, outcome)
    assert LogDir(log_dir).plan_truncation(entry, 95000).is_empty


@pytest.mark.parametrize("offset_in_run", [0, 7, 29])
def test_a_truncation_after_a_segment_split_is_predicted(tmp_path, offset_in_run):
    """The load splits an overflowing legacy segment (KAFKA-6264) before the truncation: the
    prediction reads the split segments from the bytes they come from."""
    from test_segment_split import legacy_log, make_partition

    data, records, runs = legacy_log(1)
    part = make_partition(tmp_path, data)
    d = LogDir(part.parent)
    entry = d.entry_for_dir(str(part))
    target = runs[1] + offset_in_run
    plan = d.plan_truncation(entry, target)
    assert plan.truncation.truncated_segment == runs[1]
    outcome = d.truncate(entry, target)
    assert_matches(plan, outcome)
    assert outcome.truncation.log_end_offset == target
