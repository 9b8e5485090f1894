"""What a broker's ListOffsets would answer for a partition, from its files (``pylogctl
get-offsets``, Kafka's ``kafka-get-offsets``).

Per partition, the replica :class:`~.replicas.LogDirs` chooses is read, as a leader would be
asked, for a read_uncommitted client (the Admin client's default):

- latest (-1): the high watermark as :class:`~.end_offsets.EndOffsets` reads it for
  consumer-groups' lag: the ``replication-offset-checkpoint`` entry clamped into [log start,
  log end]; a missing entry counts as 0, so latest is then the log start offset (a note says
  so), as a broker loading the dir starts from.
- earliest (-2), and earliest-local (-4): the log start offset (the larger of the first
  segment's base offset and the ``log-start-offset-checkpoint`` entry). Offline there is no
  remote storage: Kafka answers -4 like -2 when remote storage is off.
- latest-tiered (-5), earliest-pending-upload (-6): no offset, as Kafka answers without
  remote storage (``kafka-get-offsets`` then prints no line).
- max-timestamp (-3) and a timestamp: :mod:`pylogctl.storage.list_offsets` over the segments
  as loading the partition would leave them (:mod:`pylogctl.storage.loader.loaded_segments`: the
  segments a load recovers are read as recovery rebuilds them), and no offset when what is
  found is at or past the high watermark.

Nothing here writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import PylogctlError
from ..storage.checkpoint import LEADER_EPOCH_CHECKPOINT, read_leader_epoch_checkpoint
from ..storage.list_offsets import (EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP,
                                    LATEST_TIMESTAMP, MAX_TIMESTAMP,
                                    fetch_offset_by_timestamp)
from ..storage.loader.loaded_segments import open_loaded_segments
from .end_offsets import EndOffsets
from .replicas import LogDirs, Replica


@dataclass(frozen=True)
class ListedOffset:
    """One partition's answer: ``offset`` None where ListOffsets answers -1."""

    topic: str
    partition: int
    offset: int | None
    timestamp: int = -1
    leader_epoch: int | None = None
    replica: Replica | None = None


class OffsetLister:
    """ListOffsets answers for the partitions of ``log_dirs``; ``notes`` collects what the
    reader should know (missing high watermarks, unreadable files)."""

    def __init__(self, log_dirs: LogDirs) -> None:
        self.log_dirs = log_dirs
        self.end_offsets = EndOffsets(log_dirs)
        self.notes: list[str] = []

    def list_offset(self, topic: str, partition: int, timestamp: int) -> ListedOffset:
        end = self.end_offsets.get(topic, partition)
        replica = end.replica
        if replica is None or end.offset is None:
            return ListedOffset(topic, partition, None)
        if end.high_watermark_checkpoint is None and timestamp != EARLIEST_TIMESTAMP:
            self.notes.append(f"{topic}-{partition}: no entry in {replica.log_dir}'s "
                              f"replication-offset-checkpoint: the high watermark is taken as "
                              f"the log start offset {replica.log_start_offset}, as a broker "
                              f"loading the dir starts from")
        epochs = _epochs(replica, self.notes)
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            start = replica.log_start_offset
            first = epochs[0] if epochs else None
            epoch = first.epoch if first is not None and first.start_offset <= start else None
            return ListedOffset(topic, partition, start, -1, epoch, replica)
        if timestamp == LATEST_TIMESTAMP:
            return ListedOffset(topic, partition, end.offset, -1,
                                epochs[-1].epoch if epochs else None, replica)
        if timestamp < 0 and timestamp != MAX_TIMESTAMP:  # latest-tiered, earliest-pending-upload
            return ListedOffset(topic, partition, None, -1, -1, replica)
        segments: list = []
        try:
            log_dir = next(d for d in self.log_dirs.log_dirs if d.path == replica.log_dir)
            segments = open_loaded_segments(log_dir.plan(replica.entry))
            found = fetch_offset_by_timestamp(segments, timestamp, replica.log_start_offset,
                                              end.offset)
        except PylogctlError as exc:
            self.notes.append(f"{topic}-{partition}: {exc}: no offset")
            found = None
        finally:
            for segment in segments:
                segment.close_handlers()
        if found is None:
            return ListedOffset(topic, partition, None, -1, None, replica)
        return ListedOffset(topic, partition, found.offset, found.timestamp, found.leader_epoch,
                            replica)


def _epochs(replica: Replica, notes: list[str]) -> list:
    path = os.path.join(replica.path, LEADER_EPOCH_CHECKPOINT)
    if not os.path.exists(path):
        return []
    try:
        return list(read_leader_epoch_checkpoint(path).entries or ())
    except PylogctlError as exc:
        notes.append(str(exc))
        return []
