"""The one rule for showing bytes in pylogctl's own text output.

Valid UTF-8 prints as its text with control characters escaped; any other value prints its
printable ASCII bytes as they are and every other byte as ``\\xNN`` (a backslash as
``\\\\``): binary data shows no U+FFFD, and two different values never print alike. Plain data
(no imports from the engine), so the formatters and the decoders share it. Kafka's own text
(kafka-dump-log's payloads, Java's ``new String(bytes, UTF_8)``) is not this rule: those outputs
keep Java's replacement character.
"""

from __future__ import annotations

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
