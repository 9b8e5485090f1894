"""LogDir (the log-dir part of Kafka's LogManager): discovery, checkpoints, recovering every
partition under the lock, truncation, and rewriting only the checkpoint entries that changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pylogctl.errors import LogDirLockedError
from pylogctl.storage.checkpoint import read_offset_checkpoint
from pylogctl.storage.loader.apply import PlanOutdatedError
from pylogctl.storage.loader.plan import LoadInputs
from pylogctl.storage.log_dir import (CLEANER_OFFSET_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT,
                                          LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT,
                                          LogDir)
from load_support import copy_partition, fingerprint, writable_copy


def entries(log_dir: Path, name: str) -> list[tuple[str, int, int]]:
    return [(e.topic, e.partition, e.offset)
            for e in read_offset_checkpoint(log_dir / name).entries]


@pytest.fixture
def ksql(corpus, tmp_path) -> Path:
    return writable_copy(corpus / "ksql-kraft-2023", tmp_path / "ksql")


@pytest.fixture
def invoice(corpus, tmp_path) -> Path:
    return writable_copy(corpus / "invoice-multiseg", tmp_path / "invoice")


def test_discovery_skips_deleted_future_and_stray_dirs(ksql):
    for name in ("orders-0.4b6c7f2e9a8d4c0b9e1f2a3b4c5d6e7f-delete",
                 "orders-1.4b6c7f2e9a8d4c0b9e1f2a3b4c5d6e7f-future",
                 "orders-2.4b6c7f2e9a8d4c0b9e1f2a3b4c5d6e7f-stray", "not_a_partition"):
        (ksql / name).mkdir()
    log_dir = LogDir(ksql)
    assert len(log_dir.partitions) == 143
    skipped = {s.name: s.reason for s in log_dir.skipped}
    assert "deleted topic" in skipped["orders-0.4b6c7f2e9a8d4c0b9e1f2a3b4c5d6e7f-delete"]
    assert "future replica" in skipped["orders-1.4b6c7f2e9a8d4c0b9e1f2a3b4c5d6e7f-future"]
    assert "stray" in skipped["orders-2.4b6c7f2e9a8d4c0b9e1f2a3b4c5d6e7f-stray"]
    assert "not_a_partition" in skipped
    assert log_dir.meta["node.id"] == "1" and not log_dir.clean_shutdown
    metadata = log_dir.partition("__cluster_metadata", 0)
    assert metadata.is_metadata_log
    assert log_dir.load_inputs(metadata) == LoadInputs(0, 0, None, False)
    repartition = log_dir.partition(
        "_confluent-ksql-default_query_CTAS_CURRENTLOCATION_3-Aggregate-GroupBy-repartition", 0)
    assert log_dir.load_inputs(repartition) == LoadInputs(5, 5, 6, False)


def test_clean_shutdown_marker_applies_to_every_partition(corpus, tmp_path):
    log_dir = LogDir(writable_copy(corpus / "smartassets-connect", tmp_path / "s"))
    assert log_dir.clean_shutdown
    assert all(log_dir.load_inputs(e).had_clean_shutdown for e in log_dir.partitions)


def test_recovering_a_log_dir_rewrites_only_the_changed_checkpoint_entries(ksql, tmp_path):
    hw_before = entries(ksql, HIGH_WATERMARK_CHECKPOINT)
    rp_before = (ksql / RECOVERY_POINT_CHECKPOINT).read_bytes()
    log_dir = LogDir(ksql)
    plans = log_dir.plan_all()
    expected = [u for p in plans for u in log_dir.checkpoint_updates(p)]
    result = log_dir.apply(plans, backup_dir=tmp_path / "backup")
    assert result.checkpoint_updates == tuple(expected)
    assert {u.checkpoint for u in expected} == {HIGH_WATERMARK_CHECKPOINT}
    changed = {(u.topic, u.partition): u.new for u in expected}
    assert len(changed) == 10  # the high watermarks above the on-disk log end
    hw_after = entries(ksql, HIGH_WATERMARK_CHECKPOINT)
    assert [(t, p) for t, p, _ in hw_after] == [(t, p) for t, p, _ in hw_before]  # order kept
    for (t, p, old), (_, _, new) in zip(hw_before, hw_after):
        assert new == changed.get((t, p), old)
    assert (ksql / RECOVERY_POINT_CHECKPOINT).read_bytes() == rp_before
    assert entries(tmp_path / "backup", HIGH_WATERMARK_CHECKPOINT) == hw_before
    again = LogDir(ksql)
    for plan in again.plan_all():
        assert plan.is_empty, plan.describe()
        assert again.checkpoint_updates(plan) == []


def test_recovery_checkpoints_the_recovery_point_when_it_moves(invoice):
    (invoice / "invoice-0" / "00000000000000090867.log").open("ab").write(b"junk")
    log_dir = LogDir(invoice)
    plan = log_dir.plan(log_dir.partition("invoice", 0))
    assert plan.truncated_bytes == 4
    assert log_dir.checkpoint_updates(plan) == []  # the recovery point and high watermark stay
    # an entry above the recovered log end comes down to it
    text = (invoice / RECOVERY_POINT_CHECKPOINT).read_text().replace("invoice 0 90867",
                                                                      "invoice 0 999999")
    (invoice / RECOVERY_POINT_CHECKPOINT).write_text(text)
    log_dir = LogDir(invoice)
    plans = [log_dir.plan(log_dir.partition("invoice", 0))]
    result = log_dir.apply(plans)
    assert [u.describe() for u in result.checkpoint_updates] == [
        "recovery-point-offset-checkpoint: invoice-0 999999 -> 100294"]
    assert ("invoice", 2, 90808) in entries(invoice, RECOVERY_POINT_CHECKPOINT)


def test_truncation_through_the_log_dir_updates_its_checkpoints(invoice, tmp_path):
    (invoice / CLEANER_OFFSET_CHECKPOINT).write_text("0\n2\ninvoice 0 99000\ninvoice 1 5\n")
    others = {n: [e for e in entries(invoice, n) if e[1] != 0]
              for n in (RECOVERY_POINT_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT)}
    log_dir = LogDir(invoice)
    outcome = log_dir.truncate(log_dir.partition("invoice", 0), 45000,
                               backup_dir=tmp_path / "backup")
    t = outcome.truncation
    assert t.deleted_segments == (60611, 90867) and t.log_end_offset <= 45000
    updates = {u.checkpoint: (u.old, u.new) for u in outcome.checkpoint_updates}
    assert updates == {RECOVERY_POINT_CHECKPOINT: (90867, t.log_end_offset),
                       HIGH_WATERMARK_CHECKPOINT: (100294, t.log_end_offset),
                       CLEANER_OFFSET_CHECKPOINT: (99000, 30626)}
    assert ("invoice", 0, t.log_end_offset) in entries(invoice, RECOVERY_POINT_CHECKPOINT)
    assert entries(invoice, CLEANER_OFFSET_CHECKPOINT) == [("invoice", 0, 30626),
                                                          ("invoice", 1, 5)]
    for name, kept in others.items():
        assert [e for e in entries(invoice, name) if e[1] != 0] == kept
    assert not (invoice / LOG_START_OFFSET_CHECKPOINT).read_text().strip("0\n")
    backup = tmp_path / "backup"
    assert (backup / "invoice-0" / "00000000000000090867.log").exists()
    assert ("invoice", 0, 90867) in entries(backup, RECOVERY_POINT_CHECKPOINT)
    again = LogDir(invoice)
    assert again.plan(again.partition("invoice", 0)).log_end_offset == t.log_end_offset


def test_a_log_start_above_the_first_segment_is_checkpointed(invoice):
    log_dir = LogDir(invoice)
    outcome = log_dir.truncate_fully_and_start_at(log_dir.partition("invoice", 1), 7000,
                                                  log_start_offset=7010)
    assert outcome.truncation.log_start_offset == 7010
    assert ("invoice", 1, 7010) in entries(invoice, LOG_START_OFFSET_CHECKPOINT)


def test_an_unreadable_checkpoint_is_noted_and_left_alone(invoice):
    (invoice / RECOVERY_POINT_CHECKPOINT).write_text("0\n7\ngarbage\n")
    log_dir = LogDir(invoice)
    assert any("recovery-point-offset-checkpoint" in n for n in log_dir.notes)
    entry = log_dir.partition("invoice", 0)
    assert log_dir.load_inputs(entry).recovery_point_checkpoint == 0  # recover everything
    log_dir.apply([log_dir.plan(entry)])
    assert (invoice / RECOVERY_POINT_CHECKPOINT).read_text() == "0\n7\ngarbage\n"


def test_apply_refuses_when_a_checkpoint_changed_since_planning(invoice):
    log_dir = LogDir(invoice)
    plans = [log_dir.plan(log_dir.partition("invoice", 0))]
    text = (invoice / RECOVERY_POINT_CHECKPOINT).read_text()
    (invoice / RECOVERY_POINT_CHECKPOINT).write_text(text.replace("invoice 0 90867",
                                                                  "invoice 0 0"))
    with pytest.raises(PlanOutdatedError, match="checkpoints"):
        log_dir.apply(plans)


HOLDER = """
import sys
from pylogctl.storage.lock import LogDirLock
lock = LogDirLock(sys.argv[1]).acquire()
print("locked", flush=True)
sys.stdin.readline()
"""


def test_nothing_is_written_while_a_broker_holds_the_lock(invoice):
    log_dir = LogDir(invoice)
    plans = log_dir.plan_all()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(invoice)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = fingerprint(invoice)
        with pytest.raises(LogDirLockedError):
            log_dir.apply(plans)
        with pytest.raises(LogDirLockedError):
            log_dir.truncate(log_dir.partition("invoice", 0), 10)
        assert fingerprint(invoice) == before
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_a_partition_copied_into_a_bare_dir_loads_with_default_checkpoints(corpus, tmp_path):
    log_dir, part = copy_partition(corpus, "node-logx", "topic-logx-001-0", tmp_path)
    for name in (RECOVERY_POINT_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT):
        (log_dir / name).unlink()
    ld = LogDir(log_dir)
    entry = ld.partition("topic-logx-001", 0)
    assert ld.load_inputs(entry) == LoadInputs(0, 0, None, False)
    result = ld.apply([ld.plan(entry)])
    assert result.checkpoint_updates == ()  # absent means 0, and 0 it stays
    assert not (log_dir / RECOVERY_POINT_CHECKPOINT).exists()
    assert LogDir(log_dir).plan(entry).is_empty


@pytest.mark.parametrize("syncfs", [False, True], ids=["fsync-each-file", "syncfs"])
def test_mark_clean_shutdown_flushes_then_moves_recovery_points_and_writes_the_marker(
        corpus, tmp_path, monkeypatch, syncfs):
    # a small dir flushes file by file, a large one (here: any) with one syncfs; either way
    # the recovery points end at the log ends and the marker comes last
    from pylogctl.storage import files
    from pylogctl.storage import log_dir as log_dir_module
    from pylogctl.storage.log_dir import CLEAN_SHUTDOWN_UNKNOWN_EPOCH, LogDir

    root = writable_copy(corpus / "invoice-multiseg", tmp_path / "invoice")
    monkeypatch.setattr(log_dir_module, "SYNCFS_FROM_FILES", 0 if syncfs else 10**9)
    synced = []
    real = files.sync_file_system
    monkeypatch.setattr(log_dir_module, "sync_file_system",
                        lambda path: synced.append(path) or real(path))
    log_dir = LogDir(root)
    log_ends = {e.key: log_dir.plan(e).log_end_offset for e in log_dir.partitions}
    updates = log_dir.mark_clean_shutdown(log_ends)
    assert (root / ".kafka_cleanshutdown").read_bytes() == CLEAN_SHUTDOWN_UNKNOWN_EPOCH
    assert updates and all(u.new == log_ends[(u.topic, u.partition)] for u in updates)
    assert {(t, p): o for t, p, o in entries(root, RECOVERY_POINT_CHECKPOINT)} == log_ends
    assert synced == ([str(root)] if syncfs else [])
