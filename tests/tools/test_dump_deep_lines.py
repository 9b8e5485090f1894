"""The deep text dump's C fast path (``format_v2_record_lines`` in ``_batch_lines.c``) against
the Python path.

``formatters.text`` over ``batch_to_dict`` and ``record_to_dict`` is the reference: with the
accelerator, runs of plain v2 batches arrive as the UTF-8 bytes of their batch and record
lines, and the bytes written, the footer (valid bytes, invalid batches, non-consecutive
offsets) and any error must be exactly the Python path's, whether the bytes go straight to a
binary buffer or through a text stream. Checked on every segment of the corpus and on
generated segments: random keys, values and header keys (valid and invalid UTF-8, nulls),
timestamp types, control and compressed batches, mutated record areas and headers.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from record_areas import mutated_areas
from support import corpus_params, segment_files
from pylogctl.format.builder import build_batch, build_end_txn_marker
from pylogctl.format.compression import Codec
from pylogctl.format.crc import crc32c
from pylogctl.format.java_string import java_utf8
from pylogctl.format.record_batch import encode_batch_header, encode_record
from pylogctl.formatters import get_formatter
from pylogctl.tools import dump_segment as dls
from pylogctl.tools.dump_segment import DumpOptions, dump_log

if dls._c_record_lines is None:
    pytest.skip("the C accelerator is not built or PYLOGCTL_NO_SPEEDUPS is set",
                allow_module_level=True)

PRINT = DumpOptions(print_data=True)
OPTION_SETS = [PRINT, DumpOptions(deep_iteration=True),
               DumpOptions(print_data=True, key_decoder="none"),
               DumpOptions(print_data=True, value_decoder="none")]


def render(path: Path, options: DumpOptions, fast: bool, stream: str) -> tuple:
    """What the text formatter writes (as bytes), the footer and the error, one path forced."""
    with pytest.MonkeyPatch.context() as m:
        if not fast:
            m.setattr(dls, "_c_record_lines", None)
        dump = dump_log(path, options)
        raw = io.BytesIO()
        if stream == "utf-8-buffer":  # the bytes go to the buffer under the text layer
            out = io.TextIOWrapper(raw, encoding="utf-8", write_through=False)
        elif stream == "latin-1":  # through the text layer, as the Python path's text does
            out = io.TextIOWrapper(raw, encoding="latin-1", errors="replace")
        else:
            out = io.StringIO()
        get_formatter("text").write([dump], out)
        out.flush()
        data = out.getvalue().encode("utf-8") if stream == "str" else raw.getvalue()
    err = None if dump.error is None else (type(dump.error), str(dump.error),
                                           dump.error.position)
    return data, dump.footer, err


def assert_same(path: Path, options: DumpOptions = PRINT,
                streams=("utf-8-buffer", "str")) -> bytes:
    first = None
    for stream in streams:
        fast = render(path, options, True, stream)
        assert fast == render(path, options, False, stream), stream
        first = fast[0] if first is None else first
    return first


@pytest.mark.corpus
@pytest.mark.parametrize("name", corpus_params())
def test_corpus_fast_and_python_paths_print_the_same(corpus, name):
    files = [p for p in segment_files(corpus / name) if p.stat().st_size
             and not p.name.endswith("-checkpoint")]
    assert files
    for path in files:
        for options in OPTION_SETS[:2]:
            assert_same(path, options, streams=("utf-8-buffer",))


def _batch(records, *, base_offset=0, attributes=0, base_ts=1_000, max_ts=2_000, base_seq=-1,
           count=None, codec_area=None) -> bytes:
    area = codec_area if codec_area is not None else b"".join(
        encode_record(*r) for r in records)
    return encode_batch_header(
        base_offset=base_offset, records_area=area,
        last_offset_delta=max((r[0] for r in records), default=0), partition_leader_epoch=3,
        attributes=attributes, base_timestamp=base_ts, max_timestamp=max_ts, producer_id=7,
        producer_epoch=1, base_sequence=base_seq,
        records_count=len(records) if count is None else count)


# bytes that are and are not UTF-8, and the ones Java and Python decode differently
odd_utf8 = st.sampled_from([b"", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80",
                            b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf4\x90\x80\x80", b"\xf8", b"\x80",
                            b"\xe2\x82", b"\xf0\x9f\x98", b"\n", b"\r\n", b"\x00", b"\xef\xbb\xbf"])
utf8 = st.text(max_size=12).map(str.encode)
blob = st.none() | utf8 | utf8 | st.binary(max_size=12) | st.lists(
    odd_utf8 | st.text(max_size=4).map(str.encode), max_size=5).map(b"".join)


def record_st(part, hkey):
    return st.tuples(st.integers(0, 3) | st.integers(-(1 << 31), (1 << 31) - 1),
                     st.integers(-5, 5) | st.integers(-(1 << 62), 1 << 62),
                     part, part, st.lists(st.tuples(hkey, blob), max_size=3),
                     st.integers(0, 255))


record = record_st(blob, utf8 | blob.filter(lambda b: b is not None))
utf8_record = record_st(st.none() | utf8, utf8)  # the C path's: most batches of real topics
batch_kind = st.sampled_from(["utf8", "utf8", "plain", "log-append", "control", "gzip",
                              "mutated", "bad-crc", "count"])


@st.composite
def segment(draw) -> bytes:
    parts, offset = [], draw(st.integers(0, 5) | st.sampled_from([(1 << 63) - 3]))
    for _ in range(draw(st.integers(1, 5))):
        offset = (offset + (1 << 63)) % (1 << 64) - (1 << 63)  # a Java long
        kind = draw(batch_kind)
        records = draw(st.lists(record if kind == "plain" else utf8_record, max_size=4))
        base_seq = draw(st.sampled_from([-1, 0, (1 << 31) - 2]))
        base_ts = draw(st.sampled_from([1_000, 1_000, (1 << 63) - 2, -(1 << 63)]))
        if kind == "control":
            data = build_end_txn_marker(offset=max(0, offset), producer_id=7, producer_epoch=1,
                                        commit=draw(st.booleans()), coordinator_epoch=2,
                                        timestamp=5)
        elif kind == "gzip":
            data = build_batch([(5 + i, r[2], r[3], r[4]) for i, r in enumerate(records)]
                               or [(5, None, b"v")], base_offset=max(0, offset), codec=Codec.GZIP)
        elif kind == "mutated":
            area, count = draw(mutated_areas())
            data = _batch([], base_offset=offset, base_seq=base_seq, count=count, codec_area=area)
        else:
            attributes = 0x08 if kind == "log-append" else draw(st.sampled_from([0, 0x10, 0x40]))
            data = _batch(records, base_offset=offset, attributes=attributes, base_ts=base_ts,
                          base_seq=base_seq,
                          count=len(records) + (draw(st.integers(-1, 1)) if kind == "count" else 0))
            if kind == "bad-crc":
                data = data[:17] + b"\x00\x00\x00\x00" + data[21:]
        parts.append(data)
        offset += draw(st.integers(0, 20))
    tail = draw(st.sampled_from([b"", b"\x00" * 5, b"\xff" * 70]))
    return b"".join(parts) + tail


@settings(max_examples=300, deadline=None)
@given(data=segment(), options=st.sampled_from(OPTION_SETS))
def test_generated_segments_print_the_same(tmp_path_factory, data, options):
    path = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    path.write_bytes(data)
    assert_same(path, options)


@settings(max_examples=1000, deadline=None)
@given(key=blob, value=blob, hkey=blob.filter(lambda b: b is not None))
def test_any_bytes_print_the_same(tmp_path_factory, key, value, hkey):
    """UTF-8 or not: the C path replaces malformed input as java_utf8 does (Java's rules)."""
    path = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    path.write_bytes(_batch([(0, 0, key, value, [(hkey, b"x")], 0)]))
    assert_same(path, PRINT, streams=("utf-8-buffer", "str", "latin-1"))


def test_plain_v2_runs_take_the_fast_path_and_odd_batches_do_not(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    plain = [build_batch([(1, b"k", "é€😀".encode())], base_offset=i) for i in range(3)]
    path.write_bytes(b"".join(plain))
    items = list(dump_log(path, PRINT).items_or_lines())
    assert len(items) == 1 and isinstance(items[0], bytes) and items[0].count(b"\n") == 6
    assert assert_same(path).endswith(items[0])
    # not UTF-8 (in C too), then a control batch, printed by Python, then C again
    path.write_bytes(plain[0] + build_batch([(1, b"k", b"\xff")], base_offset=1)
                     + build_end_txn_marker(offset=2, producer_id=7, producer_epoch=1,
                                            commit=True, coordinator_epoch=0, timestamp=1)
                     + build_batch([(1, b"k", b"v")], base_offset=3))
    kinds = [type(i) for i in dump_log(path, PRINT).items_or_lines()]
    assert kinds == [bytes, dict, bytes]
    assert b"payload: \xef\xbf\xbd" in assert_same(path)


def test_non_consecutive_offsets_are_reported_alike(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_batch([(0, 0, b"k", b"v", [], 0), (5, 0, b"k", b"v", [], 0)])
                     + _batch([(0, 0, None, None, [], 0)], base_offset=3))
    assert_same(path)
    dump = dump_log(path, PRINT)
    list(dump.items_or_lines())
    assert dump.footer["nonConsecutiveOffsets"] == [[0, 5], [5, 3]]


def test_text_written_between_chunks_keeps_its_place(tmp_path):
    """The text layer is flushed before bytes go to the buffer under it."""
    path = tmp_path / "00000000000000000000.log"
    batch = build_batch([(1, b"k", b"v")])
    path.write_bytes(batch + batch[:40])
    out = assert_same(path)
    assert out.startswith(b"Dumping ") and out.endswith(b"invalid bytes at the end of "
                                                        b"00000000000000000000.log\n")


def test_the_header_fields_print_the_same(tmp_path):
    """Batch-line fields at their extremes, with record lines after them."""
    batch = bytearray(_batch([(0, 1, b"k", b"v", [("h", None)], 0)], base_seq=5))
    for pos, fmt, value in ((12, ">i", -1), (43, ">q", -(1 << 63)), (51, ">h", -32768)):
        struct.pack_into(fmt, batch, pos, value)
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(batch))
    assert b"headerKeys: [h] key: k payload: v\n" in assert_same(path)


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_compressed_batches_are_rendered_from_their_records(tmp_path, codec):
    path = tmp_path / "00000000000000000000.log"
    records = [(5 + i, b"k%d" % i, "vé%d" % i, [("h", b"x")]) for i in range(20)]
    path.write_bytes(b"".join(build_batch([(ts, k, v.encode(), h) for ts, k, v, h in records],
                                          base_offset=20 * i, codec=codec) for i in range(3))
                     + build_batch([(1, b"k", b"\xff")], base_offset=60, codec=codec))
    kinds = [type(i) for i in dump_log(path, PRINT).items_or_lines()]
    assert kinds == [bytes] * 4
    assert b"compresscodec: " + str(codec).encode() in assert_same(path)


def test_area_renderer_declines_what_it_does_not_print():
    """Called directly (the dump only calls it for a batch whose records it decompressed), it
    still returns None for codec ids 5-7, control batches, bad CRCs and truncated headers."""
    area = encode_record(0, 0, b"k", b"v")
    good = _batch([(0, 0, b"k", b"v", [], 0)], attributes=1, codec_area=area)
    assert dls._c_area_lines(good, 0, area, -1, 3) is not None
    for attributes in (5, 6, 7, 0x21):
        batch = _batch([(0, 0, b"k", b"v", [], 0)], attributes=attributes, codec_area=area)
        assert dls._c_area_lines(batch, 0, area, -1, 3) is None
    assert dls._c_area_lines(good[:17] + b"\0\0\0\0" + good[21:], 0, area, -1, 3) is None
    for pos in (-1, 1, len(good)):
        assert dls._c_area_lines(good, pos, area, -1, 3) is None
    assert dls._c_area_lines(good[:60], 0, area, -1, 3) is None


# bytes around UTF-8's edges: leads, continuations, the bounds of each lead's second byte
edge_byte = st.sampled_from([0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1,
                             0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3,
                             0xF4, 0xF5, 0xF7, 0xF8, 0xFF])


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.lists(edge_byte, max_size=8).map(bytes) | st.binary(max_size=8),
                       min_size=1, max_size=40))
def test_payloads_are_replaced_as_java_utf8_does(tmp_path_factory, values):
    """Each payload printed by the C path is java_utf8's text, encoded (checked per record)."""
    path = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    path.write_bytes(_batch([(i, 0, None, v, [], 0) for i, v in enumerate(values)]))
    items = list(dump_log(path, PRINT).items_or_lines())
    assert [type(i) for i in items] == [bytes]
    lines = items[0].split(b"\n")  # a payload may hold a newline: split after each record
    text = b"\n".join(lines[1:])
    for v in values:
        line = b" payload: " + java_utf8(v).encode("utf-8") + b"\n"
        at = text.index(b" headerKeys: [] payload: ")
        assert text[at + len(b" headerKeys: []"):].startswith(line)
        text = text[at + len(b" headerKeys: []") + len(line):]
    assert_same(path)
