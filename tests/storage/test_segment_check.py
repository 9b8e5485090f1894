"""The index check must accept every index Kafka wrote in the corpus and reject what an
interrupted rebuild leaves; ``read_next_offset`` reads a ``.log`` by its headers."""

from __future__ import annotations

import os

import pytest

from pylogctl.errors import FileUnreadableError
from pylogctl.storage.naming import offset_from_file
from pylogctl.storage.offset_index import OffsetIndex
from pylogctl.storage.segment_check import check_indexes, read_next_offset
from load_support import writable_copy


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
