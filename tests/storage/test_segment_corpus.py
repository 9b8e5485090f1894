"""LogSegment against real broker-written segments: recovery of damaged copies, and the indexes
Kafka itself wrote, reproduced byte for byte.

A rebuild (``recover``) indexes batch by batch, which is exactly what a leader writes when every
append is one batch and the broker never restarted inside the segment. Where Kafka's bytes
differ, the segment's history explains it, and replaying that history through
``LogSegment.append`` reproduces Kafka's files. The rules involved:

* CLEAN RESTART: ``close()`` appends the max-timestamp entry to the active segment's time
  index, and ``bytes_since_last_index_entry`` is in memory only, so after the restart the next
  offset-index entry waits for ``index.interval.bytes`` counted from the restart. (The broker
  writes a producer snapshot at the log end when it shuts down: the restart offsets below are
  the ``.snapshot`` files inside each segment.)
* UNCLEAN RESTART: the loader rebuilt the segment with ``recover`` and appends went on.
* RECORD-LEVEL MAX-TIMESTAMP OFFSET: a leader before Kafka 3.8 (LogValidator, fixed by
  KAFKA-16341) gave the time index the offset of the first *record* holding the batch's max
  timestamp for uncompressed data; followers, the cleaner and recovery use the batch's last
  offset.
* CLEANER: the log cleaner writes a cleaned segment with one append per read buffer, so a
  segment smaller than the buffer gets no offset-index entry, only the final time entry.
* FOLLOWER: a follower appends a whole fetch response at once: one index entry per append,
  naming the append's last offset and the position of its first batch.

The last three are ``LogSegment.append`` before Kafka 3.8, which wrote these corpora: one index
entry per append, with the max timestamp and offset its caller computed. Since 3.8 it walks the
appended batches and indexes each in turn (pylogctl's engine), so the replays use
:func:`_append_before_3_8` on the engine's segment.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from pylogctl.format.log_stream import iter_batches
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.naming import offset_from_file
from pylogctl.storage.offset_index import OffsetIndex
from pylogctl.storage.segment import LogSegment
from pylogctl.storage.time_index import TimestampOffset

KAFKA_DEFAULTS = LogConfig()  # index.interval.bytes 4096, segment.index.bytes 10 MiB
CLEAN_DIRS = ("smartassets-connect", "yuanliubei-src")


@dataclass(frozen=True)
class History:
    """How a broker came to write a segment's indexes (see the module docstring)."""

    restarts: tuple[int, ...] = ()  # CLEAN RESTART before these offsets
    recovered_before: int | None = None  # UNCLEAN RESTART: [base, this) rebuilt by recovery
    cleaned: bool = False  # CLEANER
    record_level: bool = True  # RECORD-LEVEL MAX-TIMESTAMP OFFSET (Kafka 2.1 leaders here)


# The segments of the clean-shutdown dirs whose indexes a rebuild does not reproduce.
HISTORIES = {
    "smartassets-connect/__consumer_offsets-16/00000000000000000072": History(restarts=(100,)),
    "smartassets-connect/__consumer_offsets-37/00000000000000000127": History(restarts=(170,)),
    "smartassets-connect/docker-connect-status-1/00000000000000000046": History(restarts=(67,)),
    "smartassets-connect/docker-connect-status-2/00000000000000000115": History(restarts=(205,)),
    "smartassets-connect/docker-connect-status-3/00000000000000000157": History(restarts=(211,)),
    "smartassets-connect/docker-connect-configs-0/00000000000000000069": History(
        recovered_before=99),
    "smartassets-connect/docker-connect-configs-0/00000000000000000000": History(cleaned=True),
    # one 2-record batch whose records share the max timestamp: the entry names the first
    "yuanliubei-src/__consumer_offsets-17/00000000000000000058": History(),
}


def _copy_log(log: Path, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / log.name
    shutil.copyfile(log, target)  # not copy(): the corpus files are read-only
    return target


def _index_bytes(directory: Path, log: Path) -> tuple[bytes, bytes]:
    def read(suffix: str) -> bytes:
        path = directory / (log.stem + suffix)
        return path.read_bytes() if path.exists() else b""  # never opened: Kafka's is empty
    return read(".index"), read(".timeindex")


def _kafka_index_bytes(log: Path) -> tuple[bytes, bytes]:
    return log.with_suffix(".index").read_bytes(), log.with_suffix(".timeindex").read_bytes()


def _indexed_segments(root: Path) -> list[tuple[Path, bool]]:
    """Every segment with both indexes, and whether it is its partition's active (last) one."""
    out = []
    for part in sorted(p for p in root.iterdir() if p.is_dir()):
        logs = sorted(part.glob("*.log"))
        for log in logs:
            if log.with_suffix(".index").exists() and log.with_suffix(".timeindex").exists():
                out.append((log, log == logs[-1]))
    return out


def _rebuild(log: Path, directory: Path) -> tuple[bytes, bytes]:
    _copy_log(log, directory)
    with LogSegment.open(directory, offset_from_file(log), KAFKA_DEFAULTS) as segment:
        assert segment.recover() == 0
    return _index_bytes(directory, log)


@dataclass(frozen=True)
class _Append:
    data: bytes
    first_offset: int
    last_offset: int
    max_timestamp: int
    shallow_offset: int  # the offset the time index gets for ``max_timestamp``


def _appends(log: Path, groups: list[tuple[int, int]] | None = None,
             record_level: bool = False) -> list[_Append]:
    """The segment's batches as appends: one per batch, or one per ``(start, end)`` byte range."""
    data = log.read_bytes()
    batches = list(iter_batches(data))
    if groups is None:
        groups = [(b.position, b.position + b.size_in_bytes) for b in batches]
    out = []
    for start, end in groups:
        members = [b for b in batches if start <= b.position < end]
        best = members[0]
        for b in members:
            if b.max_timestamp > best.max_timestamp:
                best = b
        shallow = best.last_offset
        if record_level:
            shallow = next(r.offset for r in best.records() if r.timestamp == best.max_timestamp)
        out.append(_Append(data[start:end], members[0].base_offset, members[-1].last_offset,
                           best.max_timestamp, shallow))
    return out


def _append_before_3_8(segment: LogSegment, a: _Append) -> None:
    """Kafka 3.7's ``LogSegment.append(largestOffset, largestTimestampMs,
    shallowOffsetOfMaxTimestamp, records)``: one entry for the whole append, at its start."""
    position = segment.size
    if position == 0:
        segment._rolling_based_timestamp = a.max_timestamp
    segment.log.append(a.data)
    if a.max_timestamp > segment.max_timestamp_so_far:
        segment._max_timestamp_and_offset = TimestampOffset(a.max_timestamp, a.shallow_offset)
    if segment._bytes_since_last_index_entry > segment.index_interval_bytes:
        segment.offset_index.append(a.last_offset, position)
        segment.time_index.maybe_append(segment.max_timestamp_so_far,
                                        segment.shallow_offset_of_max_timestamp_so_far)
        segment._bytes_since_last_index_entry = 0
    segment._bytes_since_last_index_entry += len(a.data)


def _replay(log: Path, directory: Path, history: History, active: bool) -> tuple[bytes, bytes]:
    base = offset_from_file(log)
    directory.mkdir(parents=True)
    if history.cleaned:
        appends = _appends(log, [(0, log.stat().st_size)])
    else:
        appends = _appends(log, record_level=history.record_level)
    segment = LogSegment.create(directory, base, KAFKA_DEFAULTS)
    for a in appends:
        if a.first_offset == history.recovered_before:
            segment.close_handlers()  # crash: no final entry, no trimming
            segment = LogSegment.open(directory, base, KAFKA_DEFAULTS)
            segment.recover()
            segment.resize_indexes(KAFKA_DEFAULTS.segment_index_bytes)  # active again
        elif a.first_offset in history.restarts:
            segment.close()
            segment = LogSegment.open(directory, base, KAFKA_DEFAULTS)
            segment.resize_indexes(KAFKA_DEFAULTS.segment_index_bytes)
        _append_before_3_8(segment, a)
    if not active:
        segment.on_become_inactive_segment()  # rolled
    segment.close()
    return _index_bytes(directory, log)


@pytest.mark.corpus
@pytest.mark.parametrize("name", CLEAN_DIRS)
def test_rebuilt_indexes_match_kafkas_in_clean_shutdown_dirs(corpus, tmp_path, name):
    """Kafka's defaults rebuild every index of a cleanly shut down broker byte for byte, except
    the segments in HISTORIES, whose histories reproduce them instead."""
    segments = _indexed_segments(corpus / name)
    assert len(segments) == {"smartassets-connect": 99, "yuanliubei-src": 54}[name]
    explained = set()
    for i, (log, active) in enumerate(segments):
        key = f"{name}/{log.parent.name}/{log.stem}"
        rebuilt = _rebuild(log, tmp_path / f"r{i}")
        if key not in HISTORIES:
            assert rebuilt == _kafka_index_bytes(log), key
            continue
        explained.add(key)
        assert rebuilt != _kafka_index_bytes(log), f"{key} needs no history"
        assert _replay(log, tmp_path / f"h{i}", HISTORIES[key], active) == \
            _kafka_index_bytes(log), key
    assert explained == {k for k in HISTORIES if k.startswith(name + "/")}


def _follower_groups(log: Path) -> list[tuple[int, int]]:
    """Append boundaries implied by Kafka's offset index: an entry ``(o, p)`` is one append
    from ``p`` through the batch ending at ``o``. Bytes between such appends are taken as one
    append: had they been several, any start past the interval would have left an entry."""
    with OffsetIndex(log.with_suffix(".index")) as index:
        entries = [index.entry(i) for i in range(index.entries)]
    ends = {b.last_offset: b.position + b.size_in_bytes for b in iter_batches(log.read_bytes())}
    cuts = {0, log.stat().st_size}
    for offset, position in entries:
        cuts.update((position, ends[offset]))
    points = sorted(cuts)
    return list(zip(points, points[1:]))


@pytest.mark.corpus
def test_follower_written_indexes_are_one_entry_per_multi_batch_append(corpus, tmp_path):
    """invoice-multiseg: partitions 0, 1, 3 and 4 were followed by this broker (appends of whole
    fetch responses, batch-level time-index offsets); partition 2 was led by it (one batch per
    append, RECORD-LEVEL MAX-TIMESTAMP OFFSET). Replaying those appends reproduces every index
    Kafka left for the rolled segments."""
    segments = _indexed_segments(corpus / "invoice-multiseg")
    assert len(segments) == 15 and not any(active for _, active in segments)
    for i, (log, _) in enumerate(segments):
        led = log.parent.name == "invoice-2"
        appends = _appends(log, _follower_groups(log), record_level=led)
        directory = tmp_path / f"s{i}"
        directory.mkdir()
        with LogSegment.create(directory, offset_from_file(log), KAFKA_DEFAULTS) as segment:
            for a in appends:
                _append_before_3_8(segment, a)
            segment.on_become_inactive_segment()
        assert _index_bytes(directory, log) == _kafka_index_bytes(log), log


@pytest.mark.corpus
def test_rebuilt_and_follower_indexes_find_the_same_batches(corpus, tmp_path):
    """A rebuilt index differs from a follower's but translates every offset to the same batch."""
    log = corpus / "invoice-multiseg" / "invoice-3" / "00000000000000000000.log"
    kafka_dir, rebuilt_dir = tmp_path / "kafka", tmp_path / "rebuilt"
    _copy_log(log, kafka_dir)
    for suffix in (".index", ".timeindex"):
        shutil.copyfile(log.with_suffix(suffix), kafka_dir / (log.stem + suffix))
    assert _rebuild(log, rebuilt_dir) != _kafka_index_bytes(log)
    with LogSegment.open(kafka_dir, 0, KAFKA_DEFAULTS) as kafka, \
            LogSegment.open(rebuilt_dir, 0, KAFKA_DEFAULTS) as rebuilt:
        batches = [(b.base_offset, b.last_offset) for b in iter_batches(log.read_bytes())]
        for first, last in batches:
            for offset in {first, (first + last) // 2, last}:
                assert kafka.translate_offset(offset) == rebuilt.translate_offset(offset)
        assert kafka.read_next_offset() == rebuilt.read_next_offset() == batches[-1][1] + 1


# -- recovery of damaged copies of real segments -------------------------------------------

DAMAGE_CASES = {
    "magic-1": "xpx-2016/foo-0/00000000000000000000.log",
    "gzip": "node-logx/topic-logx-001-0/00000000000000000000.log",
    "headers": "smartassets-connect/temperature-0/00000000000000000000.log",
}


def _positions(log: Path) -> list[tuple[int, int]]:
    with FileRecords(log) as records:
        return [(b.position, b.size_in_bytes) for b in records.batches()]


@pytest.mark.corpus
@pytest.mark.parametrize("case", sorted(DAMAGE_CASES))
@pytest.mark.parametrize("damage", ["truncated-tail", "garbage", "crc-flip"])
def test_recover_damaged_corpus_segment(corpus, tmp_path, case, damage):
    source = corpus / DAMAGE_CASES[case]
    log = _copy_log(source, tmp_path)
    batches = _positions(log)
    size = log.stat().st_size
    middle_position, middle_size = batches[len(batches) // 2]
    if damage == "truncated-tail":
        last_position = batches[-1][0]
        with open(log, "r+b") as f:
            f.truncate(size - 5)
        expected_size = last_position
    elif damage == "garbage":
        with open(log, "ab") as f:
            f.write(b"\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x01\x00" + b"\xab" * 300)
        expected_size = size
    else:
        raw = bytearray(log.read_bytes())
        raw[middle_position + middle_size - 1] ^= 0x01  # last byte of the batch: CRC-covered
        log.write_bytes(bytes(raw))
        expected_size = middle_position
    damaged_size = log.stat().st_size
    with LogSegment.open(tmp_path, offset_from_file(log), KAFKA_DEFAULTS) as segment:
        assert segment.recover() == damaged_size - expected_size
        assert segment.size == expected_size
    assert log.stat().st_size == expected_size
    assert _positions(log) == [b for b in batches if b[0] < expected_size]
