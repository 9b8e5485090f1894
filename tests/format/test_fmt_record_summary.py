"""``_speedups.summarize_records`` (the leader's validation summary) against the decoder.

Its contract: a summary only for a record area that ``decode_records`` decodes without an
error, and then the summary says what the decoded records say; None otherwise. Checked on
generated and mutated areas, on every v2 batch of the real corpus, and through
``RecordBatch.summary`` on compressed batches.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from record_areas import encode_area, mutated_areas, record_st
from support import corpus_params
from pylogctl.errors import PylogctlError
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.compression import Codec
from pylogctl.format.record_batch import (RecordBatch, RecordsSummary, decode_records_py,
                                          encode_record)
from pylogctl.storage.file_records import FileRecords

try:
    from pylogctl.format import _speedups
except ImportError:  # optional extension, not built
    pytest.skip("the C accelerator pylogctl.format._speedups is not built (it is optional; "
                "build it with `python setup.py build_ext --inplace` or `pip install -e .`)",
                allow_module_level=True)

BASE_TS = 1_700_000_000_000


def expected_summary(data: bytes, count: int):
    """What the decoded records say, in summarize_records' terms; None when decoding fails."""
    try:
        records = decode_records_py(data, count, 0, 0, -1, None)
    except PylogctlError:
        return None
    if not records:
        return (0, 0, 0, True, 0)
    attributes = 0
    for r in records:
        attributes |= r.attributes
    return (min(r.timestamp for r in records), max(r.timestamp for r in records),
            sum(r.key is None for r in records),
            all(r.offset == i for i, r in enumerate(records)), attributes)


def assert_summary(data: bytes, count: int) -> None:
    expected = expected_summary(data, count)
    got = _speedups.summarize_records(data, count)
    if expected is None:
        assert got is None
    elif got is not None:
        assert got == expected
    else:  # only a varint Python reads as a big int may be handed back undecided
        assert any(abs(r.timestamp) >= 1 << 62 or abs(r.offset) >= 1 << 30
                   for r in decode_records_py(data, count, 0, 0, -1, None))


@settings(max_examples=300, deadline=None)
@given(st.lists(record_st, max_size=8), st.integers(-1, 2))
def test_generated_areas(records, count_shift):
    assert_summary(encode_area(records), len(records) + count_shift)


@settings(max_examples=600, deadline=None)
@given(mutated_areas())
def test_mutated_areas(data_count):
    assert_summary(*data_count)


def test_plain_area_fields():
    data = b"".join([encode_record(0, 7, b"k", b"v", []), encode_record(1, -3, None, b"", []),
                     encode_record(2, 40, b"k2", None, [("h", b"x")], 0x01)])
    assert _speedups.summarize_records(data, 3) == (-3, 40, 1, True, 0x01)
    assert _speedups.summarize_records(data, 2) is None  # records left over
    assert _speedups.summarize_records(data, 4) is None  # premature end
    assert _speedups.summarize_records(data[:-1], 3) is None
    assert _speedups.summarize_records(bytearray(data), 3) is None  # not bytes: undecided
    assert _speedups.summarize_records(b"", 0) == (0, 0, 0, True, 0)


def test_offset_deltas_out_of_order_are_not_sequential():
    data = encode_record(0, 0, b"a", b"", []) + encode_record(5, 0, b"b", b"", [])
    assert _speedups.summarize_records(data, 2)[3] is False


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_batch_summary_sees_through_compression(codec):
    builder = RecordBatchBuilder(base_offset=0, codec=codec)
    for i in range(50):
        builder.append_with_offset(i, BASE_TS + i, None if i % 10 == 0 else b"k%d" % i,
                                   b"v" * i, [])
    batch = RecordBatch(builder.build())
    assert batch.summary() == RecordsSummary(BASE_TS, BASE_TS + 49, 5, True, 0)


@pytest.mark.corpus
@pytest.mark.parametrize("data_dir", corpus_params())
def test_corpus_batches(data_dir: Path):
    """Every v2 batch of the corpus: a summary exactly when its records decode, and right."""
    for path in sorted(data_dir.rglob("*.log")):
        with FileRecords(path) as fr:
            try:
                for batch in fr.batches():
                    if not isinstance(batch, RecordBatch):
                        continue
                    try:
                        records = batch.records()
                    except PylogctlError:
                        try:
                            assert batch.summary() is None, (path, batch.position)
                        except PylogctlError:
                            pass  # the payload does not decompress: neither path gets further
                        continue
                    attributes = 0
                    for r in records:
                        attributes |= r.attributes
                    timestamps = [r.timestamp for r in records] or [batch.base_timestamp]
                    if batch.timestamp_type == 1:  # log append time: records carry the max
                        timestamps = [batch.base_timestamp + d for d in
                                      _deltas(batch)] or timestamps
                    expected = RecordsSummary(
                        min(timestamps), max(timestamps), sum(r.key is None for r in records),
                        all(r.offset == batch.base_offset + i for i, r in enumerate(records)),
                        attributes)
                    assert batch.summary() == expected, (path, batch.position)
            except PylogctlError:
                pass  # a corrupt tail ends the walk


def _deltas(batch: RecordBatch) -> list[int]:
    """The stored timestamp deltas (decoded records of a LogAppendTime batch hide them)."""
    data = batch.raw_bytes()[61:]
    if batch.attributes & 0x07:
        from pylogctl.format.compression import decompress
        data = decompress(batch.attributes & 0x07, data, 2)
    return [r.timestamp for r in decode_records_py(data, batch.records_count, 0, 0, -1, None)]
