"""The read-only twin of ``LogSegment.recover`` must predict exactly what recovery writes, and
the index check must accept every index Kafka wrote in the corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pylogctl.errors import FileUnreadableError
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.naming import offset_from_file
from pylogctl.storage.offset_index import OffsetIndex
from pylogctl.storage.segment import LogSegment
from pylogctl.storage.segment_check import check_indexes, read_next_offset, scan_for_recovery
from load_support import batch_positions, fingerprint, flip_byte, writable_copy

CONFIG = LogConfig()


def _recover_and_compare(log: Path, config: LogConfig = CONFIG) -> None:
    base = offset_from_file(log)
    before = fingerprint(log.parent)
    scan = scan_for_recovery(str(log), base, config.index_interval_bytes,
                             config.segment_index_bytes)
    assert fingerprint(log.parent) == before  # read-only
    with LogSegment.open(log.parent, base, config) as segment:
        truncated = segment.recover()
        next_offset = segment.read_next_offset()
    assert truncated == scan.truncated_bytes
    assert next_offset == scan.next_offset
    assert log.with_suffix(".index").read_bytes() == scan.offset_index
    assert log.with_suffix(".timeindex").read_bytes() == scan.time_index


@pytest.fixture(scope="module")
def corpus_copy(corpus, tmp_path_factory) -> Path:
    return writable_copy(corpus, tmp_path_factory.mktemp("check") / "corpus")


def test_scan_predicts_recover_on_every_corpus_segment(corpus_copy):
    logs = sorted(corpus_copy.rglob("*.log"))
    assert len(logs) > 800
    for log in logs:
        _recover_and_compare(log)


@pytest.mark.parametrize("damage", ["cut-mid-batch", "garbage", "crc", "small-size"])
def test_scan_predicts_recover_on_damaged_segments(corpus, tmp_path, damage):
    part = writable_copy(corpus / "invoice-multiseg" / "invoice-0", tmp_path / "invoice-0")
    log = part / "00000000000000030626.log"
    batches = batch_positions(log)
    middle = batches[len(batches) // 2]
    if damage == "cut-mid-batch":
        os.truncate(log, middle[0] + middle[1] // 2)
    elif damage == "garbage":
        with open(log, "ab") as f:
            f.write(os.urandom(100))
    elif damage == "crc":
        flip_byte(log, middle[0] + middle[1] - 1)
    else:  # a size field below Kafka's minimum record overhead
        with open(log, "r+b") as f:
            f.seek(middle[0] + 8)
            f.write((5).to_bytes(4, "big"))
    scan = scan_for_recovery(str(log), 30626, CONFIG.index_interval_bytes,
                             CONFIG.segment_index_bytes)
    expected_kind = {"cut-mid-batch": "incomplete-batch", "garbage": None, "crc": "crc-mismatch",
                     "small-size": "corrupt-size"}[damage]
    if expected_kind:
        assert scan.invalid_tail.kind == expected_kind
        assert scan.valid_bytes == middle[0]
        assert scan.next_offset == middle[2]
    _recover_and_compare(log)


def test_a_tiny_index_interval_indexes_every_batch(corpus, tmp_path):
    part = writable_copy(corpus / "node-logx" / "topic-logx-001-0", tmp_path / "p")
    _recover_and_compare(part / "00000000000000000000.log", LogConfig(index_interval_bytes=0))


def test_corpus_indexes_pass_the_structural_check(corpus):
    checked = 0
    for log in sorted(corpus.rglob("*.log")):
        names = set(os.listdir(log.parent))
        base = offset_from_file(log)

        def locate(suffix, d=log.parent, b=log.name[:-4]):
            return str(d / (b + suffix)) if b + suffix in names else None
        problem = check_indexes(base, log.stat().st_size, locate)
        if locate(".index") and locate(".timeindex"):
            assert problem is None, (log, problem)
            checked += 1
        else:
            assert problem is not None
    assert checked > 150


def test_a_preallocated_index_left_by_an_interrupted_rebuild_is_rejected(corpus, tmp_path):
    part = writable_copy(corpus / "invoice-multiseg" / "invoice-0", tmp_path / "p")
    index = part / "00000000000000000000.index"
    with open(index, "ab") as f:  # what a rebuild killed half-way leaves: a zero-filled tail
        f.truncate(10 * 1024 * 1024)
    log = part / "00000000000000000000.log"
    problem = check_indexes(0, log.stat().st_size, lambda s: str(part / ("0" * 20 + s))
                            if (part / ("0" * 20 + s)).exists() else None)
    assert problem is not None and problem.suffix == ".index" and not problem.kafka
    assert "strictly increase" in problem.message


def test_read_next_offset_reports_trailing_bytes(corpus, tmp_path):
    part = writable_copy(corpus / "node-logx" / "topic-logx-001-0", tmp_path / "p")
    log = part / "00000000000000000000.log"
    size = log.stat().st_size
    with open(log, "ab") as f:
        f.write(b"\0" * 5)
    next_offset, end, problem = read_next_offset(str(log), 0)
    assert (next_offset, end) == (17, size)
    assert "5 bytes after the last complete batch" in problem


def test_index_classes_opened_read_only_create_nothing(tmp_path):
    with pytest.raises(FileUnreadableError):
        OffsetIndex(str(tmp_path / "00000000000000000000.index"))
    assert not list(tmp_path.iterdir())
