"""The leader's append (Kafka's ``UnifiedLog.appendAsLeader`` with ``LogValidator``) and the
read side a broker serves from (``read`` with its isolation bounds, timestamp lookups, the last
stable offset).

Client batches come from kafka-python's own batch builder, so the tests check pylogctl against
a real client's bytes rather than against its own writer."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from pylogctl.errors import CorruptRecordError
from pylogctl.format.builder import build_end_txn_marker
from pylogctl.format.log_stream import iter_batches
from pylogctl.format.record_batch import RecordBatch
from pylogctl.storage.checkpoint import EpochEntry
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.list_offsets import MAX_TIMESTAMP
from pylogctl.storage.loader.log_loader import plan_load
from pylogctl.storage.log import FetchIsolation, Log, OffsetOutOfRangeError
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_validator import (InvalidRecordError, RecordBatchTooLargeError,
                                           RecordTooLargeError, RecordValidationError,
                                           UnsupportedForMessageFormatError)
from pylogctl.storage.producer_append import AppendOrigin, OutOfOrderSequenceError
from wire import legacy_message

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def client_batch(values: list[bytes | None], *, keys: list[bytes | None] | None = None,
                 codec: str = "none", producer_id: int = -1, producer_epoch: int = -1,
                 base_sequence: int = -1, transactional: bool = False,
                 timestamp: int | None = None) -> bytes:
    """A batch as kafka-python's producer builds it (base offset 0, no leader epoch)."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=CODECS[codec], is_transactional=transactional,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        batch_size=1 << 22)
    ts = now_ms() if timestamp is None else timestamp
    for i, value in enumerate(values):
        key = keys[i] if keys is not None else f"key-{i}".encode()
        builder.append(i, ts + i, key, value, [])
    return bytes(builder.build())


@pytest.fixture
def part(tmp_path: Path) -> Path:
    directory = tmp_path / "logdir" / "orders-0"
    directory.mkdir(parents=True)
    return directory


def disk_batches(part: Path) -> list[RecordBatch]:
    out = []
    for log in sorted(part.glob("*.log")):
        data = log.read_bytes()
        out += [RecordBatch(data, b.position) for b in iter_batches(data)]
    return out


def test_uncompressed_append_patches_offsets_and_epoch_in_place(part):
    first = client_batch([b"a", b"b", b"c"])
    second = client_batch([b"d", b"e"])
    with Log.load(part) as log:
        one = log.append_as_leader(first, leader_epoch=4)
        two = log.append_as_leader(second, leader_epoch=4)
        assert (one.first_offset, one.last_offset, two.first_offset, two.last_offset) == \
            (0, 2, 3, 4)
        assert log.log_end_offset == 5 and not one.duplicate and one.bytes == len(first)
        assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(4, 0)]
    written = disk_batches(part)
    assert [(b.base_offset, b.partition_leader_epoch) for b in written] == [(0, 4), (3, 4)]
    raw = written[1].raw_bytes()
    # only the base offset and the leader epoch differ, and neither is under the CRC
    assert raw[8:12] == second[8:12] and raw[16:] == second[16:]
    assert struct.unpack_from(">q", raw)[0] == 3 and struct.unpack_from(">i", raw, 12)[0] == 4
    assert all(b.is_valid for b in written)
    assert [r.offset for b in written for r in b.records()] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_append_keeps_the_producers_compressed_bytes(part, codec):
    values = [f"value-{i}".encode() * 20 for i in range(50)]
    batch = client_batch(values, codec=codec)
    with Log.load(part) as log:
        log.append_as_leader(client_batch([b"x"]), leader_epoch=0)
        info = log.append_as_leader(batch, leader_epoch=0)
        assert (info.first_offset, info.last_offset) == (1, 50)
    written = disk_batches(part)[1]
    assert written.raw_bytes()[16:] == batch[16:]  # payload and CRC untouched
    assert written.is_valid and written.codec.name.lower() == codec
    assert [r.value for r in written.records()] == values
    assert [r.offset for r in written.records()] == list(range(1, 51))


def test_log_append_time_topic_rewrites_max_timestamp_and_crc(part):
    config = LogConfig(message_timestamp_type="LogAppendTime")
    batch = client_batch([b"a", b"b"], timestamp=1_000)
    with Log.load(part, config) as log:
        before = now_ms()
        info = log.append_as_leader(batch, leader_epoch=0)
        assert before <= info.log_append_time <= now_ms()
        assert info.max_timestamp == info.log_append_time
    written = disk_batches(part)[0]
    assert written.is_valid and written.crc != struct.unpack_from(">I", batch, 17)[0]
    assert written.timestamp_type.name == "LOG_APPEND_TIME"
    assert {r.timestamp for r in written.records()} == {info.log_append_time}


def test_topic_compression_type_recompresses(part):
    config = LogConfig(compression_type="gzip")
    with Log.load(part, config) as log:
        info = log.append_as_leader(client_batch([b"a" * 100, b"b" * 100], producer_id=7,
                                                 producer_epoch=0, base_sequence=0), 2)
        assert (info.first_offset, info.last_offset) == (0, 1)
    written = disk_batches(part)[0]
    assert written.codec.name == "GZIP" and written.is_valid
    assert (written.producer_id, written.base_sequence, written.partition_leader_epoch) == \
        (7, 0, 2)
    assert [r.value for r in written.records()] == [b"a" * 100, b"b" * 100]


def test_retried_idempotent_batch_returns_the_original_offsets(part):
    first = client_batch([b"a", b"b"], producer_id=1000, producer_epoch=0, base_sequence=0)
    second = client_batch([b"c"], producer_id=1000, producer_epoch=0, base_sequence=2)
    with Log.load(part) as log:
        log.append_as_leader(client_batch([b"other"]), 0)
        original = log.append_as_leader(first, 0)
        log.append_as_leader(second, 0)
        retry = log.append_as_leader(first, 0)
        assert retry.duplicate and (retry.first_offset, retry.last_offset) == (1, 2)
        assert (original.first_offset, original.last_offset) == (1, 2)
        assert log.log_end_offset == 4
        with pytest.raises(OutOfOrderSequenceError):
            log.append_as_leader(client_batch([b"gap"], producer_id=1000, producer_epoch=0,
                                              base_sequence=7), 0)
        assert log.log_end_offset == 4
    assert len(disk_batches(part)) == 3


def test_duplicates_are_recognised_after_a_restart(part):
    batch = client_batch([b"a"], producer_id=5, producer_epoch=3, base_sequence=0)
    with Log.load(part) as log:
        log.append_as_leader(batch, 0)
    with Log.load(part, had_clean_shutdown=True, recovery_point_checkpoint=1) as log:
        assert log.append_as_leader(batch, 1).duplicate
        nxt = log.append_as_leader(client_batch([b"b"], producer_id=5, producer_epoch=3,
                                                base_sequence=1), 1)
        assert (nxt.first_offset, nxt.duplicate) == (1, False)
        assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(1, 1)]


@pytest.mark.parametrize("mutate, error", [
    (lambda b: struct.pack(">q", 5) + b[8:], InvalidRecordError),  # base offset not 0
    (lambda b: b[:-1] + bytes([b[-1] ^ 1]), CorruptRecordError),  # CRC mismatch
    (lambda b: b[:21] + struct.pack(">h", 0x20) + b[23:], (InvalidRecordError, CorruptRecordError)),
])
def test_invalid_client_batches_are_refused(part, mutate, error):
    with Log.load(part) as log:
        with pytest.raises(error):
            log.append_as_leader(mutate(client_batch([b"a"])), 0)
        assert log.log_end_offset == 0 and log.active_segment.size == 0


def test_control_batch_from_a_client_is_refused(part):
    marker = build_end_txn_marker(offset=0, producer_id=1, producer_epoch=0, commit=True,
                                  coordinator_epoch=0, timestamp=now_ms())
    with Log.load(part) as log:
        with pytest.raises(InvalidRecordError, match="control records"):
            log.append_as_leader(marker, 0)


def test_legacy_magic_is_refused(part):
    with Log.load(part) as log:
        with pytest.raises(UnsupportedForMessageFormatError):
            log.append_as_leader(legacy_message(0, 1, b"k", b"v", timestamp=now_ms()), 0)


def test_compacted_topic_needs_keys_and_names_the_records(part):
    config = LogConfig(cleanup_policy=("compact",))
    with Log.load(part, config) as log:
        with pytest.raises(RecordValidationError) as caught:
            log.append_as_leader(client_batch([b"a", b"b", b"c"], keys=[b"k", None, None]), 0)
    assert [e.batch_index for e in caught.value.record_errors] == [1, 2]
    assert not caught.value.invalid_timestamp


def test_timestamps_out_of_range_are_invalid_timestamps(part):
    config = LogConfig(message_timestamp_before_max_ms=60_000)
    with Log.load(part, config) as log:
        with pytest.raises(RecordValidationError) as caught:
            log.append_as_leader(client_batch([b"old"], timestamp=now_ms() - 3_600_000), 0)
    assert caught.value.invalid_timestamp


def test_size_limits(part):
    with Log.load(part, LogConfig(max_message_bytes=200)) as log:
        with pytest.raises(RecordTooLargeError):
            log.append_as_leader(client_batch([b"x" * 300]), 0)
    with Log.load(part, LogConfig(segment_bytes=150)) as log:
        with pytest.raises(RecordBatchTooLargeError):
            log.append_as_leader(client_batch([b"x" * 200]), 0)


def test_appends_roll_segments_and_load_again_cleanly(part):
    config = LogConfig(segment_bytes=1024, index_interval_bytes=100)
    with Log.load(part, config) as log:
        for i in range(30):
            log.append_as_leader(client_batch([b"v" * 90, b"w" * 90]), i // 10)
        assert len(log.segments) > 3
        log.update_high_watermark(log.log_end_offset)
        end, hw, rp = log.log_end_offset, log.high_watermark, log.recovery_point
        log.flush()
    plan = plan_load(part, recovery_point_checkpoint=end, high_watermark_checkpoint=hw,
                     had_clean_shutdown=True, config=config)
    assert plan.is_empty and plan.log_end_offset == end == 60
    assert rp <= end
    with Log.load(part, config, recovery_point_checkpoint=end, high_watermark_checkpoint=hw,
                  had_clean_shutdown=True) as log:
        assert [e.epoch for e in log.leader_epoch_cache.epoch_entries()] == [0, 1, 2]
        assert log.read(0, 1 << 20).size > 0


def test_read_stops_at_the_high_watermark(part):
    with Log.load(part) as log:
        log.append_as_leader(client_batch([b"a", b"b"]), 0)
        log.update_high_watermark(log.log_end_offset)
        log.append_as_leader(client_batch([b"c"]), 0)
        info = log.read(0, 1 << 20)
        assert [r.value for b in iter_batches(info.read_bytes()) for r in b.records()] == \
            [b"a", b"b"]
        assert log.read(2, 1 << 20).size == 0  # at the high watermark: nothing yet
        full = log.read(0, 1 << 20, FetchIsolation.LOG_END)
        assert full.size == log.active_segment.size
        with pytest.raises(OffsetOutOfRangeError):
            log.read(4, 100)


def test_read_committed_stops_at_the_lso_and_lists_aborted_transactions(part):
    with Log.load(part) as log:
        def append(batch, origin=AppendOrigin.CLIENT):
            info = log.append_as_leader(batch, 0, origin)
            log.update_high_watermark(log.log_end_offset)
            return info
        append(client_batch([b"plain"]))
        append(client_batch([b"t1", b"t2"], producer_id=9, producer_epoch=0, base_sequence=0,
                            transactional=True))
        assert log.last_stable_offset == 1
        assert log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED).size == \
            disk_batches(part)[0].size_in_bytes
        append(build_end_txn_marker(offset=0, producer_id=9, producer_epoch=0, commit=False,
                                    coordinator_epoch=0, timestamp=now_ms()),
               AppendOrigin.COORDINATOR)
        assert log.last_stable_offset == log.log_end_offset == 4
        info = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED)
        assert [(t.producer_id, t.first_offset) for t in info.aborted_transactions] == [(9, 1)]
        assert info.size == log.active_segment.size


def test_timestamp_lookups(part):
    with Log.load(part) as log:
        base = now_ms() - 10_000
        for i in range(5):
            log.append_as_leader(client_batch([b"a", b"b"], timestamp=base + i * 1000), 0)
        end = log.log_end_offset
        found = log.fetch_offset_by_timestamp(base + 2000, end)
        assert (found.offset, found.timestamp, found.leader_epoch) == (4, base + 2000, 0)
        assert log.fetch_offset_by_timestamp(base + 2001, end).offset == 5
        assert log.fetch_offset_by_timestamp(base + 99_000, end) is None
        assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP, end).offset == 9
        # at or past the last fetchable offset: ListOffsets answers -1
        assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP, 9) is None
        assert log.fetch_offset_by_timestamp(base + 2000, 4) is None
        assert log.end_offset_for_epoch(0) == (0, 10)


def test_follower_append_still_takes_offsets_as_given(part, tmp_path):
    leader = tmp_path / "other" / "orders-0"
    leader.mkdir(parents=True)
    with Log.load(leader) as log:
        log.append_as_leader(client_batch([b"a", b"b"]), 3)
    data = (leader / f"{0:020d}.log").read_bytes()
    with Log.load(part) as log:
        info = log.append_as_follower(data)
        assert (info.first_offset, info.last_offset) == (0, 1)
        assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(3, 0)]
    with FileRecords(part / f"{0:020d}.log") as records:
        assert [b.base_offset for b in records.batches()] == [0]
