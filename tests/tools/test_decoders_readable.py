"""The one rule for bytes in pylogctl's text output (``decoders.readable``, the ``text``
decoder, scan's table): valid UTF-8 as text, anything else escaped, never U+FFFD."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pylogctl.format.readable_bytes import readable
from pylogctl.tools.decoders import get_decoder


@pytest.mark.parametrize("raw, shown", [
    (b"hello", "hello"),
    ("grüße ✓".encode(), "grüße ✓"),
    (b"a\nb\tc\x00\x7f", "a\\nb\\tc\\x00\\x7f"),
    (b"C:\\dir", "C:\\dir"),  # text keeps its backslashes
    (b"\xff\xfeok\x00", "\\xff\\xfeok\\x00"),
    (b"\\\xff", "\\\\\\xff"),  # binary doubles them, so escapes stay unambiguous
    ("é".encode() + b"\xff", "\\xc3\\xa9\\xff"),  # not valid UTF-8 as a whole: every byte
])
def test_valid_utf8_is_text_and_anything_else_is_escaped(raw, shown):
    assert readable(raw) == shown
    assert get_decoder("text")(raw) == shown


@given(st.binary())
def test_binary_values_never_show_replacement_characters(raw):
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = readable(raw)
        assert "\ufffd" not in shown and shown.isascii()
        # the escapes give the bytes back: two values never print alike
        assert codecs.escape_decode(shown.encode("ascii"))[0] == raw


@given(st.text())
def test_text_is_shown_as_text(text):
    shown = readable(text.encode("utf-8", "surrogatepass"))
    if text.isprintable():
        assert shown == text


def test_kafkas_string_decoder_still_replaces_as_java_does():
    assert get_decoder("string")(b"ok\xff") == "ok\ufffd"
