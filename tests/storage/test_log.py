"""The partition log (Kafka's UnifiedLog/LocalLog): loading through the loader, truncation,
rolling, follower appends, flushing and closing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pylogctl.errors import LogDirLockedError
from pylogctl.storage.checkpoint import EpochEntry
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.loader.log_loader import plan_load
from pylogctl.storage.lock import LogDirLock
from pylogctl.storage.log import Log, LogError
from pylogctl.storage.log_config import LogConfig
from load_support import batch, batch_positions, copy_partition, segment_names

ACTIVE = 90867
CHECKPOINTS = dict(log_start_offset_checkpoint=0, recovery_point_checkpoint=ACTIVE,
                   high_watermark_checkpoint=100294)


@pytest.fixture
def invoice(corpus, tmp_path) -> Path:
    return copy_partition(corpus, "invoice-multiseg", "invoice-0", tmp_path)[1]


def offsets(log: Log) -> tuple[int, int, int, int]:
    return log.log_start_offset, log.log_end_offset, log.recovery_point, log.high_watermark


def reload_plan(part: Path, log_or_result, **extra):
    """The plan for the next start, with the checkpoints the log now has."""
    r = log_or_result
    return plan_load(part, log_start_offset_checkpoint=r.log_start_offset,
                     recovery_point_checkpoint=r.recovery_point,
                     high_watermark_checkpoint=r.high_watermark, **extra)


def read_offsets(part: Path) -> list[int]:
    out = []
    for name in segment_names(part):
        with FileRecords(part / name) as records:
            out += [b.last_offset for b in records.batches()]
    return out


def test_load_opens_the_recovered_log(invoice):
    with Log.load(invoice, **CHECKPOINTS) as log:
        assert offsets(log) == (0, 100294, ACTIVE, 100294)
        assert log.segments.base_offsets == [0, 30626, 60611, ACTIVE]
        assert log.active_segment.base_offset == ACTIVE
        assert [s.base_offset for s in log.segments_in_range(30626, 60612)] == [30626, 60611]
        assert [s.base_offset for s in log.segments_in_range(40000, 50000)] == [30626]
        assert log.load_result.applied  # the active segment's indexes were rebuilt
        assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 0)]
    assert reload_plan(invoice, log).is_empty


def test_truncate_to_a_batch_boundary_in_the_active_segment(invoice):
    positions = batch_positions(invoice / f"{ACTIVE:020d}.log")
    target = positions[10][2]  # the base offset of the 11th batch
    with Log.load(invoice, **CHECKPOINTS) as log:
        log.update_high_watermark(100294)
        result = log.truncate_to(target)
        assert result.changed and result.deleted_segments == ()
        assert result.truncated_segment == ACTIVE
        assert result.truncated_bytes == sum(p[1] for p in positions[10:])
        assert offsets(log) == (0, target, ACTIVE, target)
        assert log.active_segment.size == positions[10][0]
        assert not any(o > target for o in log.producer_state.snapshot_offsets())
    assert max(read_offsets(invoice)) == target - 1
    assert reload_plan(invoice, log).is_empty


def test_truncate_to_mid_batch_drops_the_whole_batch(invoice):
    positions = batch_positions(invoice / f"{ACTIVE:020d}.log")
    base, next_offset = positions[10][2], positions[10][3]
    assert next_offset - base > 1
    with Log.load(invoice, **CHECKPOINTS) as log:
        result = log.truncate_to(base + 1)
        assert result.log_end_offset == base == log.log_end_offset
    assert max(read_offsets(invoice)) == base - 1
    assert reload_plan(invoice, log).is_empty


def test_truncate_into_an_earlier_segment_deletes_the_later_ones(invoice):
    with Log.load(invoice, **CHECKPOINTS) as log:
        log.leader_epoch_cache.assign(3, 70000)
        result = log.truncate_to(45000)
        assert result.deleted_segments == (60611, ACTIVE)
        assert result.truncated_segment == 30626
        assert result.leader_epochs_removed == (EpochEntry(3, 70000),)
        assert log.segments.base_offsets == [0, 30626]
        assert log.recovery_point == log.log_end_offset <= 45000
        assert log.high_watermark == log.log_end_offset
    assert segment_names(invoice) == ["00000000000000000000.log", "00000000000000030626.log"]
    assert not [n for n in os.listdir(invoice) if n.endswith(".deleted")]
    assert not (invoice / "00000000000000060611.snapshot").exists()
    assert (invoice / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    assert reload_plan(invoice, log, had_clean_shutdown=True).is_empty
    # unclean, the next start re-validates segment 30626 (it holds the recovery point): its
    # data is fine, only Kafka's own (empty) index differs from a rebuilt one
    again = reload_plan(invoice, log)
    assert [(s.kind, s.base_offset, s.truncated_bytes) for s in again.steps] == [
        ("recover-segment", 30626, 0)]


def test_truncate_at_or_beyond_the_log_end_changes_nothing_but_stale_epochs(invoice):
    with Log.load(invoice, **CHECKPOINTS) as log:
        log.leader_epoch_cache.assign(5, 100294)  # a leader that wrote nothing
        result = log.truncate_to(200000)
        assert result.leader_epochs_removed == (EpochEntry(5, 100294),)
        assert (result.truncated_bytes, result.deleted_segments) == (0, ())
        assert log.log_end_offset == 100294
        with pytest.raises(LogError, match="negative"):
            log.truncate_to(-1)


def test_truncate_fully_and_start_at(invoice):
    with Log.load(invoice, **CHECKPOINTS) as log:
        result = log.truncate_fully_and_start_at(500000)
        assert result.deleted_segments == (0, 30626, 60611, ACTIVE)
        assert result.created_segment == 500000
        assert offsets(log)[:2] == (500000, 500000)
        assert log.high_watermark == 500000
        assert log.leader_epoch_cache.epoch_entries() == []
        assert log.producer_state.snapshot_offsets() == []
    assert segment_names(invoice) == ["00000000000000500000.log"]
    assert reload_plan(invoice, log).is_empty


def test_truncate_fully_at_the_same_base_offset_replaces_the_segment(tmp_path):
    part = tmp_path / "logs" / "t-0"
    part.mkdir(parents=True)
    with Log.load(part) as log:
        log.append_as_follower(batch(0, 5))
        result = log.truncate_fully_and_start_at(0)
        assert result.created_segment == 0 and log.log_end_offset == 0
        assert log.active_segment.size == 0
    assert (part / "00000000000000000000.log").stat().st_size == 0


def test_truncate_below_the_first_segment_starts_the_log_over(tmp_path):
    part = tmp_path / "logs" / "t-0"
    part.mkdir(parents=True)
    with Log.load(part) as log:
        log.truncate_fully_and_start_at(100)
        log.append_as_follower(batch(100, 5))
        result = log.truncate_to(50)
        assert result.created_segment == 50
        assert offsets(log)[:2] == (50, 50)


def test_follower_appends_roll_flush_and_reload(tmp_path):
    part = tmp_path / "logs" / "f-0"
    part.mkdir(parents=True)
    config = LogConfig(segment_bytes=2000)
    with Log.load(part, config) as log:
        infos = [log.append_as_follower(batch(o, 3, epoch=o // 9)) for o in range(0, 45, 3)]
        assert any(i.rolled for i in infos)
        assert log.log_end_offset == 45
        assert len(log.segments) > 2
        assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(e, 9 * e) for e in range(5)]
        with pytest.raises(LogError, match="below the expected offset"):
            log.append_as_follower(batch(40, 3))
        assert log.recovery_point < 45
        log.flush()
        assert log.recovery_point == 45
        bases = log.segments.base_offsets
    assert read_offsets(part) == list(range(2, 45, 3))
    plan = plan_load(part, recovery_point_checkpoint=45, high_watermark_checkpoint=45,
                     config=config)
    assert plan.is_empty and plan.segments == tuple(bases) and plan.log_end_offset == 45


def test_roll_starts_at_the_log_end_or_the_expected_offset(tmp_path):
    part = tmp_path / "logs" / "r-0"
    part.mkdir(parents=True)
    with Log.load(part) as log:
        log.append_as_follower(batch(0, 3))
        segment = log.roll()
        assert segment.base_offset == 3 == log.active_segment.base_offset
        assert log.roll().base_offset == 3  # an empty active segment is replaced
        assert log.producer_state.snapshot_offsets() == [3]
        log.append_as_follower(batch(3, 3))
        assert log.roll(3).base_offset == 6  # never below the log end
        assert log.roll(10).base_offset == 10
        assert log.segments.base_offsets == [0, 3, 6, 10]


def test_the_log_holds_the_log_dir_lock_until_closed(invoice):
    log = Log.load(invoice, **CHECKPOINTS)
    with pytest.raises(LogDirLockedError):
        LogDirLock(invoice.parent).acquire()
    log.close()
    log.close()  # twice is fine
    with pytest.raises(LogError, match="closed"):
        log.truncate_to(5)
    with LogDirLock(invoice.parent):
        pass


def test_truncation_backs_up_what_it_changes(invoice, tmp_path):
    active = invoice / f"{ACTIVE:020d}.log"
    original = active.read_bytes()
    backup = tmp_path / "backup"
    with Log.load(invoice, **CHECKPOINTS, backup_dir=backup) as log:
        log.truncate_to(95000)
    assert (backup / "invoice-0" / active.name).read_bytes() == original
    assert len(active.read_bytes()) < len(original)
