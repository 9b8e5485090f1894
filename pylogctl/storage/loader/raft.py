"""What Kafka's raft layer does to the KRaft metadata log (``__cluster_metadata-0``) after
``LogLoader`` has loaded it (``KafkaRaftLog.createLog``): its snapshots are checked against
the log, and a log that ends before its latest snapshot restarts from that snapshot.

The metadata log is loaded with log start 0, recovery point 0 and an unclean shutdown, always
(every segment is recovered at every start), so its log start offset is the first segment's
base offset. Then, in Kafka's order:

1. ``recoverSnapshots``: every ``.checkpoint.part`` (a snapshot whose write a crash cut short),
   every ``.checkpoint.deleted`` and every snapshot below the log start offset is deleted.
   If the log start offset is above 0 and no snapshot at or above it is left, Kafka stops
   with "Inconsistent snapshot state": the records below the log start exist nowhere, and
   nothing offline can bring them back (:class:`InconsistentSnapshotsError`, planned as an
   error). A file named like a snapshot that ``Snapshots.parse`` cannot read stops it too.
2. ``truncateToLatestSnapshot``: the latest snapshot (by epoch, then offset) is compared with
   the log: if its epoch is above the log's latest leader epoch, or equal with its offset past
   the log end, the log is truncated fully and starts, empty, at the snapshot's offset
   (``truncateFullyAndStartAt``): every segment, the leader-epoch cache and the producer
   snapshots go, and every other snapshot is forgotten (Kafka marks them
   ``.checkpoint.deleted`` and deletes them a minute later; planned here as deletions). Older
   snapshots are otherwise kept: cleaning them is the running controller's job.

Kafka repeats step 2 on a log it truncated so, changing nothing; so that a second run plans
nothing, a log that is already exactly that (one empty segment at the snapshot's offset, no
other snapshot, no epochs) is left as it is.
"""

from __future__ import annotations

import os

from .plan import CreateSegment, DeleteSnapshot
from .planner import LoadError, LoadPlanner
from ..naming import LOG_SUFFIX, RaftSnapshotName, parse_raft_snapshot_name, segment_name

METADATA_LOG_DIR = "__cluster_metadata-0"


class InconsistentSnapshotsError(LoadError):
    """The metadata log starts above 0 and no snapshot covers the records below its start."""


def is_metadata_log_dir(directory: str) -> bool:
    return os.path.basename(directory) == METADATA_LOG_DIR


def plan_raft_snapshots(p: LoadPlanner, log_end: int | None) -> int | None:
    """Steps 1 and 2 for a loaded metadata log ending at ``log_end`` (None: it has no
    segment; Kafka's loader then creates an empty one at 0). Returns the offset the log
    restarts at after a full truncation, None when it keeps its segments."""
    log_start = min(p.segments) if p.segments else 0
    end = 0 if log_end is None else log_end
    retained: dict[tuple[int, int], tuple[RaftSnapshotName, str]] = {}
    to_delete: list[tuple[str, str]] = []
    for name in sorted(p.view.names()):
        try:
            snapshot = parse_raft_snapshot_name(name)
        except ValueError as exc:
            raise LoadError(f"{p.path(name)}: {exc}: Kafka's raft layer cannot start on this "
                            f"metadata log (move the file out of the partition dir)",
                            path=p.path(name)) from None
        if snapshot is None:
            continue
        if snapshot.partial:
            to_delete.append((name, "a snapshot whose write did not finish (.checkpoint.part): "
                                    "Kafka deletes it at start (KafkaRaftLog.recoverSnapshots)"))
        elif snapshot.deleted:
            to_delete.append((name, "a snapshot marked for deletion: Kafka deletes it at start "
                                    "(KafkaRaftLog.recoverSnapshots)"))
        elif snapshot.offset < log_start:
            to_delete.append((name, f"a snapshot below the log start offset {log_start}: Kafka "
                                    f"deletes it at start (KafkaRaftLog.recoverSnapshots)"))
        else:
            retained[(snapshot.epoch, snapshot.offset)] = (snapshot, name)
    latest = retained[max(retained)] if retained else None
    if log_start > 0 and latest is None:  # (those below the log start are not retained)
        raise InconsistentSnapshotsError(
            f"{p.dir}: Inconsistent snapshot state: there must be a snapshot at an offset "
            f"larger than the current log start offset {log_start}, but the latest snapshot is "
            f"Optional.empty (Kafka's raft layer stops here: the records below offset "
            f"{log_start} are in no snapshot)", path=p.dir)
    for name, reason in to_delete:
        p.delete_file(name, reason)
    if latest is None:
        return None
    snapshot, snapshot_name = latest
    # the cache as LogLoader leaves it (truncateFromEnd at the log end), 0 when empty
    latest_epoch = max((e.epoch for e in p.epochs.epoch_entries() if e.start_offset < end),
                       default=0)
    if not (snapshot.epoch > latest_epoch
            or (snapshot.epoch == latest_epoch and snapshot.offset > end)):
        return None
    others = [name for key, (_, name) in sorted(retained.items()) if name != snapshot_name]
    already = (list(p.segments) == [snapshot.offset] and p.segments[snapshot.offset] == 0
               and not others and not p.epochs_before and not p.snapshots())
    if already:
        return None
    p.note(f"the latest snapshot {snapshot_name} is ahead of the log ("
           + (f"epoch {snapshot.epoch} > the log's latest leader epoch {latest_epoch}"
              if snapshot.epoch > latest_epoch else
              f"offset {snapshot.offset} > the log end offset {end}")
           + f"): Kafka's raft layer truncates the log fully and restarts it, empty, at "
             f"{snapshot.offset} (KafkaRaftLog.truncateToLatestSnapshot); the snapshot holds "
             f"the metadata up to there")
    why = f"the log restarts at the latest snapshot {snapshot_name}"
    p.epochs.clear()
    if p.epochs_before:
        p.write_epochs(f"{why}: the leader-epoch cache is cleared",
                       removed_from_end=p.epochs_before)
    for offset, path in p.snapshots().items():
        p.steps.append(DeleteSnapshot(offset, path, f"{why}: producer state starts over"))
        p.view.delete(os.path.basename(path))
    for base in sorted(p.segments, reverse=True):
        p.delete_segment(base, why)
    p.recoveries.clear()
    path = p.path(segment_name(snapshot.offset, LOG_SUFFIX))
    p.steps.append(CreateSegment(snapshot.offset, path, f"{why}: the log starts, empty, at the "
                                 f"snapshot's end offset"))
    p.segments[snapshot.offset] = 0
    for name in others:
        p.delete_file(name, f"{why}: every other snapshot is forgotten (Kafka marks it "
                            f".checkpoint.deleted and deletes it a minute later)")
    return snapshot.offset
