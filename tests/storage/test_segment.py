"""LogSegment on segments the tests write: append, index, read, recover, truncate, roll, files."""

from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pylogctl.errors import LogSegmentOffsetOverflowError
from pylogctl.format.builder import build_end_txn_marker
from pylogctl.format.log_stream import iter_batches
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.naming import DELETED_FILE_SUFFIX
from pylogctl.storage.offset_index import OffsetIndex
from pylogctl.storage.segment import LogSegment, RollParams
from pylogctl.storage.time_index import TimeIndex
from pylogctl.storage.transaction_index import AbortedTxn
from segment_support import TS, FakeClock, append, batch

SMALL = LogConfig(index_interval_bytes=500, segment_index_bytes=4096)


def _files(tmp_path: Path, base: int = 0) -> dict[str, Path]:
    return {s: tmp_path / f"{base:020d}{s}" for s in (".log", ".index", ".timeindex", ".txnindex")}


def _fill(segment: LogSegment, base: int, batches: int, per_batch: int = 3) -> list[bytes]:
    out, offset = [], base
    for i in range(batches):
        data = batch(offset, per_batch, TS + 10 * i)
        append(segment, data)
        out.append(data)
        offset += per_batch
    return out


def _index_entries(path: Path) -> list[tuple[int, int]]:
    with OffsetIndex(path) as index:
        return [tuple(index.entry(i)) for i in range(index.entries)]


def _time_entries(path: Path) -> list[tuple[int, int]]:
    with TimeIndex(path) as index:
        return [tuple(index.entry(i)) for i in range(index.entries)]


# -- append and the index interval ---------------------------------------------------------

def test_append_indexes_when_more_than_the_interval_has_passed(tmp_path):
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        data = _fill(segment, 0, 8)
        size = len(data[0])  # 3 records with 100-byte values: under the 500-byte interval
        assert 250 < size < 500 and segment.size == 8 * size
        # the first append is never indexed; then an entry once > 500 bytes passed since the last
        positions = [i * size for i in range(8)]
        expected = [(3 * i + 2, positions[i]) for i in (2, 4, 6)]
        assert [tuple(segment.offset_index.entry(i))
                for i in range(segment.offset_index.entries)] == expected
        assert [tuple(segment.time_index.entry(i)) for i in range(segment.time_index.entries)] == [
            (TS + 10 * i + 2, 3 * i + 2) for i in (2, 4, 6)]
        assert segment.max_timestamp_so_far == TS + 72 and segment.read_next_offset() == 24
    files = _files(tmp_path)
    assert _index_entries(files[".index"]) == expected  # close trimmed the indexes ...
    assert _time_entries(files[".timeindex"])[-1] == (TS + 72, 23)  # ... and added the max entry


def test_empty_append_does_nothing(tmp_path):
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        segment.append(5, b"")
        assert segment.size == 0 and segment.read_next_offset() == 0


def test_append_beyond_int32_relative_offset_is_refused(tmp_path):
    with LogSegment.create(tmp_path, 10, SMALL) as segment:
        with pytest.raises(LogSegmentOffsetOverflowError) as err:
            append(segment, batch(10 + 2**31, 1))
        assert err.value.offset == 10 + 2**31 and err.value.base_offset == 10
        assert "Detected offset overflow at offset 2147483658 in segment" in err.value.message
        assert segment.size == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(counts=st.lists(st.integers(1, 12), min_size=1, max_size=40),
       interval=st.sampled_from([0, 100, 700, 4096]))
def test_recover_rebuilds_what_single_batch_appends_wrote(tmp_path, counts, interval):
    """A leader appends one batch at a time, so recovery (indexing batch by batch) rebuilds its
    indexes byte for byte."""
    config = LogConfig(index_interval_bytes=interval, segment_index_bytes=8192)
    directory = tmp_path / f"d{len(os.listdir(tmp_path))}"
    directory.mkdir()
    with LogSegment.create(directory, 100, config) as segment:
        offset = 100
        for i, n in enumerate(counts):
            append(segment, batch(offset, n, TS + (i * 7) % 50, value_size=20 + 13 * n))
            offset += n
    files = _files(directory, 100)
    written = {k: files[k].read_bytes() for k in (".index", ".timeindex")}
    with LogSegment.open(directory, 100, config) as segment:
        assert segment.recover() == 0
    assert {k: files[k].read_bytes() for k in (".index", ".timeindex")} == written


# -- read and offset translation -----------------------------------------------------------

def test_translate_offset_and_locate(tmp_path):
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        data = _fill(segment, 0, 8)
        size = len(data[0])
        hit = segment.translate_offset(13)  # batch 4 (offsets 12-14) via the index entry at 8
        assert tuple(hit) == (14, 4 * size, size)
        assert segment.translate_offset(13, starting_position=6 * size) == (20, 6 * size, size)
        assert segment.translate_offset(24) is None
        def read(*args, **kwargs) -> bytes | None:
            found = segment.locate(*args, **kwargs)
            if found is None or found.size is None:
                return None if found is None else b""
            return segment.log.read(found.metadata.relative_position_in_segment, found.size)

        found = segment.locate(13, 2 * size)
        assert found.metadata.message_offset == 13
        assert found.metadata.segment_base_offset == 0
        assert found.metadata.relative_position_in_segment == 4 * size
        assert read(13, 2 * size) == data[4] + data[5] and not found.first_entry_incomplete
        assert read(13, 100) == data[4][:100]  # cut inside the batch
        assert segment.locate(13, 100).first_entry_incomplete
        assert read(13, 100, min_one_message=True) == data[4]
        assert not segment.locate(13, 100, min_one_message=True).first_entry_incomplete
        assert read(13, 10 * size, max_position=5 * size + 7) == data[4] + data[5][:7]
        assert read(13, 0) == b""  # Kafka's "max position unknown" answer: no size
        assert segment.locate(13, 0).size is None
        assert segment.locate(99, 100) is None
        with pytest.raises(ValueError, match="Invalid max size -1"):
            segment.locate(0, -1)


def test_find_offset_by_timestamp(tmp_path):
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        _fill(segment, 0, 8)
        found = segment.find_offset_by_timestamp(TS + 41)
        assert (found.timestamp, found.offset) == (TS + 41, 13)
        assert segment.find_offset_by_timestamp(TS + 41, starting_offset=20).offset == 20
        assert segment.find_offset_by_timestamp(TS + 1000) is None


# -- recover -------------------------------------------------------------------------------

def _write_segment(tmp_path: Path, batches: int = 8) -> tuple[Path, list[bytes]]:
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        data = _fill(segment, 0, batches)
    return _files(tmp_path)[".log"], data


def test_recover_drops_partial_batch_at_tail(tmp_path):
    log, data = _write_segment(tmp_path)
    with open(log, "r+b") as f:
        f.truncate(len(b"".join(data)) - 40)
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        assert segment.recover() == len(data[-1]) - 40
        assert segment.size == 7 * len(data[0]) and segment.read_next_offset() == 21
        assert segment.time_index.last_entry == (TS + 62, 20)
    assert log.stat().st_size == 7 * len(data[0])


def test_recover_drops_garbage_and_everything_after_a_crc_mismatch(tmp_path):
    log, data = _write_segment(tmp_path)
    with open(log, "ab") as f:
        f.write(b"\x00" * 30 + b"\xff" * 100)
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        assert segment.recover() == 130
    raw = bytearray(log.read_bytes())
    raw[3 * len(data[0]) + 70] ^= 0xFF  # a record byte of batch 3: its CRC no longer matches
    log.write_bytes(bytes(raw))
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        assert segment.recover() == 5 * len(data[0])
        assert segment.read_next_offset() == 9
        assert segment.offset_index.entries == 1  # the entry at batch 2 survives
    assert _time_entries(_files(tmp_path)[".timeindex"]) == [(TS + 22, 8)]


def test_recover_stops_at_a_size_field_below_the_minimum(tmp_path):
    log, data = _write_segment(tmp_path, 2)
    log.write_bytes(log.read_bytes() + struct.pack(">qi", 6, 5) + b"\0" * 40)
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        assert segment.recover() == 52 and segment.size == len(data[0]) * 2


def test_recover_refuses_an_offset_overflow(tmp_path):
    (tmp_path / f"{0:020d}.log").write_bytes(batch(0, 2) + batch(2**31, 1))
    with LogSegment.open(tmp_path, 0, SMALL) as segment, \
            pytest.raises(LogSegmentOffsetOverflowError) as err:
        segment.recover()
    assert err.value.offset == 2**31


class EpochCache:
    def __init__(self) -> None:
        self.assigned: list[tuple[int, int]] = []

    def latest_epoch(self) -> int | None:
        return self.assigned[-1][0] if self.assigned else None

    def assign(self, epoch: int, start_offset: int) -> None:
        self.assigned.append((epoch, start_offset))


@dataclass(frozen=True)
class Completed:
    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


class ProducerState:
    """Tracks open transactions just enough to complete them on a marker."""

    def __init__(self) -> None:
        self.open: dict[int, int] = {}
        self.end = -1
        self.completed = []

    def update(self, batch):
        if batch.is_control:
            first = self.open.get(batch.producer_id, batch.base_offset)
            aborted = batch.records()[0].key[3] == 0  # control key: version int16, type int16
            return Completed(batch.producer_id, first, batch.last_offset, aborted)
        if batch.is_transactional:
            self.open.setdefault(batch.producer_id, batch.base_offset)
        return None

    def last_stable_offset(self, completed) -> int:
        others = [o for p, o in self.open.items() if p != completed.producer_id]
        return min(others) if others else completed.last_offset + 1

    def complete_txn(self, completed) -> None:
        self.open.pop(completed.producer_id, None)
        self.completed.append(completed)

    def update_map_end_offset(self, offset: int) -> None:
        self.end = offset


def test_recover_feeds_epoch_cache_and_producer_state(tmp_path):
    txn = dict(producer_id=7, producer_epoch=0, is_transactional=True)
    parts = [batch(0, 2, partition_leader_epoch=0), batch(2, 2, partition_leader_epoch=0),
             batch(4, 2, partition_leader_epoch=3, **txn),
             build_end_txn_marker(offset=6, producer_id=7, producer_epoch=0, commit=False,
                                  coordinator_epoch=1, timestamp=TS, partition_leader_epoch=3),
             batch(7, 1, partition_leader_epoch=2), batch(8, 1, partition_leader_epoch=4)]
    (tmp_path / f"{0:020d}.log").write_bytes(b"".join(parts))
    cache, state = EpochCache(), ProducerState()
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        assert segment.recover(state, cache) == 0
        assert cache.assigned == [(0, 0), (3, 4), (4, 8)]  # only new, larger epochs
        assert state.end == 9 and not state.open
        assert segment.txn_index.all_aborted_txns() == [AbortedTxn.of(7, 4, 6, 7)]
        assert segment.collect_aborted_txns(0, 9).aborted_transactions == (
            AbortedTxn.of(7, 4, 6, 7),)


# -- truncation ----------------------------------------------------------------------------

def test_truncate_to_drops_batches_and_index_entries(tmp_path):
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        data = _fill(segment, 0, 8)
        size = len(data[0])
        segment.on_become_inactive_segment()
        assert _files(tmp_path)[".index"].stat().st_size == 24
        assert segment.truncate_to(100) == 0  # past the end: nothing to drop
        # offset 13 is inside batch 4 (12-14): the whole batch goes
        assert segment.truncate_to(13) == 4 * size
        assert segment.size == 4 * size and segment.read_next_offset() == 12
        assert [e.offset for e in (segment.offset_index.entry(i)
                                   for i in range(segment.offset_index.entries))] == [8]
        assert segment.time_index.last_entry == (TS + 22, 8)
        # the indexes are active-sized again, and the max timestamp was read back from the log
        assert _files(tmp_path)[".index"].stat().st_size == 4096
        assert segment.max_timestamp_so_far == TS + 32
        append(segment, batch(12, 3, TS + 40))
        assert segment.read_next_offset() == 15


def test_truncate_to_base_resets_the_roll_clock(tmp_path):
    clock = FakeClock()
    with LogSegment.create(tmp_path, 0, SMALL, clock=clock) as segment:
        _fill(segment, 0, 2)
        clock.now += 5000
        assert segment.truncate_to(0) > 0 and segment.size == 0
        assert segment.created == clock.now
        assert segment.time_waited_for_roll(clock.now + 7, TS + 10**9) == 7


# -- rolling -------------------------------------------------------------------------------

def _params(**overrides) -> RollParams:
    values = dict(max_segment_ms=10**9, max_segment_bytes=10**9, max_timestamp_in_messages=TS,
                  max_offset_in_messages=0, messages_size=100, now=TS)
    values.update(overrides)
    return RollParams(**values)


def test_should_roll_on_size_time_index_and_overflow(tmp_path):
    clock = FakeClock(TS)
    with LogSegment.create(tmp_path, 0, SMALL, clock=clock, roll_jitter_ms=100) as segment:
        assert not segment.should_roll(_params(max_segment_ms=1, now=TS + 10**6))  # empty segment
        _fill(segment, 0, 1)
        size = segment.size
        assert not segment.should_roll(_params(max_segment_bytes=size + 100))
        assert segment.should_roll(_params(max_segment_bytes=size + 99))
        # age from the first batch's timestamp, minus the jitter
        assert segment.time_waited_for_roll(0, TS + 1000) == 998
        assert not segment.should_roll(_params(max_segment_ms=1098,
                                               max_timestamp_in_messages=TS + 1000))
        assert segment.should_roll(_params(max_segment_ms=1097, max_timestamp_in_messages=TS + 1000))
        assert segment.should_roll(_params(max_offset_in_messages=2**31))



def test_should_roll_when_an_index_is_full(tmp_path):
    # 36 bytes: 4 offset entries, 3 time entries of which the last is kept for the roll entry
    config = LogConfig(index_interval_bytes=0, segment_index_bytes=36)
    with LogSegment.create(tmp_path, 50, config) as segment:
        append(segment, batch(50, 1, TS))
        append(segment, batch(51, 1, TS + 1))
        assert not segment.should_roll(_params(max_offset_in_messages=52))
        append(segment, batch(52, 1, TS + 2))
        assert segment.time_index.is_full and not segment.offset_index.is_full
        assert segment.should_roll(_params(max_offset_in_messages=53))
    with LogSegment.create(tmp_path, 60, config) as segment:
        for i in range(5):  # equal timestamps: the time index keeps one entry
            append(segment, batch(60 + i, 1, TS))
        assert segment.offset_index.is_full and segment.time_index.entries == 1
        assert segment.should_roll(_params(max_offset_in_messages=65))


def test_time_waited_for_roll_without_timestamps_uses_wall_clock(tmp_path):
    clock = FakeClock(5000)
    with LogSegment.create(tmp_path, 0, SMALL, clock=clock) as segment:
        append(segment, batch(0, 1, timestamp=-1))
        assert segment.time_waited_for_roll(5600, 99) == 600
        assert segment.first_batch_timestamp is None
    (tmp_path / "b").mkdir()
    with LogSegment.create(tmp_path / "b", 0, SMALL) as segment:
        append(segment, batch(0, 1, timestamp=TS))
    with LogSegment.open(tmp_path / "b", 0, SMALL) as reopened:
        assert reopened.first_batch_timestamp == TS
        assert reopened.time_waited_for_roll(0, TS + 5) == 5


def test_jitter_comes_from_the_config():
    config = LogConfig(segment_jitter_ms=1000, segment_ms=300)
    rng = random.Random(3)
    values = {config.random_segment_jitter(rng) for _ in range(200)}
    assert min(values) >= 0 and max(values) < 300 and len(values) > 50
    assert LogConfig().random_segment_jitter() == 0


def test_on_become_inactive_trims_a_preallocated_segment(tmp_path):
    config = LogConfig(index_interval_bytes=500, segment_index_bytes=4096, preallocate=True,
                       segment_bytes=64 * 1024)
    files = _files(tmp_path, 30)
    with LogSegment.create(tmp_path, 30, config) as segment:
        assert files[".log"].stat().st_size == 64 * 1024 and segment.size == 0
        _fill(segment, 30, 5)
        assert segment.read_next_offset() == 45
        segment.on_become_inactive_segment()
        assert files[".log"].stat().st_size == segment.size
        assert files[".index"].stat().st_size == 8 * segment.offset_index.entries
        assert _time_entries(files[".timeindex"])[-1] == (TS + 42, 44)


# -- files ---------------------------------------------------------------------------------

def test_close_writes_the_final_time_entry_and_reopens(tmp_path):
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        append(segment, batch(0, 3, TS))
    files = _files(tmp_path)
    assert files[".index"].stat().st_size == 0
    assert _time_entries(files[".timeindex"]) == [(TS + 2, 2)]
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        segment.sanity_check(time_index_file_newly_created=False)
        assert segment.largest_timestamp == TS + 2


def test_sanity_check_wants_the_offset_index(tmp_path):
    (tmp_path / f"{0:020d}.log").write_bytes(batch(0, 1))
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        with pytest.raises(FileNotFoundError, match="Offset index file .* does not exist"):
            segment.sanity_check(time_index_file_newly_created=True)
        _ = segment.offset_index  # opening creates it, as Kafka's loader does via recovery
        segment.sanity_check(time_index_file_newly_created=True)
        assert _files(tmp_path)[".timeindex"].stat().st_size == 0


def test_largest_timestamp_falls_back_to_mtime(tmp_path):
    with LogSegment.create(tmp_path, 0, SMALL) as segment:
        append(segment, batch(0, 1, timestamp=-1))
        segment.set_last_modified(1_600_000_000_123)
        assert segment.largest_timestamp == 1_600_000_000_123


def test_change_file_suffixes_and_delete(tmp_path):
    segment = LogSegment.create(tmp_path, 0, SMALL)
    append(segment, batch(0, 1))
    segment.txn_index.append(AbortedTxn.of(1, 0, 0, 1))
    segment.flush()
    segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
    assert segment.has_suffix(DELETED_FILE_SUFFIX)
    assert sorted(os.listdir(tmp_path)) == sorted(p.name + DELETED_FILE_SUFFIX
                                                  for p in _files(tmp_path).values())
    assert segment.log.read(0, segment.size) == batch(0, 1)  # open files follow the rename
    segment.delete_if_exists()
    assert segment.deleted and os.listdir(tmp_path) == []


def test_delete_files_if_exist_without_opening(tmp_path):
    with LogSegment.create(tmp_path, 4, SMALL) as segment:
        append(segment, batch(4, 1))
    LogSegment.delete_files_if_exist(tmp_path, 4)
    assert os.listdir(tmp_path) == []


def test_append_from_file_stops_before_an_overflowing_offset(tmp_path):
    source = tmp_path / "source.log"
    source.write_bytes(batch(0, 2) + batch(2, 2) + batch(2**31 + 5, 1))
    (tmp_path / "seg").mkdir()
    with FileRecords(source) as records, LogSegment.create(tmp_path / "seg", 0, SMALL) as segment:
        copied = segment.append_from_file(records, 0)
        assert copied == len(batch(0, 2)) * 2 and segment.read_next_offset() == 4
        assert [b.base_offset for b in iter_batches(segment.log.read(0, segment.size))] == [0, 2]


def test_recover_drives_the_partitions_producer_state_and_epoch_cache(tmp_path):
    """The hooks are the contract the real ProducerStateManager and LeaderEpochFileCache meet."""
    producer_state = pytest.importorskip("pylogctl.storage.producer_state")
    epoch_cache = pytest.importorskip("pylogctl.storage.leader_epoch_cache")
    txn = dict(producer_id=7, producer_epoch=0, is_transactional=True, base_sequence=0)
    parts = [batch(0, 2, partition_leader_epoch=1),
             batch(2, 2, partition_leader_epoch=1, **txn),
             batch(4, 1, partition_leader_epoch=2, producer_id=9, producer_epoch=0,
                   base_sequence=0),
             build_end_txn_marker(offset=5, producer_id=7, producer_epoch=0, commit=False,
                                  coordinator_epoch=1, timestamp=TS + 9, partition_leader_epoch=2)]
    (tmp_path / f"{0:020d}.log").write_bytes(b"".join(parts))
    state = producer_state.ProducerStateManager(tmp_path)
    cache = epoch_cache.LeaderEpochFileCache.for_partition_dir(tmp_path)
    with LogSegment.open(tmp_path, 0, SMALL) as segment:
        assert segment.recover(state, cache) == 0
        assert segment.txn_index.all_aborted_txns() == [AbortedTxn.of(7, 2, 5, 6)]
    assert state.map_end_offset == 6 and state.first_undecided_offset() is None
    assert sorted(state.active_producers) == [7, 9]
    assert [(e.epoch, e.start_offset) for e in cache.epoch_entries()] == [(1, 0), (2, 4)]
