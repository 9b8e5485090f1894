"""``java_utf8``: bytes to text as Java's ``new String(bytes, UTF_8)``, checked two ways.

- Edge cases, each with what the JDK's decoder gives (established by running it on these very
  bytes; JDK 9 to 25 agree): truncated sequences at the end, encoded surrogates, overlong forms,
  bytes that can never start a sequence.
- A property: random byte keys, values and header keys written into a segment with pylogctl's
  own writer, dumped by the real ``kafka-dump-log`` (Kafka 4.4, ``--print-data-log``) and by
  ``pylogctl dump-segment``; stdout must be the same. Each example is a few hundred records
  dumped in one JVM run.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kafka_jvm import java_command, main_class, require_kafka
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.java_string import REPLACEMENT, java_utf8

R = REPLACEMENT


@pytest.mark.parametrize("data,text", [
    # a sequence cut short by the end of the bytes: one replacement, whatever its length
    ("c2", R), ("e4b8", R), ("e0a0", R), ("f090", R), ("f09f98", R), ("f4", R), ("f48f", R),
    ("f48fbf", R), ("41e4b8", "A" + R), ("41f0", "A" + R),
    # cut short by a byte that cannot continue it: one replacement, then that byte
    ("c241", R + "A"), ("e041", R + "A"), ("e0a041", R + "A"), ("e4b841", R + "A"),
    ("f09041", R + "A"), ("f0904141", R + "AA"), ("c2c2", R + R), ("e4c2a2", R + "\u00a2"),
    ("e4b8e4b8ad", R + "\u4e2d"), ("f0e4b8ad", R + "\u4e2d"),
    # UTF-16 surrogates encoded in UTF-8 (CESU): one replacement per three bytes
    ("eda080", R), ("edbfbf", R), ("edb080", R), ("eda080eda080", R + R),
    # overlong forms: every byte replaced
    ("c080", R * 2), ("c1bf", R * 2), ("e08080", R * 3), ("e09fbf", R * 3),
    ("f0808080", R * 4), ("f08fbfbf", R * 4),
    # beyond U+10FFFF, and leads that never start a sequence (F5..FF), lone continuations
    ("f4908080", R * 4), ("f5", R), ("f58080", R * 3), ("f8", R), ("fe", R), ("ff", R),
    ("c0", R), ("80", R), ("bf", R),
    # well-formed
    ("f09f9880", "\U0001f600"), ("f48fbfbf", "\U0010ffff"), ("e282ac", "\u20ac"), ("", ""),
])
def test_java_utf8_replaces_as_the_jdk_does(data, text):
    assert java_utf8(bytes.fromhex(data)) == text


# -- the property, against the real tool -----------------------------------------------------

_TRICKY = [bytes.fromhex(h) for h in (
    "c2", "c3a9", "e4b8", "e4b8ad", "e282ac", "eda080", "edbfbf", "edb080", "c080", "c1bf",
    "e08080", "e09fbf", "e0a080", "f0808080", "f08fbfbf", "f0908080", "f09f9880", "f09f98",
    "f4908080", "f48fbfbf", "f5", "f8", "fe", "ff", "80", "bf", "f0", "f4", "e0", "ef", "efbfbd",
    "efbfbf", "00", "7f")]



def _blob(rnd) -> bytes:
    """Mostly ASCII and tricky UTF-8 pieces, so the replacement rules are hit hard."""
    out = []
    for _ in range(rnd.randrange(7)):
        kind = rnd.random()
        if kind < 0.45:
            out.append(rnd.choice(_TRICKY))
        elif kind < 0.7:
            out.append(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 4))))
        else:
            out.append(bytes(rnd.randrange(0x21, 0x7F) for _ in range(rnd.randrange(1, 4))))
    return b"".join(out)


def _records(rnd, n: int) -> list:
    def maybe_null():
        return None if rnd.random() < 0.1 else _blob(rnd)
    return [(maybe_null(), maybe_null(), [_blob(rnd) for _ in range(rnd.randrange(3))])
            for _ in range(n)]


RECORDS_PER_RUN = 300


def _write_segment(path: Path, records: list) -> None:
    with open(path, "wb") as out:
        offset = 0
        for start in range(0, len(records), 50):
            builder = RecordBatchBuilder(base_offset=offset)
            for key, value, header_keys in records[start:start + 50]:
                builder.append(1_700_000_000_000 + offset, key, value,
                               [(hk, b"v") for hk in header_keys])
                offset += 1
            out.write(builder.build())


def _kafka_dump(path: Path) -> str:
    # Java writes stdout in the platform encoding: make it UTF-8 whatever the machine's locale
    cmd = java_command(main_class("kafka-dump-log"), ["--print-data-log", "--files", str(path)])
    proc = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL,
                          env={**os.environ, "LC_ALL": "C.UTF-8"}, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode("utf-8", "surrogateescape")


def _our_dump(path: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "pylogctl", "dump-segment", "--print-data-log",
                           "--files", str(path)], capture_output=True,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode("utf-8", "surrogateescape")


@pytest.fixture(scope="module")
def kafka_available():
    require_kafka()


# Hypothesis draws the seed of the records (a few hundred records overrun the data it would
# draw for them one by one); no shrinking, as each example is a JVM run: a failure names the
# lines that differ, and its seed (in Hypothesis's report) replays it.
@settings(max_examples=2, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**64 - 1))
def test_keys_values_and_header_keys_print_as_kafka_prints_them(seed, kafka_available,
                                                                 tmp_path_factory):
    records = _records(random.Random(seed), RECORDS_PER_RUN)
    path = tmp_path_factory.mktemp("utf8") / "00000000000000000000.log"
    _write_segment(path, records)
    theirs, ours = _kafka_dump(path).split("\n"), _our_dump(path).split("\n")
    if theirs != ours:
        bad = [(k, o) for k, o in zip(theirs, ours) if k != o][:3]
        raise AssertionError(f"{len(theirs)} vs {len(ours)} lines; first differences "
                             f"(kafka, pylogctl): {bad!r}")
