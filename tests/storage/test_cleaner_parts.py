"""The cleaner's parts, one at a time: the offset map, the broker settings, the batch rewrite,
the grouping of segments, the eligibility rule, and what ``rebuild-index --verify`` makes of a
cleaned ``.txnindex``."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest
from kafka.record import MemoryRecords

from cleaner_support import BASE_TS, DAY, compact, random_workload, segment_logs, write_log
from pylogctl.errors import UsageError
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.compression import Codec
from pylogctl.format.record import TimestampType
from pylogctl.format.record_batch import RecordBatch
from pylogctl.format.record_filter import empty_batch_header, rebuild_batch
from pylogctl.storage.cleaner.cleaner import group_segments_by_size
from pylogctl.storage.cleaner.cleaner_config import CleanerConfig
from pylogctl.storage.cleaner.cleaner_manager import decide
from pylogctl.storage.cleaner.log_to_clean import LogToClean
from pylogctl.storage.cleaner.offset_map import SkimpyOffsetMap


# -- the offset map --------------------------------------------------------------------------------
def test_the_map_counts_kafkas_slots_and_answers_per_key():
    m = SkimpyOffsetMap(24 * 1000)
    assert (m.hash_size, m.bytes_per_entry, m.slots) == (16, 24, 1000)
    assert SkimpyOffsetMap(40 * 10, "SHA-256").slots == 10
    assert m.get(b"a") == -1 and m.latest_offset == -1
    m.put(b"a", 5)
    m.put(b"b", 7)
    m.put(b"a", 9)
    assert (m.get(b"a"), m.get(b"b"), m.size, m.latest_offset) == (9, 7, 2, 9)
    assert m.digest(b"a") == hashlib.md5(b"a").digest()
    m.clear()
    assert (m.get(b"a"), m.size, m.latest_offset) == (-1, 0, -1)


def test_a_full_map_refuses_even_an_update_as_kafkas_does():
    m = SkimpyOffsetMap(24 * 2)
    m.put(b"a", 1)
    m.put(b"b", 2)
    with pytest.raises(ValueError, match="full offset map"):
        m.put(b"a", 3)


def test_keys_with_the_same_digest_share_one_entry(monkeypatch):
    m = SkimpyOffsetMap(24 * 100)
    monkeypatch.setattr(m, "_hash", lambda key: hashlib.md5(key[:1]))  # "ab" ~ "ac"
    m.put(b"ab", 1)
    m.put(b"ac", 2)
    assert (m.size, m.get(b"ab"), m.get(b"ac"), m.get(b"ad")) == (1, 2, 2, 2)
    records = [SimpleNamespace(key=k, offset=o) for o, k in enumerate([b"ax", b"b", b"ay"], 10)]
    assert not m.put_records(records, 0, 90)
    assert (m.size, m.get(b"ab"), m.get(b"b")) == (2, 12, 11)


@pytest.mark.parametrize("start", [0, 12])
def test_putting_a_batch_is_putting_its_records_one_by_one(start):
    records = [SimpleNamespace(key=k, offset=10 + i) for i, k in
               enumerate([b"a", None, b"b", b"a", b"c", None, b"d"])]
    bulk, single = SkimpyOffsetMap(24 * 100), SkimpyOffsetMap(24 * 100)
    assert not bulk.put_records(records, start, 90)
    for r in records:
        if r.key is not None and r.offset >= start:
            single.put(r.key, r.offset)
    keys = [b"a", b"b", b"c", b"d"]
    assert [bulk.get(k) for k in keys] == [single.get(k) for k in keys]
    assert (bulk.size, bulk.latest_offset) == (single.size, single.latest_offset)


def test_putting_stops_when_the_map_holds_its_share_of_keys():
    m = SkimpyOffsetMap(24 * 100)
    records = [SimpleNamespace(key=b"%d" % i, offset=i) for i in range(10)]
    assert m.put_records(records, 0, 4)
    assert (m.size, m.latest_offset) == (4, 3)


# -- broker settings -------------------------------------------------------------------------------
def test_cleaner_config_splits_the_buffers_among_threads():
    c = CleanerConfig.from_properties({"log.cleaner.threads": "2",
                                       "log.cleaner.dedupe.buffer.size": str(64 << 20),
                                       "log.cleaner.io.buffer.size": "1048576"})
    assert (c.offset_map_memory, c.io_buffer_per_thread) == (32 << 20, 262144)
    assert CleanerConfig().offset_map_memory == 128 << 20
    with pytest.raises(UsageError, match="at least 1MB per cleaner thread"):
        CleanerConfig(dedupe_buffer_size=1 << 20)
    with pytest.raises(UsageError, match="Unknown log cleaner config"):
        CleanerConfig.from_properties({"log.cleaner.bogus": "1"})


# -- rewriting a batch -----------------------------------------------------------------------------
def _batch(codec=Codec.NONE, **options) -> RecordBatch:
    b = RecordBatchBuilder(base_offset=100, codec=codec, producer_id=7, producer_epoch=2,
                           base_sequence=40, partition_leader_epoch=3, **options)
    for i in range(5):
        b.append(BASE_TS + 10 * i, b"k%d" % i, None if i == 3 else b"v%d" % i,
                 [("h", b"%d" % i)] if i % 2 else [])
    return RecordBatch(b.build())


@pytest.mark.parametrize("codec", list(Codec))
def test_a_rebuilt_batch_is_what_the_builder_writes(codec):
    batch = _batch(codec)
    kept = [r for r in batch.records() if r.offset in (101, 102, 104)]
    data, max_ts, shallow = rebuild_batch(batch, kept, None)
    b = RecordBatchBuilder(base_offset=100, codec=codec, producer_id=7, producer_epoch=2,
                           base_sequence=40, partition_leader_epoch=3)
    for r in kept:
        b.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers)
    assert data == b.build()  # the last record kept: no offset to override
    assert (max_ts, shallow) == (BASE_TS + 40, 104)


def test_a_rebuilt_batch_keeps_its_last_offset_and_sequence_and_gets_a_horizon():
    batch = _batch(Codec.LZ4)
    kept = [r for r in batch.records() if r.offset in (101, 103)]
    data, max_ts, _ = rebuild_batch(batch, kept, BASE_TS + DAY)
    new = RecordBatch(data)
    assert (new.last_offset, new.last_sequence, new.codec) == (104, 44, Codec.LZ4)
    assert (new.producer_id, new.producer_epoch, new.partition_leader_epoch) == (7, 2, 3)
    assert new.delete_horizon_ms == new.base_timestamp == BASE_TS + DAY
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in new.records()] == [
        (r.offset, r.timestamp, r.key, r.value, r.headers) for r in kept]
    assert max_ts == new.max_timestamp == BASE_TS + 30
    assert new.is_valid


def test_a_log_append_time_batch_keeps_its_append_time():
    batch = _batch(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=BASE_TS + 999)
    data, max_ts, shallow = rebuild_batch(batch, batch.records()[:1], None)
    new = RecordBatch(data)
    assert (max_ts, shallow, new.max_timestamp) == (BASE_TS + 999, 104, BASE_TS + 999)
    assert [r.timestamp for r in new.records()] == [BASE_TS + 999]


def test_an_empty_batch_keeps_the_header_kafka_keeps():
    batch = _batch(Codec.GZIP, is_transactional=True)
    new = RecordBatch(empty_batch_header(batch))
    assert (new.size_in_bytes, new.records_count, new.codec, new.base_timestamp) == (
        61, 0, Codec.NONE, -1)
    assert (new.base_offset, new.last_offset, new.last_sequence, new.max_timestamp) == (
        100, 104, 44, batch.max_timestamp)
    assert new.is_transactional and new.is_valid
    read = MemoryRecords(new.raw_bytes()).next_batch()
    assert list(read) == []


# -- grouping --------------------------------------------------------------------------------------
def _seg(base: int, size: int, index: int = 8, time: int = 12):
    return SimpleNamespace(base_offset=base, size=size,
                           offset_index=SimpleNamespace(size_in_bytes=index),
                           time_index=SimpleNamespace(size_in_bytes=time))


def test_groups_fill_up_to_the_segment_and_index_sizes():
    segs = [_seg(0, 40), _seg(10, 40), _seg(20, 40), _seg(30, 10, index=80)]
    groups = group_segments_by_size(segs, max_size=100, max_index_size=100, first_uncleanable_offset=40)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 10], [20, 30]]
    groups = group_segments_by_size(segs, max_size=1000, max_index_size=90, first_uncleanable_offset=40)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 10, 20], [30]]


def test_a_group_never_spans_more_offsets_than_a_segment_can_index():
    big = 2**31
    segs = [_seg(0, 10), _seg(big - 100, 10), _seg(big - 50, 10), _seg(big + 10, 0)]
    groups = group_segments_by_size(segs, 1000, 1000, first_uncleanable_offset=3 * big)
    # the third ends (before the next base) past 0 + 2^31-1; an empty segment skips the check
    assert [[s.base_offset for s in g] for g in groups] == [[0, big - 100], [big - 50, big + 10]]


# -- which logs get cleaned --------------------------------------------------------------------------
def test_the_decision_follows_grab_filthiest_compacted_log():
    dirty = LogToClean("t-0", 0, 100, clean_bytes=40, cleanable_bytes=60)
    assert decide(dirty, 0.5, forced=False).clean
    assert not decide(dirty, 0.6, forced=False).clean
    assert decide(dirty, 0.6, forced=True).clean
    overdue = LogToClean("t-0", 0, 100, 90, 10, need_compaction_now=True)
    assert decide(overdue, 0.5, forced=False).clean
    empty = LogToClean("t-0", 100, 100, 90, 0, need_compaction_now=True)
    assert not decide(empty, 0.0, forced=True).clean


# -- what rebuild-index --verify makes of a cleaned .txnindex -----------------------------------------
def test_a_cleaned_txnindex_is_benign_and_one_missing_a_live_entry_is_corrupt(tmp_path, cli):
    write_log(tmp_path, random_workload(30, txn_rate=0.3, abort_rate=0.7))
    compact(tmp_path, BASE_TS + DAY)
    assert cli("rebuild-index", "--verify", tmp_path).code == 0
    txnindex = next(p.with_suffix(".txnindex") for p in segment_logs(tmp_path / "t-0")
                    if p.with_suffix(".txnindex").exists())
    txnindex.write_bytes(b"")
    broken = cli("rebuild-index", "--verify", tmp_path)
    assert broken.code == 1 and "aborted transactions" in broken.err
