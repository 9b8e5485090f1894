"""The broker's log dir (Kafka's ``LogManager`` for one ``log.dirs`` entry): it takes the
``.lock``, writes ``meta.properties``, loads every partition as Kafka's start-up does, creates
and deletes partition dirs, writes the offset checkpoints, and shuts down cleanly.

Start-up follows ``LogManager.loadLogs``: each partition is loaded by the same loader
``pylogctl recover`` runs (:meth:`pylogctl.storage.log.Log.load` with the dir's checkpoint
entries), trusting the segments only after a clean shutdown, i.e. when
``.kafka_cleanshutdown`` exists; the marker is deleted once everything is loaded, so a crash
from then on makes the next start recover. The checkpoints are written right after loading,
every ``log.flush.offset.checkpoint.interval.ms`` while running, and at shutdown, which also
flushes every log, trims the active segments' indexes, snapshots producer state and writes
the marker again. Checkpoint files hold every partition of the dir (Kafka rewrites them
whole); the log-start-offset checkpoint only lists logs whose start is above their first
segment, as Kafka's does.

Old data goes as in Kafka: :meth:`LogManager.cleanup_logs` is the retention task
(``cleanupLogs``, every ``log.retention.check.interval.ms``) over every log whose
``cleanup.policy`` lacks ``compact``, through the engine the offline ``pylogctl retention``
runs (:func:`pylogctl.storage.retention.delete_old_segments`) on the live logs; compacted logs
are the log cleaner's (:mod:`.log_cleaner`), whose progress this class keeps in
``cleaner-offset-checkpoint``. A segment deleted while running (by retention, the cleaner's
swap, a roll) is renamed ``.deleted`` at once and its files removed ``file.delete.delay.ms``
later (Kafka's ``asyncDelete``), on the event loop; shutdown removes those still waiting, so a
stopped broker leaves nothing for ``pylogctl recover`` to do.

A partition dir holds ``partition.metadata`` (the topic id, as KRaft brokers write it) from
the moment it is created, before any data, as Kafka's ``maybeFlushMetadataFile`` ensures.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from typing import Callable

from ..errors import UsageError
from ..format.message import uuid_bytes, uuid_text
from ..storage.checkpoint import (CLEANER_OFFSET_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT,
                                  LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT,
                                  format_checkpoint, keeps_log_start, write_file_atomically)
from ..storage.files import delete_if_exists, fsync_dir
from ..storage.lock import LogDirLock
from ..storage.log import Log
from ..storage.log_config import LogConfig
from ..storage.log_dir_layout import CLEAN_SHUTDOWN_FILE, META_PROPERTIES, PARTITION_METADATA
from ..storage.log_dir import LogDir
from ..storage.metadata_files import read_partition_metadata, read_properties
from ..storage.naming import marked_dir_name
from ..storage.retention import RetentionResult, delete_old_segments
from ..storage.segment import LogSegment

logger = logging.getLogger(__name__)


def uuid_to_kafka(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString`` of a Python UUID."""
    return uuid_text(value.bytes)


def uuid_from_kafka(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=uuid_bytes(text))


def new_kafka_uuid() -> uuid.UUID:
    """A random id, never one Kafka reserves (all zeros, or the metadata topic's id 1)."""
    while True:
        value = uuid.uuid4()
        if value.int > 1 and not uuid_to_kafka(value).startswith("-"):
            return value


@dataclass
class LoadedLog:
    topic: str
    partition: int
    topic_id: uuid.UUID
    log: Log


class LogManager:
    """One log dir of a running broker. :meth:`startup` before use, :meth:`shutdown` after."""

    def __init__(self, path: str | os.PathLike[str], node_id: int,
                 config_for: Callable[[str], LogConfig]) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.node_id = node_id
        self.config_for = config_for
        self.lock = LogDirLock(self.path)
        self.cluster_id = ""
        self.logs: dict[tuple[str, int], LoadedLog] = {}
        self.had_clean_shutdown = False
        self.cleaner_checkpoints: dict[tuple[str, int], int] = {}
        self._doomed: dict[LogSegment, asyncio.TimerHandle] = {}  # .deleted, files not yet gone

    # -- start and stop -------------------------------------------------------------------------
    def startup(self) -> None:
        """Take the lock (:class:`~pylogctl.errors.LogDirLockedError` if a broker holds it),
        check or write ``meta.properties``, and load every partition."""
        os.makedirs(self.path, exist_ok=True)
        self.lock.acquire()
        try:
            self._meta_properties()
            log_dir = LogDir(self.path)
            self.had_clean_shutdown = log_dir.clean_shutdown
            for entry in log_dir.partitions:
                if entry.is_metadata_log:
                    continue
                inputs = log_dir.load_inputs(entry)
                log = Log.load(entry.path, self.config_for(entry.topic),
                               log_start_offset_checkpoint=inputs.log_start_offset_checkpoint,
                               recovery_point_checkpoint=inputs.recovery_point_checkpoint,
                               high_watermark_checkpoint=inputs.high_watermark_checkpoint,
                               had_clean_shutdown=inputs.had_clean_shutdown, lock=self.lock)
                self._add(LoadedLog(entry.topic, entry.partition, self._topic_id(entry.path),
                                    log))
            cleaned = log_dir.checkpoints[CLEANER_OFFSET_CHECKPOINT].entries or ()
            self.cleaner_checkpoints = {(e.topic, e.partition): e.offset for e in cleaned
                                        if (e.topic, e.partition) in self.logs}
            self.checkpoint()
            if delete_if_exists(os.path.join(self.path, CLEAN_SHUTDOWN_FILE)):
                fsync_dir(self.path)
        except BaseException:
            for loaded in self.logs.values():
                loaded.log.close()
            self.logs.clear()
            self.lock.release()
            raise

    def shutdown(self) -> None:
        """Flush and close every log, write the checkpoints and the clean-shutdown marker,
        release the lock."""
        if not self.lock.locked:
            return
        try:
            self.delete_doomed_files()
            for loaded in self.logs.values():
                loaded.log.flush()
            self.checkpoint()
            for loaded in self.logs.values():
                loaded.log.close()
                # the snapshot of the previous shutdown is stray now; Kafka leaves it to the
                # next load, removing it here leaves nothing for `pylogctl recover` to do
                loaded.log.producer_state.remove_stray_snapshots(
                    loaded.log.segments.base_offsets)
            write_file_atomically(os.path.join(self.path, CLEAN_SHUTDOWN_FILE), b"")
        finally:
            self.lock.release()

    def _meta_properties(self) -> None:
        path = os.path.join(self.path, META_PROPERTIES)
        if os.path.exists(path):
            props = read_properties(path)
            found = props.get("node.id", props.get("broker.id"))
            if found is not None and int(found) != self.node_id:
                raise UsageError(f"{path} belongs to node {found}, not node {self.node_id}: "
                                 f"start with --node-id {found}", path=path)
            self.cluster_id = props.get("cluster.id", "")
            if self.cluster_id:
                return
        self.cluster_id = self.cluster_id or uuid_to_kafka(new_kafka_uuid())
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())
        text = (f"#\n#{stamp}\nnode.id={self.node_id}\ndirectory.id="
                f"{uuid_to_kafka(new_kafka_uuid())}\nversion=1\ncluster.id={self.cluster_id}\n")
        write_file_atomically(path, text.encode())

    # -- partitions -----------------------------------------------------------------------------
    def _topic_id(self, partition_dir: str) -> uuid.UUID:
        path = os.path.join(partition_dir, PARTITION_METADATA)
        if os.path.exists(path):
            return uuid_from_kafka(read_partition_metadata(path)["topicId"])
        topic_id = new_kafka_uuid()
        _write_partition_metadata(partition_dir, topic_id)
        return topic_id

    def create_log(self, topic: str, partition: int, topic_id: uuid.UUID,
                   config: LogConfig | None = None) -> LoadedLog:
        """A new, empty partition dir with its ``partition.metadata``."""
        key = (topic, partition)
        if key in self.logs:
            return self.logs[key]
        directory = os.path.join(self.path, f"{topic}-{partition}")
        os.makedirs(directory, exist_ok=True)
        _write_partition_metadata(directory, topic_id)
        fsync_dir(self.path)
        log = Log.load(directory, config or self.config_for(topic), lock=self.lock)
        return self._add(LoadedLog(topic, partition, topic_id, log))

    def _add(self, loaded: LoadedLog) -> LoadedLog:
        log = loaded.log
        log.delete_segment_files = lambda segment: self._delete_later(log, segment)
        self.logs[(loaded.topic, loaded.partition)] = loaded
        return loaded

    def delete_topic(self, topic: str) -> None:
        """Close and remove every partition dir of ``topic`` (renamed to ``-delete`` first,
        so a crash half-way leaves dirs the loader skips)."""
        for key in [k for k in self.logs if k[0] == topic]:
            loaded = self.logs.pop(key)
            loaded.log.close()
            doomed = os.path.join(self.path, marked_dir_name(topic, key[1], "delete"))
            os.replace(loaded.log.dir, doomed)
            fsync_dir(self.path)
            shutil.rmtree(doomed, ignore_errors=True)
        self.checkpoint()
        if any(key[0] == topic for key in self.cleaner_checkpoints):
            self.update_cleaner_checkpoint({k: None for k in self.cleaner_checkpoints
                                            if k[0] == topic})

    # -- checkpoints ----------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Write the recovery-point, high-watermark and log-start-offset checkpoints."""
        logs = sorted(self.logs.values(), key=lambda x: (x.topic, x.partition))
        recovery = [f"{x.topic} {x.partition} {x.log.recovery_point}" for x in logs]
        hw = [f"{x.topic} {x.partition} {x.log.high_watermark}" for x in logs]
        start = [f"{x.topic} {x.partition} {x.log.log_start_offset}" for x in logs
                 if keeps_log_start(x.log.log_start_offset, None if x.log.segments.first is None
                                    else x.log.segments.first.base_offset)]
        for name, lines in ((RECOVERY_POINT_CHECKPOINT, recovery),
                            (HIGH_WATERMARK_CHECKPOINT, hw),
                            (LOG_START_OFFSET_CHECKPOINT, start)):
            write_file_atomically(os.path.join(self.path, name),
                                  format_checkpoint(lines).encode())

    def update_cleaner_checkpoint(self, updates: dict[tuple[str, int], int | None]) -> None:
        """Set (None: remove) entries of ``cleaner-offset-checkpoint`` and rewrite it whole,
        listing only live logs (Kafka's ``LogCleanerManager.updateCheckpoints``)."""
        for key, offset in updates.items():
            if offset is None:
                self.cleaner_checkpoints.pop(key, None)
            else:
                self.cleaner_checkpoints[key] = offset
        lines = [f"{t} {p} {o}" for (t, p), o in sorted(self.cleaner_checkpoints.items())
                 if (t, p) in self.logs]
        write_file_atomically(os.path.join(self.path, CLEANER_OFFSET_CHECKPOINT),
                              format_checkpoint(lines).encode())

    # -- retention ------------------------------------------------------------------------------
    def cleanup_logs(self, now_ms: int) -> int:
        """The retention task (Kafka's ``cleanupLogs``): :meth:`delete_old_segments` on every
        log whose ``cleanup.policy`` lacks ``compact`` (the cleaner runs it on the others,
        between cleanings; with the cleaner disabled nothing deletes from them, as in Kafka).
        Returns the number of segments deleted."""
        total = 0
        for loaded in list(self.logs.values()):
            if not loaded.log.config.compact:
                total += len(self.delete_old_segments(loaded, now_ms).deleted)
        return total

    def delete_old_segments(self, loaded: LoadedLog, now_ms: int) -> RetentionResult:
        """``UnifiedLog.deleteOldSegments`` on a live log, by the offline command's engine;
        the offset checkpoints (the new log start offset) are written before a file goes."""
        result = delete_old_segments(loaded.log, now_ms, self.checkpoint)
        if result.deleted:
            logger.info("Deleted %d segments of %s-%d (%s); log start offset %d",
                        len(result.deleted), loaded.topic, loaded.partition,
                        ", ".join(sorted({d.rule for d in result.deleted})),
                        result.log_start_offset)
        return result

    def _delete_later(self, log: Log, segment: LogSegment) -> None:
        """Remove a ``.deleted`` segment's files ``file.delete.delay.ms`` from now (at once
        outside an event loop), so that a reader holding it finishes first."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            segment.delete_if_exists()
            return
        self._doomed[segment] = loop.call_later(log.config.file_delete_delay_ms / 1000,
                                                self._delete_now, segment)

    def _delete_now(self, segment: LogSegment) -> None:
        self._doomed.pop(segment, None)
        try:
            segment.delete_if_exists()
        except OSError:  # the next load removes .deleted leftovers
            logger.exception("Cannot delete the files of %s", segment)

    def delete_doomed_files(self) -> None:
        """Remove every ``.deleted`` segment still waiting for its delay (at shutdown)."""
        for segment, handle in list(self._doomed.items()):
            handle.cancel()
            self._delete_now(segment)


def _write_partition_metadata(directory: str, topic_id: uuid.UUID) -> None:
    write_file_atomically(os.path.join(directory, PARTITION_METADATA),
                          f"version: 0\ntopic_id: {uuid_to_kafka(topic_id)}\n".encode())
