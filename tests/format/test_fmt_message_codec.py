"""The generic message codec: the writer, nullable structs, underflow details, version clamping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator_support import (NO_TAGS, as_read, compact_string, i8, i16, i32, i64,
                                 struct_values, uvarint)
from pylogctl.errors import CorruptRecordError
from pylogctl.format.message import (Field, MessageUnderflowError, Schema, read_message,
                                     read_struct, write_message, write_struct)

INNER = (Field("Id", "int32"), Field("Name", "string", nullable="0+"))
SAMPLE = Schema("Sample", (
    Field("Name", "string"),
    Field("Blob", "bytes", nullable="0+"),
    Field("Flag", "bool"),
    Field("Ratio", "int64", versions="1+", default=-1),
    Field("Items", "[]Item", fields=INNER),
    Field("Child", "Child", versions="1+", nullable="1+", fields=INNER),
    Field("Names", "[]string", nullable="0+"),
    Field("Extra", "Extra", versions="2+", nullable="2+", tag=0, fields=INNER),
    Field("Count", "int16", versions="2+", tag=1, default=7),
), flexible="2+", valid="0-2")


@pytest.mark.parametrize("version", [0, 1, 2])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_write_then_read_round_trips(version, data):
    values = data.draw(struct_values(SAMPLE.fields, version))
    flexible = SAMPLE.is_flexible(version)
    assert read_message(write_message(SAMPLE, values, version), SAMPLE, version) == \
        as_read(SAMPLE.fields, values, version, flexible)


def test_nullable_struct_markers():
    # name, blob (null), flag, ratio, items (empty), then the child's int8 marker
    base = i16(1) + b"a" + i32(-1) + b"\x00" + i64(-1) + i32(0)
    assert read_message(base + b"\xff" + i32(-1), SAMPLE, 1)["child"] is None
    child = read_message(base + b"\x01" + i32(3) + i16(-1) + i32(-1), SAMPLE, 1)["child"]
    assert child == {"id": 3, "name": None}
    assert write_struct(SAMPLE.fields, {"name": "a", "blob": None, "flag": False, "items": [],
                                        "child": None, "names": None}, 1, False) == \
        base + b"\xff" + i32(-1)


def test_tagged_nullable_struct_uses_a_varint_marker():
    values = {"name": "", "blob": None, "flag": True, "ratio": 1, "items": [], "child": None,
              "names": [], "extra": {"id": 1, "name": "x"}}
    raw = write_message(SAMPLE, values, 2)
    extra = b"\x01" + i32(1) + compact_string("x") + NO_TAGS
    assert raw.endswith(uvarint(1) + uvarint(0) + uvarint(len(extra)) + extra)
    assert read_message(raw, SAMPLE, 2)["extra"] == {"id": 1, "name": "x"}


def test_writer_defaults_and_errors():
    raw = write_message(SAMPLE, {}, 0)  # everything defaulted
    assert read_message(raw, SAMPLE, 0) == {"name": "", "blob": None, "flag": False, "items": [],
                                            "names": []}
    with pytest.raises(ValueError, match="non-nullable field name was set to null"):
        write_message(SAMPLE, {"name": None}, 0)
    with pytest.raises(ValueError, match="non-default ratio at version 0"):
        write_message(SAMPLE, {"ratio": 5}, 0)
    with pytest.raises(ValueError, match="non-nullable field names was set to null"):
        write_message(SAMPLE, {"names": [None]}, 0)
    with pytest.raises(ValueError, match="needs 16 bytes"):
        write_struct((Field("U", "uuid"),), {"u": b"short"}, 0, False)


def test_underflow_errors_say_what_was_read():
    with pytest.raises(MessageUnderflowError) as info:
        read_struct(i16(5) + b"ab", (Field("S", "string"),), 0, False)
    assert (info.value.what, info.value.needed, info.value.available) == ("string", 5, 2)
    assert info.value.message == "Error reading string of 5 byte(s): only 2 byte(s) available"
    with pytest.raises(MessageUnderflowError) as info:
        read_struct(b"\x00", (Field("A", "int32"),), 0, False)
    assert info.value.what == "int32"
    assert isinstance(info.value, CorruptRecordError)


def test_truncated_varint_stops_at_the_struct_end():
    # a tagged field whose own data ends inside a varint must not read the bytes after it
    fields = (Field("T", "[]int8", versions="0+", tag=0),)
    raw = uvarint(1) + uvarint(0) + uvarint(1) + b"\x80" + b"\x01"
    with pytest.raises(MessageUnderflowError, match="Truncated unsigned varint"):
        read_struct(raw, fields, 0, True)


def test_string_length_limit_and_element_names():
    with pytest.raises(CorruptRecordError, match="string field name had invalid length 40000"):
        read_struct(uvarint(40001), (Field("Name", "string"),), 0, True)
    with pytest.raises(CorruptRecordError,
                       match="non-nullable field names element was serialized as null"):
        read_struct(i32(1) + i16(-1), (Field("Names", "[]string", nullable="0+"),), 0, False)


def test_reading_version_clamps_to_the_valid_range():
    assert [SAMPLE.reading_version(v) for v in (-3, 0, 1, 2, 9)] == [0, 0, 1, 2, 2]
    assert Schema("X", (), valid="3").reading_version(0) == 3
    assert Schema("X", ()).reading_version(500) == 500


def test_nullable_struct_field_read_with_int8_marker():
    fields = (Field("S", "S", nullable="0+", fields=(Field("A", "int8"),)),)
    assert read_struct(i8(-1), fields, 0, False)[0] == {"s": None}
    assert read_struct(i8(1) + i8(4), fields, 0, False)[0] == {"s": {"a": 4}}
