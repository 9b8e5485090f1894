"""TimeIndex: Kafka's maybeAppend rule, the reserved last slot, lookups, truncation by offset."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pylogctl.errors import InvalidOffsetError
from pylogctl.storage.index import CorruptIndexError
from pylogctl.storage.time_index import TimeIndex, TimestampOffset

TS = 1_700_000_000_000


def _path(tmp_path: Path, base: int = 0) -> Path:
    return tmp_path / f"{base:020d}.timeindex"


def test_new_time_index_is_preallocated_and_starts_at_no_timestamp(tmp_path):
    path = _path(tmp_path, 50)
    with TimeIndex(path, 50, max_index_size=1000, writable=True) as index:
        assert path.stat().st_size == 996 and index.max_entries == 83
        assert index.last_entry == TimestampOffset(-1, 50)
        assert index.lookup(TS) == (-1, 50)
    assert path.stat().st_size == 0


def test_maybe_append_skips_equal_and_refuses_older(tmp_path):
    path = _path(tmp_path)
    with TimeIndex(path, 0, max_index_size=1200, writable=True) as index:
        index.maybe_append(-1, 0)  # v0 data has no timestamps: the index stays empty
        assert index.entries == 0
        index.maybe_append(TS, 3)
        index.maybe_append(TS, 4)  # equal timestamp: skipped quietly (roll/close re-offer it)
        assert index.entries == 1 and index.last_entry == (TS, 3)
        with pytest.raises(ValueError) as err:
            index.maybe_append(TS - 1, 9)
        assert str(err.value) == (f"Attempt to append a timestamp ({TS - 1}) to slot 1 no larger "
                                  f"than the last timestamp appended ({TS}) to {path.resolve()}")
        with pytest.raises(InvalidOffsetError) as bad:
            index.maybe_append(TS + 5, 2)
        assert bad.value.message == (f"Attempt to append an offset (2) to slot 1 no larger than "
                                     f"the last offset appended (3) to {path.resolve()}")
        index.maybe_append(TS + 5, 3)  # same offset, larger timestamp: fine
        assert index.last_entry == (TS + 5, 3)
    assert path.read_bytes() == struct.pack(">qiqi", TS, 3, TS + 5, 3)


def test_last_slot_is_reserved_for_the_roll_entry(tmp_path):
    with TimeIndex(_path(tmp_path), 0, max_index_size=36, writable=True) as index:
        index.maybe_append(TS, 1)
        index.maybe_append(TS + 1, 2)
        assert index.is_full and index.entries == 2 and index.max_entries == 3
        with pytest.raises(ValueError, match=r"Attempt to append to a full time index \(size = 2\)"):
            index.maybe_append(TS + 2, 3)
        index.maybe_append(TS + 2, 3, skip_full_check=True)
        assert index.entries == 3


def test_truncate_to_searches_by_offset(tmp_path):
    with TimeIndex(_path(tmp_path), 0, max_index_size=1200, writable=True) as index:
        for i, offset in enumerate((5, 5, 9, 14)):
            index.maybe_append(TS + i, offset)
        index.truncate_to(20)
        assert index.entries == 4
        index.truncate_to(14)
        assert index.entries == 3 and index.last_entry == (TS + 2, 9)
        index.truncate_to(7)
        assert index.entries == 2 and index.last_entry == (TS + 1, 5)
        index.truncate_to(0)
        assert index.entries == 0 and index.last_entry == (-1, 0)


def test_trim_and_reopen_read_only(tmp_path):
    path = _path(tmp_path, 7)
    pairs = [(TS + 10 * i, 7 + 2 * i) for i in range(30)]
    with TimeIndex(path, 7, max_index_size=4096, writable=True) as index:
        for ts, offset in pairs:
            index.maybe_append(ts, offset)
    assert path.stat().st_size == 30 * 12
    with TimeIndex(path) as ro:
        assert [ro.entry(i) for i in range(ro.entries)] == pairs
        assert ro.lookup(TS + 15) == pairs[1] and ro.lookup(TS - 1) == (-1, 7)
        ro.sanity_check()


def test_resize_keeps_last_entry(tmp_path):
    with TimeIndex(_path(tmp_path), 0, max_index_size=1200, writable=True) as index:
        index.maybe_append(TS, 1)
        index.trim_to_valid_size()
        assert index.max_entries == 1 and index.is_full
        index.resize(1200)
        assert index.last_entry == (TS, 1) and not index.is_full


def test_sanity_check_messages(tmp_path):
    path = _path(tmp_path, 10)
    path.write_bytes(struct.pack(">qiqi", TS + 5, 1, TS, 2))
    with TimeIndex(path) as index, pytest.raises(CorruptIndexError) as err:
        index.sanity_check()
    assert err.value.message == (f"Corrupt time index found, time index file ({path.resolve()}) "
                                 f"has non-zero size but the last timestamp is {TS} which is less "
                                 f"than the first timestamp {TS + 5}")
    path.write_bytes(struct.pack(">qi", TS, -3))
    with TimeIndex(path) as index, pytest.raises(CorruptIndexError, match="last offset is 7 which "
                                                 "is less than the first offset 10"):
        index.sanity_check()
    path.write_bytes(b"\0" * 13)
    with TimeIndex(path) as index, pytest.raises(CorruptIndexError, match="found 13 bytes which "
                                                 "is neither positive nor a multiple of 12"):
        index.sanity_check()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), max_size=1500),
       targets=st.lists(st.integers(TS - 5, TS + 5000), max_size=30))
def test_lookup_floor_over_warm_and_cold(tmp_path, steps, targets):
    """Appends with repeated timestamps keep only strictly increasing ones; lookups are floors
    (682 entries are warm, so long indexes exercise the cold search too)."""
    path = _path(tmp_path)
    if path.exists():
        os.unlink(path)
    kept, ts, offset = [], TS, 0
    with TimeIndex(path, 0, max_index_size=12 * 2000, writable=True) as index:
        for dts, doff in steps:
            ts, offset = ts + dts, offset + doff
            index.maybe_append(ts, offset)
            if not kept or ts > kept[-1][0]:
                kept.append((ts, offset))
        assert [tuple(index.entry(i)) for i in range(index.entries)] == kept
        for target in targets:
            below = [e for e in kept if e[0] <= target]
            assert index.lookup(target) == (below[-1] if below else (-1, 0))
