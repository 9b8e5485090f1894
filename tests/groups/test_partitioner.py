"""partitionFor: Java's String.hashCode over UTF-16 code units, Utils.abs, modulo N."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, strategies as st

from pylogctl.groups.partitioner import java_string_hash, kafka_abs, partition_for


def reference_hash(text: str) -> int:
    """``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a Java int (the formula of
    String.hashCode's javadoc, written out independently of the module's loop)."""
    units = array("H", text.encode("utf-16-le", "surrogatepass"))
    n = len(units)
    total = sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units))
    return (total + 2**31) % 2**32 - 2**31


@pytest.mark.parametrize("group, count, partition", [
    ("testgroup", 50, 27),  # the worked example of the spec (not 21, as & 0x7fffffff gives)
    ("console-consumer-90254", 50, 11),  # kraft3-cluster: in __consumer_offsets-11
    ("console-consumer-12753", 50, 29),
    ("flink-group", 50, 36),  # iechenyb-2019
    ("", 50, 0),
])
def test_known_partitions(group, count, partition):
    assert partition_for(group, count) == partition


def test_integer_min_value_maps_to_partition_zero():
    assert java_string_hash("polygenelubricants") == -2**31  # a known MIN_VALUE hash
    assert kafka_abs(-2**31) == 0
    assert partition_for("polygenelubricants", 7) == 0


def test_characters_outside_the_bmp_count_as_two_surrogates():
    assert java_string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00


@given(st.text(), st.integers(min_value=1, max_value=10_000))
def test_partition_for_matches_the_java_formula(group, count):
    h = reference_hash(group)
    assert java_string_hash(group) == h
    assert partition_for(group, count) == (0 if h == -2**31 else abs(h)) % count


def test_zero_partitions_is_refused():
    with pytest.raises(ValueError):
        partition_for("g", 0)
