"""End offsets of data partitions: the checkpointed high watermark clamped to the log, or the
log end offset found from the .index's last entry (or a scan) up to the last valid batch."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.groups.end_offsets import EndOffsets, read_log_end
from pylogctl.groups.replicas import LogDirs
from pylogctl.storage.segment_check import read_next_offset


def scanned_end(partition_dir: Path) -> int:
    """The reference: every batch header of the last segment (segment_check.read_next_offset)."""
    logs = sorted(partition_dir.glob("*.log"))
    if not logs:
        return 0
    return read_next_offset(str(logs[-1]), int(logs[-1].name.split(".")[0]))[0]


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["smartassets-connect", "invoice-multiseg", "xpx-2016",
                                  "donaldy-271", "node-logx"])
def test_log_end_offset_of_every_corpus_partition_matches_a_full_scan(corpus, name):
    for part in sorted(p for p in (corpus / name).iterdir() if p.is_dir()):
        end = read_log_end(part)
        assert end.problem is None, part
        assert end.offset == scanned_end(part), part


def test_index_hint_is_checked_and_a_bad_one_falls_back_to_a_scan(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    data, positions, offset = b"", [], 100
    for i in range(30):
        b = RecordBatchBuilder(base_offset=offset)
        for _ in range(3):
            b.append(1, b"k", b"v" * 200)
        positions.append(len(data))
        data += b.build()
        offset = b.next_offset()
    (part / "00000000000000000100.log").write_bytes(data)
    index = part / "00000000000000000100.index"
    entry = lambda o, p: struct.pack(">ii", o - 100, p)  # noqa: E731
    for content in (entry(150, positions[16]),  # a good hint
                    entry(150, positions[16]) + bytes(8 * 100),  # crash: zero-filled tail
                    entry(150, positions[16] + 7),  # not a batch position
                    entry(50, positions[3]),  # below the base offset
                    b""):
        index.write_bytes(content)
        assert read_log_end(part).offset == offset == 190


def test_invalid_tail_is_cut_and_reported(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    b = RecordBatchBuilder(base_offset=0)
    b.append(1, b"k", b"v")
    good = b.build()
    (part / "00000000000000000000.log").write_bytes(good + good[:20])
    end = read_log_end(part)
    assert (end.offset, end.valid_bytes) == (1, len(good))
    assert f"byte position {len(good)}" in end.problem
    corrupt = bytearray(good + good)
    corrupt[len(good) + 30] ^= 1
    (part / "00000000000000000000.log").write_bytes(bytes(corrupt))
    end = read_log_end(part)
    assert end.offset == 1 and "CRC" in end.problem


@pytest.mark.corpus
def test_high_watermark_is_clamped_to_the_log_and_leo_is_the_log_end(corpus, tmp_path):
    xpx = LogDirs([corpus / "xpx-2016"])  # __consumer_offsets-40: HW 856, log end 860
    assert EndOffsets(xpx).get("__consumer_offsets", 40).offset == 856
    assert EndOffsets(xpx, "leo").get("__consumer_offsets", 40).offset == 860
    ksql = LogDirs([corpus / "ksql-kraft-2023"])  # HW 16 above an empty log
    found = EndOffsets(ksql).get("__transaction_state", 44)
    assert (found.offset, found.high_watermark_checkpoint, found.log_end_offset) == (0, 16, 0)
    assert EndOffsets(xpx).get("no-such-topic", 0).offset is None


def test_absent_checkpoint_entry_counts_as_the_log_start(tmp_path):
    log_dir = tmp_path / "d"
    part = log_dir / "t-0"
    part.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    b = RecordBatchBuilder(base_offset=40)
    b.append(1, b"k", b"v")
    (part / "00000000000000000040.log").write_bytes(b.build())
    found = EndOffsets(LogDirs([log_dir])).get("t", 0)
    assert (found.offset, found.log_end_offset) == (40, 41)

