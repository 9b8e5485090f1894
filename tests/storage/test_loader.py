"""plan_load / apply_load (Kafka's LogLoader): every corpus dir, damaged copies, interrupted
swaps, checkpoints that disagree with the log; each case ends where Kafka's loader would, and a
second plan is empty."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pylogctl.errors import LogDirLockedError
from pylogctl.storage.loader import apply as load_apply
from pylogctl.storage.checkpoint import EpochEntry
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.loader.apply import PlanOutdatedError
from pylogctl.storage.loader.plan import (CreateSegment, DeleteFile, DeleteSegment, DeleteSnapshot,
                                        RebuildProducerState, RecoverSegment, RenameFile,
                                        WriteLeaderEpochs)
from pylogctl.storage.loader.log_loader import apply_load, plan_load
from pylogctl.storage.log import Log
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_dir_layout import child_log_dirs
from pylogctl.storage.log_dir import LogDir
from pylogctl.storage.segment import LogSegment
from pylogctl.storage.loader.recovery_dry_run import ScratchDir, recover_read_only
from pylogctl.storage.transaction_index import read_transaction_index
from pylogctl.tools.log_dir_summary import summarize_log_dir
from load_support import (batch_positions, copy_partition, fingerprint, flip_byte, load_twice,
                          plan_for, segment_names, transactional_log, writable_copy)
from support import corpus_params

CONFIG = LogConfig()
ACTIVE = "00000000000000090867"  # invoice-0: segments 0, 30626, 60611 and this (no indexes)
TEMP_SUFFIXES = (".deleted", ".cleaned", ".swap")


def kinds(plan) -> list[str]:
    return [s.kind for s in plan.steps]


def steps_of(plan, cls) -> list:
    return [s for s in plan.steps if isinstance(s, cls)]


@pytest.fixture
def invoice(corpus, tmp_path):
    """``(log dir, partition dir)``: a copy of invoice-0, 4 segments, recovery point at the
    active segment, whose indexes are missing (an unclean shutdown)."""
    return copy_partition(corpus, "invoice-multiseg", "invoice-0", tmp_path)


# -- every corpus dir -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus_copy(corpus, tmp_path_factory) -> Path:
    return writable_copy(corpus, tmp_path_factory.mktemp("loader") / "corpus")


@pytest.mark.parametrize("name", corpus_params())
def test_corpus_dir_loads_as_kafka_would_and_a_second_plan_is_empty(corpus_copy, name):
    root = corpus_copy / name.name
    log_dirs = child_log_dirs(root) or [str(root)]
    for path in log_dirs:
        log_dir = LogDir(path)
        summary = {p.dir_name: p for p in summarize_log_dir(path).partitions}
        for entry in log_dir.partitions:
            plan = log_dir.plan(entry)
            s = summary[os.path.basename(entry.path)]
            if s.log_end_offset is not None and s.segments:
                assert plan.log_end_offset == max(s.log_end_offset, plan.log_start_offset)
            assert plan.truncated_bytes == 0  # the corpus holds no corruption
            if not log_dir.clean_shutdown and s.segments:  # the active segment lost its indexes
                assert any(isinstance(st, RecoverSegment) for st in plan.steps)
            result = apply_load(plan)
            assert result.notes == ()
            again = log_dir.plan(entry)
            assert again.is_empty, again.describe()
            assert again.log_end_offset == plan.log_end_offset
            for log in segment_names(Path(entry.path)):
                stem = Path(entry.path) / log[:-4]
                assert stem.with_suffix(".index").exists()
                assert stem.with_suffix(".timeindex").exists()
            assert not [n for n in os.listdir(entry.path) if n.endswith(TEMP_SUFFIXES)]


def _dry_run(log: Path, base: int):
    with ScratchDir() as scratch:
        return recover_read_only(str(log), base, CONFIG.index_interval_bytes,
                                 CONFIG.segment_index_bytes, scratch)


def test_the_active_segment_indexes_are_left_trimmed(invoice):
    log_dir, part = invoice
    plan, _, again = load_twice(part, **plan_for(log_dir, part)[1])
    assert again.is_empty
    scan = _dry_run(part / f"{ACTIVE}.log", 90867)
    assert (part / f"{ACTIVE}.index").read_bytes() == scan.offset_index
    assert (part / f"{ACTIVE}.timeindex").read_bytes() == scan.time_index
    assert (part / f"{ACTIVE}.index").stat().st_size < 10 * 1024


def test_planning_changes_nothing(invoice):
    log_dir, part = invoice
    (part / "00000000000000030626.log.deleted").write_bytes(b"x")
    (part / "00000000000000060611.log.cleaned").write_bytes(b"x")
    os.truncate(part / f"{ACTIVE}.log", 1000)
    before = fingerprint(log_dir)
    plan, _ = plan_for(log_dir, part)
    assert plan.steps
    assert fingerprint(log_dir) == before


# -- damaged segments ---------------------------------------------------------------------
def test_tail_cut_mid_batch_is_truncated_to_the_last_whole_batch(invoice):
    log_dir, part = invoice
    log = part / f"{ACTIVE}.log"
    last = batch_positions(log)[-1]
    os.truncate(log, last[0] + 100)
    plan, kwargs = plan_for(log_dir, part)
    recover = steps_of(plan, RecoverSegment)[0]
    assert recover.invalid_tail.kind == "incomplete-batch"
    assert (recover.valid_bytes, recover.truncated_bytes) == (last[0], 100)
    assert plan.log_end_offset == last[2] and plan.high_watermark == last[2]
    assert plan.recovery_point == 90867
    apply_load(plan)
    assert log.stat().st_size == last[0]
    assert plan_load(part, **kwargs).is_empty


def test_garbage_appended_to_the_active_segment_is_cut(invoice):
    log_dir, part = invoice
    log = part / f"{ACTIVE}.log"
    size = log.stat().st_size
    with open(log, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x00\x05" + b"garbage" * 20)
    plan, kwargs = plan_for(log_dir, part)
    recover = steps_of(plan, RecoverSegment)[0]
    assert recover.invalid_tail.kind == "corrupt-size"
    assert "smaller than minimum record overhead" in recover.invalid_tail.message
    assert plan.log_end_offset == 100294
    apply_load(plan)
    assert log.stat().st_size == size
    assert plan_load(part, **kwargs).is_empty


def test_a_crc_mismatch_mid_log_deletes_every_later_segment(invoice):
    log_dir, part = invoice
    log = part / "00000000000000030626.log"
    batches = batch_positions(log)
    middle = batches[len(batches) // 2]
    flip_byte(log, middle[0] + middle[1] - 1)
    plan, kwargs = plan_for(log_dir, part, recovery_point_checkpoint=0)
    deletes = steps_of(plan, DeleteSegment)
    cut = [s for s in steps_of(plan, RecoverSegment) if s.truncated_bytes]
    assert [d.base_offset for d in deletes] == [90867, 60611]  # newest first
    assert [c.base_offset for c in cut] == [30626]
    assert cut[0].invalid_tail.kind == "crc-mismatch"
    assert plan.steps.index(deletes[-1]) < plan.steps.index(cut[0])  # before the cut
    assert any(f.endswith("60611.snapshot") for f in deletes[1].files)
    assert plan.log_end_offset == middle[2] == plan.high_watermark
    assert plan.recovery_point == 0
    assert plan.segments == (0, 30626)
    apply_load(plan)
    assert segment_names(part) == ["00000000000000000000.log", "00000000000000030626.log"]
    assert not (part / "00000000000000060611.snapshot").exists()
    assert log.stat().st_size == middle[0]
    assert plan_load(part, **kwargs).is_empty


def test_a_zeroed_index_is_rebuilt_although_kafka_would_keep_it(invoice):
    log_dir, part = invoice
    index = part / "00000000000000000000.index"
    index.write_bytes(b"\0" * index.stat().st_size)
    plan, kwargs = plan_for(log_dir, part)
    step = [s for s in steps_of(plan, RecoverSegment) if s.base_offset == 0][0]
    assert "pylogctl finds 00000000000000000000.index unusable" in step.reason
    assert step.truncated_bytes == 0 and "the .index (differs)" in step.changes
    apply_load(plan)
    scan = _dry_run(part / "00000000000000000000.log", 0)
    assert index.read_bytes() == scan.offset_index
    assert plan_load(part, **kwargs).is_empty


def test_a_missing_index_is_rebuilt_even_after_a_clean_shutdown(invoice):
    log_dir, part = invoice
    (part / "00000000000000030626.index").unlink()
    plan, kwargs = plan_for(log_dir, part, had_clean_shutdown=True)
    recovered = [s.base_offset for s in steps_of(plan, RecoverSegment)]
    assert recovered == [30626, 90867]  # only the segments whose offset index is missing
    assert "Could not find offset index file" in steps_of(plan, RecoverSegment)[0].reason
    assert plan.recovery_point == plan.log_end_offset  # after a clean shutdown
    plan, _, again = load_twice(part, **kwargs)
    assert again.is_empty


def test_a_corrupt_tail_found_while_loading_keeps_later_segments_as_kafka_does(invoice):
    log_dir, part = invoice
    log = part / "00000000000000030626.log"
    batches = batch_positions(log)
    middle = batches[len(batches) // 2]
    os.truncate(log, middle[0] + 10)
    (part / "00000000000000030626.index").unlink()
    plan, kwargs = plan_for(log_dir, part, recovery_point_checkpoint=0)
    assert not steps_of(plan, DeleteSegment)
    cut = [s for s in steps_of(plan, RecoverSegment) if s.truncated_bytes]
    assert [c.base_offset for c in cut] == [30626]
    assert plan.log_end_offset == 100294
    apply_load(plan)
    assert plan_load(part, **kwargs).is_empty


def test_stray_deleted_files_and_orphaned_indexes_are_removed(invoice):
    log_dir, part = invoice
    (part / "00000000000000030626.log.deleted").write_bytes(b"old")
    (part / "00000000000099999999.index").write_bytes(b"")
    (part / "00000000000000000007-0000000001.checkpoint.deleted").write_bytes(b"kraft")
    plan, kwargs = plan_for(log_dir, part)
    deleted = {os.path.basename(s.path): s.reason for s in steps_of(plan, DeleteFile)}
    assert "stray .deleted" in deleted["00000000000000030626.log.deleted"]
    assert "orphaned index" in deleted["00000000000099999999.index"]
    assert "00000000000000000007-0000000001.checkpoint.deleted" not in deleted
    apply_load(plan)
    assert plan_load(part, **kwargs).is_empty


# -- checkpoints that disagree with the log -----------------------------------------------
def test_log_end_below_the_checkpointed_log_start_starts_the_log_over(invoice):
    log_dir, part = invoice
    plan, kwargs = plan_for(log_dir, part, log_start_offset_checkpoint=200_000)
    assert kinds(plan)[:1] == ["write-leader-epochs"]  # cleared before the segments go
    assert steps_of(plan, WriteLeaderEpochs)[0].after == ()
    assert {s.offset for s in steps_of(plan, DeleteSnapshot)} == {30626, 60611, 90867}
    assert [s.base_offset for s in steps_of(plan, DeleteSegment)] == [90867, 60611, 30626, 0]
    assert not steps_of(plan, RecoverSegment)
    assert steps_of(plan, CreateSegment)[0].base_offset == 200_000
    assert (plan.log_start_offset, plan.log_end_offset, plan.high_watermark) == (200_000,) * 3
    apply_load(plan)
    assert sorted(os.listdir(part)) == [
        "00000000000000200000.index", "00000000000000200000.log",
        "00000000000000200000.timeindex", "leader-epoch-checkpoint", "partition.metadata"]
    assert (part / "leader-epoch-checkpoint").read_text() == "0\n0\n"
    assert plan_load(part, **kwargs).is_empty


def test_an_epoch_cache_ahead_of_the_log_is_truncated(invoice):
    log_dir, part = invoice
    (part / "leader-epoch-checkpoint").write_text("0\n3\n0 0\n4 100294\n5 200000\n")
    plan, kwargs = plan_for(log_dir, part)
    step = steps_of(plan, WriteLeaderEpochs)[0]
    assert [(e.epoch, e.start_offset) for e in step.after] == [(0, 0)]
    assert "at or above the log end offset 100294" in step.reason
    apply_load(plan)
    assert (part / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    assert plan_load(part, **kwargs).is_empty


def test_a_high_watermark_above_the_log_end_is_clamped(invoice):
    log_dir, part = invoice
    plan, _ = plan_for(log_dir, part, high_watermark_checkpoint=10**12)
    assert plan.high_watermark == plan.log_end_offset == 100294
    plan, _ = plan_for(log_dir, part, high_watermark_checkpoint=None,
                       log_start_offset_checkpoint=5)
    assert plan.high_watermark == 5  # absent: 0, raised to the log start


# -- interrupted swaps (compaction), built with the engine -----------------------------------
SWAP_STAGES = ["cleaned", "swap-half-renamed", "swap", "old-renamed-deleted", "installed"]


def _compact_first_two_segments(part: Path, stage: str) -> bytes:
    """Rewrite segments 0 and 30626 into one (every other batch kept) as the cleaner does,
    stopping after ``stage``; returns the cleaned segment's bytes."""
    kept = []
    for base in (0, 30626):
        with FileRecords(part / f"{base:020d}.log") as records:
            kept += [(b.last_offset, b.raw_bytes())
                     for i, b in enumerate(records.batches()) if i % 2 == 0]
    cleaned = LogSegment.create(part, 0, CONFIG, file_suffix=".cleaned")
    for last_offset, raw in kept:
        cleaned.append(last_offset, raw)
    cleaned.on_become_inactive_segment()
    cleaned.flush()
    cleaned.close()
    data = (part / "00000000000000000000.log.cleaned").read_bytes()
    if stage == "cleaned":
        return data
    if stage == "swap-half-renamed":  # the .log renamed, its indexes not yet
        os.replace(part / f"{0:020d}.log.cleaned", part / f"{0:020d}.log.swap")
        return data
    swap = LogSegment.open(part, 0, CONFIG, file_suffix=".cleaned")
    swap.change_file_suffixes(".cleaned", ".swap")
    if stage == "swap":
        swap.close()
        return data
    for base in (0, 30626):
        with LogSegment.open(part, base, CONFIG) as old:
            old.change_file_suffixes("", ".deleted")
    if stage == "installed":
        swap.change_file_suffixes(".swap", "")
    swap.close()
    return data


@pytest.mark.parametrize("stage", SWAP_STAGES)
def test_an_interrupted_swap_ends_as_kafka_completes_or_aborts_it(corpus, tmp_path, stage):
    log_dir, part = copy_partition(corpus, "invoice-multiseg", "invoice-0", tmp_path)
    original = {n: (part / n).read_bytes() for n in segment_names(part)}
    cleaned = _compact_first_two_segments(part, stage)
    plan, kwargs = plan_for(log_dir, part)
    names = [os.path.basename(getattr(s, "path", "")) for s in steps_of(plan, DeleteFile)]
    renames = steps_of(plan, RenameFile)
    if stage in ("cleaned", "swap-half-renamed"):  # aborted: the originals stay
        assert not renames
        assert all(n.endswith((".cleaned", ".swap")) for n in names)
    elif stage == "swap":  # complete: the replaced segments go, the swap goes in
        assert "00000000000000030626.log" in names and "00000000000000030626.snapshot" in names
        assert {os.path.basename(r.target) for r in renames} == {
            "00000000000000000000.log", "00000000000000000000.index",
            "00000000000000000000.timeindex"}
    else:  # (the cleaner leaves the replaced segments' snapshots to a later step)
        assert all(n.endswith((".deleted", "30626.snapshot")) for n in names), names
        assert len(renames) == (3 if stage == "old-renamed-deleted" else 0)
    apply_load(plan)
    assert plan_load(part, **kwargs).is_empty
    assert not [n for n in os.listdir(part) if n.endswith(TEMP_SUFFIXES)]
    if stage in ("cleaned", "swap-half-renamed"):
        assert {n: (part / n).read_bytes() for n in segment_names(part)} == original
    else:
        assert segment_names(part) == ["00000000000000000000.log", "00000000000000060611.log",
                                       f"{ACTIVE}.log"]
        assert (part / "00000000000000000000.log").read_bytes() == cleaned
        assert not (part / "00000000000000030626.snapshot").exists()


def test_every_completed_swap_stage_reaches_the_same_files(corpus, tmp_path):
    results = []
    for stage in SWAP_STAGES[2:]:
        log_dir, part = copy_partition(corpus, "invoice-multiseg", "invoice-0", tmp_path / stage)
        _compact_first_two_segments(part, stage)
        plan, _ = plan_for(log_dir, part, now_ms=0)
        apply_load(plan)
        results.append(fingerprint(part))
    assert results[0] == results[1] == results[2]


# -- transactions ------------------------------------------------------------------------------
def test_recovery_rebuilds_the_aborted_transactions_index(tmp_path):
    part = tmp_path / "logs" / "txn-0"
    part.mkdir(parents=True)
    with Log.load(part, CONFIG) as log:
        batches = transactional_log()
        for data in batches[:4]:
            log.append_as_follower(data)
        log.roll()
        for data in batches[4:]:
            log.append_as_follower(data)
        log.flush()
    written = {n: (part / n).read_bytes() for n in os.listdir(part) if n.endswith(".txnindex")}
    assert list(written) == ["00000000000000000000.txnindex"]
    for name in os.listdir(part):  # as if the broker died: indexes gone, recover everything
        if name.endswith((".index", ".timeindex", ".txnindex", ".snapshot")):
            (part / name).unlink()
    plan, result, again = load_twice(part, recovery_point_checkpoint=0)
    recoveries = steps_of(plan, RecoverSegment)
    assert [r.replay_producers for r in recoveries] == [True, True]
    aborted = recoveries[0].aborted_txns
    assert [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
            for t in aborted] == [(7, 2, 6, 4)]  # producer 8's open transaction holds the LSO
    assert recoveries[1].aborted_txns == ()
    assert (part / "00000000000000000000.txnindex").read_bytes() == \
        written["00000000000000000000.txnindex"]
    assert read_transaction_index(part / "00000000000000000000.txnindex") == list(aborted)
    assert again.is_empty
    assert plan.log_end_offset == 13


# -- refusing, backing up, surviving crashes -------------------------------------------------
LOCK_HOLDER = """
import sys
from pylogctl.storage.lock import LogDirLock
lock = LogDirLock(sys.argv[1]).acquire()
print("locked", flush=True)
sys.stdin.readline()
"""


def test_apply_refuses_while_another_process_holds_the_log_dir_lock(invoice):
    log_dir, part = invoice
    plan, _ = plan_for(log_dir, part)
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(log_dir)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = fingerprint(part)
        with pytest.raises(LogDirLockedError) as err:
            apply_load(plan)
        assert err.value.exit_code == 4
        assert fingerprint(part) == before
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    apply_load(plan)  # free again


def test_apply_refuses_a_dir_that_changed_since_planning(invoice):
    log_dir, part = invoice
    plan, _ = plan_for(log_dir, part)
    with open(part / f"{ACTIVE}.log", "ab") as f:
        f.write(b"\0")
    with pytest.raises(PlanOutdatedError, match="changed since it was planned"):
        apply_load(plan)


def test_backups_hold_every_changed_file_and_are_never_overwritten(invoice, tmp_path):
    log_dir, part = invoice
    log = part / "00000000000000030626.log"
    originals = {n: (part / n).read_bytes() for n in os.listdir(part)}
    batches = batch_positions(log)
    middle = batches[len(batches) // 2]
    flip_byte(log, middle[0] + middle[1] - 1)
    damaged = log.read_bytes()
    backup = tmp_path / "backup"
    keep = backup / "invoice-0" / "leader-epoch-checkpoint"
    keep.parent.mkdir(parents=True)
    keep.write_text("older backup")
    plan, _ = plan_for(log_dir, part, recovery_point_checkpoint=0)
    result = apply_load(plan, backup_dir=backup)
    saved = backup / "invoice-0"
    assert (saved / "00000000000000030626.log").read_bytes() == damaged
    for name in ("00000000000000060611.log", f"{ACTIVE}.log", "00000000000000060611.index",
                 "00000000000000060611.snapshot"):
        assert (saved / name).read_bytes() == originals[name]
    assert keep.read_text() == "older backup"
    assert str(saved / "00000000000000060611.log") in result.backups


@pytest.mark.parametrize("scenario", ["crc", "swap", "log-start"])
def test_a_crash_after_any_step_is_repaired_by_planning_again(corpus, tmp_path, monkeypatch,
                                                              scenario):
    def prepare(where: Path):
        log_dir, part = copy_partition(corpus, "invoice-multiseg", "invoice-0", where)
        overrides = {"now_ms": 0}
        if scenario == "crc":
            log = part / "00000000000000030626.log"
            batches = batch_positions(log)
            middle = batches[len(batches) // 2]
            flip_byte(log, middle[0] + middle[1] - 1)
            overrides["recovery_point_checkpoint"] = 0
        elif scenario == "swap":
            _compact_first_two_segments(part, "swap")
        else:
            overrides["log_start_offset_checkpoint"] = 200_000
        return part, plan_for(log_dir, part, **overrides)

    part, (plan, kwargs) = prepare(tmp_path / "whole")
    apply_load(plan)
    expected = fingerprint(part)
    assert len(plan.steps) >= 4
    real_apply = load_apply._Applier.apply
    for crash_after in range(len(plan.steps)):
        part, (plan, kwargs) = prepare(tmp_path / f"crash{crash_after}")
        done = []

        def apply_then_crash(self, step):
            if len(done) == crash_after:
                raise KeyboardInterrupt("killed")
            done.append(step)
            real_apply(self, step)

        monkeypatch.setattr(load_apply._Applier, "apply", apply_then_crash)
        with pytest.raises(KeyboardInterrupt):
            apply_load(plan)
        monkeypatch.setattr(load_apply._Applier, "apply", real_apply)
        plan, _, again = load_twice(part, **kwargs)
        assert again.is_empty
        assert fingerprint(part) == expected, (scenario, crash_after)


def test_plan_describe_names_each_step(invoice):
    log_dir, part = invoice
    log = part / f"{ACTIVE}.log"
    os.truncate(log, log.stat().st_size // 2)
    plan, _ = plan_for(log_dir, part)
    lines = plan.describe()
    assert lines[0].endswith(f"log start 0, log end {plan.log_end_offset}, recovery point "
                             f"{plan.recovery_point}, high watermark {plan.high_watermark}, "
                             f"4 segments")
    assert any("recover segment 90867: cut" in line for line in lines)
    d = plan.to_dict()
    assert d["steps"][0]["kind"] == "recover-segment"
    rebuild = steps_of(plan, RebuildProducerState)[0]
    assert rebuild.written == (plan.log_end_offset,)
    assert any(line.startswith(f"  2. rebuild producer state to offset {plan.log_end_offset}")
               for line in lines)


def test_recovery_assigns_the_epochs_its_batches_start(invoice):
    log_dir, part = invoice
    (part / "leader-epoch-checkpoint").write_text("0\n0\n")  # lost, as after a hard failure
    plan, kwargs = plan_for(log_dir, part)
    step = steps_of(plan, WriteLeaderEpochs)[0]
    assert step.assigned == step.after == (EpochEntry(0, 90867),)  # the first recovered batch
    assert step.removed_from_end == step.removed_from_start == ()
    assert "LogSegment.recover" in step.reason
    apply_load(plan)
    assert (part / "leader-epoch-checkpoint").read_text() == "0\n1\n0 90867\n"
    assert plan_load(part, **kwargs).is_empty


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_files_a_root_run_creates_belong_to_the_partition_dirs_owner(invoice):
    log_dir, part = invoice
    for path in [part, *part.iterdir()]:
        os.chown(path, 4321, 4321)
    plan, _ = plan_for(log_dir, part)
    apply_load(plan)
    created = part / f"{ACTIVE}.index"
    assert created.exists()
    assert {(p.stat().st_uid, p.stat().st_gid) for p in part.iterdir()} == {(4321, 4321)}
