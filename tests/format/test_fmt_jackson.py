"""Kafka's JSON text (Jackson) where it differs from json.dumps: escapes and doubles."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from pylogctl.format.jackson import JavaDouble, dumps, java_double_str
from pylogctl.format.message import to_json


@pytest.mark.parametrize("value, expected", [
    (1e7, "1.0E7"), (9999999.0, "9999999.0"), (0.001, "0.001"), (1e-4, "1.0E-4"),
    (100.0, "100.0"), (-0.0, "-0.0"), (1.048576e7, "1.048576E7"), (5e-324, "4.9E-324"),
    (1.7976931348623157e308, "1.7976931348623157E308"), (0.1, "0.1"), (123456.789, "123456.789"),
])
def test_java_double_str_matches_double_to_string(value, expected):
    assert java_double_str(value) == expected
    assert str(JavaDouble(value)) == expected


def test_control_characters_use_upper_case_hex_like_jackson():
    assert dumps({"k": "a\x1fb\x00"}) == '{"k":"a\\u001Fb\\u0000"}'
    assert dumps("tab\tnewline\n") == '"tab\\tnewline\\n"'


def test_escaped_backslash_before_u00_text_is_left_alone():
    # the string holds a backslash followed by the letters u001f: not an escape to upper-case
    assert dumps("\\u001f") == '"\\\\u001f"'
    assert dumps("\\\x1f") == '"\\\\\\u001F"'


def test_doubles_render_the_java_way_and_non_finite_ones_are_quoted():
    assert dumps({"value": 1.048576e7, "list": [0.5, float("inf")]}) == \
        '{"value":1.048576E7,"list":[0.5,"Infinity"]}'


def test_to_json_goes_through_jackson_rules():
    assert to_json({"a": b"\x01", "b": "\x7f\x01"}) == '{"a":"AQ==","b":"\x7f\\u0001"}'


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(), c, max_size=4),
                    max_leaves=20))
def test_output_is_valid_json_with_the_same_value(value):
    assert json.loads(dumps(value)) == value
