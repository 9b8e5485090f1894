"""Every segment of the real corpus dumps cleanly, and agrees with kafka-python record for record."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.record import MemoryRecords

from support import corpus_catalogue, corpus_params, segment_files
from pylogctl.storage.file_records import FileRecords
from pylogctl.tools.dump_segment import DumpOptions, dump_log

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("data_dir", corpus_params())
def test_corpus_dir_dumps_with_catalogued_counts(data_dir: Path):
    """Batch and record totals equal the catalogue; every batch is valid; no invalid bytes.

    The catalogue counts the log segments and KRaft snapshots, not ``bootstrap.checkpoint``.
    """
    expected = corpus_catalogue()[data_dir.name]
    batches = records = 0
    for path in segment_files(data_dir):
        dump = dump_log(path, DumpOptions(deep_iteration=True))
        for item in dump.items:
            assert item["isValid"], (path, item["position"])
            if path.name != "bootstrap.checkpoint":
                batches += 1
                records += len(item["records"])
        assert dump.error is None, dump.error
        assert dump.footer["invalidBytes"] == 0, path
    assert (batches, records) == expected


def _ours(path: Path):
    with FileRecords(path) as fr:
        for batch in fr.batches():
            for r in batch.records():
                yield (r.offset, r.timestamp, r.key, r.value, tuple(h.key for h in r.headers))


def _kafka_python(path: Path):
    records = MemoryRecords(path.read_bytes())
    while records.has_next():
        batch = records.next_batch()
        for r in batch:
            headers = tuple(k for k, _ in (getattr(r, "headers", None) or []))
            key = None if r.key is None else bytes(r.key)
            value = None if r.value is None else bytes(r.value)
            yield (r.offset, r.timestamp, key, value, headers)


@pytest.mark.parametrize("data_dir", corpus_params())
def test_corpus_records_match_kafka_python(data_dir: Path):
    compared = 0
    for path in segment_files(data_dir):
        if path.stat().st_size == 0:
            continue
        ours = list(_ours(path))
        theirs = list(_kafka_python(path))
        assert len(ours) == len(theirs), path
        for a, b in zip(ours, theirs):
            assert a == b, (path, a[0])
        compared += len(ours)
    if any(p.stat().st_size for p in segment_files(data_dir) if p.suffix == ".log"):
        assert compared > 0
