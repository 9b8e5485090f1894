"""The Confluent wire format's framing: schema id and Protobuf message indexes, both ways."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pylogctl.errors import CorruptRecordError
from pylogctl.format.confluent_wire import (MAX_INDEXES, frame, read_message_indexes, unframe,
                                            write_message_indexes)

INT32 = st.integers(-(1 << 31), (1 << 31) - 1)


@given(INT32, st.binary(max_size=64))
def test_unframe_reads_back_what_frame_wrote(schema_id, data):
    raw = frame(schema_id, data)
    assert raw[0] == 0 and len(raw) == 5 + len(data)
    framed = unframe(raw)
    assert (framed.schema_id, framed.data) == (schema_id, data)


@given(st.lists(st.integers(0, (1 << 31) - 1), min_size=1, max_size=MAX_INDEXES),
       st.binary(max_size=32))
def test_message_indexes_read_back_before_the_message(indexes, message):
    assert read_message_indexes(write_message_indexes(indexes) + message) == (indexes, message)


def test_the_first_message_is_the_single_byte_zero():
    assert write_message_indexes([0]) == b"\x00"
    assert read_message_indexes(b"\x00\x0a\x01x") == ([0], b"\x0a\x01x")
    # a nested path: count 2, then 1 and 0, each a zig-zag varint
    assert write_message_indexes([1, 0]) == b"\x04\x02\x00"


def test_the_schema_id_is_big_endian():
    assert unframe(b"\x00\x00\x00\x01\x02rest").schema_id == 258


@pytest.mark.parametrize("raw, message", [
    (b"\x00\x00\x01", "3 bytes, fewer than the 5 of its header"),
    (b"{\"a\": 1}", "magic byte 123, not 0"),
])
def test_other_bytes_are_not_the_wire_format(raw, message):
    with pytest.raises(CorruptRecordError, match=message):
        unframe(raw)


def test_a_negative_index_count_is_not_an_index_list():
    with pytest.raises(CorruptRecordError, match="count -1"):
        read_message_indexes(b"\x01")
