"""Producer-state ``.snapshot`` writer: the inverse of the reader, byte for byte as Kafka writes."""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest
from hypothesis import given, settings, strategies as st

from pylogctl.format.producer_snapshot import (CorruptSnapshotError, ProducerSnapshotEntry,
                                               read_producer_snapshot, write_producer_snapshot)

INT16 = st.integers(-(1 << 15), (1 << 15) - 1)
INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
entries_st = st.lists(st.builds(
    ProducerSnapshotEntry, producer_id=INT64, producer_epoch=INT16, coordinator_epoch=INT32,
    last_timestamp=INT64, current_txn_first_offset=st.none() | st.integers(0, (1 << 63) - 1),
    last_sequence=INT32, last_offset=INT64, offset_delta=INT32), max_size=8)


def test_layout_is_version_crc_then_counted_entries():
    entry = ProducerSnapshotEntry(producer_id=7, producer_epoch=2, coordinator_epoch=5,
                                  last_timestamp=1700, current_txn_first_offset=30,
                                  last_sequence=10, last_offset=41, offset_delta=3)
    data = write_producer_snapshot([entry])
    body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", 7, 2, 10, 41, 3, 1700, 5, 30)
    assert data == struct.pack(">hI", 1, crc32c.crc32c(body)) + body


def test_no_open_transaction_is_written_as_minus_one():
    entry = ProducerSnapshotEntry(8, 0, -1, 1800, None, -1, -1, 0)
    data = write_producer_snapshot([entry])
    assert struct.unpack_from(">q", data, len(data) - 8) == (-1,)
    assert read_producer_snapshot(data) == [entry]


def test_empty_snapshot_is_ten_bytes():
    assert write_producer_snapshot([]) == struct.pack(">hIi", 1, crc32c.crc32c(b"\0\0\0\0"), 0)


@settings(max_examples=200, deadline=None)
@given(entries_st)
def test_write_then_read_round_trips(entries):
    data = write_producer_snapshot(entries)
    assert read_producer_snapshot(data) == entries
    assert len(data) == 10 + 46 * len(entries)


def test_a_flipped_bit_after_writing_fails_the_crc():
    data = bytearray(write_producer_snapshot([ProducerSnapshotEntry(1, 0, 0, 5, None, 0, 0, 0)]))
    data[20] ^= 0x10
    with pytest.raises(CorruptSnapshotError, match="CRC is no longer valid"):
        read_producer_snapshot(bytes(data))


@pytest.mark.corpus
def test_every_corpus_snapshot_is_rewritten_byte_for_byte(corpus: Path):
    snapshots = sorted(corpus.rglob("*.snapshot"))
    assert snapshots
    with_entries = 0
    for path in snapshots:
        data = path.read_bytes()
        entries = read_producer_snapshot(data)
        with_entries += bool(entries)
        assert write_producer_snapshot(entries) == data, path
    assert with_entries == 6  # airquality-kraft 1, donaldy-271 1, stocksys-kraft 4
