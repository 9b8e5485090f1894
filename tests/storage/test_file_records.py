"""FileRecords' mutable mode (the segment's ``.log``) next to the read-only view the dump uses."""

from __future__ import annotations

import pytest

from pylogctl.storage.file_records import FileRecords, LogOffsetPosition
from segment_support import TS, batch


def test_append_read_and_search(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    parts = [batch(0, 2), batch(2, 3, TS + 50), batch(5, 1, TS + 20)]
    with FileRecords.open(path, file_already_exists=False) as records:
        assert records.size_in_bytes == 0 and list(records.batches()) == []
        for part in parts:
            records.append(part)  # the map follows the growing file
            assert records.read(0, 10**6) == b"".join(parts[:parts.index(part) + 1])
        assert [b.base_offset for b in records.batches()] == [0, 2, 5]
        assert records.search_for_offset_with_size(3, 0) == LogOffsetPosition(
            4, len(parts[0]), len(parts[1]))
        assert records.search_for_offset_with_size(9, 0) is None
        assert tuple(records.largest_timestamp_after(0)[:2]) == (TS + 52, 4)
        found = records.search_for_timestamp(TS + 51, 0, 0)
        assert (found.timestamp, found.offset) == (TS + 51, 3)
    with FileRecords(path) as ro:  # what the dump sees
        assert ro.file_size == sum(map(len, parts))
        with pytest.raises(ValueError, match="read-only"):
            ro.append(b"x")


def test_preallocated_file_starts_empty_and_is_trimmed_on_close(tmp_path):
    path = tmp_path / "a.log"
    records = FileRecords.open(path, file_already_exists=False, init_file_size=4096,
                               preallocate=True)
    assert path.stat().st_size == 4096 and records.size_in_bytes == 0
    records.append(batch(0, 1))
    assert [b.base_offset for b in records.batches()] == [0]
    records.flush()
    records.close()
    assert path.stat().st_size == len(batch(0, 1))
    reopened = FileRecords.open(path)  # an existing file: its whole length is data
    assert reopened.size_in_bytes == len(batch(0, 1))
    reopened.close()


def test_truncate_to(tmp_path):
    path = tmp_path / "a.log"
    with FileRecords.open(path) as records:
        records.append(batch(0, 1) + batch(1, 1))
        first = len(batch(0, 1))
        list(records.batches())  # map it, so truncation has a mapping to drop
        assert records.truncate_to(first) == first
        assert path.stat().st_size == first and [b.base_offset for b in records.batches()] == [0]
        assert records.truncate_to(first) == 0
        with pytest.raises(ValueError, match="Attempt to truncate log segment .* to 999 bytes"):
            records.truncate_to(999)
        records.append(batch(1, 2))
        assert [b.last_offset for b in records.batches()] == [0, 2]


def test_rename_and_delete(tmp_path):
    records = FileRecords.open(tmp_path / "a.log")
    records.append(batch(0, 1))
    records.rename_to(tmp_path / "a.log.swap")
    records.append(batch(1, 1))
    assert (tmp_path / "a.log.swap").stat().st_size == records.size_in_bytes
    assert records.delete_if_exists() and not (tmp_path / "a.log.swap").exists()
