"""``.txnindex`` and producer ``.snapshot`` dumps, from hand-built files and the corpus."""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest

from pylogctl.format.producer_snapshot import CorruptSnapshotError, read_producer_snapshot

ENTRY = struct.Struct(">qhiqiqiq")


def _snapshot(entries, version=1) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(ENTRY.pack(*e) for e in entries)
    return struct.pack(">hI", version, crc32c.crc32c(body)) + body


def test_producer_snapshot_lines(tmp_path, cli):
    path = tmp_path / "00000000000000000042.snapshot"
    path.write_bytes(_snapshot([(7, 2, 10, 41, 3, 1700, 5, -1), (8, 0, -1, -1, 0, 1800, -1, 30)]))
    res = cli("dump-segment", path)
    assert res.code == 0
    assert res.lines[1:] == [
        "producerId: 7 producerEpoch: 2 coordinatorEpoch: 5 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 1700 firstSequence: 7 lastSequence: 10 lastOffset: 41 "
        "offsetDelta: 3 timestamp: 1700",
        "producerId: 8 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: "
        "OptionalLong[30] lastTimestamp: 1800",
    ]


def test_first_sequence_wraps(tmp_path):
    e = read_producer_snapshot(_snapshot([(1, 0, 2, 10, 5, 0, 0, -1)]))[0]
    assert e.first_sequence == 0x7FFFFFFF - 3 + 1


def test_corrupt_snapshot_is_reported_not_fatal(tmp_path, cli):
    data = bytearray(_snapshot([(7, 2, 10, 41, 3, 1700, 5, -1)]))
    data[-1] ^= 1
    bad = tmp_path / "00000000000000000042.snapshot"
    bad.write_bytes(bytes(data))
    other = tmp_path / "00000000000000000050.snapshot"
    other.write_bytes(_snapshot([]))
    res = cli("dump-segment", bad, other)
    assert res.code == 1
    assert res.lines == [f"Dumping {bad}", f"Dumping {other}"]
    assert res.err.startswith("Snapshot is corrupt (CRC is no longer valid). Stored crc: ")
    with pytest.raises(CorruptSnapshotError, match="Snapshot failed schema validation: "
                                                   "Snapshot contained an unknown file version 2"):
        read_producer_snapshot(_snapshot([], version=2))
    with pytest.raises(CorruptSnapshotError, match="Snapshot failed schema validation"):
        read_producer_snapshot(_snapshot([(1, 0, 0, 0, 0, 0, 0, 0)])[:-3])


def test_txn_index_lines_and_partial_tail(tmp_path, cli):
    path = tmp_path / "00000000000000000000.txnindex"
    rows = [(0, 5, 10, 20, 8), (0, 6, 30, 31, 30)]
    path.write_bytes(b"".join(struct.pack(">hqqqq", *r) for r in rows) + b"\x00" * 10)
    res = cli("dump-segment", path)
    assert res.code == 0
    assert res.lines[1:] == ["version: 0 producerId: 5 firstOffset: 10 lastOffset: 20 "
                             "lastStableOffset: 8",
                             "version: 0 producerId: 6 firstOffset: 30 lastOffset: 31 "
                             "lastStableOffset: 30"]
    path.write_bytes(struct.pack(">hqqqq", 3, 5, 10, 20, 8))
    res = cli("dump-segment", path)
    assert res.code == 1 and "Unexpected aborted transaction version 3" in res.err


@pytest.mark.corpus
def test_every_corpus_snapshot_reads(corpus: Path):
    snaps = sorted(corpus.rglob("*.snapshot"))
    assert len(snaps) == 165  # the catalogue's count
    with_entries = 0
    for path in snaps:
        entries = read_producer_snapshot(path.read_bytes())
        with_entries += bool(entries)
    assert with_entries == 6  # the catalogue: airquality-kraft 1, stocksys-kraft 4, one more
