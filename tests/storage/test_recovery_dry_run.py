"""``recover_read_only``: the real ``LogSegment.recover`` run over a ``.log`` without changing a
byte of the partition dir, reporting what recovering it in place does (what it cuts, where the
valid data ends and why, the offset after it, the indexes it writes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pylogctl.format.builder import build_batch
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.loader.recovery_dry_run import ScratchDir, recover_read_only
from pylogctl.storage.segment import LogSegment
from load_support import batch_positions, fingerprint, flip_byte, writable_copy

CONFIG = LogConfig()


def _dry_run_matches_recover(log: Path, base: int, config: LogConfig = CONFIG):
    before = fingerprint(log.parent)
    with ScratchDir() as scratch:
        scan = recover_read_only(str(log), base, config.index_interval_bytes,
                                 config.segment_index_bytes, scratch)
    assert fingerprint(log.parent) == before  # read-only
    with LogSegment.open(log.parent, base, config) as segment:
        truncated = segment.recover()
        next_offset = segment.read_next_offset()
    assert (scan.truncated_bytes, scan.next_offset) == (truncated, next_offset)
    assert log.with_suffix(".index").read_bytes() == scan.offset_index
    assert log.with_suffix(".timeindex").read_bytes() == scan.time_index
    return scan


@pytest.mark.parametrize("damage", ["cut-mid-batch", "garbage", "crc", "small-size"])
def test_a_damaged_segment_names_where_and_why_its_valid_data_ends(corpus, tmp_path, damage):
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
    scan = _dry_run_matches_recover(log, 30626)
    expected_kind = {"cut-mid-batch": "incomplete-batch", "garbage": None, "crc": "crc-mismatch",
                     "small-size": "corrupt-size"}[damage]
    if expected_kind:
        assert scan.invalid_tail.kind == expected_kind
        assert scan.invalid_tail.position == scan.valid_bytes == middle[0]
        assert scan.next_offset == middle[2]
    else:
        assert scan.valid_bytes == batches[-1][0] + batches[-1][1] and scan.invalid_tail


def test_a_tiny_index_interval_indexes_every_batch(corpus, tmp_path):
    part = writable_copy(corpus / "node-logx" / "topic-logx-001-0", tmp_path / "p")
    scan = _dry_run_matches_recover(part / "00000000000000000000.log", 0,
                                    LogConfig(index_interval_bytes=0))
    assert len(scan.offset_index) == 8 * (len(batch_positions(part / f"{0:020d}.log")) - 1)


def test_an_offset_going_back_empties_the_segment_as_kafka_does(tmp_path):
    """Kafka's InvalidOffsetException: the loader truncates the segment to its base."""
    log = tmp_path / f"{0:020d}.log"
    batches = [build_batch([(i, b"k", b"v" * 64)], base_offset=o) for i, o in
               enumerate((0, 1, 2, 1))]
    log.write_bytes(b"".join(batches))
    with ScratchDir() as scratch:
        scan = recover_read_only(str(log), 0, 1, CONFIG.segment_index_bytes, scratch)
    assert scan.invalid_offset.startswith("Attempt to append an offset 1 to position 2 no larger")
    assert scan.truncated_bytes == log.stat().st_size and scan.invalid_tail is None
    assert scan.valid_bytes == sum(len(b) for b in batches[:3])


def test_epochs_and_markers_are_reported(tmp_path):
    log = tmp_path / f"{0:020d}.log"
    log.write_bytes(build_batch([(0, b"k", b"v")], base_offset=0, partition_leader_epoch=3)
                    + build_batch([(0, b"k", b"v")], base_offset=1, partition_leader_epoch=3)
                    + build_batch([(0, b"k", b"v")], base_offset=2, partition_leader_epoch=5))
    with ScratchDir() as scratch:
        scan = recover_read_only(str(log), 0, CONFIG.index_interval_bytes,
                                 CONFIG.segment_index_bytes, scratch)
    assert scan.epoch_starts == ((3, 0), (5, 2)) and not scan.txn_markers
    assert scan.next_offset == 3 and scan.aborted_txns == ()
