"""The shallow text dump's C fast path (``_batch_lines.c``) against the Python path.

``formatters.text.batch_line(batch_to_dict(...))`` is the reference: with the accelerator,
runs of plain v2 batches arrive pre-rendered, and the text, the footer (valid bytes, invalid
bytes and batches) and any error must be exactly what the Python path gives. Checked on every
segment and KRaft snapshot of the corpus and on generated segments whose header fields,
CRCs, tails and magic values are mutated at random.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from support import corpus_params, segment_files
from pylogctl.format.builder import build_batch
from pylogctl.format.crc import crc32c
from pylogctl.formatters import get_formatter
from pylogctl.tools import dump_segment as dls
from pylogctl.tools.dump_segment import DumpOptions, dump_log

if dls._c_batch_lines is None:
    pytest.skip("the C accelerator is not built or PYLOGCTL_NO_SPEEDUPS is set",
                allow_module_level=True)


def render(path: Path, options: DumpOptions, fast: bool) -> tuple:
    with pytest.MonkeyPatch.context() as m:
        if not fast:
            m.setattr(dls, "_c_batch_lines", None)
        dump = dump_log(path, options)
        out = io.StringIO()
        get_formatter("text").write([dump], out)
    err = None if dump.error is None else (type(dump.error), str(dump.error))
    return out.getvalue(), dump.footer, err


def assert_same(path: Path, options: DumpOptions = DumpOptions()) -> str:
    fast = render(path, options, True)
    slow = render(path, options, False)
    assert fast == slow
    return fast[0]


@pytest.mark.corpus
@pytest.mark.parametrize("name", corpus_params())
def test_corpus_fast_and_python_paths_print_the_same(corpus, name):
    files = [p for p in segment_files(corpus / name) if p.stat().st_size]
    files += sorted((corpus / name).rglob("*.checkpoint"))
    assert files
    for path in files:
        if path.name.endswith("-checkpoint"):
            continue
        assert_same(path)


def _patch_header(batch: bytes, fields: dict, fix_crc: bool) -> bytes:
    b = bytearray(batch)
    layout = {"leader_epoch": (12, ">i"), "attributes": (21, ">h"), "last_delta": (23, ">i"),
              "base_ts": (27, ">q"), "max_ts": (35, ">q"), "producer_id": (43, ">q"),
              "producer_epoch": (51, ">h"), "base_seq": (53, ">i"), "count": (57, ">i"),
              "base_offset": (0, ">q")}
    for name, value in fields.items():
        pos, fmt = layout[name]
        struct.pack_into(fmt, b, pos, value)
    if fix_crc:
        struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    return bytes(b)


header_fields = st.fixed_dictionaries({}, optional={
    "leader_epoch": st.integers(-2**31, 2**31 - 1),
    "attributes": st.integers(-2**15, 2**15 - 1),
    "last_delta": st.integers(-2**31, 2**31 - 1),
    "base_ts": st.integers(-2**63, 2**63 - 1),
    "max_ts": st.integers(-2**63, 2**63 - 1),
    "producer_id": st.integers(-2**63, 2**63 - 1),
    "producer_epoch": st.integers(-2**15, 2**15 - 1),
    "base_seq": st.sampled_from([-1, 0, 2**31 - 1, 2**31 - 5]) | st.integers(-2**31, 2**31 - 1),
    "count": st.integers(-2**31, 2**31 - 1),
    "base_offset": st.integers(-2**63, 2**63 - 1),
})

batch_spec = st.tuples(st.integers(1, 4), header_fields, st.booleans())


@settings(max_examples=150, deadline=None)
@given(specs=st.lists(batch_spec, min_size=1, max_size=6),
       tail=st.sampled_from([b"", b"\x00" * 5, b"\x00" * 30, b"\xff" * 70]),
       magic=st.sampled_from([None, 0, 1, 3]),
       cut=st.integers(0, 200),
       max_bytes=st.one_of(st.none(), st.integers(0, 2000)))
def test_generated_segments_print_the_same(tmp_path_factory, specs, tail, magic,
                                           cut, max_bytes):
    parts, offset = [], 0
    for n, fields, fix_crc in specs:
        batch = build_batch([(1000 + i, b"k%d" % i, b"v" * i) for i in range(n)],
                            base_offset=offset)
        parts.append(_patch_header(batch, fields, fix_crc))
        offset += n
    data = b"".join(parts)
    if magic is not None:  # another magic in the middle of the run
        mid = len(parts[0])
        data = data[:mid + 16] + bytes([magic]) + data[mid + 17:] if len(parts) > 1 else data
    data = data[:max(0, len(data) - cut)] + tail
    path = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    path.write_bytes(data)
    options = DumpOptions() if max_bytes is None else DumpOptions(max_bytes=max_bytes)
    assert_same(path, options)


def test_plain_v2_runs_do_take_the_fast_path(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(build_batch([(1, b"k", b"v")], base_offset=i) for i in range(3)))
    items = list(dump_log(path).items_or_lines())
    assert len(items) == 1 and isinstance(items[0], str) and items[0].count("\n") == 3
    assert items[0] == assert_same(path).split("\n", 2)[2]
