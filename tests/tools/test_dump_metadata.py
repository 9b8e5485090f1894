"""Checkpoint and metadata files: every corpus file reads; malformed variants are reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pylogctl.storage.checkpoint import (CorruptCheckpointError, read_offset_checkpoint,
                                         write_checkpoint_atomically)
from pylogctl.tools.dump_metadata import METADATA_FILES, dump_metadata


def _run(path: Path):
    dump = dump_metadata(path)
    items = list(dump.items)
    return dump, items


@pytest.mark.corpus
def test_every_corpus_metadata_file_reads(corpus: Path):
    seen = {}
    for path in sorted(corpus.rglob("*")):
        if path.is_file() and path.name in METADATA_FILES:
            dump, items = _run(path)
            assert dump.error is None and "corrupt" not in dump.footer, (path, dump.footer)
            seen[dump.kind] = seen.get(dump.kind, 0) + 1
            if path.stat().st_size == 0:
                assert dump.footer.get("emptyFile") and items == []
    assert set(seen) == set(METADATA_FILES.values())
    assert seen["quorum-state"] == 6 and seen["partition-metadata"] >= 300


@pytest.mark.corpus
def test_checkpoint_values_from_the_catalogue(corpus: Path):
    cp = read_offset_checkpoint(corpus / "yuanliubei-src" / "cleaner-offset-checkpoint")
    assert [(e.topic, e.partition, e.offset) for e in cp.entries] == [("__consumer_offsets", 17, 58)]
    rep = read_offset_checkpoint(corpus / "xpx-2016" / "replication-offset-checkpoint")
    nonzero = {(e.topic, e.partition): e.offset for e in rep.entries if e.offset}
    assert nonzero == {("foo", 0): 204, ("topic1", 0): 5, ("__consumer_offsets", 40): 856,
                       ("TEST-TOPIC", 0): 21211}


@pytest.mark.parametrize("content,message", [
    ("1\n0\n", "Unrecognized version of the checkpoint file"),
    ("0\n2\nt 0 5\n", "Expected 2 entries in checkpoint file"),
    ("0\n1\nt zero 5\n", "Malformed line in checkpoint file"),
    ("0\n1\nt 0\n", "Malformed line in checkpoint file"),
    ("x\n", "Malformed line in checkpoint file"),
])
def test_malformed_checkpoints_are_reported(tmp_path, cli, content, message):
    path = tmp_path / "replication-offset-checkpoint"
    path.write_text(content)
    with pytest.raises(CorruptCheckpointError, match=message):
        read_offset_checkpoint(path)
    res = cli("dump-segment", path, path)
    assert res.code == 1
    assert res.lines.count(f"Dumping {path}") == 2  # reported, not fatal
    assert message in res.err and "Traceback" not in res.err


def test_malformed_metadata_files(tmp_path, cli):
    pm = tmp_path / "partition.metadata"
    pm.write_text("version: 0\n")
    qs = tmp_path / "quorum-state"
    qs.write_text('{"leaderId": 1,')
    ok = tmp_path / ".kafka_cleanshutdown"
    ok.write_text('{"version":0,"brokerEpoch":42}')
    res = cli("dump-segment", "-o", "json", pm, qs, ok)
    assert res.code == 1
    doc = json.loads(res.out)
    assert "lacks version or topic_id" in doc[0]["corrupt"]["message"]
    assert "Invalid JSON" in doc[1]["corrupt"]["message"]
    assert doc[2]["entries"] == [{"version": 0, "brokerEpoch": 42}]


def test_checkpoint_write_round_trip(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    write_checkpoint_atomically(path, ["orders 0 19", "t 1 7"])
    assert path.read_text() == "0\n2\norders 0 19\nt 1 7\n"
    cp = read_offset_checkpoint(path)
    assert [(e.topic, e.partition, e.offset) for e in cp.entries] == [("orders", 0, 19), ("t", 1, 7)]
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()
