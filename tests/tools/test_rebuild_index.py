"""rebuild-index's library: rebuilt indexes against Kafka's, verdicts, plans that change
nothing, atomic writes with backups, locks, and runs interrupted at every write."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from rebuild_index_support import (CLEAN_DIRS, copy_tree, lock_held, tree_state,
                                   write_transactional_partition)
from storage.test_segment_corpus import HISTORIES
from pylogctl.errors import LogDirLockedError, LogSegmentOffsetOverflowError, UsageError
from pylogctl.format.builder import build_batch
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.naming import log_filename
from pylogctl.storage.producer_state import ProducerStateManager
from pylogctl.storage.segment import LogSegment
from pylogctl.storage.transaction_index import read_transaction_index
from pylogctl.tools.rebuild_index import (DEFAULT_INDEX_INTERVAL_BYTES, IndexRebuild,
                                          RebuildOptions, SegmentRebuild)

EXECUTE = RebuildOptions(execute=True)
SUFFIXES = (".index", ".timeindex", ".txnindex")


def run(paths, options: RebuildOptions = RebuildOptions()) -> list[SegmentRebuild]:
    with IndexRebuild([str(p) for p in paths], options) as rebuild:
        return list(rebuild.segments())


def statuses(segments: list[SegmentRebuild]) -> dict[str, dict[str, str]]:
    return {f"{Path(s.path).parent.name}/{Path(s.path).stem}":
            {r.comparison.kind: r.comparison.status for r in s.indexes} for s in segments}


def kafka_indexed(root: Path, name: str, suffix: str = ".timeindex") -> list[Path]:
    """Segments of a clean-shutdown dir whose bytes a rebuild reproduces (not in HISTORIES)
    and whose ``suffix`` index has entries."""
    return [log for log in sorted(root.rglob("*.log"))
            if f"{name}/{log.parent.name}/{log.stem}" not in HISTORIES
            and log.with_suffix(suffix).stat().st_size]


def test_default_interval_is_kafkas():
    assert DEFAULT_INDEX_INTERVAL_BYTES == LogConfig().index_interval_bytes == 4096


@pytest.mark.corpus
@pytest.mark.parametrize("name", CLEAN_DIRS)
def test_verify_clean_shutdown_dirs_differs_only_where_kafkas_history_explains(
        corpus, tmp_path, name):
    segments = run([copy_tree(corpus / name, tmp_path / name)])
    different = {f"{name}/{k}" for k, kinds in statuses(segments).items()
                 if set(kinds.values()) != {"identical"}}
    assert different == {k for k in HISTORIES if k.startswith(name + "/")}
    for s in segments:
        assert s.error is None and s.invalid_bytes == 0
        for r in s.indexes:
            assert not r.comparison.problem, (s.path, r.comparison)
            assert r.comparison.status != "different" or r.comparison.verdict == "benign"
            assert r.action == ("keep" if r.comparison.status == "identical" else "replace")
            assert not r.done


@pytest.mark.corpus
def test_follower_written_indexes_are_benign(corpus, tmp_path):
    segments = run([copy_tree(corpus / "invoice-multiseg", tmp_path / "inv")])
    explanations = [r.comparison.explanation for s in segments for r in s.indexes
                    if r.comparison.status == "different"]
    assert explanations and all(r.comparison.verdict == "benign" for s in segments
                                for r in s.indexes if r.comparison.status == "different")
    assert any("multi-batch appends, as a follower writes them" in e for e in explanations)
    # the active segments' indexes are missing from the corpus (preallocated, not copied)
    assert {s.path.rsplit("/", 2)[-2] for s in segments
            if any(r.comparison.status == "missing" for r in s.indexes)} == {
        f"invoice-{i}" for i in range(5)}


@pytest.mark.corpus
def test_plan_and_verify_change_nothing(corpus, tmp_path):
    root = copy_tree(corpus / "smartassets-connect", tmp_path / "sa")
    for log in kafka_indexed(root, "smartassets-connect")[:3]:
        log.with_suffix(".index").unlink()
        log.with_suffix(".timeindex").write_bytes(b"\0" * 24)
    (root / ".lock").unlink()  # a planning run must not create it either
    before = tree_state(root)
    segments = run([root])
    assert sum(r.comparison.problem for s in segments for r in s.indexes) == 6
    assert not any(r.done for s in segments for r in s.indexes)
    assert tree_state(root) == before


@pytest.mark.corpus
def test_execute_restores_damaged_indexes_byte_for_byte_and_a_rerun_changes_nothing(
        corpus, tmp_path):
    source = corpus / "smartassets-connect"
    root = copy_tree(source, tmp_path / "sa")
    damaged = kafka_indexed(root, "smartassets-connect")[:2]
    damaged += [log for log in kafka_indexed(root, "smartassets-connect", ".index")
                if log not in damaged][:2]
    damaged[0].with_suffix(".index").unlink()
    damaged[1].with_suffix(".timeindex").write_bytes(
        b"\0" * damaged[1].with_suffix(".timeindex").stat().st_size)
    data = damaged[2].with_suffix(".index").read_bytes()
    damaged[2].with_suffix(".index").write_bytes(data[:-3])
    with open(damaged[3].with_suffix(".index"), "ab") as f:
        f.write(b"\0" * 4096)  # the preallocated tail a crashed broker leaves
    verdicts = {Path(s.path): [(r.comparison.kind, r.comparison.status, r.comparison.verdict)
                               for r in s.indexes if r.comparison.status != "identical"]
                for s in run([root])}
    assert verdicts[damaged[0]] == [("offset-index", "missing", None)]
    assert verdicts[damaged[1]] == [("time-index", "different", "corrupt")]
    assert verdicts[damaged[2]] == [("offset-index", "different", "corrupt")]
    assert verdicts[damaged[3]] == [("offset-index", "different", "corrupt")]

    segments = run([root], EXECUTE)
    written = {r.path for s in segments for r in s.indexes if r.done}
    assert {damaged[0].with_suffix(".index"), damaged[1].with_suffix(".timeindex"),
            damaged[2].with_suffix(".index"), damaged[3].with_suffix(".index")} <= set(
        map(Path, written))
    for log in damaged:
        for suffix in (".index", ".timeindex"):
            relative = log.relative_to(root).with_suffix(suffix)
            assert (root / relative).read_bytes() == (source / relative).read_bytes()
    after = tree_state(root)
    assert not any(r.done for s in run([root], EXECUTE) for r in s.indexes)
    assert tree_state(root) == after


@pytest.mark.corpus
def test_backup_dir_keeps_every_replaced_file(corpus, tmp_path):
    root = copy_tree(corpus / "yuanliubei-src", tmp_path / "y")
    log = kafka_indexed(root, "yuanliubei-src")[0]
    index = log.with_suffix(".timeindex")
    bad = index.read_bytes()[:-1]
    index.write_bytes(bad)
    log.with_suffix(".index").unlink()
    backups = tmp_path / "backups"
    segments = run([root], RebuildOptions(execute=True, backup_dir=str(backups)))
    kept = {Path(r.backup) for s in segments for r in s.indexes if r.backup}
    copy = backups / log.parent.name / index.name  # the backup dir mirrors the log dir
    assert kept >= {copy} and copy.read_bytes() == bad
    # a missing file has nothing to keep; HISTORIES' benign indexes were replaced: kept too
    assert not (backups / log.parent.name / log.with_suffix(".index").name).exists()
    assert all(p.read_bytes() for p in kept)


def test_backup_dir_keeps_the_oldest_copy_and_stays_out_of_the_log_dir(tmp_path):
    part = tmp_path / "logs" / "t-0"
    write_transactional_partition(part)
    run([part], EXECUTE)
    index = part / "00000000000000000000.timeindex"
    good = index.read_bytes()
    backups = tmp_path / "b"
    options = RebuildOptions(execute=True, backup_dir=str(backups))
    index.write_bytes(b"\1" * 12)
    run([part], options)
    index.write_bytes(b"\2" * 12)  # damaged again: the first copy is the one kept
    segments = run([part], options)
    assert index.read_bytes() == good
    assert [r.backup for s in segments for r in s.indexes if r.done] == [
        str(backups / "t-0" / index.name)]
    assert (backups / "t-0" / index.name).read_bytes() == b"\1" * 12
    with pytest.raises(UsageError, match="inside the log dir"):
        IndexRebuild([str(part)], RebuildOptions(execute=True,
                                                 backup_dir=str(tmp_path / "logs" / "bak")))


def test_txn_index_carries_transactions_across_segments(tmp_path):
    part = tmp_path / "logs" / "t-0"
    expected = write_transactional_partition(part)
    segments = run([part], EXECUTE)
    assert [s.base_offset for s in segments] == [0, 8, 14]
    for base, txns in expected.items():
        path = part / f"{base:020d}.txnindex"
        assert (read_transaction_index(path) if path.exists() else []) == txns
    # LogSegment.recover fed by a whole ProducerStateManager writes the same .txnindex
    check = tmp_path / "check" / "t-0"
    write_transactional_partition(check)
    state = ProducerStateManager(check)
    for base in expected:
        with LogSegment.open(check, base, LogConfig()) as segment:
            segment.recover(state)
    for base in expected:
        for suffix in SUFFIXES:
            name = f"{base:020d}{suffix}"
            assert (part / name).exists() == (check / name).exists(), name
            if (part / name).exists():
                assert (part / name).read_bytes() == (check / name).read_bytes(), name


def test_one_segment_replays_the_earlier_ones_or_starts_from_a_snapshot(tmp_path):
    part = tmp_path / "logs" / "t-0"
    expected = write_transactional_partition(part)
    segments = run([part / log_filename(8)], EXECUTE)
    assert [s.base_offset for s in segments] == [8]
    assert read_transaction_index(part / "00000000000000000008.txnindex") == expected[8]
    # the state below segment 14, from a snapshot at 8: segment 0 is then never read
    state = ProducerStateManager(part)
    with LogSegment.open(part, 0, LogConfig()) as segment:
        segment.recover(state)
    state.update_map_end_offset(8)
    assert state.take_snapshot() == str(part / "00000000000000000008.snapshot")
    (part / log_filename(0)).write_bytes(struct.pack(">qi", 0, 3) + b"\0" * 30)  # unreadable
    (part / "00000000000000000008.txnindex").unlink()
    segments = run([part / log_filename(8), part / log_filename(14)], EXECUTE)
    assert all(s.error is None and not s.notes for s in segments)
    assert read_transaction_index(part / "00000000000000000008.txnindex") == expected[8]


def test_a_wrong_txn_index_is_corrupt(tmp_path):
    part = tmp_path / "logs" / "t-0"
    write_transactional_partition(part)
    run([part], EXECUTE)
    txn = part / "00000000000000000008.txnindex"
    good = txn.read_bytes()
    txn.write_bytes(good[:34])
    (part / "00000000000000000014.txnindex").write_bytes(good[34:])
    by_base = {s.base_offset: {r.comparison.kind: r.comparison for r in s.indexes}
               for s in run([part])}
    for base in (8, 14):
        c = by_base[base]["txn-index"]
        assert (c.status, c.verdict) == ("different", "corrupt")
        assert "read_committed" in c.explanation
    txn.write_bytes(good + b"\0" * 10)  # a partial entry Kafka's reader ignores
    c = {r.comparison.kind: r.comparison for r in run([part / log_filename(8)])[0].indexes}
    assert (c["txn-index"].status, c["txn-index"].verdict) == ("different", "benign")


def _segment(tmp_path: Path, batches: int = 12, value_size: int = 1500) -> Path:
    part = tmp_path / "logs" / "p-0"
    part.mkdir(parents=True)
    data = b"".join(build_batch([(1_700_000_000_000 + i * 10 + j, b"k", b"v" * value_size)
                                 for j in range(3)], base_offset=i * 3)
                    for i in range(batches))
    (part / log_filename(0)).write_bytes(data)
    return part


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:8] + d[16:24] + d[8:16], "must increase"),
    (lambda d: d[:-4] + struct.pack(">i", struct.unpack(">i", d[-4:])[0] - 5),
     "no valid batch starts"),
    (lambda d: d + struct.pack(">ii", 500, 10**6), "no valid batch starts"),
])
def test_offset_index_damage_is_corrupt(tmp_path, damage, message):
    part = _segment(tmp_path)
    run([part], EXECUTE)
    index = part / "00000000000000000000.index"
    index.write_bytes(damage(index.read_bytes()))
    c = {r.comparison.kind: r.comparison for r in run([part])[0].indexes}["offset-index"]
    assert (c.status, c.verdict) == ("different", "corrupt") and message in c.explanation


def test_time_index_ending_below_the_largest_timestamp_is_corrupt(tmp_path):
    part = _segment(tmp_path)
    run([part], EXECUTE)
    index = part / "00000000000000000000.timeindex"
    index.write_bytes(index.read_bytes()[:-12])  # the entry a closed segment ends with
    c = {r.comparison.kind: r.comparison for r in run([part])[0].indexes}["time-index"]
    assert (c.status, c.verdict) == ("different", "corrupt")
    assert "below the segment's largest timestamp" in c.explanation


def test_another_interval_is_a_benign_difference(tmp_path):
    part = _segment(tmp_path, value_size=300)  # ~1 KB batches: Kafka indexes every 5th
    run([part], RebuildOptions(execute=True, index_interval_bytes=0))
    with open(part / "00000000000000000000.index", "rb") as f:
        assert len(f.read()) == 11 * 8  # every batch but the first
    c = {r.comparison.kind: r.comparison for r in run([part])[0].indexes}
    assert (c["offset-index"].status, c["offset-index"].verdict) == ("different", "benign")
    assert "another index.interval.bytes" in c["offset-index"].explanation


def test_invalid_bytes_are_reported_and_the_log_left_alone(tmp_path):
    part = _segment(tmp_path)
    log = part / log_filename(0)
    good = log.read_bytes()
    log.write_bytes(good + good[:100])  # a batch the broker did not finish writing
    segments = run([part], EXECUTE)
    s = segments[0]
    assert (s.valid_bytes, s.invalid_bytes) == (len(good), 100)
    assert "100 invalid bytes at the end from byte position" in s.notes[0]
    assert "not a whole batch" in s.notes[0]
    assert log.read_bytes() == good + good[:100]
    assert all(r.done for r in s.indexes if r.comparison.kind != "txn-index")
    # the indexes are the ones Kafka builds after cutting the tail
    check = tmp_path / "check"
    check.mkdir()
    (check / log_filename(0)).write_bytes(good)
    with LogSegment.open(check, 0, LogConfig()) as segment:
        segment.recover()
    for name in (f"{0:020d}.index", f"{0:020d}.timeindex"):
        assert (part / name).read_bytes() == (check / name).read_bytes()


def test_an_overflowing_segment_is_left_alone(tmp_path):
    part = tmp_path / "logs" / "p-0"
    part.mkdir(parents=True)
    (part / log_filename(0)).write_bytes(build_batch([(1, b"k", b"v")], base_offset=0)
                                         + build_batch([(2, b"k", b"v")], base_offset=2**31))
    s = run([part], EXECUTE)[0]
    assert isinstance(s.error, LogSegmentOffsetOverflowError) and not s.indexes
    assert sorted(p.name for p in part.iterdir()) == [log_filename(0)]


def test_a_held_lock_stops_every_mode_before_anything_is_read(tmp_path):
    part = _segment(tmp_path)
    with lock_held(part.parent):
        for options in (RebuildOptions(), EXECUTE):
            with pytest.raises(LogDirLockedError) as err:
                run([part], options)
            assert err.value.exit_code == 4
    assert sorted(p.name for p in part.iterdir()) == [log_filename(0)]


def test_an_interrupted_run_is_finished_by_a_rerun(tmp_path, monkeypatch):
    """Crash at each rename of an execute run (the temp file written, the target not yet
    replaced): every index is then old or new, and a rerun leaves exactly what one
    uninterrupted run does."""
    part = tmp_path / "logs" / "t-0"
    write_transactional_partition(part)
    backups = tmp_path / "bak"
    reference = tmp_path / "ref" / "t-0"
    write_transactional_partition(reference)
    run([reference], EXECUTE)
    wanted = {p.name: p.read_bytes() for p in reference.iterdir()}
    for p in list(part.iterdir()):  # something to replace, so backups happen too
        (part / p.name.replace(".log", ".index")).write_bytes(b"\0" * 8)
    damaged = tree_state(part)
    real_replace = os.replace
    crash_at = 0
    while True:
        calls = []

        def replace(src, dst):
            calls.append(dst)
            if len(calls) > crash_at:
                raise KeyboardInterrupt  # the process dies here
            real_replace(src, dst)

        monkeypatch.setattr(os, "replace", replace)
        options = RebuildOptions(execute=True, backup_dir=str(backups))
        try:
            run([part], options)
            finished = True
        except KeyboardInterrupt:
            finished = False
        monkeypatch.setattr(os, "replace", real_replace)
        run([part], options)  # the rerun
        assert {p.name: p.read_bytes() for p in part.iterdir()} == wanted, crash_at
        if finished:
            break
        crash_at += 1
        shutil.rmtree(part)
        shutil.rmtree(backups)
        write_transactional_partition(part)
        for p in list(part.iterdir()):
            (part / p.name.replace(".log", ".index")).write_bytes(b"\0" * 8)
        assert tree_state(part).keys() == damaged.keys()
    assert crash_at >= 6  # backups and index files: every rename was a crash point


def test_a_small_metadata_log_with_only_preallocated_indexes_is_benign(tmp_path):
    """A cleanly stopped Kafka 4.4 whose metadata log never reached index.interval.bytes leaves
    both active indexes all zeros at their preallocated size (10 MiB): no entry is real, and
    nothing is corrupt."""
    part = tmp_path / "logs" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    (part / log_filename(0)).write_bytes(build_batch([(1_700_000_000_000, None, b"v")]))
    (part / "00000000000000000000.index").write_bytes(b"\0" * (10 * 1024 * 1024))
    (part / "00000000000000000000.timeindex").write_bytes(b"\0" * (10 * 1024 * 1024 // 12 * 12))
    (segment,) = run([tmp_path / "logs"])
    verdicts = {r.comparison.kind: r.comparison.verdict for r in segment.indexes
                if r.comparison.kind != "txn-index"}  # none: no transactions, none written
    assert verdicts == {"offset-index": "benign", "time-index": "benign"}
    assert all("only the zero-filled preallocated tail" in r.comparison.explanation
               for r in segment.indexes if r.comparison.kind != "txn-index")
