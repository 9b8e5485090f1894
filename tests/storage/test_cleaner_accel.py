"""The cleaner's C loops (``pylogctl.storage.cleaner._cleaner_scan``) change nothing: compaction
writes the same files with and without them, and each pass gives the same result batch by batch,
on hand-made, random and mutated (hostile) batches."""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path

import pytest

from cleaner_accel_support import (NOW, RETENTION, Setting, filter_outcome, map_outcome,
                                   mutate, python_path_only, random_batch, random_setting,
                                   raw_batch, raw_record)
from cleaner_support import (BASE_TS, COMPACT, DAY, append_segment, compact, keyed_batch,
                             random_workload, write_log)
from pylogctl.format.compression import Codec
from pylogctl.format.record_batch import RecordBatch
from pylogctl.storage.cleaner.cleaner import Cleaner
from pylogctl.storage.cleaner.cleaner_config import CleanerConfig
from pylogctl.storage.cleaner.cleaner_log import CleanerLog
from pylogctl.storage.cleaner.cleaner_manager import clean_log
from pylogctl.storage.log import Log
from pylogctl.storage.cleaner import offset_map
from pylogctl.storage.cleaner.offset_map import SkimpyOffsetMap

pytestmark = pytest.mark.skipif(offset_map._map_batch is None,
                                reason="the extension is not built (or PYLOGCTL_NO_SPEEDUPS=1)")


def _files(log_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(log_dir)): p.read_bytes()
            for p in sorted(log_dir.rglob("*")) if p.is_file()}


def _stats(sections) -> list[dict]:
    timing = {"elapsedSecs", "indexSecs", "mbPerSec"}
    return [{k: v for k, v in r.stats.to_dict().items() if k not in timing}
            for s in sections for r in s.rounds]


def _compact_both(tmp_path: Path, build, cleanings) -> None:
    """Build a log dir, copy it, run ``cleanings`` (``compact`` calls, with more data
    between them) on one copy with the extension and on the other without; every file must
    be the same, byte for byte, and so must the statistics."""
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir()
    build(fast)
    shutil.copytree(fast, slow)  # copy2: the segments' mtimes too (the legacy horizon)
    fast_stats = cleanings(fast)
    with python_path_only():
        slow_stats = cleanings(slow)
    assert _files(fast) == _files(slow)
    assert fast_stats == slow_stats


@pytest.mark.parametrize("seed,codecs,keyless", [
    (11, (Codec.NONE,), 0.0), (12, (Codec.NONE,), 0.1), (13, (Codec.NONE, Codec.GZIP), 0.05),
    (14, (Codec.NONE, Codec.LZ4, Codec.ZSTD), 0.0),
])
def test_compaction_writes_the_same_files_with_and_without_the_extension(tmp_path, seed, codecs,
                                                                         keyless):
    """A first cleaning (tombstones get their horizon), more data, and a second one past the
    horizon (cleaned batches with horizons, tombstones dropped)."""
    w = random_workload(seed, batches=200, codecs=codecs, keyless_rate=keyless)
    rng = random.Random(seed)
    more = []
    for i in range(30):
        items = [(b"key-%03d" % rng.randrange(40), None if rng.random() < 0.2 else b"v%d" % i)
                 for _ in range(rng.randint(1, 6))]
        more.append(items)

    def cleanings(log_dir: Path) -> list[dict]:
        first = compact(log_dir, BASE_TS + DAY)
        offset, batches = w.next_offset, []
        for i, items in enumerate(more):
            batches.append(keyed_batch(offset, items, ts=BASE_TS + 2 * DAY + i))
            offset += len(items)
        append_segment(log_dir, log_dir / "t-0", batches)
        second = compact(log_dir, BASE_TS + 5 * DAY)  # past the first cleaning's horizons
        return _stats(first) + _stats(second)

    _compact_both(tmp_path, lambda d: write_log(d, w), cleanings)


def test_rounds_of_a_small_offset_map_are_the_same_with_and_without_the_extension(tmp_path):
    w = random_workload(21, batches=200, keys=300, max_records=12)

    def cleanings(log_dir: Path) -> list[dict]:
        small = Cleaner(CleanerConfig(), SkimpyOffsetMap(24 * 100))  # 90 keys per round
        part = log_dir / "t-0"
        with Log.load(part, COMPACT, recovery_point_checkpoint=w.next_offset,
                      high_watermark_checkpoint=w.next_offset) as log:
            _, rounds = clean_log(small, CleanerLog.for_log(log, BASE_TS + DAY), None,
                                  BASE_TS + DAY, forced=True)
        assert len(rounds) > 2
        timing = {"elapsedSecs", "indexSecs", "mbPerSec"}
        return [{k: v for k, v in r.stats.to_dict().items() if k not in timing} for r in rounds]

    _compact_both(tmp_path, lambda d: write_log(d, w), cleanings)


# -- batch by batch -----------------------------------------------------------------------------
def _same_filtering(data: bytes, setting: Setting) -> tuple:
    fast = filter_outcome(data, setting, accelerated=True)
    slow = filter_outcome(data, setting, accelerated=False)
    assert fast == slow
    return fast


def _records(*specs) -> list[bytes]:
    return [raw_record(i, i * 3, *spec) for i, spec in enumerate(specs)]


ALL_KEPT = Setting({b"a": 100, b"b": 101}, latest=101)


@pytest.mark.parametrize("name,data,setting", [
    ("every record stays: copied as it is",
     raw_batch(100, _records((b"a", b"1"), (b"b", b"2"))), ALL_KEPT),
    ("a record goes: rebuilt against the first kept timestamp",
     raw_batch(100, _records((b"a", b"1"), (b"a", b"2"), (b"b", b"3"))),
     Setting({b"a": 101, b"b": 102}, latest=102)),
    ("a kept tombstone: rebuilt with a delete horizon",
     raw_batch(100, _records((b"a", None), (b"b", b"2"))), ALL_KEPT),
    ("a horizon already passed: the tombstone goes",
     raw_batch(100, _records((b"a", None), (b"b", b"2")), attributes=0x40,
               base_timestamp=NOW - 1), ALL_KEPT),
    ("a horizon still ahead: the tombstone stays, the horizon too",
     raw_batch(100, _records((b"a", None), (b"b", b"2"), (b"b", b"3")), attributes=0x40,
               base_timestamp=NOW + 5), Setting({b"a": 100, b"b": 102}, latest=102)),
    ("log append time: every timestamp is the batch's",
     raw_batch(100, _records((b"a", b"1"), (b"a", b"2")), attributes=0x08, max_timestamp=NOW),
     Setting({b"a": 101}, latest=101)),
    ("keyless records go, counted invalid",
     raw_batch(100, _records((None, b"1"), (b"a", b"2"), (None, b"3"))),
     Setting({b"a": 101}, latest=102)),
    ("past the map's latest offset everything stays",
     raw_batch(100, _records((None, b"1"), (b"a", b"2"))), Setting({b"a": 1}, latest=99)),
    ("a key the map never saw: asked with its digest",
     raw_batch(100, _records((b"zz", b"1"), (b"a", b"2"))), Setting({b"a": 50}, latest=101)),
    ("nothing stays: the batch goes",
     raw_batch(100, _records((b"a", b"1"))), Setting({b"a": 200}, latest=300)),
    ("nothing stays but it ends the round: an empty header",
     raw_batch(100, _records((b"a", b"1"))), Setting({b"a": 200}, latest=300, upper=101)),
    ("overlong varints: rebuilt with canonical ones",
     raw_batch(100, [raw_record(0, 1, b"a", b"1", ((b"h", b"v"),), pad=1),
                     raw_record(1, 2, b"b", b"2", ((b"h", None),), attributes=9, pad=2)]),
     Setting({b"a": 100, b"b": 200}, latest=300)),
    ("a header key that is not UTF-8: Python's replacement characters",
     raw_batch(100, _records((b"a", b"1", ((b"\xff", b"v"),)), (b"a", b"2"))),
     Setting({b"a": 101}, latest=101)),
    ("a record's attributes are rewritten as 0",
     raw_batch(100, [raw_record(0, 0, b"a", b"1", attributes=0x7F),
                     raw_record(1, 0, b"a", b"2", attributes=0x7F)]),
     Setting({b"a": 100}, latest=101)),
])
def test_a_plain_batch_is_filtered_the_same_in_c_and_python(name, data, setting):
    _same_filtering(data, setting)
    # and the C loop took it, but for the header key Python would re-encode differently
    from pylogctl.storage.cleaner._cleaner_scan import filter_batch

    got = filter_batch(data, 0, bytearray(), setting.latest, dict(setting.mapped),
                       lambda key: -1, setting.now_ms, setting.now_ms + setting.retention_ms)
    assert (got is NotImplemented) == ("not UTF-8" in name)


def test_random_and_mutated_batches_are_filtered_and_mapped_the_same():
    rng = random.Random(2024)
    for i in range(600):
        base = rng.choice([0, 100, (1 << 63) - 40])
        batches = [random_batch(rng, base + 10 * j) for j in range(rng.randint(1, 3))]
        if i % 2:
            k = rng.randrange(len(batches))
            batches[k] = mutate(rng, batches[k])
        data = b"".join(batches)
        setting = random_setting(rng, base, base + 30)
        _same_filtering(data, setting)
        start = rng.choice([base, base, base + 3, base + 40])
        entries = rng.choice([1000, 1000, len(setting.mapped) + 3, 0])
        assert (map_outcome(data, setting, start, entries, accelerated=True)
                == map_outcome(data, setting, start, entries, accelerated=False))


def test_keys_sharing_a_digest_share_an_entry_through_the_c_loop_too(monkeypatch):
    data = raw_batch(10, _records((b"ax", b"1"), (b"b", b"2"), (b"ay", b"3"), (b"az", b"4")))
    maps = []
    for accelerated in (True, False):
        m = SkimpyOffsetMap(24 * 100)
        monkeypatch.setattr(m, "_hash", lambda key: hashlib.md5(key[:1]))  # "ab" ~ "ax" ~ "ay"
        m.put(b"ab", 1)
        count = m.put_batch(memoryview(data), 0, 0, 90) if accelerated else None
        assert (count is None) is not accelerated
        if count is None:
            m.put_records(RecordBatch(data).records(), 0, 90)
        maps.append((m.size, m.get(b"ab"), m.get(b"ay"), m.get(b"b"), m.latest_offset,
                     list(m._offsets)))
    assert maps[0] == maps[1] == (2, 13, 13, 11, 13, [b"ab", b"b"])


def test_the_key_table_answers_as_the_dict_it_copies():
    from pylogctl.storage.cleaner._cleaner_scan import filter_batch, key_table

    offsets = {b"k%d" % i: 1000 - i for i in range(500)} | {b"": 7, b"\x00" * 40: 9}
    table = key_table(offsets)
    assert len(table) == len(offsets) and len(key_table({})) == 0
    assert key_table({"str": 1}) is NotImplemented and key_table({b"a": 1 << 64}) is NotImplemented
    keys = [*offsets, b"k500", b"k-1", b"\x00" * 39, b"absent"]
    records = [raw_record(i, 0, key, b"v") for i, key in enumerate(keys)]
    data = raw_batch(0, records)
    asked = []

    def get(key):
        asked.append(key)
        return -1

    outs = []
    for lookup in (offsets, table):
        asked.clear()
        out = bytearray()
        got = filter_batch(data, 0, out, 10_000, lookup, get, NOW, NOW + RETENTION)
        outs.append((got, bytes(out), list(asked)))
    assert outs[0] == outs[1]
    assert outs[0][2] == [b"k500", b"k-1", b"\x00" * 39, b"absent"]  # only keys not in the map
