"""Whether output may be styled: the one rule every formatter follows.

Rich tables, colour and box lines are for a person at a terminal. Anything else (a pipe, a
file, a ``TERM=dumb`` console, or a user who asked for plain output with ``NO_COLOR`` or
``--no-color``) gets plain, stable text without a single ANSI escape, so scripts can rely on
it. Progress bars follow :func:`redraw_allowed`. ``NO_COLOR`` counts when it is non-empty (https://no-color.org); ``--no-color`` sets it, so
that rich and typer's help honour it too.
"""

from __future__ import annotations

import os
from typing import TextIO


def color_disabled() -> bool:
    """True when the environment asks for plain output whatever the stream."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


def disable_color() -> None:
    """``--no-color``: plain output for the rest of this process (and its children)."""
    os.environ["NO_COLOR"] = "1"


def color_allowed(out: TextIO) -> bool:
    """True if ``out`` is a terminal and nothing asks for plain output."""
    if color_disabled():
        return False
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def redraw_allowed(out: TextIO) -> bool:
    """True if ``out`` is a terminal that can redraw a line (a progress bar): not a pipe and
    not ``TERM=dumb``. ``NO_COLOR`` keeps bars (they are not colour; rich draws them plain)."""
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
