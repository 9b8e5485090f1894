"""Bytes to text as Java's ``new String(bytes, UTF_8)`` does it.

Kafka's tools turn keys, values, header keys and protocol strings into text with Java's
decoder, which replaces malformed input with U+FFFD by its own rules. Python's ``"replace"``
follows Unicode's "maximal subpart" advice and differs on a few inputs: a truncated sequence at
the end of the bytes is one U+FFFD in Java whatever its length, and an encoded surrogate
(``ED A0 80``) is one U+FFFD in Java but three in Python. Text output that claims to be Kafka's,
line for line, needs Java's rule; valid UTF-8 (nearly everything) takes the fast path.

The rules below restate the JDK's ``String`` UTF-8 decoder (JDK 9 to 25 agree); the tests check
them against ``kafka-dump-log`` on random bytes.
"""

from __future__ import annotations

REPLACEMENT = "\ufffd"


def java_utf8(data: bytes) -> str:
    """``data`` decoded as Java decodes UTF-8 with replacement."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _decode_replacing(data)


def _cont(b: int) -> bool:
    return (b & 0xC0) == 0x80


def _decode_replacing(src: bytes) -> str:
    out: list[str] = []
    put = out.append
    sp, sl = 0, len(src)
    while sp < sl:
        b1 = src[sp]
        sp += 1
        if b1 < 0x80:
            put(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:  # two bytes
            if sp < sl:
                b2 = src[sp]
                if _cont(b2):
                    sp += 1
                    put(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                else:
                    put(REPLACEMENT)
                continue
            put(REPLACEMENT)
            break
        elif 0xE0 <= b1 <= 0xEF:  # three bytes
            if sp + 1 < sl:
                b2, b3 = src[sp], src[sp + 1]
                if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2) or not _cont(b3):
                    put(REPLACEMENT)
                    # skip the lead, and the second byte too when it was a fine continuation
                    sp += 0 if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2) else 1
                else:
                    sp += 2
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    put(REPLACEMENT if 0xD800 <= c <= 0xDFFF else chr(c))
                continue
            if sp < sl and ((b1 == 0xE0 and (src[sp] & 0xE0) == 0x80) or not _cont(src[sp])):
                put(REPLACEMENT)
                continue
            put(REPLACEMENT)  # a truncated sequence ends the text with one replacement
            break
        elif 0xF0 <= b1 <= 0xF7:  # four bytes
            if sp + 2 < sl:
                b2, b3, b4 = src[sp], src[sp + 1], src[sp + 2]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if not (_cont(b2) and _cont(b3) and _cont(b4)) or not 0x10000 <= uc <= 0x10FFFF:
                    put(REPLACEMENT)
                    sp += _malformed4_skip(b1, b2, b3)
                else:
                    sp += 3
                    put(chr(uc))
                continue
            if b1 > 0xF4 or (sp < sl and _malformed4_2(b1, src[sp])):
                put(REPLACEMENT)
                continue
            sp += 1
            put(REPLACEMENT)
            if sp < sl and not _cont(src[sp]):
                continue
            break
        else:  # a continuation byte or C0, C1, F8..FF as a lead
            put(REPLACEMENT)
    return "".join(out)


def _malformed4_2(b1: int, b2: int) -> bool:
    return ((b1 == 0xF0 and not 0x90 <= b2 <= 0xBF) or (b1 == 0xF4 and (b2 & 0xF0) != 0x80)
            or not _cont(b2))


def _malformed4_skip(b1: int, b2: int, b3: int) -> int:
    """Bytes after the lead that Java swallows into one replacement (0, 1 or 2)."""
    if b1 > 0xF4 or _malformed4_2(b1, b2):
        return 0
    return 1 if not _cont(b3) else 2


def java_order(text: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units, not code
    points)."""
    return text.encode("utf-16-be", "surrogatepass")
