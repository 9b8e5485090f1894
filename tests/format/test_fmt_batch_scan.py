"""The C batch walk and in-place record decoding against their Python references.

``FileRecords.batches()`` frames runs of plain v2 batches with ``_speedups.scan_batches`` (and,
once the caller asks ``is_valid``, checks their CRCs in the same loop); ``iter_batches`` is the
reference: the same batches (every header field, position and buffer), the same ``is_valid``,
then the same error or end, at the same point of the walk. ``RecordBatch.records()`` decodes an
uncompressed record area in place (``_speedups.batch_records``); the pure-Python decoder over a
copy is the reference: same records or same error and position. Both build ``Record``,
``Header`` and ``RecordBatch`` objects without calling the classes (``register_classes``); a
patched constructor or another class turns that off.

Checked on every ``*.log`` of the real corpus and on generated segments: v2 batches (some
compressed), legacy messages, flipped CRCs, size fields below 14, batches running past the end,
unknown magics, v2 sizes below the header, mutated record areas.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from support import corpus_params
from wire import legacy_message
from pylogctl.errors import PylogctlError
from pylogctl.format import record_batch as rb
from pylogctl.format.builder import build_batch
from pylogctl.format.compression import Codec
from pylogctl.format.log_stream import iter_batches
from pylogctl.format.record import Header, Record
from pylogctl.format.record_batch import RECORD_BATCH_OVERHEAD, RecordBatch, encode_record
from pylogctl.storage import file_records
from pylogctl.storage.file_records import FileRecords

try:
    from pylogctl.format import _speedups
except ImportError:  # optional extension, not built
    pytest.skip("the C accelerator pylogctl.format._speedups is not built",
                allow_module_level=True)
if file_records._c_scan is None:
    pytest.skip("the C accelerator is turned off (PYLOGCTL_NO_SPEEDUPS)", allow_module_level=True)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
HEADER_FIELDS = [f for f in RecordBatch.__slots__ if f not in ("_buf", "_valid")]
RECORD_FIELDS = Record.__slots__


# -- what a walk saw ---------------------------------------------------------------------------

def batch_state(batch) -> tuple:
    if isinstance(batch, RecordBatch):
        return ("v2",) + tuple(getattr(batch, f) for f in HEADER_FIELDS)
    return (type(batch).__name__, batch.position, batch.size_in_bytes)


def walk(batches, view, ask_valid=lambda i: True) -> list:
    """Every batch's fields (and is_valid when asked), then the error if one ends the walk."""
    out = []
    try:
        for i, batch in enumerate(batches):
            entry = batch_state(batch)
            if isinstance(batch, RecordBatch):
                assert batch._buf is view
                if ask_valid(i):
                    entry += (batch.is_valid,)
            out.append(entry)
    except PylogctlError as exc:
        out.append(("error", type(exc), exc.message, exc.position))
    return out


def reference_valid(view, batch) -> bool:
    return RecordBatch(view, batch.position).is_valid


def assert_walks_agree(path: Path, start: int = 0) -> int:
    """FileRecords.batches() against iter_batches, for several ways of asking is_valid."""
    patterns = [lambda i: True, lambda i: False, lambda i: i % 3 == 0, lambda i: i == 0]
    seen = 0
    for ask in patterns:
        with FileRecords(path) as fr:
            view = fr.view
            expected = walk(iter_batches(view, start, fr.end, fr.path), view, ask)
            got_batches = []

            def keep(batches):
                for b in batches:
                    got_batches.append(b)
                    yield b
            got = walk(keep(fr.batches(start)), view, ask)
            assert got == expected, (str(path), start)
            # an is_valid the C loop computed ahead is the one Python computes
            for b in got_batches:
                if isinstance(b, RecordBatch) and b._valid is not None:
                    assert b._valid == reference_valid(view, b)
            seen = len(got_batches)
    return seen


def record_outcome(batch: RecordBatch):
    try:
        records = batch.records()
    except PylogctlError as exc:
        return ("error", type(exc), exc.message, exc.position)
    return ("ok", [(type(r),) + tuple(getattr(r, f) for f in RECORD_FIELDS)
                   + (tuple(type(h) for h in r.headers),) for r in records])


def python_records(monkeypatch, batch: RecordBatch):
    """batch.records() the pure-Python way: a copy of the area, decode_records_py."""
    with monkeypatch.context() as m:
        m.setattr(rb, "_c_batch_records", None)
        m.setattr(rb, "decode_records", rb.decode_records_py)
        return record_outcome(batch)


def assert_records_agree(monkeypatch, batch: RecordBatch, where=None):
    expected = python_records(monkeypatch, batch)
    assert record_outcome(batch) == expected, where
    return expected


# -- wiring ------------------------------------------------------------------------------------

def test_the_project_classes_are_built_directly():
    assert rb.C_BUILDS == (True, True, True)
    assert _speedups.register_classes(Record, Header, RecordBatch) == (True, True, True)


# -- the real corpus ---------------------------------------------------------------------------

@pytest.mark.corpus
@pytest.mark.parametrize("data_dir", corpus_params())
def test_corpus_walks_and_records_identical(data_dir: Path, monkeypatch):
    batches = 0
    for path in sorted(data_dir.rglob("*.log")):
        batches += assert_walks_agree(path)
        with FileRecords(path) as fr:
            try:
                for batch in fr.batches():
                    if isinstance(batch, RecordBatch):
                        assert_records_agree(monkeypatch, batch, (str(path), batch.position))
            except PylogctlError:
                pass  # a corrupt tail: compared by the walk above
    if data_dir.name not in ("stocksys-kraft",):  # no .log files
        assert batches > 0


# -- generated segments ------------------------------------------------------------------------

def v2_batch(base_offset: int, n: int, codec: Codec = Codec.NONE, headers=()) -> bytes:
    return build_batch([(1_700_000_000_000 + i, b"k%d" % i, b"v" * (i * 7), headers)
                        for i in range(n)], base_offset=base_offset, codec=codec,
                       producer_id=7, producer_epoch=1, base_sequence=base_offset % 1000)


piece_st = st.one_of(
    st.tuples(st.just("v2"), st.integers(1, 4), st.sampled_from([Codec.NONE] * 4 + [Codec.GZIP])),
    st.tuples(st.just("legacy"), st.sampled_from([0, 1]), st.just(None)),
)
damage_st = st.tuples(
    st.sampled_from(["none", "crc", "size-small", "size-large", "magic", "v2-small", "truncate",
                     "area-byte", "count"]),
    st.integers(0, 1 << 16), st.integers(0, 255))


def build_segment(pieces, damages) -> bytes:
    out = bytearray()
    starts = []
    offset = 0
    for kind, n, codec in pieces:
        starts.append(len(out))
        if kind == "v2":
            out += v2_batch(offset, n, codec, (("h", b"x"),) if n % 2 else ())
            offset += n
        else:
            out += legacy_message(offset, n, b"key", b"value", 1_700_000_000_000)
            offset += 1
    # truncation last: every other damage is at a batch start of the whole segment
    for kind, where, byte in sorted(damages, key=lambda d: d[0] == "truncate"):
        if not starts or kind == "none":
            continue
        at = starts[where % len(starts)]
        if kind == "crc":
            out[at + 17 + where % 4] ^= 0x5A
        elif kind == "size-small":
            struct.pack_into(">i", out, at + 8, where % 14)
        elif kind == "size-large":
            struct.pack_into(">i", out, at + 8, len(out) + where)
        elif kind == "magic":
            out[at + 16] = byte if byte not in (0, 1, 2) else 5
        elif kind == "v2-small" and out[at + 16] == 2:
            struct.pack_into(">i", out, at + 8, 14 + where % 35)
        elif kind == "truncate":
            del out[len(out) - 1 - where % max(1, min(80, len(out) - 1)):]
        elif kind == "area-byte" and out[at + 16] == 2:
            i = at + RECORD_BATCH_OVERHEAD + where % 40
            if i < len(out):
                out[i] = byte
        elif kind == "count" and out[at + 16] == 2:
            struct.pack_into(">i", out, at + 57, byte - 2)
    return bytes(out)


@SETTINGS
@given(st.lists(piece_st, min_size=0, max_size=30), st.lists(damage_st, max_size=3),
       st.sampled_from([1 << 23, 1, 200]), st.integers(0, 3))
def test_generated_segments_identical(tmp_path_factory, monkeypatch, pieces, damages,
                                      scan_bytes, start_piece):
    data = build_segment(pieces, damages)
    path = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    path.write_bytes(data)
    monkeypatch.setattr(file_records, "_SCAN_BYTES", scan_bytes)  # runs cut short, too
    assert_walks_agree(path)
    # from further on: mostly not a batch boundary, which the walks must treat alike
    assert_walks_agree(path, min(len(data), start_piece * 97))
    with FileRecords(path) as fr:
        try:
            for batch in fr.batches():
                if isinstance(batch, RecordBatch):
                    assert_records_agree(monkeypatch, batch, batch.position)
        except PylogctlError:
            pass


def test_a_long_run_in_growing_chunks(tmp_path):
    """More batches than one scan_batches call takes (4, 8, ... 256), with a legacy entry and
    a bad CRC in the middle and a torn tail."""
    parts = [v2_batch(i * 3, 3) for i in range(700)]
    parts[300] = legacy_message(900, 1, b"k", b"v", 5)
    bad = bytearray(parts[500])
    bad[30] ^= 1  # inside the CRC-covered header fields
    parts[500] = bytes(bad)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(parts) + parts[1][:40])
    assert assert_walks_agree(path) == 700
    with FileRecords(path) as fr:
        valid = [b.is_valid for b in fr.batches() if isinstance(b, RecordBatch)]
    assert valid.count(False) == 1 and len(valid) == 699


def test_records_read_in_place_from_any_buffer(monkeypatch):
    data = v2_batch(10, 5, headers=(("trace", b"1"), ("ct", None)))
    for buf in (data, bytearray(data), memoryview(data), memoryview(b"xx" + data)[2:]):
        batch = RecordBatch(buf, 0)
        result = assert_records_agree(monkeypatch, batch)
        assert result[0] == "ok" and len(result[1]) == 5


@pytest.mark.parametrize("cut", [1, 5, 30])
def test_records_of_a_batch_cut_by_the_buffer(monkeypatch, cut):
    """The area runs past the buffer: the slice is clamped in both paths."""
    data = v2_batch(0, 4)
    batch = RecordBatch(data[:-cut], 0)
    assert assert_records_agree(monkeypatch, batch)[0] == "error"


def test_record_area_errors_keep_their_positions(monkeypatch):
    area = encode_record(0, 0, b"k", b"v") + b"\x00\x07"  # trailing bytes
    prefix = b"\x00" * 100
    good = v2_batch(0, 1)
    header = bytearray(good[:RECORD_BATCH_OVERHEAD])
    struct.pack_into(">i", header, 8, RECORD_BATCH_OVERHEAD - 12 + len(area))
    buf = prefix + bytes(header) + area
    result = assert_records_agree(monkeypatch, RecordBatch(buf, len(prefix)))
    assert result[0] == "error"
    assert result[3] == len(prefix) + RECORD_BATCH_OVERHEAD + len(area) - 2


# -- header keys (the C side keeps the last few decoded) ------------------------------------------

def test_header_keys_decode_alike(monkeypatch):
    keys = [f"key-{i}" for i in range(20)] + ["ключ", "k\u00e9y", "x" * 64, "y" * 65]
    records = b"".join(encode_record(i, 0, None, b"v", [(k, b"1"), (k.encode(), None)])
                       for i, k in enumerate(keys * 2))
    records += encode_record(len(keys) * 2, 0, None, None, [(b"\xff\xfebad", b"")])
    count = len(keys) * 2 + 1
    header = bytearray(v2_batch(0, 1)[:RECORD_BATCH_OVERHEAD])
    struct.pack_into(">i", header, 8, RECORD_BATCH_OVERHEAD - 12 + len(records))
    struct.pack_into(">i", header, 57, count)
    result = assert_records_agree(monkeypatch, RecordBatch(bytes(header) + records, 0))
    assert result[0] == "ok" and len(result[1]) == count
    decoded = RecordBatch(bytes(header) + records, 0).records()
    assert [r.headers[0].key for r in decoded[:len(keys)]] == keys


# -- the guards on building objects directly ----------------------------------------------------

def test_a_patched_record_constructor_is_called(monkeypatch):
    data = v2_batch(0, 3)
    calls = []
    original = Record.__init__

    def init(self, *args):
        calls.append(args[0])
        original(self, *args)

    monkeypatch.setattr(Record, "__init__", init)
    assert [r.offset for r in RecordBatch(data, 0).records()] == [0, 1, 2]
    assert calls == [0, 1, 2]
    monkeypatch.undo()
    assert [r.offset for r in RecordBatch(data, 0).records()] == [0, 1, 2]
    assert calls == [0, 1, 2]  # built directly again


def test_a_patched_batch_constructor_is_called(monkeypatch, tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v2_batch(0, 2) + v2_batch(2, 2))
    made = []
    original = RecordBatch.__init__

    def init(self, buf, position=0):
        made.append(position)
        original(self, buf, position)

    monkeypatch.setattr(RecordBatch, "__init__", init)
    with FileRecords(path) as fr:
        assert [b.base_offset for b in fr.batches()] == [0, 2]
    assert made == [0, len(v2_batch(0, 2))]


def test_other_classes_are_called():
    class Sub(Record):
        __slots__ = ()

    area = encode_record(0, 5, b"k", b"v", [("h", b"1")])
    out = _speedups.decode_records(area, 1, 0, 0, -1, None, Sub, Header)
    assert type(out[0]) is Sub and out[0].value == b"v"
    out = _speedups.decode_records(area, 1, 0, 0, -1, None, Record, lambda k, v: (k, v))
    assert out[0].headers == (("h", b"1"),) and type(out[0].headers[0]) is tuple
