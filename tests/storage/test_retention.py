"""Kafka's retention (``deleteOldSegments``): the three passes and their common rules, on logs
built with the engine, each predicted read-only and then carried out, the two compared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pylogctl.storage import log as log_module
from pylogctl.storage.checkpoint import EpochEntry
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_dir import LogDir
from pylogctl.storage.retention import (LOG_START_RULE, SIZE_RULE, TIME_RULE, LogState,
                                        SegmentInfo, rules_for, run_pass, simulate)

from load_support import fingerprint
from retention_support import (DAY, NOW, Seg, build_log, checkpoint_entry, kafka_python_offsets,
                               segment_bases, write_checkpoint)

WEEK = 7 * DAY
LOG_START_CP = "log-start-offset-checkpoint"


def plan_and_delete(log_dir: Path, config: LogConfig, now: int = NOW):
    """Plan (nothing written), delete, check the deletion against the plan, and that a second
    plan and a broker's load find nothing to do; returns ``(plan, outcome)``."""
    d = LogDir(log_dir)
    entry = d.partitions[0]
    before = fingerprint(log_dir)
    plan = d.plan_retention(entry, config, now)
    assert fingerprint(log_dir) == before, "planning wrote something"
    outcome = d.delete_old_segments(entry, config, now)
    assert outcome.retention == plan.retention
    assert outcome.checkpoint_updates == plan.checkpoint_updates
    again = LogDir(log_dir)
    assert not again.plan_retention(entry, config, now).retention.changed
    assert again.plan(entry).is_empty, "the log left behind needs recovery"
    return plan, outcome


def test_time_pass_stops_at_the_first_segment_not_old_enough(tmp_path):
    part = build_log(tmp_path, [Seg(3, NOW - 10 * DAY), Seg(3, NOW - 9 * DAY),
                                Seg(3, NOW - 2 * DAY), Seg(3, NOW - 9 * DAY), Seg(3, NOW)])
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    r = plan.retention
    assert r.deleted_segments == (0, 3) and {d.rule for d in r.deleted} == {TIME_RULE}
    time_pass = r.passes[2]
    assert time_pass.stopped_at == 6 and "not more than retention.ms" in time_pass.stop_reason
    assert segment_bases(part) == [6, 9, 12]  # segment 9 is old too, but comes after 6
    # at the first segment's base: no entry, as Kafka checkpoints only a log start above it
    assert r.log_start_offset == 6 and checkpoint_entry(tmp_path, LOG_START_CP) is None
    assert kafka_python_offsets(part) == list(range(6, 15))


def test_the_age_must_exceed_retention_ms(tmp_path):
    build_log(tmp_path, [Seg(2, NOW - WEEK), Seg(2, NOW - WEEK - 1), Seg(2, NOW)])
    d = LogDir(tmp_path)
    plan = d.plan_retention(d.partitions[0], LogConfig(retention_ms=WEEK), NOW)
    assert plan.retention.deleted_segments == ()  # exactly retention.ms old: kept
    plan = d.plan_retention(d.partitions[0], LogConfig(retention_ms=WEEK), NOW + 1)
    assert plan.retention.deleted_segments == (0, 2)


def test_a_future_timestamp_holds_back_every_later_segment(tmp_path):
    part = build_log(tmp_path, [Seg(2, NOW - 30 * DAY), Seg(2, NOW + DAY),
                                Seg(2, NOW - 30 * DAY), Seg(2, NOW)])
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    r = plan.retention
    assert r.deleted_segments == (0,)
    assert r.passes[2].stopped_at == 2 and "in the future" in r.passes[2].stop_reason
    assert any("segment 2 is kept" in n and "in the future" in n for n in r.notes)
    assert segment_bases(part) == [2, 4, 6]


def test_a_segment_without_timestamps_ages_by_its_mtime(tmp_path):
    part = build_log(tmp_path, [Seg(2, -1), Seg(2, -1), Seg(2, NOW)])
    old = (NOW - 10 * DAY) * 1_000_000
    os.utime(part / "00000000000000000000.log", ns=(old, old))
    os.utime(part / "00000000000000000002.log", ns=(NOW * 1_000_000,) * 2)
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    assert plan.retention.deleted_segments == (0,)
    assert "no record timestamp" in plan.retention.deleted[0].reason


@pytest.mark.parametrize("limit, deleted", [
    (1000 - 100 - 200, 2),      # diff = 300: 300-100 >= 0, 200-200 >= 0, 0-300 < 0
    (1000 - 100 - 200 + 1, 1),  # diff = 299: the second segment would go below the limit
    (1000 - 99, 0),             # diff = 99 < the first segment's 100
    (1000, 0),                  # diff = 0: the pass runs, deletes nothing
    (0, 3),                     # all but the last, which holds offsets at the high watermark
])
def test_size_pass_arithmetic_is_kafkas(limit, deleted):
    sizes = [100, 200, 300, 400]
    segments = tuple(SegmentInfo(i * 10, s, NOW, NOW) for i, s in enumerate(sizes))
    state = LogState(segments, 0, 40, 30, 0)  # the last segment holds offsets 30..39 > HW
    p = run_pass(state, SIZE_RULE, LogConfig(retention_bytes=limit), NOW)
    assert p.skipped is None and len(p.deleted) == deleted


def test_size_pass_is_skipped_below_the_limit_or_without_one():
    state = LogState((SegmentInfo(0, 100, NOW, NOW), SegmentInfo(1, 50, NOW, NOW)), 0, 2, 2, 0)
    assert run_pass(state, SIZE_RULE, LogConfig(retention_bytes=151), NOW).skipped
    assert run_pass(state, SIZE_RULE, LogConfig(), NOW).skipped == "no size limit"
    assert run_pass(state, TIME_RULE, LogConfig(retention_ms=-1), NOW).skipped == "no time limit"


def test_size_pass_on_a_built_log(tmp_path):
    part = build_log(tmp_path, [Seg(4, value_size=500), Seg(4, value_size=300),
                                Seg(4, value_size=200), Seg(4, value_size=100)])
    sizes = [(part / f"{b:020d}.log").stat().st_size for b in segment_bases(part)]
    limit = sum(sizes) - sizes[0] - sizes[1]
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_bytes=limit, retention_ms=-1))
    r = plan.retention
    assert r.deleted_segments == (0, 4) and r.bytes_freed == sizes[0] + sizes[1]
    assert "would take the log" in r.passes[1].stop_reason
    assert sum(p.stat().st_size for p in part.glob("*.log")) == limit


def test_log_start_pass_deletes_segments_wholly_below_the_log_start(tmp_path):
    part = build_log(tmp_path, [Seg(3), Seg(3), Seg(3), Seg(3)], log_start=7)
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_ms=-1))
    r = plan.retention
    assert r.deleted_segments == (0, 3) and r.deleted[0].rule == LOG_START_RULE
    assert r.log_start_offset == 7  # DeleteRecords' offset inside segment 6 stays
    assert segment_bases(part) == [6, 9]
    assert kafka_python_offsets(part) == list(range(6, 12))  # the batch holding 7 stays whole


def test_a_compacted_log_only_gets_the_log_start_pass():
    assert rules_for(LogConfig(cleanup_policy=("compact",))) == (LOG_START_RULE,)
    assert rules_for(LogConfig(cleanup_policy=("compact", "delete"))) == (
        LOG_START_RULE, SIZE_RULE, TIME_RULE)


def test_each_pass_sees_what_the_previous_one_left(tmp_path):
    """Log start deletes segment 0; the size pass then measures the log without it (over the
    whole log it would take two segments, 2 and 4); then time takes segment 4."""
    build_log(tmp_path, [Seg(2, NOW - 30 * DAY, 400), Seg(2, NOW - 30 * DAY, 400),
                         Seg(2, NOW - 30 * DAY, 400), Seg(2, NOW - DAY, 400), Seg(2, NOW, 400)],
              log_start=2)
    one = (tmp_path / "t-0" / "00000000000000000000.log").stat().st_size
    config = LogConfig(retention_bytes=3 * one, retention_ms=20 * DAY)
    plan, _ = plan_and_delete(tmp_path, config)
    rules = [(x.base_offset, x.rule) for x in plan.retention.deleted]
    assert rules == [(0, LOG_START_RULE), (2, SIZE_RULE), (4, TIME_RULE)]


def test_nothing_at_or_above_the_high_watermark_goes(tmp_path):
    build_log(tmp_path, [Seg(3, NOW - 30 * DAY)] * 4, high_watermark=7)
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    r = plan.retention
    assert r.deleted_segments == (0, 3)  # segment 3 ends below 6 <= 7; segment 6 holds 7
    assert "high watermark 7" in r.passes[2].stop_reason and r.passes[2].stopped_at == 6
    assert r.log_start_offset == 6 <= r.high_watermark


def test_a_high_watermark_at_a_segment_base_lets_the_segment_before_go(tmp_path):
    build_log(tmp_path, [Seg(3, NOW - 30 * DAY)] * 3, high_watermark=6)
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    assert plan.retention.deleted_segments == (0, 3)


def test_an_empty_active_segment_is_never_deleted(tmp_path):
    part = build_log(tmp_path, [Seg(3, NOW - 30 * DAY), Seg(3, NOW - 30 * DAY), Seg(0)])
    plan, _ = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    r = plan.retention
    assert r.deleted_segments == (0, 3) and r.created_segment is None
    assert r.passes[2].stop_reason == "is kept: it is the empty active segment"
    assert segment_bases(part) == [6] and r.log_start_offset == 6


def test_when_every_segment_goes_an_empty_one_is_rolled_first(tmp_path):
    part = build_log(tmp_path, [Seg(3, NOW - 30 * DAY)] * 3)
    plan, outcome = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    r = plan.retention
    assert r.deleted_segments == (0, 3, 6) and r.created_segment == 9
    assert segment_bases(part) == [9] and (part / f"{9:020d}.log").stat().st_size == 0
    assert (r.log_start_offset, r.log_end_offset) == (9, 9)
    assert r.leader_epochs_before == (EpochEntry(0, 0), EpochEntry(1, 3), EpochEntry(2, 6))
    assert r.leader_epochs == ()  # cleared: an entry at the log end would go at the next load
    assert kafka_python_offsets(part) == []


def test_snapshots_epochs_and_checkpoints_follow_the_new_log_start(tmp_path):
    part = build_log(tmp_path, [Seg(3, NOW - 30 * DAY), Seg(3, NOW - 30 * DAY), Seg(3, NOW),
                                Seg(3, NOW)])
    snapshots = sorted(int(p.name[:20]) for p in part.glob("*.snapshot"))
    assert snapshots[:2] == [3, 6]  # rolls took them
    plan, outcome = plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    r = plan.retention
    assert r.snapshots_deleted == (3, 6)  # segment 3's, and the one at the new log start
    assert not [p for p in part.glob("*.snapshot") if int(p.name[:20]) <= 6]
    assert r.leader_epochs == (EpochEntry(2, 6), EpochEntry(3, 9))
    assert (part / "leader-epoch-checkpoint").read_text().split("\n")[2:4] == ["2 6", "3 9"]
    # written as 6 before segment 3 went, dropped once 6 is the first segment's base
    assert outcome.checkpoint_updates == ()
    assert not list(part.glob("*.deleted"))


def test_the_log_start_checkpoint_is_written_before_any_file_goes(tmp_path, monkeypatch):
    part = build_log(tmp_path, [Seg(3, NOW - 30 * DAY)] * 3 + [Seg(3)])
    seen = []
    original = log_module.Log._delete_segments

    def spy(self, doomed, reason, *args, **kwargs):
        seen.append((checkpoint_entry(tmp_path, LOG_START_CP), segment_bases(part)))
        return original(self, doomed, reason, *args, **kwargs)

    monkeypatch.setattr(log_module.Log, "_delete_segments", spy)
    plan_and_delete(tmp_path, LogConfig(retention_ms=WEEK))
    assert seen and seen[0] == (9, [0, 3, 6, 9])


def test_simulation_rolls_only_when_the_last_segment_has_data():
    old = NOW - 30 * DAY
    state = LogState((SegmentInfo(0, 10, old, old), SegmentInfo(5, 0, -1, old)), 0, 5, 5, 0)
    r = simulate(state, LogConfig(retention_ms=WEEK), NOW)
    assert r.deleted_segments == (0,) and r.created_segment is None and r.segments == (5,)


def test_segments_a_load_splits_age_by_the_mtime_the_split_keeps(tmp_path):
    """A pre-0.11 segment whose offsets overflow is split by the load (KAFKA-6264) before
    retention runs; its magic-0 messages have no timestamps, so the new segments age by the
    old segment's mtime, which the split keeps."""
    from test_segment_split import legacy_log, make_partition

    data, _, runs = legacy_log(0)
    part = make_partition(tmp_path, data)
    write_checkpoint(part.parent, "replication-offset-checkpoint", "legacy", 0, runs[2] + 3)
    plan, outcome = plan_and_delete(part.parent, LogConfig(retention_ms=WEEK))
    assert plan.retention.deleted_segments == tuple(runs)
    assert segment_bases(part) == [runs[2] + 3]
