"""Hypothesis strategies for v2 record areas (the bytes after a batch header), valid and
mutated: shared by the tests that hold a C walker over records to the Python decoder."""

from __future__ import annotations

from hypothesis import strategies as st

from pylogctl.format.record_batch import encode_record

INT64_MAX = (1 << 63) - 1

blobs = st.none() | st.binary(max_size=20) | st.binary(min_size=60, max_size=300)
header_st = st.tuples(st.text(max_size=6) | st.text(min_size=64, max_size=70),
                      st.none() | st.binary(max_size=8) | st.binary(min_size=64, max_size=70))
record_st = st.tuples(
    st.integers(-3, 200) | st.integers(-(1 << 31), (1 << 31) - 1),  # offset delta
    st.integers(-100, 20_000) | st.integers(-(1 << 62), 1 << 62),  # timestamp delta
    blobs, blobs, st.lists(header_st, max_size=3), st.integers(0, 255))
base_st = st.tuples(
    st.integers(0, 1 << 40) | st.sampled_from([0, INT64_MAX - 10, INT64_MAX]),  # base offset
    st.integers(0, 1 << 45) | st.sampled_from([-1, INT64_MAX]),  # base timestamp
    st.sampled_from([-1, 0, 5, (1 << 31) - 3]) | st.integers(-5, INT64_MAX),  # base sequence
    st.none() | st.integers(0, 1 << 45))  # log append time


def encode_area(records) -> bytes:
    return b"".join(encode_record(off, ts, k, v, h, attr) for off, ts, k, v, h, attr in records)


@st.composite
def mutated_areas(draw):
    records = draw(st.lists(record_st, min_size=1, max_size=4))
    data = bytearray(encode_area(records))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, max(0, len(data) - 1)))
        op = draw(st.sampled_from(["set", "special", "cut", "insert", "delete", "append"]))
        if op == "set" and data:
            data[i] = draw(st.integers(0, 255))
        elif op == "special" and data:
            data[i] = draw(st.sampled_from([0x00, 0x01, 0x02, 0x03, 0x7F, 0x80, 0x81, 0xFF]))
        elif op == "cut":
            del data[i:]
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=3))
        elif op == "delete":
            del data[i:i + draw(st.integers(1, 3))]
        else:
            data += draw(st.binary(min_size=1, max_size=6))
    count = len(records) + draw(st.integers(-1, 1))
    return bytes(data), count
