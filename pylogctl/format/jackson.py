"""JSON text as Kafka's tools print it (Jackson's compact ``ObjectNode.toString()``).

Decoder output is compared with Kafka's byte for byte, and Jackson differs from ``json.dumps``
in two places: control characters other than ``\\b \\t \\n \\f \\r`` are escaped with
upper-case hex (``\\u001F``), and doubles are written as Java's ``Double.toString`` does
(``1.048576E7``, scientific outside [1e-3, 1e7), always a fractional digit). Everything else
(compact separators, no ASCII escaping, key order as given) is the same, so :func:`dumps`
runs ``json.dumps`` and only takes the slow path for values that hold floats.
"""

from __future__ import annotations

import json
import math
import re
import sys
from decimal import Decimal
from typing import Any

_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# \u00xx escapes that follow an even number of backslashes (so they are escapes themselves);
# a lookbehind, so that escapes in a row (\u0004\u000e) are all found
_LOWER_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")


def dumps(value: Any) -> str:
    """Compact JSON of a JSON-ready value, as Jackson writes it."""
    text = _compact(value) if not _has_float(value) else _slow(value)
    if "\\u00" in text:
        text = _LOWER_ESCAPE.sub(lambda m: f"{m.group(1)}\\u00{m.group(2).upper()}", text)
    return text


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


def _slow(value: Any) -> str:
    if isinstance(value, float):
        # Jackson quotes non-finite doubles ("NaN"); finite ones are numbers
        text = java_double_str(value)
        return text if math.isfinite(value) else f'"{text}"'
    if isinstance(value, dict):
        return "{" + ",".join(f"{_compact(str(k))}:{_slow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_slow(v) for v in value) + "]"
    return _compact(value)


class JavaDouble(float):
    """A float64 field value whose ``str()`` is Java's ``Double.toString`` (``1.048576E7``)."""

    def __str__(self) -> str:
        return java_double_str(self)

    __repr__ = float.__repr__


def java_double_str(value: float) -> str:
    """Format ``value`` as Java's ``Double.toString`` does (JDK 19+, shortest digits)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, point = _shortest_digits(float(value))
    neg = "-" if value < 0 else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{neg}0.{'0' * -point}{digits}"
        whole = digits[:point].ljust(point, "0")
        frac = digits[point:] or "0"
        return f"{neg}{whole}.{frac}"
    return f"{neg}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """Significant digits and decimal point position (``0.DIGITS * 10**point``) of ``|value|``.

    Python's ``repr`` already gives the shortest round-tripping digits, closest to the exact
    value. Java differs in one case: when one digit suffices it also considers two-digit
    decimals and takes the closest (``Double.MIN_VALUE`` is ``4.9E-324``, not ``5E-324``).
    """
    _, digit_tuple, exp = Decimal(repr(abs(value))).as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    point = len(digit_tuple) + exp
    if len(digits) == 1 and abs(value) < sys.float_info.min:  # only subnormals are that coarse
        exact = Decimal(abs(value))
        best = Decimal(digits).scaleb(point - 1)
        for scale in (point - 2, point - 3):
            for n in range(10, 100):
                cand = Decimal(n).scaleb(scale)
                if float(cand) == abs(value) and abs(cand - exact) < abs(best - exact):
                    best = cand
        _, digit_tuple, exp = best.normalize().as_tuple()
        assert isinstance(exp, int)
        digits = "".join(map(str, digit_tuple))
        point = len(digit_tuple) + exp
    return digits, point
