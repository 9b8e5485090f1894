"""Producer state: Kafka's sequence, epoch and transaction rules, snapshots, rebuilding."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.format.producer_snapshot import read_producer_snapshot
from pylogctl.format.record import TimestampType
from pylogctl.format.record_batch import RecordBatch, compute_attributes, encode_batch_header
from pylogctl.format.compression import Codec
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.producer_append import (AppendOrigin, BatchMetadata, CompletedTxn,
                                              InvalidProducerEpochError, InvalidTxnStateError,
                                              OutOfOrderSequenceError, ProducerStateEntry,
                                              TransactionCoordinatorFencedError)
from pylogctl.storage.producer_state import (ProducerStateManager,
                                             analyze_and_validate_producer_state,
                                             load_producers_from_batches, read_snapshot,
                                             rebuild_producer_state, write_snapshot)
from pylogctl.storage.transaction_index import AbortedTxn

INT32_MAX = (1 << 31) - 1
TS = 1_700_000_000_000
DAY = 86_400_000


def data(offset: int, pid: int, epoch: int = 0, seq: int = 0, count: int = 1, ts: int = TS,
         txn: bool = False) -> RecordBatch:
    b = RecordBatchBuilder(base_offset=offset, producer_id=pid, producer_epoch=epoch,
                           base_sequence=seq, is_transactional=txn)
    for _ in range(count):
        b.append(ts, None, b"v")
    return RecordBatch(b.build())


def marker(offset: int, pid: int, epoch: int = 0, commit: bool = True,
           coordinator_epoch: int = 0, ts: int = TS) -> RecordBatch:
    return RecordBatch(build_end_txn_marker(offset=offset, producer_id=pid, producer_epoch=epoch,
                                            commit=commit, coordinator_epoch=coordinator_epoch,
                                            timestamp=ts))


def plain(offset: int, count: int = 1) -> RecordBatch:
    b = RecordBatchBuilder(base_offset=offset)
    for _ in range(count):
        b.append(TS, None, b"v")
    return RecordBatch(b.build())


def append(manager: ProducerStateManager, batch: RecordBatch,
           origin: AppendOrigin = AppendOrigin.CLIENT) -> CompletedTxn | None:
    """Validate and apply one batch as the append path does (no txn index here)."""
    result = analyze_and_validate_producer_state(manager, [batch], origin)
    assert result.duplicate is None
    for info in result.updated_producers.values():
        manager.apply(info)
    for txn in result.completed_txns:
        manager.complete_txn(txn)
    manager.update_map_end_offset(batch.last_offset + 1)
    return result.completed_txns[0] if result.completed_txns else None


def replay(manager: ProducerStateManager, batches) -> list[AbortedTxn]:
    """What ``LogSegment.recover`` does with each v2 batch; returns the txn index entries."""
    out = []
    for b in batches:
        completed = manager.update(b)
        if completed is not None:
            if completed.is_aborted:
                lso = manager.last_stable_offset(completed)
                out.append(AbortedTxn.from_completed(completed, lso))
            manager.complete_txn(completed)
        manager.update_map_end_offset(b.last_offset + 1)
    return out


@pytest.fixture
def manager(tmp_path: Path) -> ProducerStateManager:
    pdir = tmp_path / "orders-0"
    pdir.mkdir()
    return ProducerStateManager(pdir)


# -- sequences and epochs ------------------------------------------------------------------

def test_in_sequence_appends_are_accepted_and_tracked(manager):
    append(manager, data(0, 5, seq=0, count=3))
    append(manager, data(3, 5, seq=3, count=2))
    entry = manager.last_entry(5)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (0, 0, 4)
    assert (entry.first_data_offset, entry.last_data_offset) == (0, 4)
    assert entry.batch_metadata == (BatchMetadata(2, 2, 2, TS), BatchMetadata(4, 4, 1, TS))


def test_a_sequence_gap_is_out_of_order(manager):
    append(manager, data(0, 5, seq=0, count=3))
    with pytest.raises(OutOfOrderSequenceError, match=r"producer 5 at offset 3 in partition "
                       r"orders-0: 4 \(incoming seq. number\), 2 \(current end sequence"):
        append(manager, data(3, 5, seq=4))


def test_a_new_epoch_must_start_at_sequence_zero(manager):
    append(manager, data(0, 5, epoch=0, seq=0))
    with pytest.raises(OutOfOrderSequenceError, match="Invalid sequence number for new epoch"):
        append(manager, data(1, 5, epoch=1, seq=7))
    append(manager, data(1, 5, epoch=1, seq=0))
    assert manager.last_entry(5).batch_metadata == (BatchMetadata(0, 1, 0, TS),)


def test_sequences_wrap_at_int32_max(manager):
    append(manager, data(0, 5, seq=INT32_MAX - 1, count=2))
    assert manager.last_entry(5).last_seq == INT32_MAX
    append(manager, data(2, 5, seq=0))
    assert manager.last_entry(5).last_seq == 0


def test_a_batch_spanning_the_wrap_keeps_its_first_sequence(manager):
    append(manager, data(0, 5, seq=INT32_MAX - 1, count=4))  # sequences MAX-1, MAX, 0, 1
    entry = manager.last_entry(5)
    assert (entry.first_seq, entry.last_seq) == (INT32_MAX - 1, 1)


def test_an_unknown_producer_may_start_anywhere(manager):
    """Its data may have been removed by retention: no sequence to continue from."""
    append(manager, data(0, 5, seq=42))
    assert manager.last_entry(5).last_seq == 42


def test_an_older_producer_epoch_is_fenced_for_clients_but_replicated(manager):
    append(manager, data(0, 5, epoch=3))
    with pytest.raises(InvalidProducerEpochError, match="is 2, which is smaller than the last "
                                                        "seen epoch 3"):
        append(manager, data(1, 5, epoch=2, seq=1))
    with pytest.raises(InvalidProducerEpochError):
        append(manager, data(1, 5, epoch=2, seq=1), AppendOrigin.COORDINATOR)
    append(manager, data(1, 5, epoch=2, seq=1), AppendOrigin.REPLICATION)  # logged only
    assert manager.last_entry(5).producer_epoch == 2


def test_coordinator_appends_are_not_sequence_checked(manager):
    append(manager, data(0, 5, seq=0), AppendOrigin.COORDINATOR)
    append(manager, data(1, 5, seq=9), AppendOrigin.COORDINATOR)
    assert manager.last_entry(5).last_seq == 9


# -- duplicates ------------------------------------------------------------------------------

def test_a_retried_batch_is_found_among_the_last_five(manager):
    for i in range(6):
        append(manager, data(i * 2, 5, seq=i * 2, count=2))
    entry = manager.last_entry(5)
    assert len(entry.batch_metadata) == ProducerStateEntry.NUM_BATCHES_TO_RETAIN
    retry = data(100, 5, seq=4, count=2)
    assert entry.find_duplicate_batch(retry) == BatchMetadata(5, 5, 1, TS)
    result = analyze_and_validate_producer_state(manager, [retry], AppendOrigin.CLIENT)
    assert result.duplicate == BatchMetadata(5, 5, 1, TS) and not result.updated_producers
    evicted = data(100, 5, seq=0, count=2)  # the oldest batch fell out of the cache
    assert entry.find_duplicate_batch(evicted) is None
    assert entry.find_duplicate_batch(data(100, 5, epoch=1, seq=4, count=2)) is None


def test_duplicates_are_only_looked_for_in_client_appends(manager):
    append(manager, data(0, 5, seq=0))
    again = data(1, 5, seq=0)
    result = analyze_and_validate_producer_state(manager, [again], AppendOrigin.REPLICATION)
    assert result.duplicate is None and 5 in result.updated_producers


def test_validation_changes_nothing_until_applied(manager):
    result = analyze_and_validate_producer_state(manager, [data(0, 5), plain(1), data(2, 6)],
                                                 AppendOrigin.CLIENT)
    assert set(result.updated_producers) == {5, 6} and manager.is_empty()
    for info in result.updated_producers.values():
        manager.apply(info)
    assert set(manager.active_producers) == {5, 6}


# -- transactions ----------------------------------------------------------------------------

def test_a_committed_transaction_is_unstable_until_the_high_watermark_passes_its_marker(manager):
    append(manager, data(0, 5, txn=True))
    assert manager.first_unstable_offset() == 0 == manager.first_undecided_offset()
    assert manager.last_entry(5).current_txn_first_offset == 0
    append(manager, data(1, 5, seq=1, txn=True))
    completed = append(manager, marker(2, 5, commit=True))
    assert completed == CompletedTxn(5, 0, 2, is_aborted=False)
    assert manager.first_undecided_offset() is None
    assert manager.first_unstable_offset() == 0
    manager.on_high_watermark_updated(2)
    assert manager.first_unstable_offset() == 0
    manager.on_high_watermark_updated(3)
    assert manager.first_unstable_offset() is None
    assert manager.last_entry(5).current_txn_first_offset is None


def test_an_abort_gets_the_first_offset_of_another_open_transaction_as_lso(manager):
    aborted = replay(manager, [data(0, 5, txn=True), data(1, 6, txn=True),
                               data(2, 5, seq=1, txn=True), marker(3, 5, commit=False),
                               marker(4, 6, commit=False)])
    assert aborted == [AbortedTxn(0, 5, 0, 3, 1), AbortedTxn(0, 6, 1, 4, 5)]


def test_a_plain_write_inside_a_transaction_is_invalid(manager):
    append(manager, data(0, 5, txn=True))
    with pytest.raises(InvalidTxnStateError, match="Expected transactional write from producer 5"):
        append(manager, data(1, 5, seq=1))


def test_a_marker_without_a_transaction_completes_nothing(manager):
    append(manager, data(0, 5))
    assert append(manager, marker(1, 5, coordinator_epoch=3)) is None
    assert manager.last_entry(5).coordinator_epoch == 3


def test_a_marker_from_an_older_coordinator_is_fenced_except_in_replication(manager):
    append(manager, data(0, 5, txn=True))
    append(manager, marker(1, 5, coordinator_epoch=4))
    append(manager, data(2, 5, seq=1, txn=True))
    with pytest.raises(TransactionCoordinatorFencedError, match="3 \\(zombie\\), 4 \\(current\\)"):
        append(manager, marker(3, 5, coordinator_epoch=3), AppendOrigin.COORDINATOR)
    assert append(manager, marker(3, 5, coordinator_epoch=3), AppendOrigin.REPLICATION) is not None


def test_an_empty_control_batch_changes_nothing(manager):
    append(manager, data(0, 5, txn=True))
    attrs = compute_attributes(Codec.NONE, TimestampType.CREATE_TIME, True, True, False)
    empty = RecordBatch(encode_batch_header(
        base_offset=1, records_area=b"", last_offset_delta=0, partition_leader_epoch=0,
        attributes=attrs, base_timestamp=-1, max_timestamp=-1, producer_id=5, producer_epoch=0,
        base_sequence=-1, records_count=0))
    assert manager.update(empty) is None
    assert manager.first_undecided_offset() == 0


def test_a_late_transaction_is_reported(manager):
    append(manager, data(0, 5, txn=True, ts=TS))
    limit = manager.max_transaction_timeout_ms + 5 * 60 * 1000
    assert not manager.has_late_transaction(TS + limit)
    assert manager.has_late_transaction(TS + limit + 1)


def test_completing_an_unknown_transaction_is_a_bug(manager):
    with pytest.raises(ValueError, match="which was not started"):
        manager.complete_txn(CompletedTxn(5, 0, 1, False))


# -- expiration ------------------------------------------------------------------------------

def test_idle_producers_expire_unless_a_transaction_is_open(manager):
    append(manager, data(0, 5, ts=TS))
    append(manager, data(1, 6, ts=TS, txn=True))
    append(manager, data(2, 7, ts=TS + DAY))
    producers = manager.active_producers
    assert not any(manager.is_producer_expired(TS + DAY - 1, e) for e in producers.values())
    assert [p for p, e in producers.items() if manager.is_producer_expired(TS + DAY, e)] == [5]


# -- snapshots -------------------------------------------------------------------------------

def test_take_snapshot_names_the_file_by_the_map_end_offset_and_round_trips(manager, tmp_path):
    replay(manager, [data(0, 5, count=3), data(3, 6, txn=True, ts=TS + 1)])
    path = manager.take_snapshot()
    assert Path(path).name == "00000000000000000004.snapshot"
    assert manager.take_snapshot() is None  # nothing new since
    assert manager.latest_snapshot_offset() == 4 and manager.snapshot_offsets() == [4]
    other = ProducerStateManager(manager.dir)
    other.load_from_snapshot(0, TS + 10)
    assert other.map_end_offset == 4
    assert dict(other.active_producers) == {
        5: ProducerStateEntry(5, 0, -1, TS, None, [BatchMetadata(2, 2, 2, TS)]),
        6: ProducerStateEntry(6, 0, -1, TS + 1, 3, [BatchMetadata(0, 3, 0, TS + 1)])}
    assert other.first_undecided_offset() == 3


def test_loading_skips_expired_producers(manager):
    replay(manager, [data(0, 5, ts=TS), data(1, 6, ts=TS + DAY)])
    manager.take_snapshot()
    other = ProducerStateManager(manager.dir)
    other.load_from_snapshot(0, TS + DAY)
    assert set(other.active_producers) == {6}


def test_a_corrupt_latest_snapshot_is_deleted_and_the_previous_one_used(manager):
    replay(manager, [data(0, 5)])
    first = manager.take_snapshot()
    replay(manager, [data(1, 6)])
    latest = Path(manager.take_snapshot())
    latest.write_bytes(latest.read_bytes()[:-1] + b"\x00")
    other = ProducerStateManager(manager.dir)
    other.load_from_snapshot(0, TS)
    assert not latest.exists() and other.snapshot_offsets() == [1]
    assert other.map_end_offset == 1 and set(other.active_producers) == {5}
    assert Path(first).exists()


def _snapshot_ids(manager: ProducerStateManager) -> list[int]:
    path = Path(manager.take_snapshot())
    return [e.producer_id for e in read_producer_snapshot(path.read_bytes())]


def test_snapshot_entries_follow_java_hash_map_order(manager):
    """Kafka writes its producers HashMap: by bucket (id mod table size for small ids), then
    insertion; the table doubles past 3/4 full and never shrinks. (Expected orders printed by
    ``java.util.HashMap<Long, _>.keySet()`` for the same insertions.)"""
    replay(manager, [data(0, 1000), data(1, 0), data(2, 2000)])
    assert _snapshot_ids(manager) == [0, 2000, 1000]
    replay(manager, [data(3 + i, pid) for i, pid in enumerate([16, *range(1, 11)])])
    assert len(manager.active_producers) == 14  # 16 buckets hold 12: now 32
    assert _snapshot_ids(manager) == [0, 1, 2, 3, 4, 5, 6, 7, 1000, 8, 9, 10, 2000, 16]
    manager.truncate_fully_and_start_at(20)
    replay(manager, [data(20, 16), data(21, 1)])
    assert _snapshot_ids(manager) == [1, 16]  # still 32 buckets: 16 is not in bucket 0


def test_truncate_and_reload_drops_out_of_range_snapshots_and_reloads(manager):
    for offset, pid in ((0, 5), (1, 6), (2, 7)):
        replay(manager, [data(offset, pid)])
        manager.take_snapshot()
    assert manager.snapshot_offsets() == [1, 2, 3]
    manager.truncate_and_reload(1, 2, TS)
    assert manager.snapshot_offsets() == [2]
    assert manager.map_end_offset == 2 and set(manager.active_producers) == {5, 6}
    assert not os.path.exists(manager.snapshot_path(3))
    assert not os.path.exists(manager.snapshot_path(1))


def test_truncate_fully_forgets_everything(manager):
    replay(manager, [data(0, 5, txn=True)])
    manager.take_snapshot()
    manager.truncate_fully_and_start_at(7)
    assert manager.is_empty() and manager.snapshot_offsets() == [] and manager.map_end_offset == 7
    assert manager.first_unstable_offset() is None
    assert not any(p.endswith(".snapshot") for p in os.listdir(manager.dir))


def _touch_snapshots(manager: ProducerStateManager, offsets) -> None:
    for offset in offsets:
        write_snapshot(manager.snapshot_path(offset), [])


def test_remove_stray_snapshots_keeps_segment_snapshots_and_the_clean_shutdown_one(manager):
    _touch_snapshots(manager, [5, 10, 12, 15, 20])
    deleted = manager.remove_stray_snapshots([0, 5, 10, 15])
    assert sorted(Path(p).name[:20] for p in deleted) == ["00000000000000000012"]
    assert manager.snapshot_offsets() == [5, 10, 15, 20]  # 20: above every segment, kept


def test_remove_stray_snapshots_drops_the_latest_stray_below_the_last_segment(manager):
    _touch_snapshots(manager, [3, 7])
    manager.remove_stray_snapshots([0, 5, 10])
    assert manager.snapshot_offsets() == [] and os.listdir(manager.dir) == []


def test_a_snapshot_marked_for_deletion_is_renamed(manager):
    _touch_snapshots(manager, [4])
    manager = ProducerStateManager(manager.dir)  # lists the snapshots
    renamed = manager.remove_and_mark_snapshot_for_deletion(4)
    assert renamed.endswith("00000000000000000004.snapshot.deleted") and os.path.exists(renamed)
    assert manager.snapshot_offsets() == []
    assert manager.remove_and_mark_snapshot_for_deletion(4) is None


def test_files_not_named_by_an_offset_are_not_snapshots(manager):
    Path(manager.dir, "notes.snapshot").write_text("x")
    _touch_snapshots(manager, [3])
    assert ProducerStateManager(manager.dir).snapshot_offsets() == [3]


# -- the corpus ------------------------------------------------------------------------------

def _writable_copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    for p in (dst, *dst.iterdir()):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


@pytest.mark.corpus
def test_real_snapshots_reload_and_rewrite_identically(corpus: Path, tmp_path: Path):
    """Loaded into a manager and written again, Kafka's snapshots come out byte for byte
    (entry order included: stocksys's producers 0, 2000, 1000 are HashMap order)."""
    checked = 0
    for src in sorted(corpus.rglob("*.snapshot")):
        entries = read_snapshot(src)
        if not entries:
            continue
        pdir = tmp_path / f"p{checked}-0"
        pdir.mkdir()
        manager = ProducerStateManager(pdir)
        for entry in entries:
            manager.load_producer_entry(entry)
        manager.update_map_end_offset(1)
        assert Path(manager.take_snapshot()).read_bytes() == src.read_bytes(), src
        checked += 1
    assert checked == 6


def _segment_reader(pdir: Path, calls: list[int]):
    def read(base: int):
        calls.append(base)
        with FileRecords(pdir / f"{base:020d}.log") as records:
            yield from records.batches()
    return read


@pytest.mark.corpus
def test_rebuilding_from_the_log_writes_the_brokers_snapshot(corpus: Path, tmp_path: Path):
    pdir = _writable_copy(corpus / "airquality-kraft" / "air_quality_data-1", tmp_path)
    snapshot = pdir / "00000000000000000240.snapshot"
    expected = snapshot.read_bytes()
    snapshot.unlink()
    manager = ProducerStateManager(pdir)
    calls: list[int] = []
    rebuild_producer_state(manager, [0], _segment_reader(pdir, calls), 0, 240,
                           now_ms=1758603778947 + 1000)
    assert calls == [0]
    assert snapshot.read_bytes() == expected
    entry = manager.last_entry(0)
    assert (entry.last_seq, entry.last_data_offset) == (0, 4)


@pytest.mark.corpus
def test_rebuilding_from_the_brokers_snapshot_reads_no_segment(corpus: Path, tmp_path: Path):
    pdir = _writable_copy(corpus / "airquality-kraft" / "air_quality_data-1", tmp_path)
    manager = ProducerStateManager(pdir)
    calls: list[int] = []
    rebuild_producer_state(manager, [0], _segment_reader(pdir, calls), 0, 240,
                           now_ms=1758603778947 + 1000)
    assert calls == [] and manager.map_end_offset == 240 and set(manager.active_producers) == {0}


# -- rebuilding (synthetic multi-segment log) ------------------------------------------------

SEGMENTS = {
    0: [data(0, 5, count=2), plain(2)],
    3: [data(3, 5, seq=2, txn=True), data(4, 6)],
    5: [marker(5, 5, commit=False), data(6, 6, seq=1, count=2)],
    8: [data(8, 7), data(9, 5, seq=3)],
}


def _reader(calls: list[int]):
    def read(base: int):
        calls.append(base)
        return iter(SEGMENTS[base])
    return read


def test_rebuild_replays_every_segment_and_snapshots_the_last_two_bases(manager):
    calls: list[int] = []
    rebuild_producer_state(manager, SEGMENTS, _reader(calls), 0, 10, now_ms=TS)
    assert calls == [0, 3, 5, 8]
    assert manager.snapshot_offsets() == [5, 8, 10]
    assert manager.map_end_offset == 10
    assert {pid: e.last_seq for pid, e in manager.active_producers.items()} == {5: 3, 6: 2, 7: 0}
    assert manager.first_unstable_offset() == 3  # the abort at 5 is not yet below a high watermark
    manager.on_high_watermark_updated(10)
    assert manager.first_unstable_offset() is None


def test_rebuild_starts_from_the_latest_snapshot_at_or_below_the_target(manager):
    rebuild_producer_state(manager, SEGMENTS, _reader([]), 0, 10, now_ms=TS)
    fresh = ProducerStateManager(manager.dir)
    calls: list[int] = []
    rebuild_producer_state(fresh, SEGMENTS, _reader(calls), 0, 7, now_ms=TS)
    assert calls == [5]  # snapshot 5 loaded; only the segment holding offsets 5 and 6 is read
    assert fresh.snapshot_offsets() == [5, 7]  # 8 and 10 were beyond the target: deleted
    assert fresh.last_entry(6).last_seq == 0  # the batch at 6-7 holds offset 7: not replayed
    assert fresh.last_entry(5).current_txn_first_offset is None


def test_rebuild_after_a_clean_shutdown_without_snapshots_scans_nothing(manager):
    calls: list[int] = []
    rebuild_producer_state(manager, SEGMENTS, _reader(calls), 0, 10, now_ms=TS,
                           reload_from_clean_shutdown=True)
    assert calls == [] and manager.snapshot_offsets() == [5, 8, 10]
    assert manager.is_empty()


def test_rebuild_respects_the_log_start_offset(manager):
    calls: list[int] = []
    rebuild_producer_state(manager, SEGMENTS, _reader(calls), 4, 10, now_ms=TS)
    assert calls == [3, 5, 8]
    assert manager.last_entry(5).first_data_offset == 9  # the batch at 3 is below the start


def test_load_producers_from_batches_completes_transactions_after_updating(manager):
    load_producers_from_batches(manager, [data(0, 5, txn=True), marker(1, 5, commit=False),
                                          data(2, 5, seq=1, txn=True)])
    assert manager.first_undecided_offset() == 2
    assert manager.first_unstable_offset() == 0


def test_replaying_ignores_batches_without_a_producer(manager):
    assert manager.update(plain(0)) is None and manager.is_empty()


def test_snapshot_file_layout_matches_kafkas(manager):
    replay(manager, [data(0, 5, epoch=2, seq=7, count=3, txn=True)])
    data_ = Path(manager.take_snapshot()).read_bytes()
    assert struct.unpack_from(">hIi", data_)[0::2] == (1, 1)
    assert struct.unpack_from(">qhiqiqiq", data_, 10) == (5, 2, 9, 2, 2, TS, -1, 0)


def test_segment_recovery_drives_the_real_manager_and_epoch_cache(manager):
    """The contract with ``LogSegment.recover``: the manager and the cache plug straight in."""
    from pylogctl.storage.leader_epoch_cache import LeaderEpochFileCache
    from pylogctl.storage.segment import LogSegment

    def stamped(b: RecordBatch, epoch: int) -> bytes:
        raw = bytearray(b.raw_bytes())
        struct.pack_into(">i", raw, 12, epoch)  # partitionLeaderEpoch is outside the CRC
        return bytes(raw)

    batches = [(data(0, 5, count=2), 0), (data(2, 6, txn=True), 3),
               (marker(3, 6, commit=False), 3), (data(4, 5, seq=2), 4)]
    pdir = Path(manager.dir)
    (pdir / f"{0:020d}.log").write_bytes(b"".join(stamped(b, e) for b, e in batches))
    cache = LeaderEpochFileCache.for_partition_dir(pdir)
    with LogSegment.open(pdir, 0) as segment:
        assert segment.recover(manager, cache) == 0
        assert segment.txn_index.all_aborted_txns() == [AbortedTxn(0, 6, 2, 3, 4)]
    assert [(e.epoch, e.start_offset) for e in cache.epoch_entries()] == [(0, 0), (3, 2), (4, 4)]
    assert manager.map_end_offset == 5 and manager.last_entry(5).last_seq == 2
    assert manager.first_undecided_offset() is None
