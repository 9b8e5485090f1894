"""OffsetIndex: opening (read-only and writable), append rules, lookups, truncation, trimming."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pylogctl.errors import FileUnreadableError, IndexOffsetOverflowError, InvalidOffsetError
from pylogctl.storage.index import CorruptIndexError
from pylogctl.storage.offset_index import OffsetIndex, OffsetPosition

MiB = 1024 * 1024


def _path(tmp_path: Path, base: int = 0) -> Path:
    return tmp_path / f"{base:020d}.index"


def test_new_writable_index_is_preallocated_to_whole_entries(tmp_path):
    path = _path(tmp_path)
    with OffsetIndex(path, 0, max_index_size=1_234_567, writable=True) as index:
        assert path.stat().st_size == 1_234_560
        assert (index.entries, index.max_entries, index.length) == (0, 154_320, 1_234_560)
        assert not index.is_full
    assert path.stat().st_size == 0  # closing a writable index trims it to its entries


def test_max_index_size_below_one_entry_is_refused(tmp_path):
    with pytest.raises(ValueError, match="Invalid max index size: 7"):
        OffsetIndex(_path(tmp_path), 0, max_index_size=7, writable=True)
    assert not _path(tmp_path).exists()


def test_append_lookup_trim_reopen_round_trip(tmp_path):
    path = _path(tmp_path, 100)
    entries = [(100 + 3 * i, 50 * i) for i in range(1, 40)]
    with OffsetIndex(path, 100, max_index_size=4096, writable=True) as index:
        for offset, position in entries:
            index.append(offset, position)
        assert index.last_offset == entries[-1][0] and len(index) == 39
        assert index.lookup(99) == (100, 0)  # below every entry: scan from the start
        assert index.lookup(104) == (103, 50)
        assert index.lookup(106) == (106, 100)
        assert index.lookup(10**9) == entries[-1]
        index.trim_to_valid_size()
        assert path.stat().st_size == 39 * 8
    assert path.read_bytes() == b"".join(struct.pack(">ii", o - 100, p) for o, p in entries)
    with OffsetIndex(path) as ro:  # the dump's read-only view of the same file
        assert [ro.entry(i) for i in range(ro.entries)] == entries
        ro.sanity_check()
    with OffsetIndex(path, 100, max_index_size=4096, writable=True) as again:
        assert again.entries == 39 and again.is_full  # a trimmed index is full until resized
        assert again.resize(4096) and not again.is_full
        again.append(1000, 9999)
        assert again.lookup(2000) == (1000, 9999)


def test_append_rules_and_messages(tmp_path):
    path = _path(tmp_path, 10)
    with OffsetIndex(path, 10, max_index_size=16, writable=True) as index:
        index.append(12, 0)
        with pytest.raises(InvalidOffsetError) as err:
            index.append(12, 40)
        assert err.value.message == (f"Attempt to append an offset 12 to position 1 no larger than "
                                     f"the last offset appended (12) to {path.resolve()}")
        assert err.value.position == 8
        with pytest.raises(IndexOffsetOverflowError, match="Integer overflow for offset: 2147483658"):
            index.append(10 + 2**31, 40)
        assert not index.can_append_offset(9) and index.can_append_offset(10 + 2**31 - 1)
        index.append(13, 40)
        assert index.is_full
        with pytest.raises(ValueError, match=r"Attempt to append to a full index \(size = 2\)\."):
            index.append(14, 80)


def test_truncate_to_keeps_entries_below_the_offset(tmp_path):
    with OffsetIndex(_path(tmp_path), 0, max_index_size=MiB, writable=True) as index:
        for offset in (10, 20, 30, 40):
            index.append(offset, offset * 10)
        index.truncate_to(50)  # past the last entry: nothing changes
        assert index.entries == 4
        index.truncate_to(30)  # an exact entry goes too
        assert index.entries == 2 and index.last_offset == 20
        index.truncate_to(15)  # between entries: the entry below stays
        assert index.entries == 1 and index.last_offset == 10
        index.truncate_to(5)
        assert index.entries == 0 and index.last_offset == 0
        index.append(7, 70)  # appends restart after the cut
        assert index.lookup(8) == (7, 70)


def test_reset_empties_and_regrows(tmp_path):
    path = _path(tmp_path)
    with OffsetIndex(path, 0, max_index_size=800, writable=True) as index:
        index.append(1, 1)
        index.trim_to_valid_size()
        assert path.stat().st_size == 8
        index.reset()
        assert index.entries == 0 and path.stat().st_size == 800 and index.max_entries == 100
        index.append(2, 2)
        with pytest.raises(ValueError, match="holds 1 entries"):
            index.resize(0)


def test_reopened_untrimmed_index_counts_its_zero_tail(tmp_path):
    """Kafka assumes an existing file is valid to its end: a crashed preallocated index shows a
    zero-filled tail, which is why the loader rebuilds indexes above the recovery point."""
    path = _path(tmp_path, 5)
    index = OffsetIndex(path, 5, max_index_size=80, writable=True)
    index.append(6, 0)
    index.flush()
    index.close_handler()  # crash: no trim
    with OffsetIndex(path, 5, max_index_size=80, writable=True) as again:
        assert again.entries == 10 and again.is_full and again.last_offset == 5
        again.sanity_check()  # the zero tail passes Kafka's check: last offset == base


def test_read_only_open_copes_with_any_length(tmp_path):
    empty = _path(tmp_path)
    empty.write_bytes(b"")
    with OffsetIndex(empty) as index:
        assert index.entries == 0 and index.lookup(5) == (0, 0)
        index.sanity_check()
        with pytest.raises(ValueError, match="not open for writing"):
            index.append(1, 1)
    odd = _path(tmp_path, 7)
    odd.write_bytes(struct.pack(">ii", 1, 9) + b"\0\0\0")
    with OffsetIndex(odd) as index:
        assert index.entries == 1 and index.entry(0) == (8, 9)
        with pytest.raises(IndexError):
            index.entry(1)
        with pytest.raises(CorruptIndexError, match="found 11 bytes which is neither positive nor "
                                                    "a multiple of 8"):
            index.sanity_check()
    assert odd.stat().st_size == 11  # read-only never changes the file
    with pytest.raises(FileUnreadableError):
        OffsetIndex(tmp_path / f"{9:020d}.index")
    assert not (tmp_path / f"{9:020d}.index").exists()


def test_sanity_check_last_offset_below_base(tmp_path):
    path = _path(tmp_path, 10)
    path.write_bytes(struct.pack(">ii", -5, 0))
    with OffsetIndex(path) as index, pytest.raises(CorruptIndexError) as err:
        index.sanity_check()
    assert err.value.message == (f"Corrupt index found, index file {path.resolve()} has non-zero "
                                 f"size but the last offset is 5 which is less than the base "
                                 f"offset 10")


def test_fetch_upper_bound_offset_searches_positions(tmp_path):
    with OffsetIndex(_path(tmp_path), 0, max_index_size=MiB, writable=True) as index:
        for i in range(1, 6):
            index.append(i * 10, i * 1000)
        assert index.fetch_upper_bound_offset(OffsetPosition(10, 1000), 1500) == (30, 3000)
        assert index.fetch_upper_bound_offset(OffsetPosition(10, 1000), 2000) == (30, 3000)
        assert index.fetch_upper_bound_offset(OffsetPosition(0, 0), 10) == (10, 1000)
        assert index.fetch_upper_bound_offset(OffsetPosition(50, 5000), 1) is None


def test_rename_flush_and_delete(tmp_path):
    path = _path(tmp_path)
    index = OffsetIndex(path, 0, max_index_size=80, writable=True)
    index.append(3, 30)
    index.flush()
    moved = tmp_path / (path.name + ".deleted")
    index.rename_to(moved)
    assert index.path == str(moved) and moved.exists() and not path.exists()
    index.append(4, 40)  # the mapping survives the rename
    assert index.delete_if_exists() and not moved.exists()
    assert not index.delete_if_exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gaps=st.lists(st.integers(1, 50), min_size=0, max_size=2500),
       targets=st.lists(st.integers(-10, 130_000), max_size=40))
def test_lookup_is_the_floor_entry_warm_and_cold(tmp_path, gaps, targets):
    """Over 1024 entries the warm/cold split matters; lookups must still be floor searches."""
    base = 1000
    path = tmp_path / f"{base:020d}.index"
    if path.exists():
        os.unlink(path)
    offsets, offset = [], base
    for gap in gaps:
        offset += gap
        offsets.append(offset)
    with OffsetIndex(path, base, max_index_size=8 * 3000, writable=True) as index:
        for i, o in enumerate(offsets):
            index.append(o, i)
        for target in targets + offsets[:5] + offsets[-5:]:
            below = [i for i, o in enumerate(offsets) if o <= target]
            expected = (offsets[below[-1]], below[-1]) if below else (base, 0)
            assert index.lookup(target) == expected
        cut = targets[0] if targets else base
        index.truncate_to(cut)
        assert [index.entry(i).offset for i in range(index.entries)] == [o for o in offsets
                                                                          if o < cut]
