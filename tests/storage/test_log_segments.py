"""LogSegments: the sorted map of a partition's segments (Kafka's LogSegments)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pylogctl.storage.log_segments import LogSegments, bases_in_range


@dataclass
class Seg:
    base_offset: int


def segments(*bases: int) -> LogSegments[Seg]:
    out: LogSegments[Seg] = LogSegments()
    for b in bases:
        out.add(Seg(b))
    return out


def test_range_starts_at_the_segment_holding_the_start_offset():
    s = segments(0, 100, 200)
    assert [x.base_offset for x in s.values(150, 250)] == [100, 200]
    assert [x.base_offset for x in s.values(100, 200)] == [100]
    assert [x.base_offset for x in s.values(0, 1)] == [0]
    assert s.values(5, 5) == []
    with pytest.raises(ValueError, match="greater than limit offset"):
        s.values(10, 5)
    assert bases_in_range([50, 100], 0, 75) == [50]  # before the first: from the first


def test_lookups_and_replacement():
    s = segments(200, 0, 100)
    assert s.base_offsets == [0, 100, 200]
    assert (s.first.base_offset, s.last.base_offset) == (0, 200)
    assert s.floor(150).base_offset == 100 and s.floor(-1) is None
    assert s.higher(100).base_offset == 200 and s.higher(200) is None
    assert s.lower(100).base_offset == 0 and s.lower(0) is None
    replacement = Seg(100)
    assert s.add(replacement) is not None and s.get(100) is replacement and len(s) == 3
    assert s.remove(100) is replacement and 100 not in s and s.remove(100) is None
    s.clear()
    assert s.first is None and s.last is None and list(s) == []
