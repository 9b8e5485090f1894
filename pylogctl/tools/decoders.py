"""Key/value decoders chosen by name (``--key-decoder`` / ``--value-decoder``).

They stand in for kafka-dump-log's ``--key-decoder-class``: ``string`` is Kafka's StringDecoder
(UTF-8, malformed bytes replaced as Java does), the others are conveniences for binary data.
A decoder returns a JSON-ready value: a string, or for ``json`` the parsed document.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable

from ..format.java_string import java_utf8

DECODER_NAMES = ("string", "hex", "base64", "json", "none")
Decoder = Callable[[bytes], Any]


def _string(b: bytes) -> str:
    return java_utf8(b)


def _json(b: bytes) -> Any:
    """Parsed JSON; bytes that are not JSON fall back to their UTF-8 text."""
    try:
        return json.loads(b)
    except (ValueError, UnicodeDecodeError):
        return _string(b)


_DECODERS: dict[str, Decoder | None] = {
    "string": _string,
    "hex": lambda b: b.hex(),
    "base64": lambda b: base64.b64encode(b).decode("ascii"),
    "json": _json,
    "none": None,
}


def get_decoder(name: str) -> Decoder | None:
    """The decoder called ``name``; None for ``none`` (the part is not shown)."""
    try:
        return _DECODERS[name]
    except KeyError:
        raise ValueError(f"unknown decoder {name!r}; choose from {', '.join(DECODER_NAMES)}") from None
