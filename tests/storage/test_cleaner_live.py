"""The engine as a running broker drives it: the cleaner over an open :class:`Log`
(:meth:`CleanerLog.for_live_log`, its own producer state) leaves exactly what the offline
``compact --execute`` leaves and keeps the open log readable; deleted segments' files go
through :attr:`Log.delete_segment_files` (the broker's delayed delete), for the cleaner's swap
and for retention alike; and ``cleaned_up_to`` is the checkpoint both write."""

from __future__ import annotations

import shutil
from pathlib import Path

from cleaner_support import (BASE_TS, COMPACT, DAY, cleaner_checkpoint, compact, data_records,
                             random_workload, write_log)
from pylogctl.storage.cleaner.cleaner import Cleaner, CleanerStats, CleaningResult
from pylogctl.storage.cleaner.cleaner_log import CleanerLog
from pylogctl.storage.cleaner.cleaner_manager import clean_log, cleaned_up_to
from pylogctl.storage.log import FetchIsolation, Log
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.cleaner.log_to_clean import LogToClean
from pylogctl.storage.retention import delete_old_segments
from pylogctl.storage.segment import LogSegment
from retention_support import checkpoint_entry

NOW = BASE_TS + DAY


def _open(log_dir: Path, part: Path, config: LogConfig) -> Log:
    entry = lambda name: checkpoint_entry(log_dir, name, "t", 0)  # noqa: E731
    return Log.load(part, config,
                    high_watermark_checkpoint=entry("replication-offset-checkpoint"),
                    recovery_point_checkpoint=entry("recovery-point-offset-checkpoint"),
                    had_clean_shutdown=True)


def test_cleaning_a_live_log_matches_the_offline_command(tmp_path: Path) -> None:
    w = random_workload(7, batches=80, segment_batches=15)
    part = write_log(tmp_path / "live", w)
    shutil.copytree(tmp_path / "live", tmp_path / "offline")
    [section] = compact(tmp_path / "offline", NOW)
    offline_end = section.rounds[-1].end_offset

    doomed: list[LogSegment] = []
    with _open(tmp_path / "live", part, COMPACT) as log:
        log.delete_segment_files = doomed.append
        first, rounds = clean_log(Cleaner(), CleanerLog.for_live_log(log), None, NOW,
                                  forced=False)
        # the replaced files wait, renamed, for the broker's delayed delete
        assert doomed and all(s.has_suffix(".deleted") and not s.deleted for s in doomed)
        assert all(s.base_offset not in log.segments or log.segments.get(s.base_offset)
                   is not s for s in doomed)
        # the open log serves the cleaned data at once
        read = log.read(log.log_start_offset, 1 << 20, FetchIsolation.LOG_END)
        assert read.path is not None and read.size > 0
        for segment in doomed:
            segment.delete_if_exists()
    assert cleaned_up_to(first, rounds) == offline_end == cleaner_checkpoint(
        tmp_path / "offline")
    assert data_records(part) == data_records(tmp_path / "offline" / "t-0")
    assert not list(part.glob("*.deleted"))


def test_retention_hands_deleted_segments_to_the_hook(tmp_path: Path) -> None:
    w = random_workload(3, batches=40, segment_batches=10, txn_rate=0)
    config = LogConfig(retention_bytes=1)
    part = write_log(tmp_path, w, config=config)
    doomed: list[LogSegment] = []
    with _open(tmp_path, part, config) as log:
        log.delete_segment_files = doomed.append
        result = delete_old_segments(log, NOW)
        assert [s.base_offset for s in doomed] == list(result.deleted_segments)
        assert sorted(int(p.name.split(".")[0]) for p in part.glob("*.log.deleted")) \
            == sorted(result.deleted_segments)
        assert log.log_start_offset == result.log_start_offset > 0


def _round(end: int) -> CleaningResult:
    return CleaningResult(0, end, end, (), CleanerStats())


def test_cleaned_up_to_is_the_last_round_end_or_a_reset() -> None:
    to_clean = LogToClean("t-0", 5, 50, 0, 100)
    assert cleaned_up_to(to_clean, []) is None
    assert cleaned_up_to(to_clean, [_round(20), _round(40)]) == 40
    reset = LogToClean("t-0", 7, 50, 0, 100, force_update_checkpoint=True)
    assert cleaned_up_to(reset, []) == 7
    assert cleaned_up_to(reset, [_round(30)]) == 30
