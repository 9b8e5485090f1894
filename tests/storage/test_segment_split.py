"""Splitting a legacy segment whose offsets overflow its base offset + 2^31-1 (KAFKA-6264), as
Kafka's loader does (``retryOnOffsetOverflow``, ``LocalLog.splitOverflowedSegment``): where the
overflow is found, the layout the split writes, the rest of the load planned on it, and a SIGKILL
at any point of the apply repaired by planning again."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from pylogctl.storage.loader import apply as load_apply
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.loader.plan import (DeleteFile, DeleteSegment, DeleteSnapshot,
                                        RecoverSegment, RenameFile, SplitSegment)
from pylogctl.storage.loader.log_loader import LoadError, apply_load, plan_load
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.offset_index import OffsetIndex
from pylogctl.storage.producer_state import write_snapshot
from pylogctl.storage.segment import LogSegment
from pylogctl.storage.loader.segment_split import (SegmentSplitError, rename_segment_files,
                                                   write_split)
from pylogctl.storage.time_index import TimeIndex
from load_support import (copy_partition, fingerprint, first_batch_at, flip_byte, load_twice,
                          plan_for)
from wire import legacy_gzip_wrapper, legacy_message

TS = 1_500_000_000_000
SPAN = 2**31  # one more than a segment can index above its base
CONFIG = LogConfig(index_interval_bytes=1000)
TEMP_SUFFIXES = (".deleted", ".cleaned", ".swap")
OLD_MTIME_NS = 1_480_000_000_123 * 1_000_000


Record = tuple[int, bytes | None]  # (offset, value)


def legacy_log(magic: int, first: int = 0) -> tuple[bytes, list[Record], list[int]]:
    """A segment a pre-0.11 cleaner could have written: three runs of offsets, each more than
    2^31-1 above the previous run's start, the last in a gzip wrapper. Returns the bytes, every
    record as ``(offset, value)``, and the base offsets Kafka's split gives."""
    runs = [first, first + SPAN + 5, first + 2 * SPAN + 40]
    data, records = b"", []
    for run in runs[:2]:
        for i in range(30):
            value = b"%d-" % (run + i) + b"v" * 90
            data += legacy_message(run + i, magic, b"k%d" % i, value, TS + run % 1000 + i)
            records.append((run + i, value))
    inner = [runs[2] + i for i in range(3)]
    values: list[bytes | None] = [b"a", None, b"c"]
    data += legacy_gzip_wrapper(inner, magic, values, TS + 999)
    records += list(zip(inner, values))
    return data, records, runs


def make_partition(tmp_path: Path, data: bytes, name_base: int = 0, *, indexes: bool = False,
                   snapshot: bool = False) -> Path:
    part = tmp_path / "logs" / "legacy-0"
    part.mkdir(parents=True)
    log = part / f"{name_base:020d}.log"
    log.write_bytes(data)
    if indexes:  # what an old broker left: the loader only opens them
        (part / f"{name_base:020d}.index").write_bytes(b"")
        (part / f"{name_base:020d}.timeindex").write_bytes(b"")
    if snapshot:
        write_snapshot(part / f"{name_base:020d}.snapshot", [])
    os.utime(log, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    return part


def logs(part: Path) -> list[Path]:
    return sorted(p for p in part.iterdir() if p.name.endswith(".log"))


def all_records(part: Path) -> list[Record]:
    out = []
    for log in logs(part):
        with FileRecords(log) as records:
            out += [(r.offset, r.value) for b in records.batches() for r in b.records()]
    return out


def steps_of(plan, cls) -> list:
    return [s for s in plan.steps if isinstance(s, cls)]


# -- the layout -------------------------------------------------------------------------------
@pytest.mark.parametrize("magic", [0, 1])
def test_split_layout_keeps_every_record_and_indexes_verify(tmp_path, cli, magic):
    data, records, runs = legacy_log(magic)
    part = make_partition(tmp_path, data)
    plan, result, again = load_twice(part, config=CONFIG, now_ms=0)
    (split,) = steps_of(plan, SplitSegment)
    assert split.base_offset == 0 and split.size == len(data)
    assert [p.base_offset for p in split.segments] == runs
    assert split.overflow_offset == runs[1]
    assert split.overflow_position == split.segments[1].position
    assert sum(p.size for p in split.segments) == len(data)
    assert "KAFKA-6264" in split.reason and "retryOnOffsetOverflow" in split.reason
    assert plan.segments == tuple(runs) and plan.log_end_offset == runs[2] + 3
    assert again.is_empty, again.describe()
    assert [p.name for p in logs(part)] == [f"{b:020d}.log" for b in runs]
    assert b"".join(p.read_bytes() for p in logs(part)) == data
    assert all_records(part) == records
    assert not [n for n in os.listdir(part) if n.endswith(TEMP_SUFFIXES)]
    for log in logs(part):  # the old segment's mtime, as Kafka's setLastModified
        assert log.stat().st_mtime_ns // 1_000_000 == OLD_MTIME_NS // 1_000_000
        for index in (log.with_suffix(".index"), log.with_suffix(".timeindex")):
            res = cli("dump-segment", "--verify-index-only", index)
            assert res.code == 0 and "mismatch" not in res.out + res.err, res.out + res.err
        res = cli("dump-segment", "--deep-iteration", "-o", "json", log)
        assert res.code == 0, res.err
    res = cli("dump-segment", "--deep-iteration", *logs(part))
    assert res.code == 0
    shown = [int(line.split()[2]) for line in res.out.splitlines() if line.startswith("| offset:")]
    assert shown == [o for o, _ in records]


def test_planning_writes_only_scratch_files_it_removes_and_apply_backs_up(tmp_path,
                                                                           monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    data, _, _ = legacy_log(1)
    part = make_partition(tmp_path, data)
    before = fingerprint(part)
    plan = plan_load(part, config=CONFIG, now_ms=0)
    assert fingerprint(part) == before and list(scratch.iterdir()) == []
    assert all(str(tmp_path / "logs") in s.path for s in steps_of(plan, RecoverSegment))
    apply_load(plan, backup_dir=tmp_path / "backup")
    assert (tmp_path / "backup" / "legacy-0" / "00000000000000000000.log").read_bytes() == data


def test_the_step_is_plain_data_and_one_line(tmp_path):
    data, _, runs = legacy_log(1)
    plan = plan_load(make_partition(tmp_path, data), config=CONFIG, now_ms=0)
    step = plan.to_dict()["steps"][0]
    assert step["kind"] == "split-segment"
    segments = step["segments"]
    assert [s["baseOffset"] for s in segments] == runs
    assert segments[0] == {"baseOffset": 0, "position": 0, "size": segments[1]["position"]}
    line = plan.describe()[1]
    assert line.startswith(f"  1. split segment 0 ({len(data)} bytes) into 3 segments at "
                           f"{', '.join(map(str, runs))}; offset {runs[1]} (byte position ")


def test_split_indexes_are_the_ones_kafkas_append_from_file_writes(corpus, tmp_path):
    """Real 0.10.1 messages (xpx-2016), re-offset as a cleaner grouping segments across 2^31
    would have left them (the offset is outside the CRC). After a clean shutdown nothing is
    recovered, so the split's own indexes stay: appends of up to 1 MiB, indexed batch by batch,
    the time index closed with the max timestamp."""
    log_dir, part = copy_partition(corpus, "xpx-2016", "TEST-TOPIC-0", tmp_path)
    (log_dir / ".kafka_cleanshutdown").write_bytes(b"")
    log = part / "00000000000000000000.log"
    with FileRecords(log) as records:
        batches = [(b.raw_bytes(), b.max_timestamp) for b in records.batches()]
    cut = len(batches) * 9 // 10  # the first run holds more than one 1 MiB append
    shifted = b"".join(raw if i < cut else (i + SPAN).to_bytes(8, "big") + raw[8:]
                       for i, (raw, _) in enumerate(batches))
    log.write_bytes(shifted)
    plan, kwargs = plan_for(log_dir, part, config=CONFIG, now_ms=0)
    (split,) = steps_of(plan, SplitSegment)
    assert "00000000000000000000.index unusable" in split.reason  # no index: recovered on load
    assert not steps_of(plan, RecoverSegment)  # clean shutdown: the split segments stay as written
    apply_load(plan)
    assert plan_load(part, config=CONFIG, **kwargs).is_empty
    with OffsetIndex(part / "00000000000000000000.index", 0) as index:
        assert [tuple(index.entry(n)) for n in range(len(index))] == \
            kafka_split_index([len(raw) for raw, _ in batches[:cut]], list(range(cut)))
    max_ts = max(ts for _, ts in batches[:cut])
    with TimeIndex(part / "00000000000000000000.timeindex", 0) as index:
        assert index.last_entry.timestamp == max_ts
    second = part / f"{cut + SPAN:020d}.log"
    assert second.read_bytes() == b"".join((i + SPAN).to_bytes(8, "big") + raw[8:]
                                           for i, (raw, _) in enumerate(batches) if i >= cut)


def kafka_split_index(sizes: list[int], last_offsets: list[int]) -> list[tuple[int, int]]:
    """The offset index ``LogSegment.appendFromFile`` leaves for batches of these sizes (all in
    range), from Kafka 4.4's code: however the batches are grouped into appends (read buffers
    of 1 MiB), ``append`` walks them one by one and indexes each batch that starts once more
    than ``index.interval.bytes`` (1000 here) have been written since the last entry, with its
    last offset at its start position."""
    entries, since, position = [], 0, 0
    for size, last_offset in zip(sizes, last_offsets):
        if since > 1000:
            entries.append((last_offset, position))
            since = 0
        position += size
        since += size
    return entries


def test_a_batch_above_1_mib_is_split_whole_and_indexed_batch_by_batch(tmp_path):
    """A batch larger than the 1 MiB read buffer is copied in one append (the buffer grows to
    hold it), and the batches after it are indexed one by one, as Kafka 4.4's append does."""
    big = legacy_message(0, 1, None, b"B" * (3 * 1024 * 1024 // 2), TS)
    small = [legacy_message(i, 1, None, bytes([i]) * 100_000, TS + i) for i in range(1, 40)]
    data = big + b"".join(small) + legacy_message(SPAN, 1, None, b"x", TS + 50)
    part = make_partition(tmp_path, data)
    plan, _, again = load_twice(part, config=CONFIG, had_clean_shutdown=True, now_ms=0)
    assert steps_of(plan, SplitSegment) and not steps_of(plan, RecoverSegment)
    assert again.is_empty
    expected = kafka_split_index([len(big)] + [len(m) for m in small], list(range(40)))
    assert expected[0] == (1, len(big))  # the first batch after the big one starts an entry
    with OffsetIndex(part / "00000000000000000000.index", 0) as index:
        assert [tuple(index.entry(n)) for n in range(len(index))] == expected


# -- where Kafka finds the overflow -----------------------------------------------------------
def test_found_by_recovery_above_the_recovery_point_and_recovery_restarts_on_the_split(tmp_path):
    data, records, runs = legacy_log(1)
    part = make_partition(tmp_path, data, indexes=True)  # loads; only recoverLog sees it
    plan = plan_load(part, config=CONFIG, recovery_point_checkpoint=runs[1] + 7, now_ms=0)
    (split,) = steps_of(plan, SplitSegment)
    assert "at or above the recovery point" in split.reason
    # recoverLog starts over on the new segments: from the one holding the recovery point
    recovered = [s.base_offset for s in steps_of(plan, RecoverSegment)] + \
        [s.base_offset for s in plan.verified]
    assert sorted(recovered) == runs[1:]
    assert plan.recovery_point == runs[1] + 7
    apply_load(plan)
    assert all_records(part) == records
    assert plan_load(part, config=CONFIG, recovery_point_checkpoint=runs[1] + 7,
                     now_ms=0).is_empty


def test_not_split_where_kafka_does_not_recover_the_segment(tmp_path):
    data, _, runs = legacy_log(1)
    part = make_partition(tmp_path, data, indexes=True)
    plan = plan_load(part, config=CONFIG, had_clean_shutdown=True, now_ms=0)
    assert not steps_of(plan, SplitSegment)
    assert plan.segments == (0,) and plan.log_end_offset == runs[2] + 3


def test_a_corrupt_batch_after_the_overflow_is_cut_from_the_split_segment(tmp_path):
    """The split copies batches without checking CRCs; the recovery that follows it finds the
    corrupt one in the new segment, cuts there and deletes the later segment."""
    data, records, runs = legacy_log(1)
    part = make_partition(tmp_path, data)
    log = part / "00000000000000000000.log"
    position, size = first_batch_at(log, runs[1] + 10)
    start = first_batch_at(log, runs[1])[0]
    flip_byte(log, position + size - 1)
    plan, _, again = load_twice(part, config=CONFIG, recovery_point_checkpoint=0, now_ms=0)
    kinds = [s.kind for s in plan.steps]
    assert kinds[:3] == ["split-segment", "delete-segment", "recover-segment"]
    assert steps_of(plan, DeleteSegment)[0].base_offset == runs[2]
    (cut,) = [s for s in steps_of(plan, RecoverSegment) if s.truncated_bytes]
    assert (cut.base_offset, cut.valid_bytes, cut.next_offset) == (runs[1], position - start,
                                                                  runs[1] + 10)
    assert plan.segments == tuple(runs[:2]) and plan.log_end_offset == runs[1] + 10
    assert again.is_empty
    assert all_records(part) == records[:40]


def test_bytes_after_the_last_batch_fail_the_split_as_in_kafka(tmp_path):
    data, _, _ = legacy_log(1)
    part = make_partition(tmp_path, data + b"\0\0\0\0\0\0\0\1\0\0")
    with pytest.raises(LoadError) as err:
        plan_load(part, config=CONFIG, now_ms=0)
    assert err.value.path == str(part / "00000000000000000000.log")
    assert err.value.position == len(data)
    assert "NoSuchElementException" in err.value.message and "KAFKA-6264" in err.value.message
    assert sorted(os.listdir(part)) == ["00000000000000000000.log"]  # planning wrote nothing


def test_a_segment_named_below_its_first_batch_is_replaced_with_its_snapshot(tmp_path):
    """The cleaner names a segment after its first source segment, whose records may all be
    gone: the first split segment is named after the first batch, above the old name."""
    data, records, runs = legacy_log(1, first=10)
    part = make_partition(tmp_path, data, snapshot=True)
    plan, _, again = load_twice(part, config=CONFIG, now_ms=0)
    split = steps_of(plan, SplitSegment)[0]
    assert [p.base_offset for p in split.segments] == runs
    assert plan.steps[1] == DeleteSnapshot(0, str(part / "00000000000000000000.snapshot"),
                                           plan.steps[1].reason)
    assert again.is_empty
    assert [p.name for p in logs(part)] == [f"{b:020d}.log" for b in runs]
    assert not (part / "00000000000000000000.index").exists()
    assert all_records(part) == records


# -- interruptions ----------------------------------------------------------------------------
SCENARIOS = {"same-base": (0, False), "named-below": (10, True)}


def _prepare(where: Path, scenario: str) -> tuple[Path, dict]:
    first, snapshot = SCENARIOS[scenario]
    data, _, _ = legacy_log(1, first=first)
    part = make_partition(where, data, snapshot=snapshot)
    return part, dict(config=CONFIG, recovery_point_checkpoint=0, now_ms=0)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_sigkill_at_any_write_rename_or_delete_is_repaired_by_planning_again(
        tmp_path, monkeypatch, scenario):
    """Kill the apply before each file operation it makes (every append while writing the
    ``.cleaned`` segments, every rename and every delete, in every step): planning again and
    applying reaches the files an uninterrupted run does."""
    part, kwargs = _prepare(tmp_path / "whole", scenario)
    apply_load(plan_load(part, **kwargs))
    expected = fingerprint(part)
    events = {"n": 0, "crash_at": None}

    def crashing(real):
        def call(*args, **kw):
            if events["n"] == events["crash_at"]:
                raise KeyboardInterrupt("killed")
            events["n"] += 1
            return real(*args, **kw)
        return call

    monkeypatch.setattr(os, "replace", crashing(os.replace))
    monkeypatch.setattr(os, "unlink", crashing(os.unlink))
    monkeypatch.setattr(LogSegment, "append_from_file", crashing(LogSegment.append_from_file))
    part, kwargs = _prepare(tmp_path / "count", scenario)
    plan = plan_load(part, **kwargs)
    events["n"] = 0
    apply_load(plan)
    total = events["n"]
    assert total > 20
    repairs = set()
    for crash_at in range(total):
        part, kwargs = _prepare(tmp_path / f"crash{crash_at}", scenario)
        plan = plan_load(part, **kwargs)
        events.update(n=0, crash_at=crash_at)
        with pytest.raises(KeyboardInterrupt):
            apply_load(plan)
        events["crash_at"] = None
        repair = plan_load(part, **kwargs)
        repairs.add(tuple(sorted({s.kind for s in repair.steps})))
        if any(n.endswith(".swap") for n in os.listdir(part)) and \
                not any(n.endswith(".cleaned") for n in os.listdir(part)):
            assert not steps_of(repair, SplitSegment)  # complete: installed, not split again
        apply_load(repair)
        again = plan_load(part, **kwargs)
        assert again.is_empty, (crash_at, again.describe())
        assert fingerprint(part) == expected, crash_at
    assert any("split-segment" in r for r in repairs)  # rolled back and split again
    assert any("rename-file" in r and "split-segment" not in r for r in repairs)  # rolled forward


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_crash_between_steps_is_repaired_by_planning_again(tmp_path, monkeypatch, scenario):
    part, kwargs = _prepare(tmp_path / "whole", scenario)
    plan = plan_load(part, **kwargs)
    apply_load(plan)
    expected = fingerprint(part)
    real_apply = load_apply._Applier.apply
    for crash_after in range(1, len(plan.steps)):
        part, kwargs = _prepare(tmp_path / f"crash{crash_after}", scenario)
        done: list = []

        def apply_then_crash(self, step):
            if len(done) == crash_after:
                raise KeyboardInterrupt("killed")
            done.append(step)
            real_apply(self, step)

        monkeypatch.setattr(load_apply._Applier, "apply", apply_then_crash)
        with pytest.raises(KeyboardInterrupt):
            apply_load(plan_load(part, **kwargs))
        monkeypatch.setattr(load_apply._Applier, "apply", real_apply)
        repair, _, again = load_twice(part, **kwargs)
        assert not steps_of(repair, SplitSegment)  # the split was done: never again
        assert again.is_empty, again.describe()
        assert fingerprint(part) == expected, crash_after


def _split_state(part: Path, stage: str) -> None:
    """The files ``replaceSegments`` leaves at ``stage``, made directly."""
    parts = write_split(str(part / "00000000000000000000.log"), str(part), CONFIG, ".cleaned")
    if stage == "cleaned":
        return
    if stage == "swap-half-renamed":  # the newest segment's .log renamed, nothing else
        os.replace(part / f"{parts[-1].base_offset:020d}.log.cleaned",
                   part / f"{parts[-1].base_offset:020d}.log.swap")
        return
    for p in reversed(parts):
        rename_segment_files(str(part), p.base_offset, ".cleaned", ".swap")
    if stage == "swap":
        return
    for name in os.listdir(part):
        if name.startswith("00000000000000000000.") and not name.endswith((".swap", ".snapshot")):
            os.replace(part / name, part / (name + ".deleted"))
    if stage == "installed":
        rename_segment_files(str(part), parts[0].base_offset, ".swap", "")


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("stage", ["cleaned", "swap-half-renamed", "swap", "old-deleted",
                                   "installed"])
def test_each_replace_segments_stage_is_completed_or_rolled_back(tmp_path, scenario, stage):
    part, kwargs = _prepare(tmp_path / "whole", scenario)
    apply_load(plan_load(part, **kwargs))
    expected = fingerprint(part)
    part, kwargs = _prepare(tmp_path / stage, scenario)
    _split_state(part, stage)
    plan = plan_load(part, **kwargs)
    deleted = [os.path.basename(s.path) for s in steps_of(plan, DeleteFile)]
    if stage in ("cleaned", "swap-half-renamed"):  # incomplete: rolled back, split again
        assert deleted and all(n.endswith((".cleaned", ".swap")) for n in deleted)
        assert steps_of(plan, SplitSegment) and not steps_of(plan, RenameFile)
    else:  # complete: the old segment goes, the swap files are installed
        assert not steps_of(plan, SplitSegment) and steps_of(plan, RenameFile)
        if stage == "swap" and scenario == "named-below":  # Kafka's range misses the old one
            assert any("pylogctl's rule" in s.reason for s in steps_of(plan, DeleteFile)
                       if s.path.endswith("00000000000000000000.log"))
    apply_load(plan)
    assert plan_load(part, **kwargs).is_empty
    assert fingerprint(part) == expected


def test_a_failed_split_leaves_no_cleaned_files(tmp_path):
    data, _, _ = legacy_log(1)
    size_below_14 = (5).to_bytes(8, "big") + (5).to_bytes(4, "big") + b"\0" * 20
    part = make_partition(tmp_path, data + size_below_14)
    with pytest.raises(SegmentSplitError) as err:
        write_split(str(part / "00000000000000000000.log"), str(part), CONFIG, ".cleaned")
    assert "smaller than minimum record overhead" in err.value.message
    assert err.value.position == len(data)
    assert sorted(os.listdir(part)) == ["00000000000000000000.log"]
    with pytest.raises(LoadError, match="minimum record overhead"):  # Kafka fails to load too
        plan_load(part, config=CONFIG, now_ms=0)
