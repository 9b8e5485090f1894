"""A replica moved between two log dirs of one broker, offline: Kafka's intra-broker move
(KIP-113, ``AlterReplicaLogDirs``) done on the files.

Kafka moves a replica by building a *future* replica, ``{topic}-{partition}.{uuid}-future``,
in the destination log dir, and once it has caught up, ``LogManager.replaceCurrentWithFutureLog``
renames it to ``{topic}-{partition}``, renames the source to ``...-delete``, rewrites the source
dir's checkpoints without it and deletes it later. Here the future replica is a byte copy, and
the same order is kept, so every state a kill leaves is one Kafka itself can be in:

1. ``.kafka_cleanshutdown`` of the destination goes first (restored at the end when both
   dirs had one): Kafka loads a future replica as it loads every log of its dir, and a
   half-copied segment must be recovered, not trusted.
2. Copy into the future dir, every file fsynced, then the dirs. Killed here, Kafka loads the
   future replica beside the current one and resumes the move itself (``ReplicaAlterLogDirs
   Thread``); :func:`leftover_moves` sees a byte prefix of the source and cancels it.
3. The partition's entries of the four checkpoints are written in the destination dir (Kafka
   checkpoints a future replica in the dir it lives in).
4. Rename the future dir to the live name; 5. rename the source to ``-delete``; 6. drop its
   entries from the source dir's checkpoints; 7. delete it. Killed between 4 and 5 the
   partition is live in both dirs and Kafka refuses to start ("Duplicate log directories"):
   :func:`leftover_moves` finds the two copies identical and retires the older one.

A future replica a crashed Kafka left (its bytes are Kafka's own, not a copy) is finished
only when its log end offset has reached the current replica's, the test Kafka's alter-log-dirs
thread applies before it swaps them, or cancelled (deleted).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass, field
from typing import Callable

from ..errors import ExitCode, PylogctlError, UsageError
from .backup import Backup
from .checkpoint import (HIGH_WATERMARK_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT,
                         OFFSET_CHECKPOINTS, RECOVERY_POINT_CHECKPOINT, write_file_atomically)
from .files import delete_if_exists, fsync_dir
from .log_dir_layout import CLEAN_SHUTDOWN_FILE, list_dir, partition_dir_files
from .log_dir import CheckpointUpdate, LogDir, PartitionEntry
from .loader.log_loader import plan_load
from .naming import marked_dir_name, parse_partition_dir_name, partition_dir_name

Progress = Callable[[int], None]
_CHUNK = 1 << 20


class MoveRefusedError(PylogctlError):
    """A move the disks or the replicas' state do not allow (no room, an incomplete future)."""

    exit_code = ExitCode.REFUSED


def broker_of(log_dir: LogDir) -> tuple[str | None, str | None]:
    """``(cluster.id, node.id)`` from ``meta.properties`` (``broker.id`` before KRaft)."""
    meta = log_dir.meta or {}
    return meta.get("cluster.id"), meta.get("node.id", meta.get("broker.id"))


def check_same_broker(source: LogDir, target: LogDir) -> None:
    """Both dirs must be ``log.dirs`` of one broker: one cluster and node, two directories."""
    if source.path == target.path:
        raise UsageError(f"--from and --to are the same log dir ({source.path})")
    (c1, n1), (c2, n2) = broker_of(source), broker_of(target)
    for log_dir, cluster, node in ((source, c1, n1), (target, c2, n2)):
        if cluster is None or node is None:
            raise UsageError(f"{log_dir.path} has no meta.properties with cluster.id and "
                             f"node.id: not a formatted log dir", path=log_dir.path)
    if c1 != c2:
        raise UsageError(f"{source.path} belongs to cluster {c1} and {target.path} to cluster "
                         f"{c2}: a move stays within one broker", path=target.path)
    if n1 != n2:
        raise UsageError(f"{source.path} belongs to node {n1} and {target.path} to node {n2}: "
                         f"a move stays within one broker", path=target.path)
    d1, d2 = (source.meta or {}).get("directory.id"), (target.meta or {}).get("directory.id")
    if d1 is not None and d1 == d2:
        raise UsageError(f"{source.path} and {target.path} have the same directory.id {d1}: "
                         f"one is a copy of the other, not two log dirs of one broker",
                         path=target.path)


@dataclass(frozen=True)
class CopiedFile:
    name: str
    size: int


@dataclass
class MovePlan:
    """Moving (``action`` "move"), finishing ("finish-future") or cancelling ("cancel-future")
    one replica between ``source`` and ``target`` (log dir paths)."""

    action: str
    topic: str
    partition: int
    source: str
    target: str
    source_dir: str | None  # the live replica in source
    future_dir: str | None  # an existing future replica in target (finish/cancel)
    files: tuple[CopiedFile, ...] = ()
    target_updates: tuple[CheckpointUpdate, ...] = ()
    source_updates: tuple[CheckpointUpdate, ...] = ()
    notes: list[str] = field(default_factory=list)
    source_log_end: int | None = None
    future_log_end: int | None = None
    target_clean_shutdown: bool = False

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def steps(self) -> list[str]:
        live = os.path.join(self.target, partition_dir_name(self.topic, self.partition))
        out = []
        if self.action in ("move", "finish-future") and self.target_clean_shutdown:
            out.append(f"remove {self.target}/.kafka_cleanshutdown (put back at the end if "
                       f"{self.source} has one too)")
        if self.action == "move":
            out.append(f"copy {len(self.files)} files ({self.size} bytes) into "
                       f"{self.target}/{self.topic}-{self.partition}.<uuid>-future, fsynced")
        if self.action in ("move", "finish-future"):
            out += [f"checkpoint {u.describe()} in {self.target}" for u in self.target_updates]
            out.append(f"rename the future replica to {live}")
        if self.action == "retire-source":
            out.append(f"keep {live}")
        if self.action == "cancel-future":
            out.append(f"rename {self.future_dir} to -delete and delete it")
            out += [f"checkpoint {u.describe()} in {self.target}" for u in self.target_updates]
        elif self.source_dir is not None:
            out.append(f"rename {self.source_dir} to -delete")
            out += [f"checkpoint {u.describe()} in {self.source}" for u in self.source_updates]
            out.append("delete the -delete dir")
        return out


def _moved_updates(source: LogDir, target: LogDir, entry: PartitionEntry
                   ) -> tuple[list[CheckpointUpdate], list[CheckpointUpdate]]:
    """The partition's checkpoint entries, written in the target and dropped in the source."""
    into, out = [], []
    for name in OFFSET_CHECKPOINTS:
        value = source.checkpointed(name, entry)
        old = target.checkpoints[name].get(entry.key)
        if value != old:
            into.append(CheckpointUpdate(name, entry.topic, entry.partition, old, value))
        if value is not None:
            out.append(CheckpointUpdate(name, entry.topic, entry.partition, value, None))
    return into, out


def plan_move(source: LogDir, target: LogDir, topic: str, partition: int, *,
              same_disk: bool = False) -> MovePlan:
    """Check that the move is possible and list what it does, reading only."""
    check_same_broker(source, target)
    if topic == "__cluster_metadata":
        raise UsageError("__cluster_metadata is not moved: Kafka keeps it in metadata.log.dir")
    entry = source.partition(topic, partition)
    if any(e.key == entry.key for e in target.partitions):
        raise UsageError(f"{topic}-{partition} is already in {target.path}: remove one of the "
                         f"two copies first (Kafka refuses to start with both)", path=target.path)
    for future in future_dirs(target, topic, partition):
        raise UsageError(f"{future} is a future replica of {topic}-{partition}: finish or "
                         f"cancel that move first (--finish-future / --cancel-future)",
                         path=future)
    if not same_disk and os.stat(source.path).st_dev == os.stat(target.path).st_dev:
        raise UsageError(f"{source.path} and {target.path} are on the same file system: moving "
                         f"there frees no space (--same-disk to move anyway)", path=target.path)
    files = []
    for path in partition_dir_files(entry.path):
        files.append(CopiedFile(os.path.basename(path), os.path.getsize(path)))
    subdirs = [e.name for e in list_dir(entry.path) if e.is_dir()]
    if subdirs:
        raise UsageError(f"{entry.path} holds directories ({', '.join(subdirs)}): not a partition "
                         f"dir Kafka wrote", path=entry.path)
    plan = MovePlan("move", topic, partition, source.path, target.path, entry.path, None,
                    tuple(files), target_clean_shutdown=target.clean_shutdown)
    into, out = _moved_updates(source, target, entry)
    plan.target_updates, plan.source_updates = tuple(into), tuple(out)
    st = os.statvfs(target.path)
    free = st.f_bavail * st.f_frsize
    if free < plan.size:
        raise MoveRefusedError(f"Not enough space in {target.path}: {topic}-{partition} needs "
                               f"{plan.size} bytes, {free} are free", path=target.path)
    if not source.clean_shutdown:
        plan.notes.append(f"{source.path} was not shut down cleanly: Kafka recovers the moved "
                          f"replica from its recovery point at the next start")
    return plan


def future_dirs(log_dir: LogDir, topic: str, partition: int) -> list[str]:
    """The ``-future`` dirs of ``topic-partition`` in ``log_dir``."""
    found = []
    for e in list_dir(log_dir.path):
        name = parse_partition_dir_name(e.name)
        if name and name.marker == "future" and (name.topic, name.partition) == (topic, partition):
            found.append(e.path)
    return found


def _log_end(log_dir: LogDir, path: str, entry: PartitionEntry) -> int:
    i = log_dir.load_inputs(entry)
    return plan_load(path, log_start_offset_checkpoint=i.log_start_offset_checkpoint,
                     recovery_point_checkpoint=i.recovery_point_checkpoint,
                     high_watermark_checkpoint=i.high_watermark_checkpoint,
                     had_clean_shutdown=i.had_clean_shutdown).log_end_offset


def plan_future(source: LogDir, target: LogDir, topic: str, partition: int, *,
                finish: bool, byte_copy: bool = False) -> MovePlan:
    """Finish (``replaceCurrentWithFutureLog``) or cancel the future replica of
    ``topic-partition`` in ``target`` whose current replica is in ``source`` (``byte_copy``:
    the future replica is an identical copy of it, so it takes all of its entries)."""
    check_same_broker(source, target)
    futures = future_dirs(target, topic, partition)
    if not futures:
        raise UsageError(f"No future replica of {topic}-{partition} in {target.path}",
                         path=target.path)
    if len(futures) > 1:
        raise UsageError(f"Several future replicas of {topic}-{partition} in {target.path}: "
                         f"{', '.join(futures)}", path=target.path)
    current = [e for e in source.partitions if e.key == (topic, partition)]
    entry = current[0] if current else PartitionEntry(topic, partition, futures[0])
    plan = MovePlan("finish-future" if finish else "cancel-future", topic, partition,
                    source.path, target.path, current[0].path if current else None, futures[0],
                    target_clean_shutdown=finish and target.clean_shutdown)
    future_entry = PartitionEntry(topic, partition, futures[0])
    plan.future_log_end = _log_end(target, futures[0], future_entry)
    if current:
        plan.source_log_end = _log_end(source, entry.path, entry)
    if not finish:
        plan.target_updates = tuple(
            CheckpointUpdate(n, topic, partition, v, None) for n in OFFSET_CHECKPOINTS
            if (v := target.checkpointed(n, future_entry)) is not None)
        return plan
    if not current:
        plan.notes.append(f"no current replica of {topic}-{partition} in {source.path}: the "
                          f"future replica becomes it, as Kafka recovers an abandoned one")
        return plan
    if plan.future_log_end < plan.source_log_end:
        raise MoveRefusedError(
            f"The future replica {futures[0]} ends at offset {plan.future_log_end}, the current "
            f"one at {plan.source_log_end}: not caught up, so finishing would lose records "
            f"(--cancel-future deletes it; a started broker resumes the move)", path=futures[0])
    into, out = _moved_updates(source, target, entry)
    if byte_copy:
        plan.target_updates, plan.source_updates = tuple(into), tuple(out)
        return plan
    # the destination keeps the future replica's own entries (those it lacks are the
    # source's, clamped to its end); Kafka hands it the source's high watermark
    # (updateHighWatermark clamps it) and moves the cleaner's checkpoint (alterCheckpointDir)
    into = [dataclasses.replace(u, new=min(u.new, plan.future_log_end)) for u in into
            if u.old is None and u.new is not None
            and u.checkpoint in (RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT)]
    hw = source.checkpointed(HIGH_WATERMARK_CHECKPOINT, entry)
    if hw is not None:
        hw = min(hw, plan.future_log_end)
        old = target.checkpoints[HIGH_WATERMARK_CHECKPOINT].get(entry.key)
        if old != hw:
            into.append(CheckpointUpdate(HIGH_WATERMARK_CHECKPOINT, topic, partition, old, hw))
    cleaner = [u for u in out if u.checkpoint not in (HIGH_WATERMARK_CHECKPOINT,
                                                      RECOVERY_POINT_CHECKPOINT,
                                                      LOG_START_OFFSET_CHECKPOINT)]
    into += [CheckpointUpdate(u.checkpoint, topic, partition,
                              target.checkpoints[u.checkpoint].get(entry.key), u.old)
             for u in cleaner if target.checkpoints[u.checkpoint].get(entry.key) != u.old]
    plan.target_updates, plan.source_updates = tuple(into), tuple(out)
    return plan


@dataclass
class MoveResult:
    backups: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def execute(plan: MovePlan, source: LogDir, target: LogDir, *, backup_dir: str | None = None,
            progress: Progress | None = None) -> MoveResult:
    """Carry out ``plan``; the caller holds both dirs' ``.lock`` and made the plan under them."""
    result = MoveResult()
    back_src = None if backup_dir is None else Backup(os.path.join(backup_dir, "from"),
                                                      source.path)
    back_dst = None if backup_dir is None else Backup(os.path.join(backup_dir, "to"),
                                                      target.path)
    if plan.action == "retire-source":
        assert plan.source_dir is not None
        result.notes += retire_source(source, plan.source_dir, plan.topic, plan.partition,
                                      list(plan.source_updates), back_src)
    elif plan.action == "cancel-future":
        assert plan.future_dir is not None
        _delete_replica(target, plan.future_dir, plan.topic, plan.partition, back_dst)
        result.notes += target.write_checkpoint_updates(list(plan.target_updates), back_dst)
    else:
        marker = _drop_clean_shutdown(target)
        future = plan.future_dir
        if plan.action == "move":
            assert plan.source_dir is not None
            future = os.path.join(target.path, marked_dir_name(plan.topic, plan.partition,
                                                               "future"))
            copy_replica(plan.source_dir, future, progress)
        assert future is not None
        result.notes += target.write_checkpoint_updates(list(plan.target_updates), back_dst)
        os.rename(future, os.path.join(target.path, partition_dir_name(plan.topic,
                                                                       plan.partition)))
        fsync_dir(target.path)
        if plan.source_dir is not None:
            result.notes += retire_source(source, plan.source_dir, plan.topic, plan.partition,
                                          list(plan.source_updates), back_src)
        if marker is not None and source.clean_shutdown:
            write_file_atomically(os.path.join(target.path, CLEAN_SHUTDOWN_FILE), marker)
        elif marker is not None:
            result.notes.append(f"{target.path}: .kafka_cleanshutdown removed (the moved "
                                f"replica comes from a dir not shut down cleanly): Kafka "
                                f"recovers its partitions from their recovery points")
    for b in (back_src, back_dst):
        result.backups += b.saved if b else []
    return result


def _drop_clean_shutdown(log_dir: LogDir) -> bytes | None:
    path = os.path.join(log_dir.path, CLEAN_SHUTDOWN_FILE)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        content = f.read()
    delete_if_exists(path)
    fsync_dir(log_dir.path)
    return content


def copy_replica(source_dir: str, future_dir: str, progress: Progress | None = None) -> None:
    """Copy a partition dir's files into ``future_dir`` (made here), each fsynced, then the
    dirs: once this returns, the copy survives a power loss."""
    os.mkdir(future_dir)
    for path in partition_dir_files(source_dir):
        dest = os.path.join(future_dir, os.path.basename(path))
        with open(path, "rb") as src, open(dest, "xb") as dst:
            while chunk := src.read(_CHUNK):
                dst.write(chunk)
                if progress is not None:
                    progress(len(chunk))
            dst.flush()
            os.fsync(dst.fileno())
        shutil.copymode(path, dest)
        _same_owner(path, dest)
    _same_owner(source_dir, future_dir)
    fsync_dir(future_dir)
    fsync_dir(os.path.dirname(future_dir))


def _same_owner(source: str, dest: str) -> None:
    """Run as root, the copy keeps the broker user's ownership (or the broker cannot write)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        st = os.stat(source)
        os.chown(dest, st.st_uid, st.st_gid)


def retire_source(source: LogDir, source_dir: str, topic: str, partition: int,
                  updates: list[CheckpointUpdate], backup: Backup | None) -> list[str]:
    """After the destination went live: the source replica renamed ``-delete``, its checkpoint
    entries dropped, then deleted (``replaceCurrentWithFutureLog``'s second half)."""
    _backup_files(source_dir, backup)
    doomed = os.path.join(source.path, marked_dir_name(topic, partition, "delete"))
    os.rename(source_dir, doomed)
    fsync_dir(source.path)
    notes = source.write_checkpoint_updates(updates, backup)
    _delete_dir(doomed, source)
    return notes


def _delete_replica(log_dir: LogDir, path: str, topic: str, partition: int,
                    backup: Backup | None) -> None:
    _backup_files(path, backup)
    doomed = os.path.join(log_dir.path, marked_dir_name(topic, partition, "delete"))
    os.rename(path, doomed)
    fsync_dir(log_dir.path)
    _delete_dir(doomed, log_dir)


def _backup_files(path: str, backup: Backup | None) -> None:
    for file in partition_dir_files(path) if backup is not None else ():
        backup.save(file, will_delete=True)


def _delete_dir(doomed: str, log_dir: LogDir) -> None:
    """Delete a ``-delete`` dir, as Kafka's ``deleteLogs`` does later."""
    for path in partition_dir_files(doomed):
        delete_if_exists(path)
    os.rmdir(doomed)
    fsync_dir(log_dir.path)
