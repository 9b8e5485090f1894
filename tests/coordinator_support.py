"""Test helpers for coordinator records: byte builders, printing, hypothesis value strategies."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

from hypothesis import strategies as st

from pylogctl.format.message import Field, KafkaUuid, Schema, default_struct
from pylogctl.format.record import Record
from wire import NO_TAGS, compact_string, uvarint  # noqa: F401  (re-exported to the tests)


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def string(s: str | None) -> bytes:
    """A non-flexible string (int16 length)."""
    if s is None:
        return i16(-1)
    raw = s.encode()
    return i16(len(raw)) + raw




def record(key: bytes | None, value: bytes | None, offset: int = 0) -> Record:
    return Record(offset, -1, key, value)


def printed(part: Any) -> str | None:
    """What the dump prints for a ParsedRecord part."""
    if part is None or isinstance(part, str):
        return part
    return json.dumps(part, separators=(",", ":"), ensure_ascii=False)


# -- hypothesis: values for any schema at any version -------------------------------------------

_INT_BOUNDS = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}


def _value_strategy(f: Field, type_: str, version: int, element: bool = False) -> st.SearchStrategy:
    if type_.startswith("[]"):
        s = st.lists(_value_strategy(f, type_[2:], version, element=True), max_size=3)
    elif type_ in _INT_BOUNDS:
        bits = _INT_BOUNDS[type_]
        s = st.integers(-(1 << bits), (1 << bits) - 1)
    elif type_ == "uint16":
        s = st.integers(0, 0xFFFF)
    elif type_ == "float64":
        # doubles whose Double.toString is the same on every JDK: before JDK 19 (JDK-4511638)
        # Java could print a digit more than the shortest repr for some 16-17 digit values,
        # and pylogctl prints JDK 19+'s (see pylogctl.format.jackson)
        s = st.one_of(st.integers(-(1 << 53), 1 << 53).map(float),
                      st.decimals(min_value=-1e9, max_value=1e9, places=4,
                                  allow_nan=False).map(float),
                      st.sampled_from([math.nan, math.inf, -math.inf, 1e-5, 1.5e300, -0.0,
                                       4.9e-324, 1.0e7, 9999999.0, 0.001]))
    elif type_ == "bool":
        s = st.booleans()
    elif type_ == "uuid":
        s = st.binary(min_size=16, max_size=16).map(KafkaUuid)
    elif type_ == "string":
        s = st.text(max_size=6)
    elif type_ == "bytes":
        s = st.binary(max_size=6)
    else:
        s = struct_values(f.fields, version)
    if f.nullable_in(version) and not element:
        s = st.none() | s
    return s


def struct_values(fields: tuple[Field, ...], version: int) -> st.SearchStrategy:
    """Dicts of every field present at ``version`` (json names), tagged ones included."""
    return st.fixed_dictionaries({f.json_name: _value_strategy(f, f.type, version)
                                  for f in fields if f.in_version(version)})


def as_read(fields: tuple[Field, ...], values: dict[str, Any], version: int,
            flexible: bool) -> dict[str, Any]:
    """What reading back written ``values`` yields: tagged fields equal to their default drop,
    except a null tagged struct, which Kafka's JSON converter prints (see pylogctl's
    ``message._read_fields``)."""
    out = {}
    for f in fields:
        if not f.in_version(version):
            continue
        v = values[f.json_name]
        struct = bool(f.fields) and not f.type.startswith("[]")
        if f.tag is not None and flexible:
            if struct and v is not None and \
                    as_read(f.fields, v, version, flexible) == default_struct(f.fields, version,
                                                                             flexible):
                continue
            if not struct and v == f.default_value():
                continue
        if f.fields and v is not None:
            if f.type.startswith("[]"):
                v = [as_read(f.fields, item, version, flexible) for item in v]
            else:
                v = as_read(f.fields, v, version, flexible)
        out[f.json_name] = v
    return out


def message_values(schema: Schema, version: int) -> st.SearchStrategy:
    return struct_values(schema.fields, version)
