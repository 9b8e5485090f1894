"""pylogctl's one rule for bytes in its own text output (``scan``, ``dump-segment``'s ``text``
decoder, a value no decoder can read): valid UTF-8 prints as its text, anything else byte by
byte, so binary data shows no U+FFFD and two different values never print alike.

Plain data, importing nothing from pylogctl: the engine's decoders and the formatters share it.
"""

from __future__ import annotations

# the rule, as --help states it
READABLE_RULE = ("values that are valid UTF-8 print as text (control characters escaped: \\n, "
                 "\\t, \\x00); any other value prints its printable ASCII bytes as they are and "
                 "every other byte as \\xNN (a backslash as \\\\)")

# valid UTF-8: C0 controls and DEL escaped
_TEXT_ESCAPES = {i: f"\\x{i:02x}" for i in range(32)} | {9: "\\t", 10: "\\n", 13: "\\r",
                                                        127: "\\x7f"}
# anything else, read as Latin-1 (one character per byte): printable ASCII as is
_BYTE_ESCAPES = {i: f"\\x{i:02x}" for i in (*range(32), *range(127, 256))} | {92: "\\\\"}


def readable(data: bytes) -> str:
    """Bytes as a person reads them in text output: valid UTF-8 as its text, control
    characters escaped; otherwise printable ASCII bytes as they are and the others as ``\\xNN``
    (so binary data shows no U+FFFD, and two different values never print alike)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1").translate(_BYTE_ESCAPES)
    return text if text.isprintable() else text.translate(_TEXT_ESCAPES)
