"""The broker's cleaner and retention steps on a :class:`LogManager`, without sockets: which
log a step cleans, the ``cleaner-offset-checkpoint`` it keeps (written whole, live logs only,
reset when out of range, dropped with the topic), a failing log marked uncleanable, retention
by cleanup.policy, and the ``.deleted`` files removed at once outside an event loop."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest

from cleaner_support import BASE_TS, DAY, keyed_batch
from pylogctl.broker.log_cleaner import LogCleaner
from pylogctl.broker.log_manager import LogManager
from pylogctl.storage.cleaner.cleaner import Cleaner
from pylogctl.storage.cleaner.cleaner_config import CleanerConfig
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_dir import CLEANER_OFFSET_CHECKPOINT
from pylogctl.storage.clock import wall_clock_ms

NOW = BASE_TS + DAY
COMPACT = LogConfig(cleanup_policy=("compact",), segment_bytes=600,
                    min_cleanable_dirty_ratio=0.01)
CLEANER = CleanerConfig(dedupe_buffer_size=4 * 1024 * 1024)


@pytest.fixture
def manager(tmp_path: Path):
    m = LogManager(tmp_path, 1, lambda topic: COMPACT)
    m.startup()
    yield m
    m.shutdown()


def _fill(m: LogManager, topic: str, updates: int = 60, keys: int = 3) -> None:
    """``updates`` records over ``keys`` keys, a batch each (rolling every few batches), to a
    log created if need be."""
    loaded = m.logs.get((topic, 0)) or m.create_log(topic, 0, uuid.uuid4())
    log = loaded.log
    for i in range(updates):
        log.append_as_leader(keyed_batch(0, [(b"k%d" % (i % keys), b"v%03d" % i + b"." * 40)],
                                         ts=BASE_TS + i), 0)
    log.update_high_watermark(log.log_end_offset)


def _file_entries(m: LogManager) -> dict[tuple[str, int], int]:
    lines = (Path(m.path) / CLEANER_OFFSET_CHECKPOINT).read_text().splitlines()[2:]
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines)}


def test_steps_clean_the_dirtiest_log_until_nothing_is_left(manager: LogManager) -> None:
    cleaner = LogCleaner(manager, CLEANER)
    _fill(manager, "a", updates=60)
    assert cleaner.clean_filthiest_log(NOW)
    _fill(manager, "a", updates=10)  # a little dirty again
    _fill(manager, "b", updates=60)  # all dirty: cleaned first
    active = {t: manager.logs[(t, 0)].log.active_segment.base_offset for t in ("a", "b")}
    cleaned_a = _file_entries(manager)[("a", 0)]
    assert 0 < cleaned_a < active["a"]
    assert cleaner.clean_filthiest_log(NOW)
    assert _file_entries(manager) == {("a", 0): cleaned_a, ("b", 0): active["b"]}
    assert cleaner.clean_filthiest_log(NOW)
    assert _file_entries(manager) == {("a", 0): active["a"], ("b", 0): active["b"]}
    assert not cleaner.clean_filthiest_log(NOW)
    log = manager.logs[("b", 0)].log
    kept = [r.key for s in log.segments_in_range(0, active["b"]) for b in s.log.batches()
            for r in b.records()]
    assert sorted(kept) == [b"k0", b"k1", b"k2"]
    manager.delete_topic("a")
    assert _file_entries(manager) == {("b", 0): active["b"]}


def test_an_out_of_range_checkpoint_is_reset_to_the_log_start(manager: LogManager) -> None:
    _fill(manager, "a", updates=10)
    manager.update_cleaner_checkpoint({("a", 0): 10_000})
    cleaner = LogCleaner(manager, CLEANER)
    cleaner.grab_filthiest_compacted_log(NOW)
    assert _file_entries(manager) == {("a", 0): 0}


def test_a_log_whose_cleaning_fails_is_marked_uncleanable(manager: LogManager,
                                                          monkeypatch) -> None:
    _fill(manager, "a")

    def fail(*args):
        raise OSError("disk on fire")

    monkeypatch.setattr(Cleaner, "clean", fail)
    cleaner = LogCleaner(manager, CLEANER)
    assert not cleaner.clean_filthiest_log(NOW)
    assert cleaner.uncleanable == {("a", 0)}
    assert cleaner.grab_filthiest_compacted_log(NOW) is None


def test_retention_by_policy_and_files_removed_outside_a_loop(manager: LogManager) -> None:
    _fill(manager, "deleted")
    _fill(manager, "compacted")
    for topic in ("deleted", "compacted"):
        log = manager.logs[(topic, 0)].log
        log.config = dataclasses.replace(log.config, retention_ms=1000,
                                         cleanup_policy=("delete",) if topic == "deleted"
                                         else ("compact", "delete"))
    later = wall_clock_ms() + 600_000  # past the files' mtimes too (empty cleaned segments)
    assert manager.cleanup_logs(later) > 0
    assert manager.logs[("deleted", 0)].log.log_start_offset == 60
    assert manager.logs[("compacted", 0)].log.log_start_offset == 0
    part = Path(manager.path) / "deleted-0"
    assert not list(part.glob("*.deleted")) and [p.name for p in part.glob("*.log")] == [
        "00000000000000000060.log"]
    # the compacted log's retention is the cleaner's, after its cleaning
    LogCleaner(manager, CLEANER).clean_filthiest_log(later)
    assert manager.logs[("compacted", 0)].log.log_start_offset == 60


def test_cleaning_stops_at_an_open_transaction(manager: LogManager) -> None:
    """The first uncleanable offset is at most the last stable offset: an open transaction's
    first offset bounds the cleaning however many segments follow it."""
    _fill(manager, "a", updates=12)
    log = manager.logs[("a", 0)].log
    open_at = log.log_end_offset
    log.append_as_leader(keyed_batch(0, [(b"k0", b"in a transaction")], producer_id=7,
                                     producer_epoch=0, base_sequence=0,
                                     is_transactional=True), 0)
    _fill(manager, "a", updates=40)
    assert log.first_unstable_offset == open_at
    cleaner = LogCleaner(manager, CLEANER)
    while cleaner.clean_filthiest_log(NOW):
        pass
    assert 0 < _file_entries(manager)[("a", 0)] <= open_at < log.active_segment.base_offset
