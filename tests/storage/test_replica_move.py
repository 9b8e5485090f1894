"""Moving a replica between two log dirs of one broker (storage.replica_move) and settling
the moves a kill interrupted (storage.leftover_moves), on copies of a real KRaft broker's
log dir."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pylogctl.errors import ExitCode, LogDirLockedError, UsageError
from pylogctl.storage.checkpoint import read_offset_checkpoint
from pylogctl.storage.leftover_moves import compare_copy, leftover_moves
from pylogctl.storage.lock import LogDirLock
from pylogctl.storage.log_dir_layout import CLEAN_SHUTDOWN_FILE
from pylogctl.storage.checkpoint import (CLEANER_OFFSET_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT,
                                         OFFSET_CHECKPOINTS)
from pylogctl.storage.log_dir import LogDir
from pylogctl.storage.replica_move import (MoveRefusedError, copy_replica, execute, plan_future,
                                           plan_move)
from pylogctl.tools.move import MoveRequest, move
from load_support import fingerprint, writable_copy

CLUSTER = "EP6hyiddQNW5FPrAvR9kWw"


def entries(log_dir: Path, topic: str, partition: int) -> dict[str, int]:
    out = {}
    for name in OFFSET_CHECKPOINTS:
        if (log_dir / name).exists():
            for e in read_offset_checkpoint(log_dir / name).entries:
                if (e.topic, e.partition) == (topic, partition):
                    out[name] = e.offset
    return out


def new_log_dir(path: Path, node: int = 1, cluster: str = CLUSTER) -> Path:
    path.mkdir()
    (path / "meta.properties").write_text(f"version=1\nnode.id={node}\ncluster.id={cluster}\n"
                                          f"directory.id={path.name}-dir-id\n")
    return path


@pytest.fixture
def dirs(corpus, tmp_path) -> tuple[Path, Path]:
    a = writable_copy(corpus / "kraft3-cluster" / "kafka1", tmp_path / "a")
    return a, new_log_dir(tmp_path / "b")


def run_move(a: Path, b: Path, topic: str, partition: int):
    with LogDirLock(a), LogDirLock(b):
        source, target = LogDir(a), LogDir(b)
        plan = plan_move(source, target, topic, partition, same_disk=True)
        return plan, execute(plan, source, target)


def test_move_copies_the_files_and_moves_the_checkpoint_entries(dirs):
    a, b = dirs
    part = "__consumer_offsets-11"
    before, moved = fingerprint(a / part), entries(a, "__consumer_offsets", 11)
    assert moved
    others = {n: (a / n).read_bytes() for n in OFFSET_CHECKPOINTS if (a / n).exists()}
    run_move(a, b, "__consumer_offsets", 11)
    assert fingerprint(b / part) == before
    assert not (a / part).exists()
    assert entries(b, "__consumer_offsets", 11) == moved
    assert entries(a, "__consumer_offsets", 11) == {}
    # the other partitions' entries stay as they were, in their order
    for name, data in others.items():
        kept = [line for line in data.decode().splitlines()[2:]
                if not line.startswith("__consumer_offsets 11 ")]
        assert (a / name).read_text().splitlines()[2:] == kept
    assert sorted(os.listdir(b)) == sorted([".lock", "meta.properties", part] + list(moved))
    assert not [n for n in os.listdir(a) if n.endswith(("-future", "-delete"))]


def test_move_refusals(dirs, tmp_path):
    a, b = dirs
    source = LogDir(a)

    def refused(target: Path, topic="test1", partition=0, **kw) -> str:
        with pytest.raises(UsageError) as info:
            plan_move(source, LogDir(target), topic, partition, **kw)
        return str(info.value)

    assert "same file system" in refused(b)
    assert "--same-disk" in refused(b)
    assert "cluster" in refused(new_log_dir(tmp_path / "c", cluster="other"), same_disk=True)
    assert "node 1" in refused(new_log_dir(tmp_path / "d", node=2), same_disk=True)
    assert "same log dir" in refused(a, same_disk=True)
    assert "No partition test1-9" in refused(b, partition=9, same_disk=True)
    assert "metadata.log.dir" in refused(b, topic="__cluster_metadata", same_disk=True)
    shutil.copytree(a / "test1-0", b / "test1-0")
    assert "already in" in refused(b, same_disk=True)
    with open(a / "meta.properties", "a") as f:
        f.write("directory.id=copied\n")
    twin = writable_copy(a, tmp_path / "e")
    source = LogDir(a)
    assert "same directory.id" in refused(twin, same_disk=True)


def test_move_refuses_a_target_without_room(dirs, monkeypatch):
    a, b = dirs
    real = os.statvfs

    class Full:
        def __init__(self, path):
            st = real(path)
            self.f_frsize, self.f_bavail = st.f_frsize, 0

    monkeypatch.setattr(os, "statvfs", Full)
    with pytest.raises(MoveRefusedError) as info:
        plan_move(LogDir(a), LogDir(b), "test1", 4, same_disk=True)
    assert "Not enough space" in str(info.value) and "124 bytes" in str(info.value)
    assert info.value.exit_code == ExitCode.REFUSED


def test_move_refuses_a_locked_dir(dirs):
    a, b = dirs
    with LogDirLock(b):
        with pytest.raises(LogDirLockedError):
            move(MoveRequest(("test1-0",), str(a), str(b), same_disk=True, execute=True))
        with pytest.raises(LogDirLockedError):
            move(MoveRequest(("test1-0",), str(a), str(b), same_disk=True))
    assert (a / "test1-0").exists()


@pytest.mark.parametrize("source_clean", [True, False])
def test_clean_shutdown_marker_of_the_target(dirs, source_clean):
    """The target's marker is dropped while the copy may be partial, and is put back only if
    the moved replica comes from a dir shut down cleanly too."""
    a, b = dirs
    (b / CLEAN_SHUTDOWN_FILE).write_bytes(b'{"version":0,"brokerEpoch":7}')
    if source_clean:
        (a / CLEAN_SHUTDOWN_FILE).write_bytes(b'{"version":0,"brokerEpoch":7}')
    _, result = run_move(a, b, "test1", 4)
    assert (b / CLEAN_SHUTDOWN_FILE).exists() == source_clean
    if source_clean:
        assert (b / CLEAN_SHUTDOWN_FILE).read_bytes() == b'{"version":0,"brokerEpoch":7}'
    else:
        assert any("recovery points" in n for n in result.notes)


def test_backup_dir_keeps_the_source_files_and_checkpoints(dirs, tmp_path):
    a, b = dirs
    before = fingerprint(a / "test1-4")
    with LogDirLock(a), LogDirLock(b):
        source, target = LogDir(a), LogDir(b)
        plan = plan_move(source, target, "test1", 4, same_disk=True)
        result = execute(plan, source, target, backup_dir=str(tmp_path / "bk"))
    assert fingerprint(tmp_path / "bk" / "from" / "test1-4") == before
    assert (tmp_path / "bk" / "from" / HIGH_WATERMARK_CHECKPOINT).exists()
    assert result.backups


# -- a kill part-way: what recover's leftover_moves does ------------------------------------------

def test_a_cut_short_copy_is_cancelled(dirs):
    a, b = dirs
    future = b / "test1-4.0123456789abcdef0123456789abcdef-future"
    copy_replica(str(a / "test1-4"), str(future))
    log = next(future.glob("*.log"))
    log.write_bytes(log.read_bytes()[:50])
    assert compare_copy(str(a / "test1-4"), str(future)) == "prefix"
    [found] = leftover_moves([LogDir(a), LogDir(b)])
    assert found.plan.action == "cancel-future" and "cut short" in found.note
    execute(found.plan, LogDir(a), LogDir(b))
    assert not future.exists() and (a / "test1-4").exists()
    assert leftover_moves([LogDir(a), LogDir(b)]) == []


def test_a_whole_copy_is_finished_with_the_source_entries(dirs):
    a, b = dirs
    moved = entries(a, "test1", 4)
    future = b / "test1-4.0123456789abcdef0123456789abcdef-future"
    copy_replica(str(a / "test1-4"), str(future))
    [found] = leftover_moves([LogDir(a), LogDir(b)])
    assert found.plan.action == "finish-future"
    execute(found.plan, LogDir(a), LogDir(b))
    assert (b / "test1-4").exists() and not (a / "test1-4").exists()
    assert entries(b, "test1", 4) == moved and entries(a, "test1", 4) == {}


def test_a_partition_live_in_both_dirs_keeps_the_newer_copy(dirs):
    a, b = dirs
    moved = entries(a, "test1", 4)
    copy_replica(str(a / "test1-4"), str(b / "test1-4"))
    [found] = leftover_moves([LogDir(a), LogDir(b)])
    assert found.plan.action == "retire-source" and found.plan.source == str(a)
    execute(found.plan, LogDir(a), LogDir(b))
    assert (b / "test1-4").exists() and not (a / "test1-4").exists()
    assert entries(a, "test1", 4) == {}
    assert moved  # the target's entries are the ones written before the rename
    assert not [n for n in os.listdir(a) if n.endswith("-delete")]


def test_different_copies_are_left_alone(dirs):
    a, b = dirs
    shutil.copytree(a / "test1-3", b / "test1-4")
    future = b / "test1-2.0123456789abcdef0123456789abcdef-future"
    shutil.copytree(a / "test1-3", future)
    found = leftover_moves([LogDir(a), LogDir(b)])
    assert [f.plan for f in found] == [None, None]
    assert any("Kafka was writing" in f.note for f in found)
    assert any("different files" in f.note for f in found)


# -- a future replica Kafka left -----------------------------------------------------------------

def kafka_future(a: Path, b: Path, *, drop_last: bool) -> Path:
    """A future replica of __consumer_offsets-11 with Kafka's entries in b's checkpoints."""
    future = b / "__consumer_offsets-11.0123456789abcdef0123456789abcdef-future"
    copy_replica(str(a / "__consumer_offsets-11"), str(future))
    log = next(future.glob("*.log"))
    if drop_last:
        log.write_bytes(b"")
    (b / HIGH_WATERMARK_CHECKPOINT).write_text("0\n1\n__consumer_offsets 11 0\n")
    return future


def test_finish_future_refuses_a_replica_that_has_not_caught_up(dirs):
    a, b = dirs
    kafka_future(a, b, drop_last=True)
    with pytest.raises(MoveRefusedError) as info:
        plan_future(LogDir(a), LogDir(b), "__consumer_offsets", 11, finish=True)
    assert "not caught up" in str(info.value)


def test_finish_future_swaps_and_hands_over_the_high_watermark(dirs):
    a, b = dirs
    source_entries = entries(a, "__consumer_offsets", 11)
    kafka_future(a, b, drop_last=False)
    plan = plan_future(LogDir(a), LogDir(b), "__consumer_offsets", 11, finish=True)
    assert plan.future_log_end == plan.source_log_end
    execute(plan, LogDir(a), LogDir(b))
    got = entries(b, "__consumer_offsets", 11)
    assert got[HIGH_WATERMARK_CHECKPOINT] == source_entries[HIGH_WATERMARK_CHECKPOINT]
    if CLEANER_OFFSET_CHECKPOINT in source_entries:
        assert got[CLEANER_OFFSET_CHECKPOINT] == source_entries[CLEANER_OFFSET_CHECKPOINT]
    assert (b / "__consumer_offsets-11").exists() and not (a / "__consumer_offsets-11").exists()


def test_cancel_future_deletes_it_and_its_entries(dirs):
    a, b = dirs
    before = fingerprint(a / "__consumer_offsets-11")
    future = kafka_future(a, b, drop_last=True)
    plan = plan_future(LogDir(a), LogDir(b), "__consumer_offsets", 11, finish=False)
    execute(plan, LogDir(a), LogDir(b))
    assert not future.exists() and entries(b, "__consumer_offsets", 11) == {}
    assert fingerprint(a / "__consumer_offsets-11") == before


def test_a_renamed_source_with_entries_left_has_them_dropped(dirs):
    a, b = dirs
    moved = entries(a, "test1", 4)
    copy_replica(str(a / "test1-4"), str(b / "test1-4"))
    doomed = a / "test1-4.0123456789abcdef0123456789abcdef-delete"
    os.rename(a / "test1-4", doomed)
    [found] = leftover_moves([LogDir(a), LogDir(b)])
    assert found.plan.action == "retire-source"
    execute(found.plan, LogDir(a), LogDir(b))
    assert entries(a, "test1", 4) == {} and moved and not doomed.exists()
    assert leftover_moves([LogDir(a), LogDir(b)]) == []


def test_dirs_of_other_brokers_or_copies_are_never_compared(dirs, tmp_path):
    """Identical replicas in two brokers' dirs (or in two copies of one dir) are not a move."""
    a, b = dirs
    copy_replica(str(a / "test1-4"), str(b / "test1-4"))
    (b / "meta.properties").write_text(f"version=1\nnode.id=2\ncluster.id={CLUSTER}\n")
    assert leftover_moves([LogDir(a), LogDir(b)]) == []
    (b / "meta.properties").unlink()
    (a / "meta.properties").unlink()
    assert leftover_moves([LogDir(a), LogDir(b)]) == []
    for d in (a, b):
        (d / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id={CLUSTER}\n"
                                           f"directory.id=same\n")
    [found] = leftover_moves([LogDir(a), LogDir(b)])
    assert found.plan is None and "copies of one log dir" in found.note
