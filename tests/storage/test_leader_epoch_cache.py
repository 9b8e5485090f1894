"""LeaderEpochFileCache: Kafka's assign/truncate/lookup rules, its checkpoint file, the corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.record_batch import RecordBatch
from pylogctl.storage.checkpoint import (CorruptCheckpointError, EpochEntry,
                                         read_leader_epoch_checkpoint, read_offset_checkpoint)
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.leader_epoch_cache import (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET,
                                                 LeaderEpochFileCache)
from pylogctl.storage.naming import parse_partition_dir_name

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def E(epoch: int, start: int) -> EpochEntry:
    return EpochEntry(epoch, start)


@pytest.fixture
def cache(tmp_path: Path) -> LeaderEpochFileCache:
    return LeaderEpochFileCache.for_partition_dir(tmp_path)


def on_disk(cache: LeaderEpochFileCache) -> list[EpochEntry]:
    return read_leader_epoch_checkpoint(cache.path).entries


def batch(epoch: int, base_offset: int) -> RecordBatch:
    b = RecordBatchBuilder(base_offset=base_offset, partition_leader_epoch=epoch)
    b.append(1_700_000_000_000, None, b"v")
    return RecordBatch(b.build())


# -- assign ---------------------------------------------------------------------------------

def test_missing_file_is_an_empty_cache_and_is_not_created(cache):
    assert cache.is_empty() and cache.latest_epoch() is None and cache.latest_entry() is None
    assert not Path(cache.path).exists()


def test_assign_appends_and_flushes_at_once(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    assert cache.epoch_entries() == [E(2, 6), E(3, 8)]
    assert Path(cache.path).read_text() == "0\n2\n2 6\n3 8\n"
    assert cache.latest_entry() == E(3, 8)


def test_assign_of_the_latest_epoch_at_a_later_offset_is_ignored(cache):
    cache.assign(2, 6)
    cache.assign(2, 7)
    assert cache.epoch_entries() == [E(2, 6)]


def test_assign_of_the_latest_epoch_at_an_earlier_offset_moves_it_down(cache):
    cache.assign(2, 6)
    cache.assign(2, 5)
    assert cache.epoch_entries() == [E(2, 5)]
    assert on_disk(cache) == [E(2, 5)]


def test_assign_removes_entries_conflicting_with_the_new_one(cache):
    cache.assign_all([E(1, 0), E(3, 10), E(5, 20)])
    cache.assign(4, 15)  # epoch 5 is newer than 4: gone
    assert cache.epoch_entries() == [E(1, 0), E(3, 10), E(4, 15)]
    cache.assign(6, 10)  # starts where epoch 3 started: 3 and 4 wrote nothing after it
    assert cache.epoch_entries() == [E(1, 0), E(6, 10)]
    cache.assign(2, 30)  # an older epoch at a later offset wins over every newer epoch
    assert cache.epoch_entries() == [E(1, 0), E(2, 30)]
    assert on_disk(cache) == [E(1, 0), E(2, 30)]


def test_assign_refuses_negative_values(cache):
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign(-1, 0)
    with pytest.raises(ValueError):
        cache.assign(0, -5)


def test_reading_normalises_a_non_monotonic_file_without_rewriting_it(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    text = "0\n3\n1 0\n4 20\n3 10\n"
    path.write_text(text)
    cache = LeaderEpochFileCache(path)
    assert cache.epoch_entries() == [E(1, 0), E(3, 10)]
    assert path.read_text() == text


def test_a_negative_epoch_in_the_file_is_corrupt(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_text("0\n1\n-1 0\n")
    with pytest.raises(CorruptCheckpointError) as info:
        LeaderEpochFileCache(path)
    assert info.value.path == str(path)


def test_assign_from_batch_takes_only_new_larger_v2_epochs(cache):
    assert cache.assign_from_batch(batch(0, 0))
    assert not cache.assign_from_batch(batch(0, 5))
    assert not cache.assign_from_batch(batch(-1, 6))  # no epoch stamped (e.g. produced pre-0.11)
    assert cache.assign_from_batch(batch(3, 7))
    assert not cache.assign_from_batch(batch(2, 9))  # an older epoch after a newer one: kept out

    class Legacy:
        magic, partition_leader_epoch, base_offset = 1, 9, 10

    assert not cache.assign_from_batch(Legacy())
    assert cache.epoch_entries() == [E(0, 0), E(3, 7)]


# -- truncation -----------------------------------------------------------------------------

def test_truncate_from_end_removes_entries_starting_at_or_after_the_offset(cache):
    cache.assign_all([E(2, 6), E(3, 8), E(4, 11)])
    assert cache.truncate_from_end(11) == [E(4, 11)]
    assert cache.epoch_entries() == [E(2, 6), E(3, 8)]
    assert cache.truncate_from_end(9) == []
    assert cache.truncate_from_end(-1) == []  # Kafka ignores an undefined end offset
    assert cache.truncate_from_end(0) == [E(2, 6), E(3, 8)]
    assert cache.is_empty() and on_disk(cache) == []


def test_truncate_from_start_is_exclusive_and_restarts_the_last_removed_epoch(cache):
    cache.assign_all([E(2, 6), E(3, 8), E(4, 11)])
    assert cache.truncate_from_start(5) == []
    assert cache.truncate_from_start(8) == [E(2, 6), E(3, 8)]
    assert cache.epoch_entries() == [E(3, 8), E(4, 11)]
    assert cache.truncate_from_start(9) == [E(3, 8)]
    assert cache.epoch_entries() == [E(3, 9), E(4, 11)]
    assert cache.truncate_from_start(15) == [E(3, 9), E(4, 11)]
    assert cache.epoch_entries() == [E(4, 15)]
    assert on_disk(cache) == [E(4, 15)]


def test_truncation_does_not_resurrect_a_removed_partition_dir(tmp_path):
    pdir = tmp_path / "orders-0"
    pdir.mkdir()
    cache = LeaderEpochFileCache.for_partition_dir(pdir)
    cache.assign(1, 0)
    cache.assign(2, 5)
    shutil.rmtree(pdir)  # topic deleted while the cache object lives on
    assert cache.truncate_from_end(5) == [E(2, 5)]
    assert not pdir.exists()


def test_clear_and_flush_writes_an_empty_checkpoint(cache):
    cache.assign(1, 0)
    cache.clear_and_flush()
    assert Path(cache.path).read_text() == "0\n0\n"


def test_epoch_entries_in_range_leaves_the_cache_alone(cache):
    cache.assign_all([E(1, 0), E(2, 10), E(3, 20)])
    assert cache.epoch_entries_in_range(5, 20) == [E(1, 5), E(2, 10)]
    assert cache.epoch_entries_in_range(-1, 15) == [E(1, 0), E(2, 10)]
    assert cache.epoch_entries() == [E(1, 0), E(2, 10), E(3, 20)]


# -- lookups --------------------------------------------------------------------------------

def test_end_offset_for_follows_kafka(cache):
    assert cache.end_offset_for(0, 0) == UNDEFINED  # empty cache
    cache.assign_all([E(2, 6), E(3, 8), E(5, 11)])
    assert cache.end_offset_for(UNDEFINED_EPOCH, 20) == UNDEFINED
    assert cache.end_offset_for(5, 20) == (5, 20)  # the latest epoch ends at the log end
    assert cache.end_offset_for(2, 20) == (2, 8)
    assert cache.end_offset_for(4, 20) == (3, 11)  # unknown epoch: the largest one below it
    assert cache.end_offset_for(1, 20) == (1, 6)  # older than every cached epoch
    assert cache.end_offset_for(6, 20) == UNDEFINED  # newer than the latest


def test_epoch_for_offset(cache):
    assert cache.epoch_for_offset(0) is None
    cache.assign_all([E(2, 6), E(3, 8)])
    assert [cache.epoch_for_offset(o) for o in (5, 6, 7, 8, 100)] == [None, 2, 2, 3, 3]


# -- the corpus ------------------------------------------------------------------------------

@pytest.mark.corpus
def test_reads_and_rewrites_a_real_checkpoint(corpus: Path, tmp_path: Path):
    src = corpus / "airquality-kraft" / "air_quality_data-1" / "leader-epoch-checkpoint"
    path = tmp_path / "leader-epoch-checkpoint"
    shutil.copyfile(src, path)
    cache = LeaderEpochFileCache(path)
    assert cache.epoch_entries() == [E(0, 0), E(3, 6), E(6, 240), E(8, 271)]
    assert cache.end_offset_for(6, 281) == (6, 271)
    cache.truncate_from_end(281)  # nothing to drop: file untouched
    assert path.read_bytes() == src.read_bytes()
    cache.assign(9, 281)
    cache.truncate_from_end(281)
    assert path.read_bytes() == src.read_bytes()  # same text Kafka writes


def _rebuilt_from_log(pdir: Path, tmp_path: Path) -> tuple[LeaderEpochFileCache, int]:
    path = tmp_path / "rebuilt"
    path.unlink(missing_ok=True)
    cache = LeaderEpochFileCache(path)
    leo = 0
    for log in sorted(pdir.glob("*.log")):
        leo = max(leo, int(log.name[:20]))
        with FileRecords(log) as records:
            for b in records.batches():
                cache.assign_from_batch(b)
                leo = b.last_offset + 1
    return cache, leo


@pytest.mark.corpus
def test_rebuilding_from_the_log_gives_the_brokers_cache(corpus: Path, tmp_path: Path):
    pdir = corpus / "airquality-kraft" / "air_quality_data-1"
    cache, leo = _rebuilt_from_log(pdir, tmp_path)
    assert leo == 281
    assert cache.epoch_entries() == LeaderEpochFileCache.for_partition_dir(pdir).epoch_entries()


@pytest.mark.corpus
def test_rebuilt_caches_match_every_corpus_partition(corpus: Path, tmp_path: Path):
    """After the loader's truncation at both ends, a cache rebuilt from the batches has the
    broker's epochs; only compaction (first batches of an epoch cleaned away) starts an epoch
    later than the broker recorded."""
    checked = 0
    later: list[str] = []
    for path in sorted(corpus.rglob("leader-epoch-checkpoint")):
        pdir = path.parent
        name = parse_partition_dir_name(pdir.name)
        starts = {(e.topic, e.partition): e.offset for e in
                  read_offset_checkpoint(pdir.parent / "log-start-offset-checkpoint").entries}
        log_start = starts.get((name.topic, name.partition), 0)
        rebuilt, leo = _rebuilt_from_log(pdir, tmp_path)
        rebuilt.truncate_from_start(log_start)
        expected = LeaderEpochFileCache(path).epoch_entries_in_range(log_start, leo)
        got = rebuilt.epoch_entries()
        assert [e.epoch for e in got] == [e.epoch for e in expected], pdir
        assert all(g.start_offset >= x.start_offset for g, x in zip(got, expected)), pdir
        checked += 1
        if got != expected:
            later.append(pdir.name)
    assert checked == 799
    # all compacted topics: __consumer_offsets and Kafka Connect's configs/offsets/status
    assert len(later) == 13
    assert all(n.startswith(("__consumer_offsets-", "docker-connect-")) for n in later)


# -- model-based property test --------------------------------------------------------------

class ReferenceCache:
    """The rules restated over a plain list of (epoch, start) pairs, searched by brute force."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int]] = []

    def assign(self, epoch: int, start: int) -> None:
        if self.entries and self.entries[-1][0] == epoch and start >= self.entries[-1][1]:
            return
        self.entries = [(e, s) for e, s in self.entries if e < epoch and s < start]
        self.entries.append((epoch, start))

    def truncate_from_end(self, end: int) -> None:
        if end >= 0:
            self.entries = [(e, s) for e, s in self.entries if s < end]

    def truncate_from_start(self, start: int) -> None:
        removed = [(e, s) for e, s in self.entries if s <= start]
        if removed:
            self.entries = [(removed[-1][0], start)] + [(e, s) for e, s in self.entries
                                                        if s > start]

    def epoch_for_offset(self, offset: int) -> int | None:
        found = [e for e, s in self.entries if s <= offset]
        return found[-1] if found else None

    def end_offset_for(self, epoch: int, leo: int) -> tuple[int, int]:
        if epoch == UNDEFINED_EPOCH:
            return UNDEFINED
        if self.entries and self.entries[-1][0] == epoch:
            return epoch, leo
        higher = [(e, s) for e, s in self.entries if e > epoch]
        lower = [e for e, s in self.entries if e <= epoch]
        if not higher:
            return UNDEFINED
        return (lower[-1] if lower else epoch), higher[0][1]


# small ranges, so that equal epochs and equal start offsets (the edge cases) are frequent
epochs = st.integers(0, 8)
offsets = st.integers(0, 20)


class EpochCacheMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        import tempfile
        self.dir = Path(tempfile.mkdtemp(prefix="epoch-cache-"))
        self.cache = LeaderEpochFileCache.for_partition_dir(self.dir)
        self.model = ReferenceCache()

    @rule(epoch=epochs, start=offsets)
    def assign(self, epoch, start):
        self.cache.assign(epoch, start)
        self.model.assign(epoch, start)

    @rule(end=st.integers(-1, 21))
    def truncate_from_end(self, end):
        self.cache.truncate_from_end(end)
        self.model.truncate_from_end(end)

    @rule(start=offsets)
    def truncate_from_start(self, start):
        self.cache.truncate_from_start(start)
        self.model.truncate_from_start(start)

    @rule(offset=offsets, epoch=st.integers(-1, 9), leo=st.integers(21, 30))
    def lookups_agree(self, offset, epoch, leo):
        assert self.cache.epoch_for_offset(offset) == self.model.epoch_for_offset(offset)
        assert self.cache.end_offset_for(epoch, leo) == self.model.end_offset_for(epoch, leo)

    @invariant()
    def same_entries_strictly_increasing_and_persisted(self):
        got = [(e.epoch, e.start_offset) for e in self.cache.epoch_entries()]
        assert got == self.model.entries
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(got, got[1:]))
        if Path(self.cache.path).exists():  # every change is on disk
            reread = LeaderEpochFileCache(self.cache.path)
            assert reread.epoch_entries() == self.cache.epoch_entries()

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


EpochCacheMachine.TestCase.settings = settings(max_examples=80, stateful_step_count=30,
                                               deadline=None)
test_epoch_cache_matches_the_reference_model = EpochCacheMachine.TestCase
