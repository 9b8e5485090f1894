"""``formatters/color.py``: when output may be styled."""

from __future__ import annotations

import io
import os

import pytest

from pylogctl.formatters.color import color_allowed, disable_color


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize("env, tty, allowed", [
    ({}, True, True),
    ({}, False, False),
    ({"NO_COLOR": "1"}, True, False),
    ({"NO_COLOR": "0"}, True, False),  # any non-empty value (no-color.org)
    ({"NO_COLOR": ""}, True, True),
    ({"TERM": "dumb"}, True, False),
    ({"FORCE_COLOR": "1"}, False, False),  # a pipe never gets escapes
])
def test_color_allowed(monkeypatch, env, tty, allowed):
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert color_allowed(Tty() if tty else io.StringIO()) is allowed


def test_streams_without_a_usable_isatty_are_plain(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert color_allowed(Closed()) is False
    assert color_allowed(object()) is False  # type: ignore[arg-type]


def test_disable_color_sets_no_color_for_rich_and_children(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "")  # restored afterwards
    disable_color()
    assert os.environ["NO_COLOR"] == "1" and color_allowed(Tty()) is False
