"""v2 record batches: our builder and reader against kafka-python and aiokafka as oracles."""

from __future__ import annotations

import contextlib
import struct
import types
from unittest import mock

import cramjam
import crc32c as crc32c_lib
import pytest
from hypothesis import given, settings, strategies as st

from pylogctl.errors import UsageError
from pylogctl.format.builder import RecordBatchBuilder, build_batch, build_end_txn_marker
from pylogctl.format.compression import Codec
from pylogctl.format.control import (ControlRecordType, parse_control_key, parse_end_txn_marker)
from pylogctl.format.log_stream import iter_batches, valid_bytes_end
from pylogctl.format.record import Header, Record, TimestampType
from pylogctl.format.record_batch import RecordBatch

INT32_MAX = (1 << 31) - 1
SETTINGS = settings(max_examples=150, deadline=None)

# -- strategies ------------------------------------------------------------------------------

blobs = st.none() | st.binary(max_size=40)
header_keys = st.text(max_size=8)  # unicode, never surrogates (those cannot be UTF-8 encoded)
headers_st = st.lists(st.tuples(header_keys, st.none() | st.binary(max_size=10)), max_size=3)
timestamps = st.one_of(
    st.integers(1_700_000_000_000 - 10**6, 1_700_000_000_000 + 10**6),  # realistic, non-monotonic
    st.integers(0, 1 << 50),
    st.just(-1),  # RecordBatch.NO_TIMESTAMP
)
record_st = st.tuples(timestamps, blobs, blobs, headers_st)
records_st = st.lists(record_st, min_size=1, max_size=15)
# aiokafka's Cython builder takes a first timestamp of -1 for "unset" and then writes the next
# record's timestamp as baseTimestamp, so -1 timestamps cannot be fed to it
records_no_ts_sentinel_st = st.lists(
    st.tuples(st.integers(0, 1 << 50), blobs, blobs, headers_st), min_size=1, max_size=15)
gaps_st = st.lists(st.integers(0, 3), min_size=15, max_size=15)
producer_st = st.one_of(
    st.just((-1, -1, -1, False)),
    st.tuples(st.integers(0, (1 << 63) - 1), st.integers(0, 32767),
              st.one_of(st.integers(0, INT32_MAX), st.integers(INT32_MAX - 40, INT32_MAX)),
              st.booleans()),
)


@st.composite
def batch_options(draw, codecs=tuple(Codec)):
    pid, epoch, seq, txn = draw(producer_st)
    opts = dict(base_offset=draw(st.integers(0, 1 << 40)), codec=draw(st.sampled_from(codecs)),
                producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=txn,
                partition_leader_epoch=draw(st.sampled_from([-1, 0, 7, INT32_MAX])))
    if draw(st.booleans()):
        opts["timestamp_type"] = TimestampType.LOG_APPEND_TIME
        opts["log_append_time"] = draw(st.integers(0, 1 << 45))
    if draw(st.integers(0, 3)) == 0:
        opts["delete_horizon_ms"] = draw(st.integers(0, 1 << 45))
    return opts


# -- helpers ---------------------------------------------------------------------------------

def offsets_for(n: int, gaps: list[int]) -> list[int]:
    out, cur = [], 0
    for i in range(n):
        cur += gaps[i] if i else 0
        out.append(cur)
        cur += 1
    return out


def build_ours(records, deltas, **opts) -> bytes:
    b = RecordBatchBuilder(**opts)
    for delta, (ts, key, value, headers) in zip(deltas, records):
        b.append_with_offset(opts.get("base_offset", 0) + delta, ts, key, value, headers)
    return b.build()


def expected_records(records, deltas, opts) -> list[Record]:
    base_seq = opts.get("base_sequence", -1)
    lat = opts.get("log_append_time") if opts.get("timestamp_type") == TimestampType.LOG_APPEND_TIME else None
    return [Record(opts.get("base_offset", 0) + d, ts if lat is None else lat, key, value,
                   tuple(Header(k, v) for k, v in headers),
                   -1 if base_seq < 0 else (base_seq + d) % (1 << 31), 0)
            for d, (ts, key, value, headers) in zip(deltas, records)]


def as_tuples(recs):
    return [(r.offset, r.timestamp, None if r.key is None else bytes(r.key),
             None if r.value is None else bytes(r.value),
             [(k, None if v is None else bytes(v)) for k, v in r.headers]) for r in recs]


@contextlib.contextmanager
def kafka_python_snappy():
    """kafka-python needs python-snappy; without it, let cramjam's raw codec stand in."""
    import kafka.codec as kcodec
    if kcodec.has_snappy():
        yield
        return
    shim = types.SimpleNamespace(compress=lambda b: bytes(cramjam.snappy.compress_raw(b)),
                                 decompress=lambda b: bytes(cramjam.snappy.decompress_raw(b)))
    with mock.patch.object(kcodec, "snappy", shim):
        yield


def read_with_kafka_python(data: bytes):
    from kafka.record import MemoryRecords
    mr = MemoryRecords(bytes(data))
    batch = mr.next_batch()
    assert mr.next_batch() is None
    assert batch.validate_crc()
    with kafka_python_snappy():
        recs = list(batch)
    return batch, recs


def read_with_aiokafka(data: bytes):
    from aiokafka.record.default_records import DefaultRecordBatch
    batch = DefaultRecordBatch(bytes(data))
    assert batch.validate_crc()
    return batch, list(batch)


def only_batch(data) -> RecordBatch:
    batches = list(iter_batches(data))
    assert len(batches) == 1
    assert isinstance(batches[0], RecordBatch)
    return batches[0]


# -- round trip against all three readers ----------------------------------------------------

@SETTINGS
@given(records_st, gaps_st, batch_options())
def test_round_trip_three_readers(records, gaps, opts):
    deltas = offsets_for(len(records), gaps)
    data = build_ours(records, deltas, **opts)
    expected = expected_records(records, deltas, opts)
    lat = opts.get("log_append_time")
    horizon = opts.get("delete_horizon_ms")

    # ours
    batch = only_batch(data)
    assert batch.records() == expected
    assert list(batch) == expected
    assert batch.magic == 2 and batch.is_valid and batch.size_in_bytes == len(data)
    assert batch.crc == crc32c_lib.crc32c(data[21:])
    assert batch.codec is opts["codec"]
    assert batch.base_offset == opts["base_offset"]
    assert batch.last_offset == opts["base_offset"] + deltas[-1]
    assert batch.next_offset == batch.last_offset + 1
    assert batch.records_count == batch.count == len(records)
    assert batch.partition_leader_epoch == opts["partition_leader_epoch"]
    assert batch.producer_id == opts["producer_id"]
    assert batch.producer_epoch == opts["producer_epoch"]
    assert batch.base_sequence == opts["base_sequence"]
    assert batch.last_sequence == (-1 if opts["base_sequence"] < 0 else expected[-1].sequence)
    assert batch.is_transactional == opts["is_transactional"]
    assert not batch.is_control
    assert batch.delete_horizon_ms == horizon
    assert batch.base_timestamp == (records[0][0] if horizon is None else horizon)
    if lat is not None:
        assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
        assert batch.max_timestamp == lat
    else:
        assert batch.timestamp_type is TimestampType.CREATE_TIME
        assert batch.max_timestamp == max(max(r[0] for r in records), -1)
    # the same bytes through a memoryview, at a non-zero position, after another batch
    buf = memoryview(b"\x00" * 5 + data + data)
    two = list(iter_batches(buf, start=5))
    assert [b.position for b in two] == [5, 5 + len(data)]
    assert two[1].records() == expected
    assert valid_bytes_end(buf, 5) == len(buf)
    assert [r for b in two for r in b.records()] == expected * 2

    # kafka-python
    kbatch, krecs = read_with_kafka_python(data)
    assert as_tuples(krecs) == as_tuples(expected)
    assert kbatch.base_offset == opts["base_offset"]
    assert kbatch.compression_type == int(opts["codec"])
    assert kbatch.timestamp_type == (1 if lat is not None else 0)
    assert kbatch.is_transactional == opts["is_transactional"]
    assert (kbatch.producer_id, kbatch.producer_epoch, kbatch.base_sequence) == (
        opts["producer_id"], opts["producer_epoch"], opts["base_sequence"])
    assert kbatch.last_offset_delta == deltas[-1]

    # aiokafka
    abatch, arecs = read_with_aiokafka(data)
    assert as_tuples(arecs) == as_tuples(expected)
    assert abatch.compression_type == int(opts["codec"])
    assert abatch.next_offset == batch.next_offset
    assert abatch.is_transactional == opts["is_transactional"]


# -- byte-for-byte against kafka-python's builder --------------------------------------------

@SETTINGS
@given(records_st, gaps_st, producer_st, st.integers(0, 1 << 40), st.sampled_from([-1, 0, 5]))
def test_uncompressed_bytes_equal_kafka_python(records, gaps, producer, base_offset, leader_epoch):
    from kafka.record.default_records import DefaultRecordBatchBuilder
    pid, epoch, seq, txn = producer
    deltas = offsets_for(len(records), gaps)
    ours = build_ours(records, deltas, base_offset=base_offset, producer_id=pid, producer_epoch=epoch,
                      base_sequence=seq, is_transactional=txn, partition_leader_epoch=leader_epoch)
    kb = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=txn, producer_id=pid,
                                   producer_epoch=epoch, base_sequence=seq, batch_size=1 << 24)
    for delta, (ts, key, value, headers) in zip(deltas, records):
        assert kb.append(delta, ts, key, value, headers) is not None
    theirs = bytearray(kb.build())
    # kafka-python leaves baseOffset and partitionLeaderEpoch (neither is covered by the CRC) to the
    # broker and writes 0; Kafka's Java producer writes -1 for the epoch, as we do.
    assert theirs[0:8] == bytes(8) and theirs[12:16] == bytes(4)
    struct.pack_into(">q", theirs, 0, base_offset)
    struct.pack_into(">i", theirs, 12, leader_epoch)
    assert ours == bytes(theirs)


def test_default_leader_epoch_is_minus_one_like_java():
    data = build_batch([(1700000000000, b"key", b"value")])
    assert data[12:16] == b"\xff\xff\xff\xff"
    # 61-byte header + 15-byte record (length, attributes, two deltas, key/value lengths and
    # bytes, header count), as Kafka's DefaultRecordBatch.sizeInBytes gives
    assert len(data) == 76


def test_builder_docstring_example():
    import doctest
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(RecordBatchBuilder, "RecordBatchBuilder", globs={"RecordBatchBuilder": RecordBatchBuilder}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_known_bytes_single_record():
    """One record assembled by hand from the protocol description."""
    data = build_batch([(1000, b"k", b"v", [("h", b"x")])], base_offset=3)
    body = bytes([0]) + b"\x00" + b"\x00" + b"\x02k" + b"\x02v" + b"\x02" + b"\x02h" + b"\x02x"
    rec = bytes([len(body) * 2]) + body
    after_crc = struct.pack(">hiqqqhii", 0, 0, 1000, 1000, -1, -1, -1, 1) + rec
    crc = crc32c_lib.crc32c(after_crc)
    expected = struct.pack(">qiibI", 3, 4 + 1 + 4 + len(after_crc), -1, 2, crc) + after_crc
    assert data == expected


# -- batches written by the other clients, read by us ----------------------------------------

FILLER = (1_700_000_000_000, b"filler", b"abcdefgh" * 100, [])  # makes compression pay off


@SETTINGS
@given(records_st, gaps_st, st.sampled_from([1, 2, 3, 4]), producer_st)
def test_kafka_python_compressed_batches_read_by_us(records, gaps, codec_id, producer):
    from kafka.record.default_records import DefaultRecordBatchBuilder
    records = [FILLER] + records
    deltas = offsets_for(len(records), gaps + [0])
    pid, epoch, seq, txn = producer
    kb = DefaultRecordBatchBuilder(magic=2, compression_type=codec_id, is_transactional=txn,
                                   producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                                   batch_size=1 << 24)
    for delta, (ts, key, value, headers) in zip(deltas, records):
        kb.append(delta, ts, key, value, headers)
    with kafka_python_snappy():
        data = bytes(kb.build())
    batch = only_batch(data)
    assert batch.codec == codec_id  # kafka-python drops codecs that do not pay off: the filler pays
    assert batch.is_valid
    expected = expected_records(records, deltas, dict(base_sequence=seq))
    assert batch.records() == expected
    _, krecs = read_with_kafka_python(data)
    assert as_tuples(krecs) == as_tuples(batch.records())


@SETTINGS
@given(records_no_ts_sentinel_st, gaps_st, st.sampled_from([0, 1, 2, 3, 4]), producer_st)
def test_aiokafka_batches_read_by_us(records, gaps, codec_id, producer):
    from aiokafka.record.default_records import DefaultRecordBatchBuilder
    deltas = offsets_for(len(records), gaps)
    pid, epoch, seq, txn = producer
    ab = DefaultRecordBatchBuilder(magic=2, compression_type=codec_id, is_transactional=int(txn),
                                   producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                                   batch_size=1 << 24)
    for delta, (ts, key, value, headers) in zip(deltas, records):
        ab.append(delta, ts, key, value, headers)
    data = bytes(ab.build())
    batch = only_batch(data)
    assert batch.is_valid
    assert batch.codec == codec_id
    assert batch.is_transactional == txn
    assert batch.records() == expected_records(records, deltas, dict(base_sequence=seq))


# -- sequences -------------------------------------------------------------------------------

def test_sequence_wraps_at_int32_max():
    b = RecordBatchBuilder(producer_id=9, producer_epoch=0, base_sequence=INT32_MAX - 1)
    for _ in range(4):
        b.append(5, None, b"v")
    batch = only_batch(b.build())
    assert [r.sequence for r in batch.records()] == [INT32_MAX - 1, INT32_MAX, 0, 1]
    assert batch.last_sequence == 1


# -- control batches -------------------------------------------------------------------------

@SETTINGS
@given(st.integers(0, 1 << 50), st.integers(0, (1 << 63) - 1), st.integers(0, 32767), st.booleans(),
       st.integers(-1, INT32_MAX), st.integers(0, 1 << 45), st.sampled_from([-1, 0, 12]))
def test_end_txn_markers(offset, pid, epoch, commit, coord_epoch, ts, leader_epoch):
    data = build_end_txn_marker(offset=offset, producer_id=pid, producer_epoch=epoch, commit=commit,
                                coordinator_epoch=coord_epoch, timestamp=ts,
                                partition_leader_epoch=leader_epoch)
    ctype = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    batch = only_batch(data)
    assert batch.is_valid and batch.is_control and batch.is_transactional
    assert batch.codec is Codec.NONE
    assert (batch.base_offset, batch.last_offset, batch.records_count) == (offset, offset, 1)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (pid, epoch, -1)
    assert batch.partition_leader_epoch == leader_epoch
    assert batch.attributes == 0x30
    (rec,) = batch.records()
    key = struct.pack(">hh", 0, int(ctype))
    value = struct.pack(">hi", 0, coord_epoch)
    assert rec == Record(offset, ts, key, value, (), -1, 0)
    assert parse_control_key(rec.key) == (0, int(ctype))
    marker = parse_end_txn_marker(ControlRecordType.from_id(parse_control_key(rec.key)[1]), rec.value)
    assert marker.control_type is ctype and marker.coordinator_epoch == coord_epoch

    # kafka-python does not skip control records: it yields ControlRecord objects
    from kafka.record.default_records import ControlRecord
    kbatch, krecs = read_with_kafka_python(data)
    assert kbatch.is_control_batch and kbatch.is_transactional
    (krec,) = krecs
    assert isinstance(krec, ControlRecord)
    assert (krec.offset, krec.timestamp, krec.key, krec.value) == (offset, ts, key, value)
    assert (krec.version, krec.type, krec.commit, krec.abort) == (0, int(ctype), commit, not commit)

    # aiokafka's batch reader yields the control record as a plain record
    abatch, arecs = read_with_aiokafka(data)
    assert abatch.is_control_batch
    assert as_tuples(arecs) == [(offset, ts, key, value, [])]


def test_end_txn_marker_known_bytes():
    data = build_end_txn_marker(offset=42, producer_id=1000, producer_epoch=3, commit=False,
                                coordinator_epoch=7, timestamp=1_700_000_000_123)
    key, value = struct.pack(">hh", 0, 0), struct.pack(">hi", 0, 7)
    body = b"\x00\x00\x00" + bytes([len(key) * 2]) + key + bytes([len(value) * 2]) + value + b"\x00"
    rec = bytes([len(body) * 2]) + body
    after_crc = struct.pack(">hiqqqhii", 0x30, 0, 1_700_000_000_123, 1_700_000_000_123, 1000, 3, -1, 1) + rec
    crc = crc32c_lib.crc32c(after_crc)
    assert data == struct.pack(">qiibI", 42, 9 + len(after_crc), -1, 2, crc) + after_crc


@pytest.mark.parametrize("codec", list(Codec))
def test_control_batch_with_kraft_record_and_codec(codec):
    b = RecordBatchBuilder(base_offset=100, is_control=True, codec=codec)
    value = b"\x00\x00" + struct.pack(">q", 10000) + b"\x00"
    assert b.append_control(ControlRecordType.SNAPSHOT_HEADER, value, 55) == 100
    batch = only_batch(b.build())
    assert batch.is_control and not batch.is_transactional and batch.codec is codec
    (rec,) = batch.records()
    assert parse_control_key(rec.key) == (0, 3) and rec.value == value
    _, arecs = read_with_aiokafka(b.build())
    assert as_tuples(arecs) == as_tuples([rec])


# -- builder rules ---------------------------------------------------------------------------

def test_builder_rejects_bad_appends():
    b = RecordBatchBuilder(base_offset=10)
    with pytest.raises(UsageError, match="cannot build a batch with no records"):
        b.build()
    with pytest.raises(UsageError, match="Offset 9 is below the batch base offset 10"):
        b.append_with_offset(9, 0, None, None)
    assert b.append(0, None, None) == 10
    with pytest.raises(UsageError, match=r"Illegal offset 10 following previous offset 10 "
                                         r"\(Offsets must increase monotonically\)\."):
        b.append_with_offset(10, 0, None, None)
    with pytest.raises(UsageError, match="Invalid negative timestamp -2"):
        b.append(-2, None, None)
    with pytest.raises(UsageError, match="Maximum offset delta exceeded"):
        b.append_with_offset(10 + (1 << 31), 0, None, None)
    with pytest.raises(UsageError, match="control batch"):
        b.append_control(ControlRecordType.COMMIT, b"", 0)
    with pytest.raises(UsageError, match="LogAppendTime batch needs log_append_time"):
        RecordBatchBuilder(timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert b.num_records == 1 and b.next_offset() == 11


def test_builder_offset_gaps_like_compaction():
    b = RecordBatchBuilder(base_offset=1000)
    for off in (1000, 1003, 1010):
        b.append_with_offset(off, 5, str(off).encode(), None)
    assert b.append(6, None, b"next") == 1011
    batch = only_batch(b.build())
    assert [r.offset for r in batch.records()] == [1000, 1003, 1010, 1011]
    assert batch.last_offset == 1011 and batch.records_count == 4


def test_big_values_and_many_headers():
    value = bytes(range(256)) * 1000
    headers = [(f"h{i}-é", bytes([i]) * i if i % 3 else None) for i in range(200)]
    for codec in Codec:
        data = build_batch([(1, b"k" * 70000, value, headers), (2, None, None)], codec=codec)
        recs = only_batch(data).records()
        assert recs[0].key == b"k" * 70000 and recs[0].value == value
        assert recs[0].headers == tuple(Header(k, v) for k, v in headers)
        assert (recs[1].key, recs[1].value, recs[1].headers) == (None, None, ())
        _, arecs = read_with_aiokafka(data)
        assert as_tuples(arecs) == as_tuples(recs)


def test_compressed_batch_framing_per_codec():
    data = build_batch([(1, None, b"x" * 1000)] * 3, codec=Codec.SNAPPY)
    assert data[61:77] == bytes.fromhex("82534e41505059000000000100000001")
    data = build_batch([(1, None, b"x" * 1000)], codec=Codec.LZ4)
    assert data[61:67] == bytes.fromhex("04224d186040")
    data = build_batch([(1, None, b"x" * 1000)], codec=Codec.GZIP)
    assert data[61:63] == b"\x1f\x8b"
    data = build_batch([(1, None, b"x" * 1000)], codec=Codec.ZSTD)
    assert data[61:65] == bytes.fromhex("28b52ffd")
