"""The log cleaner on generated logs: Kafka's invariants after compaction.

Each workload has many keys, tombstones, an idempotent producer, transactions of four
producers (committed and aborted, interleaved) and several segments; the model
(:func:`cleaner_support.expected_after_first_clean`) says which data records must remain.
"""

from __future__ import annotations

import pytest

from cleaner_support import (BASE_TS, COMPACT, DAY, append_segment, batches_of, cleaner_checkpoint,
                             compact, data_records, expected_after_first_clean,
                             expected_after_horizon, kafka_python_records, keyed_batch,
                             random_workload, set_cleaner_checkpoint, write_log)
from load_support import fingerprint
from pylogctl.format.compression import Codec
from pylogctl.format.record_batch import RecordBatch
from pylogctl.storage.cleaner.cleaner import Cleaner
from pylogctl.storage.cleaner.cleaner_config import CleanerConfig
from pylogctl.storage.cleaner.cleaner_log import CleanerLog
from pylogctl.storage.cleaner.cleaner_manager import clean_log
from pylogctl.storage.log import Log
from pylogctl.storage.cleaner.offset_map import SkimpyOffsetMap
from pylogctl.storage.producer_recovery import producer_state_before

NOW = BASE_TS + DAY
RETENTION = DAY  # delete.retention.ms (Kafka's default)


@pytest.mark.parametrize("seed,codecs", [
    (1, (Codec.NONE,)), (2, (Codec.NONE,)), (3, (Codec.GZIP, Codec.NONE)),
    (4, (Codec.LZ4, Codec.SNAPPY)), (5, (Codec.ZSTD,)),
])
def test_first_cleaning_keeps_each_keys_latest_record_at_its_offset(tmp_path, seed, codecs):
    w = random_workload(seed, codecs=codecs)
    part = write_log(tmp_path, w)
    section, = compact(tmp_path, NOW)
    end = cleaner_checkpoint(tmp_path)
    assert end == section.rounds[-1].end_offset == section.to_clean.first_uncleanable_offset
    after = data_records(part)
    assert after == expected_after_first_clean(w, end)  # offsets, timestamps, headers kept
    assert kafka_python_records(part) == after
    assert section.rounds[0].stats.bytes_written < section.rounds[0].stats.bytes_read


def test_no_aborted_or_keyless_record_survives(tmp_path):
    w = random_workload(6, keyless_rate=0.1, abort_rate=0.8)
    part = write_log(tmp_path, w)
    section, = compact(tmp_path, NOW)
    end = cleaner_checkpoint(tmp_path)
    left = {r[0] for r in data_records(part)}
    aborted = {r.offset for r in w.records if r.txn == "abort" and r.offset < end}
    keyless = {r.offset for r in w.records if r.key is None and r.offset < end}
    assert aborted and keyless
    assert not left & (aborted | keyless)
    # keyless records are counted invalid, unless their aborted batch went unread
    assert section.rounds[0].stats.invalid_messages_read == len(keyless - aborted)


def test_nothing_at_or_above_the_first_uncleanable_offset_changes(tmp_path):
    w = random_workload(7, leave_open=True, txn_rate=0.25)  # an open transaction pins the LSO
    part = write_log(tmp_path, w)
    before = batches_of(part)
    section, = compact(tmp_path, NOW)
    lso = min(r.offset for r in w.records if r.txn == "open")
    assert section.offsets["lastStableOffset"] == lso
    end = section.to_clean.first_uncleanable_offset
    assert end <= lso < section.offsets["activeSegment"]
    assert [b for b in batches_of(part) if b[0] >= end] == [b for b in before if b[0] >= end]
    assert data_records(part) == expected_after_first_clean(w, end)


def test_tombstones_vanish_only_past_their_delete_horizon(tmp_path):
    w = random_workload(8, tombstone_rate=0.3)
    part = write_log(tmp_path, w)
    compact(tmp_path, NOW)
    end = cleaner_checkpoint(tmp_path)
    horizons = {b[3] for b in batches_of(part) if b[0] < end and b[3] is not None}
    assert horizons == {NOW + RETENTION}  # KIP-534: set by the first cleaning that keeps them
    first = expected_after_first_clean(w, end)
    assert any(v[2] is None for v in first)
    # a cleaning needs new dirty data: a segment of another key before each
    next_offset = append_segment(tmp_path, part, [keyed_batch(w.next_offset, [(b"x", b"1")])])
    compact(tmp_path, NOW + RETENTION - 1, partitions=("t-0",))
    assert [v for v in data_records(part) if v[0] < end] == [v for v in first if v[0] < end]
    append_segment(tmp_path, part, [keyed_batch(next_offset, [(b"x", b"2")])])
    compact(tmp_path, NOW + RETENTION, partitions=("t-0",))
    assert [v for v in data_records(part) if v[0] < end] == [
        v for v in expected_after_horizon(w, end) if v[0] < end]


def test_markers_go_only_after_their_transaction_and_horizon(tmp_path):
    w = random_workload(9, txn_rate=0.3)
    part = write_log(tmp_path, w)
    markers = sum(1 for b in batches_of(part) if b[2])
    compact(tmp_path, NOW)
    assert sum(1 for b in batches_of(part) if b[2]) == markers  # data was seen this pass
    for now in (NOW + 1, NOW + 2 * RETENTION + 2):  # horizons set, then passed
        set_cleaner_checkpoint(tmp_path, 0)
        compact(tmp_path, now, partitions=("t-0",))
    left = [b for b in batches_of(part) if b[2]]
    producers_with_data = {RecordBatch(b[4]).producer_id for b in batches_of(part)
                           if not b[2] and RecordBatch(b[4]).is_transactional}
    assert len(left) < markers
    assert all(RecordBatch(b[4]).producer_id in producers_with_data
               or RecordBatch(b[4]).delete_horizon_ms is None for b in left)


def test_each_producers_last_batch_survives_so_its_state_does(tmp_path):
    w = random_workload(10)
    part = write_log(tmp_path, w)

    def state() -> dict:
        segments = [(int(p.name[:20]), str(p)) for p in sorted(part.glob("*.log"))]
        manager = producer_state_before(str(part), segments, {}, w.next_offset, 0, NOW)
        return {pid: (e.producer_epoch, e.last_seq, e.last_data_offset)
                for pid, e in manager.active_producers.items()}

    before = state()
    compact(tmp_path, NOW)
    assert state() == before
    assert any(RecordBatch(b[4]).records_count == 0 for b in batches_of(part))


def test_every_index_verifies_and_recovery_finds_nothing_to_do(tmp_path, cli):
    w = random_workload(11, segment_batches=10, codecs=(Codec.NONE, Codec.LZ4))
    write_log(tmp_path, w)
    compact(tmp_path, NOW, segment_bytes=4000)  # several groups, each its own segment
    verify = cli("rebuild-index", "--verify", tmp_path)
    assert verify.code == 0, verify.err
    recover = cli("recover", tmp_path, "--check")
    assert recover.code == 0, recover.out


def test_a_plan_writes_nothing_and_predicts_the_cleaning(tmp_path):
    w = random_workload(12, codecs=(Codec.GZIP, Codec.NONE))
    write_log(tmp_path, w)
    before = fingerprint(tmp_path)
    planned, = compact(tmp_path, NOW, execute=False)
    assert fingerprint(tmp_path) == before
    done, = compact(tmp_path, NOW)
    assert planned.decision == done.decision
    assert planned.checkpoint_update == done.checkpoint_update
    assert (planned.bytes_before, planned.bytes_after) == (done.bytes_before, done.bytes_after)
    assert [g.bytes_after for g in planned.rounds[0].groups] == [
        g.bytes_after for g in done.rounds[0].groups]


def test_a_second_run_finds_the_log_clean(tmp_path):
    write_log(tmp_path, random_workload(13))
    compact(tmp_path, NOW)
    files = fingerprint(tmp_path)
    section, = compact(tmp_path, NOW)
    assert not section.decision.clean and section.to_clean.cleanable_bytes == 0
    assert fingerprint(tmp_path) == files


def test_the_offset_map_budget_splits_the_cleaning_into_rounds(tmp_path):
    w = random_workload(14, batches=150, keys=400)
    part = write_log(tmp_path, w)
    small = Cleaner(CleanerConfig(), SkimpyOffsetMap(24 * 100))  # 90 keys per round
    with Log.load(part, COMPACT, recovery_point_checkpoint=w.next_offset,
                  high_watermark_checkpoint=w.next_offset) as log:
        clog = CleanerLog.for_log(log, NOW)
        first, rounds = clean_log(small, clog, None, NOW, forced=True)
    assert len(rounds) > 2
    assert [r.first_dirty_offset for r in rounds[1:]] == [r.end_offset for r in rounds[:-1]]
    assert all(r.stats.buffer_utilization <= 0.9 for r in rounds)
    end = rounds[-1].end_offset
    assert end == first.first_uncleanable_offset
    assert data_records(part) == expected_after_first_clean(w, end)


def test_a_checkpoint_beyond_the_log_end_is_reset_to_the_log_start(tmp_path):
    w = random_workload(15)
    write_log(tmp_path, w)
    set_cleaner_checkpoint(tmp_path, w.next_offset + 100)
    planned, = compact(tmp_path, NOW, execute=False)
    assert planned.to_clean.force_update_checkpoint and planned.to_clean.first_dirty_offset == 0
    compact(tmp_path, NOW)
    assert cleaner_checkpoint(tmp_path) == planned.to_clean.first_uncleanable_offset


def test_min_compaction_lag_keeps_recent_segments_dirty(tmp_path):
    w = random_workload(16)
    part = write_log(tmp_path, w)
    last_ts = max(r.timestamp for r in w.records)
    lag = NOW - last_ts + 1  # the newest closed segments are too young to clean
    section, = compact(tmp_path, NOW, min_compaction_lag_ms=lag)
    bases = sorted(int(p.name[:20]) for p in part.glob("*.log"))
    assert section.to_clean.first_uncleanable_offset < section.offsets["activeSegment"]
    assert section.to_clean.first_uncleanable_offset in bases


def test_max_compaction_lag_cleans_a_log_below_the_dirty_ratio(tmp_path):
    w = random_workload(17)
    part = write_log(tmp_path, w)
    compact(tmp_path, NOW)
    append_segment(tmp_path, part, [keyed_batch(w.next_offset, [(b"k", b"v")], ts=NOW)])
    idle, = compact(tmp_path, NOW + 10, execute=False)
    assert not idle.decision.clean and idle.to_clean.cleanable_ratio < 0.5
    overdue, = compact(tmp_path, NOW + 10, execute=False, max_compaction_lag_ms=5)
    assert overdue.to_clean.need_compaction_now and overdue.decision.clean


def test_a_log_not_compacted_is_left_alone_unless_named(tmp_path):
    write_log(tmp_path, random_workload(18))
    files = fingerprint(tmp_path)
    section, = compact(tmp_path, NOW, cleanup_policy="delete")
    assert not section.decision.clean and "not a compacted topic" in section.decision.reason
    assert fingerprint(tmp_path) == files
    forced, = compact(tmp_path, NOW, cleanup_policy="delete", partitions=("t-0",))
    assert forced.decision.clean and forced.executed


def test_backups_keep_every_replaced_segment(tmp_path):
    w = random_workload(19)
    part = write_log(tmp_path / "logs", w)
    logs = {p.name: p.read_bytes() for p in part.glob("*.log")}
    compact(tmp_path / "logs", NOW, backup_dir=tmp_path / "backup")
    saved = {p.name: p.read_bytes() for p in (tmp_path / "backup" / "t-0").glob("*.log")}
    assert saved == {n: b for n, b in logs.items() if n in saved} and len(saved) == len(logs) - 1
