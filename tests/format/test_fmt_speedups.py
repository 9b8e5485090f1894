"""The C accelerator (``pylogctl.format._speedups``) against the pure-Python decoder.

``decode_records_py`` is the reference. For the same arguments the C ``decode_records`` must
return records equal field by field, of the same classes, or raise the same exception type
with the same message and position. It may instead return ``NotImplemented`` for input outside
bytes/int64 (the Python wrapper then falls back), which is checked separately.

Checked on every ``*.log`` of the real corpus, on hypothesis-generated record areas (valid and
mutated), and on each error path by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from record_areas import base_st, encode_area, mutated_areas, record_st
from support import corpus_params
from pylogctl.errors import CorruptRecordError, PylogctlError
from pylogctl.format import record_batch as rb
from pylogctl.format.compression import decompress
from pylogctl.format.record import Header, Record
from pylogctl.format.record_batch import (CODEC_MASK, RECORD_BATCH_OVERHEAD, RecordBatch,
                                          decode_records_py, encode_record)
from pylogctl.format.varint import encode_varint
from pylogctl.storage.file_records import FileRecords

try:
    from pylogctl.format import _speedups
except ImportError:  # optional extension, not built
    pytest.skip("the C accelerator pylogctl.format._speedups is not built (it is optional; "
                "build it with `python setup.py build_ext --inplace` or `pip install -e .`)",
                allow_module_level=True)

SETTINGS = settings(max_examples=200, deadline=None)
INT64_MAX = (1 << 63) - 1
FIELDS = Record.__slots__


def c_decode(*args):
    return _speedups.decode_records(*args, Record, Header)


def outcome(fn, *args):
    """What a decoder did: its records as plain tuples (class included), or its error."""
    try:
        records = fn(*args)
    except PylogctlError as exc:
        return ("error", type(exc), exc.message, exc.position)
    if records is NotImplemented:
        return NotImplemented
    return ("ok", [(type(r),) + tuple(getattr(r, f) for f in FIELDS)
                   + (tuple(type(h) for h in r.headers),) for r in records])


def assert_same(*args, c_must_decode: bool = True, where=None):
    """C and Python agree on ``args`` (and so does the public wrapper)."""
    expected = outcome(decode_records_py, *args)
    got = outcome(c_decode, *args)
    if got is NotImplemented:
        assert not c_must_decode, ("the C decoder handed a bytes/int64 input back to Python",
                                   where)
    else:
        assert got == expected, where
    assert outcome(rb.decode_records, *args) == expected, where
    return expected


def record_area_args(batch: RecordBatch):
    """The arguments RecordBatch.records() passes to decode_records, from public data."""
    raw = batch.raw_bytes()
    area = raw[RECORD_BATCH_OVERHEAD:]
    codec = batch.attributes & CODEC_MASK
    if codec:
        area = decompress(codec, area, 2)
    lat = batch.max_timestamp if batch.timestamp_type == 1 else None
    return (area, batch.records_count, batch.base_offset, batch.base_timestamp,
            batch.base_sequence, lat)


def area(*records: bytes) -> bytes:
    return b"".join(records)


REC = encode_record(0, 5, b"key", b"value", [("h", b"v")])
REC2 = encode_record(1, 9, None, b"x" * 300, [])


# -- wiring ------------------------------------------------------------------------------------

def test_decode_records_uses_the_extension_unless_disabled():
    code = ("from pylogctl.format import record_batch as rb; "
            "print(rb._c_decode is not None, rb.decode_records is rb.decode_records_py)")
    env = {k: v for k, v in os.environ.items() if k != "PYLOGCTL_NO_SPEEDUPS"}
    on = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                        check=True).stdout.split()
    off = subprocess.run([sys.executable, "-c", code], env={**env, "PYLOGCTL_NO_SPEEDUPS": "1"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert on == ["True", "False"]
    assert off == ["False", "True"]


def test_records_are_the_project_classes():
    out = c_decode(area(REC, REC2), 2, 100, 1_700_000_000_000, 7, None)
    assert [type(r) for r in out] == [Record, Record]
    assert type(out[0].headers) is tuple and type(out[0].headers[0]) is Header
    assert out[1].headers == ()
    assert (out[0].offset, out[0].timestamp, out[0].sequence) == (100, 1_700_000_000_005, 7)
    assert (out[1].key, out[1].value, out[1].attributes) == (None, b"x" * 300, 0)


def test_log_append_time_is_the_same_object():
    lat = 1_700_000_123_456
    out = c_decode(area(REC, REC2), 2, 0, 0, -1, lat)
    assert all(r.timestamp is lat for r in out)


# -- the real corpus ---------------------------------------------------------------------------

@pytest.mark.corpus
@pytest.mark.parametrize("data_dir", corpus_params())
def test_corpus_records_identical(data_dir: Path):
    """Every v2 batch of every ``*.log``: both decoders give the same records (or error)."""
    batches = 0
    for path in sorted(data_dir.rglob("*.log")):
        with FileRecords(path) as fr:
            try:
                for batch in fr.batches():
                    if not isinstance(batch, RecordBatch):
                        continue  # magic 0/1: not decoded by decode_records
                    try:
                        args = record_area_args(batch)
                    except PylogctlError:
                        continue  # undecompressable payload: the decoders never see it
                    assert_same(*args, where=(str(path), batch.position))
                    batches += 1
            except PylogctlError:
                pass  # a corrupt tail ends the walk; what came before was compared
    if data_dir.name not in ("xpx-2016", "stocksys-kraft"):  # magic 1 only / no .log files
        assert batches > 0


# -- hypothesis --------------------------------------------------------------------------------

def fits_int64(records, base) -> bool:
    base_offset, base_ts, base_seq, lat = base
    for off, ts, *_ in records:
        if not -(1 << 63) <= base_offset + off <= INT64_MAX:
            return False
        if lat is None and not -(1 << 63) <= base_ts + ts <= INT64_MAX:
            return False
        if base_seq >= 0 and base_seq + off > INT64_MAX:
            return False
    return True


@SETTINGS
@given(st.lists(record_st, max_size=8), base_st, st.integers(-1, 2))
def test_generated_areas_identical(records, base, count_shift):
    count = len(records) + count_shift
    assert_same(encode_area(records), count, *base, c_must_decode=fits_int64(records, base))


@settings(max_examples=500, deadline=None)
@given(mutated_areas(), st.sampled_from([(0, 1_700_000_000_000, -1, None),
                                         (1 << 40, 5, 9, 1_700_000_000_777)]))
def test_mutated_areas_identical(data_count, base):
    data, count = data_count
    assert_same(data, count, *base, c_must_decode=False)  # a mutated varlong may need > 64 bits


# -- every error path, by hand ------------------------------------------------------------------

def _record(body: bytes) -> bytes:
    """A record from its body (everything after the length varint)."""
    return encode_varint(len(body)) + body


HEAD = b"\x00\x00\x00"  # attributes 0, timestamp delta 0, offset delta 0
NULLS = HEAD + b"\x01\x01"  # ... then a null key and a null value
ONE_HEADER = NULLS + b"\x02"  # ... then a header count of 1
STRUCTURE = "Found invalid record structure"  # a read past the data, reported at the record

# name: (record area, count, how the expected message starts)
ERROR_CASES = {
    "negative count": (REC, -1, "Found invalid record count -1"),
    "empty area": (b"", 1, "Incorrect declared batch size, premature EOF reached"),
    "count beyond the records": (area(REC, REC2), 3, "Incorrect declared batch size, premature"),
    "extra trailing bytes": (area(REC, b"\x00\x07"), 1, "Incorrect declared batch size, records"),
    "record size past the end": (REC[:-2], 1, "Invalid record size: expected"),
    "negative record size": (b"\x03" + REC[1:], 1, "Invalid record size: expected -2"),
    "record size too small": (_record(REC[1:-1]) + REC[-1:], 1,
                              "Invalid record size: expected to read"),
    "record size too large": (_record(REC[1:] + b"\x00"), 1,
                              "Invalid record size: expected to read"),
    "zero-size record": (b"\x00", 1, STRUCTURE),
    "truncated size varint": (b"\x80", 1, "Truncated varint"),
    "size varint too long": (b"\xff\xff\xff\xff\xff\x01", 1, "Varint is too long"),
    "timestamp varlong too long": (_record(b"\x00" + b"\xff" * 10 + b"\x00"), 1,
                                   "Varint is too long, the most significant bit in the 10th"),
    "truncated timestamp": (_record(b"\x00\x80"), 1, "Truncated varint"),
    "missing offset delta": (_record(b"\x00\x00"), 1, STRUCTURE),
    "negative key size": (_record(HEAD + b"\x03"), 1, STRUCTURE + ": key size -2"),
    "key past the end": (_record(HEAD + b"\x7e"), 1, STRUCTURE),
    "negative value size": (_record(HEAD + b"\x01\x05"), 1, STRUCTURE + ": value size -3"),
    "value past the end": (_record(HEAD + b"\x01\x20ab"), 1, STRUCTURE),
    "missing header count": (_record(NULLS), 1, STRUCTURE),
    "negative header count": (_record(NULLS + b"\x03"), 1,
                              "Found invalid number of record headers -2"),
    "header count larger than the buffer": (_record(NULLS + b"\x40"), 1,
                                            "Found invalid number of record headers. 32 is"),
    "negative header key size": (_record(ONE_HEADER + b"\x03"), 1,
                                 "Invalid negative header key size -2"),
    "header key past the end": (_record(ONE_HEADER + b"\x10ab"), 1, STRUCTURE),
    "negative header value size": (_record(ONE_HEADER + b"\x02k\x07"), 1,
                                   STRUCTURE + ": header value size -4"),
    "header value past the end": (_record(ONE_HEADER + b"\x02k\x10ab"), 1, STRUCTURE),
    "header key up to the end": (_record(ONE_HEADER + b"\x02k"), 1, "Truncated varint"),
    "fewer headers than counted": (_record(NULLS + b"\x04\x02k\x01"), 1, "Truncated varint"),
    "second record truncated": (area(REC, REC2[:-5]), 2, "Invalid record size: expected"),
    # boundaries: lengths running exactly one byte past the end of the data
    "key one byte past the end": (_record(HEAD + b"\x04a"), 1, STRUCTURE),
    "value one byte past the end": (_record(HEAD + b"\x01\x04a"), 1, STRUCTURE),
    "header key one byte past the end": (_record(ONE_HEADER + b"\x04a"), 1, STRUCTURE),
    "header value one byte past the end": (_record(ONE_HEADER + b"\x02k\x04a"), 1, STRUCTURE),
}
BASES = [(0, 0, -1, None), (1000, 1_700_000_000_000, 3, 1_700_000_000_999)]


@pytest.mark.parametrize("name", list(ERROR_CASES))
@pytest.mark.parametrize("base", BASES)
def test_error_paths_identical(name, base):
    data, count, message = ERROR_CASES[name]
    result = assert_same(data, count, *base)
    assert result[0] == "error", result
    assert result[2].startswith(message), result


@pytest.mark.parametrize("exc", [
    IndexError("from the class"),  # becomes "Found invalid record structure" at the record
    CorruptRecordError("beyond the data", position=10**9),  # likewise
    CorruptRecordError("no position"),  # likewise
    CorruptRecordError("inside the data", position=1),  # raised as it is
    ValueError("not handled"),  # passes through
], ids=repr)
def test_errors_from_the_record_class_are_handled_alike(monkeypatch, exc):
    """The loop's ``except (IndexError, CorruptRecordError)`` rule, for every error source."""
    def failing(*args):
        raise exc

    def result(fn, *args):
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - comparing whatever each raises
            return type(e), getattr(e, "message", str(e)), getattr(e, "position", None)
        return None

    args = (area(REC, REC2), 2, 0, 0, -1, None)
    got = result(lambda *a: _speedups.decode_records(*a, failing, Header), *args)
    monkeypatch.setattr(rb, "Record", failing)
    assert got == result(decode_records_py, *args) is not None


# -- the hand-over to Python --------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    (bytearray(REC), 1, 0, 0, -1, None),  # not bytes
    (memoryview(REC2), 1, 0, 0, -1, None),
    (REC, 1, 1 << 64, 0, -1, None),  # int beyond int64
    (REC, 1, 0, 0, -1, 1 << 70),
    (REC, True, 0, 0, -1, None),  # a bool is an int in Python, not here
    (REC2, 1, INT64_MAX, 0, -1, None),  # base offset + delta overflows
    (REC, 1, 0, INT64_MAX, -1, None),  # base timestamp + delta overflows
    (encode_record(5, 0, None, None), 1, 0, 0, INT64_MAX - 2, None),  # sequence overflows
    # a 10-byte timestamp varlong whose raw value needs more than 64 bits
    (_record(b"\x00" + b"\x80" * 9 + b"\x7f" + b"\x00\x01\x01\x00"), 1, 0, 0, -1, None),
])
def test_out_of_int64_input_is_decoded_by_python(args):
    assert c_decode(*args) is NotImplemented
    expected = outcome(decode_records_py, *args)
    assert outcome(rb.decode_records, *args) == expected


def test_wide_varlong_still_errors_like_python_when_the_record_is_bad():
    # the same wide timestamp, but the record then runs past the end: Python's error wins
    data = _record(b"\x00" + b"\x80" * 9 + b"\x7f" + b"\x00\x01\x01\x00")[:-1]
    assert_same(data, 1, 0, 0, -1, None)


# CRC-32C (_crc32c.c) against the crc32c package: both the SSE4.2 path (three interleaved
# streams joined by zero-append operators) and the table-driven one, at the block-size edges.
CRC_LENGTHS = [0, 1, 7, 8, 9, 255, 256, 257, 767, 768, 769, 8191, 8192, 24575, 24576, 24577,
               24576 + 768, 100_000]


@pytest.mark.parametrize("n", CRC_LENGTHS)
@pytest.mark.parametrize("fn", ["crc32c", "_crc32c_portable"])
def test_crc32c_matches_the_crc32c_package(n, fn):
    import crc32c as reference
    ours = getattr(_speedups, fn)
    data = bytes(random_bytes(n + 3))
    for off in (0, 1, 3):
        chunk = memoryview(data)[off:off + n]
        assert ours(chunk) == reference.crc32c(chunk)
        assert ours(chunk, 0xDEADBEEF) == reference.crc32c(chunk, 0xDEADBEEF)


@SETTINGS
@given(st.binary(max_size=3000), st.integers(0, 2**32 - 1))
def test_crc32c_matches_on_random_input(data, value):
    import crc32c as reference
    assert _speedups.crc32c(data, value) == reference.crc32c(data, value)
    assert _speedups._crc32c_portable(data, value) == reference.crc32c(data, value)


def random_bytes(n: int) -> bytes:
    import random
    return random.Random(n).randbytes(n)
