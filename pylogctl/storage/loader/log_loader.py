"""Loading a partition dir the way a broker starts it (Kafka's ``LogLoader.load``), split in two:
:func:`plan_load` decides every step by reading only, :func:`apply_load` carries them out.

The plan follows Kafka's order (``LogLoader.load``):

1. Delete ``*.deleted`` files (not KRaft ``.checkpoint.deleted`` ones) and, unlike Kafka,
   ``*.tmp`` files (atomic writes interrupted before their rename); delete every ``.swap``
   whose base offset is >= the smallest ``.cleaned`` one (an unfinished split, KAFKA-6264),
   then every ``.cleaned`` file.
2. For the remaining ``.swap`` log files, take the range [min base offset, max next offset).
3. Delete every non-swap file whose name's offset lies in that range (segments compacted or
   split whose old files were not yet renamed away). pylogctl also deletes a split's source
   that the range misses (named below its first batch: see ``segment_split.split_source``).
4. Rename every ``.swap`` file to its final name.
5. Load segments by name: delete index files without a ``.log`` ("Found an orphaned index
   file"); recover at once a segment whose ``.index`` is missing or whose ``.txnindex`` fails
   its sanity check. pylogctl adds a structural check of the offset and time indexes (Kafka
   skips it, relying on step 6 above the recovery point): a missing time index, entries not
   strictly increasing, or positions past the segment also mean a rebuild. A recovery that
   meets an offset beyond base offset + 2^31-1 (KAFKA-6264) splits the segment
   (:class:`SplitSegment`, the producer snapshot at its base going with it unless a new
   segment keeps that base) and loading starts over (``retryOnOffsetOverflow``), as in step 6.
6. Without a clean shutdown, recover every segment from the one holding the recovery point on;
   the first that loses bytes ("Corruption found in segment {base}, truncating to offset
   {next}") or hits an invalid offset (emptied) ends recovery and every later segment is
   deleted. A segment already recovered in step 5 finds nothing to cut here, so, as in Kafka,
   later segments survive a corrupt tail found in step 5.
7. If the log end offset is below the checkpointed log start offset, delete every segment
   ("This could happen if segment files were deleted from the file system").
8. If no segment is left, create an empty one at the checkpointed log start offset.
9. Offsets: log start = max(checkpoint, first base offset); recovery point = the log end after
   a clean shutdown, else min(checkpoint, log end); the high watermark checkpoint clamped into
   [log start, log end] (``UnifiedLog.updateHighWatermark``); the leader-epoch cache gets the
   epochs recovery found, then is truncated at the log end and the checkpointed log start.
10. Producer state: remove stray snapshots, then rebuild to the log end.

The KRaft metadata log is loaded the same way, with the inputs Kafka's raft layer gives it
(log start 0, recovery point 0, never a clean shutdown), and its snapshots are then checked
against the log, between steps 7 and 8 (:mod:`load_raft`).

A recovery that would rewrite the same bytes (same indexes, nothing to cut) is listed under
``verified`` instead of ``steps``, so a plan made right after :func:`apply_load` is empty.
Segments that step 6 or 7 deletes are not recovered first (Kafka does, to no effect), and
deleted segments take the producer snapshot at their base offset with them, as in Kafka.
Where the steps run in a different order from Kafka's, and why any interruption is repaired by
planning again, is explained in :mod:`pylogctl.storage.loader.apply` (which also notes that the
active segment's indexes are left trimmed). What the producer-state steps plan is explained in
:mod:`pylogctl.storage.producer_recovery`.

A split is only found where Kafka finds it, by a recovery: a segment below the recovery point
with an ``.index`` is loaded as it is, overflow and all. The plan goes on as if the split had
happened: its segments are written to scratch files (:mod:`pylogctl.storage.loader.segment_split`),
which the rest of planning reads (recovery, offsets, producer state) and which are removed when
planning ends; the plan itself only names files in the partition dir.

This module runs the phases in order and plans steps 8 and 9. The others are planned by
:mod:`load_swaps` (steps 1 to 4, and splits), :mod:`load_recovery` (steps 5 to 7, and the
recovery steps) and :mod:`load_producer_state` (step 10), on the state they share
(:mod:`load_planner`) and the dir as the steps planned so far leave it (:mod:`load_view`).
"""

from __future__ import annotations

import logging
import os

from ...errors import UsageError
from ..checkpoint import EpochEntry
from ..clock import wall_clock_ms
from .apply import apply_load
from .plan import CreateSegment, LoadInputs, LoadPlan, RecoverSegment
from .planner import LoadError, LoadPlanner
from .producer_state_rebuild import plan_producer_state
from .raft import is_metadata_log_dir, plan_raft_snapshots
from .recovery import (delete_segments_if_log_start_above_log_end, load_segment_files,
                            recover_log, recovery_steps)
from .swaps import complete_swap_operations, remove_temp_files_and_collect_swaps
from ..log_config import LogConfig
from ..naming import LOG_SUFFIX, segment_name

__all__ = ["plan_load", "apply_load", "LoadError"]

logger = logging.getLogger(__name__)

DELETE_DIR_SUFFIX = "-delete"


def plan_load(partition_dir: str | os.PathLike[str], *, log_start_offset_checkpoint: int = 0,
              recovery_point_checkpoint: int = 0, high_watermark_checkpoint: int | None = None,
              had_clean_shutdown: bool = False, config: LogConfig = LogConfig(),
              now_ms: int | None = None) -> LoadPlan:
    """Decide everything loading ``partition_dir`` does, reading files only.

    The checkpoints are the partition's entries in the log dir's checkpoint files (Kafka's
    defaults when absent: 0, 0 and 0); ``had_clean_shutdown`` is whether the log dir holds
    ``.kafka_cleanshutdown``. ``now_ms`` decides which producers count as expired.
    """
    directory = os.path.abspath(os.fspath(partition_dir))
    if os.path.basename(directory).endswith(DELETE_DIR_SUFFIX):
        raise UsageError(f"{directory} belongs to a deleted topic and awaits deletion: Kafka "
                         f"does not recover it", path=directory)
    inputs = LoadInputs(log_start_offset_checkpoint, recovery_point_checkpoint,
                        high_watermark_checkpoint, had_clean_shutdown)
    now_ms = wall_clock_ms() if now_ms is None else now_ms
    p = LoadPlanner(directory, inputs, config, now_ms)
    try:
        return _plan(p, inputs)
    finally:
        p.close()


def _plan(p: LoadPlanner, inputs: LoadInputs) -> LoadPlan:
    """The phases in Kafka's order (see the module docstring)."""
    complete_swap_operations(p, remove_temp_files_and_collect_swaps(p))
    load_segment_files(p)
    recover_log(p)
    log_start_ckpt = inputs.log_start_offset_checkpoint
    log_end = delete_segments_if_log_start_above_log_end(p)
    if is_metadata_log_dir(p.dir):
        restart_at = plan_raft_snapshots(p, log_end)
        if restart_at is not None:  # truncated fully: it starts, empty, at the snapshot
            log_end = log_start_ckpt = restart_at
    changing: list[RecoverSegment] = []
    verifying: list[RecoverSegment] = []
    if log_end is not None:  # (when every segment goes, recovering them first is moot)
        changing, verifying = recovery_steps(p)
        p.steps.extend(changing)
    if not p.segments:
        path = p.path(segment_name(log_start_ckpt, LOG_SUFFIX))
        p.steps.append(CreateSegment(log_start_ckpt, path, "the log has no segment: an empty "
                                     "one starts at the checkpointed log start offset"))
        p.segments[log_start_ckpt] = 0
    next_offset = log_start_ckpt if log_end is None else log_end
    bases = sorted(p.segments)
    removed_end = p.epochs.truncate_from_end(next_offset)
    log_start = max(log_start_ckpt, bases[0])
    removed_start = p.epochs.truncate_from_start(log_start_ckpt)
    if tuple(p.epochs.epoch_entries()) != p.epochs_before:
        p.write_epochs(_epoch_reason(p.epochs_assigned, removed_end, removed_start, next_offset,
                                     log_start_ckpt),
                       p.epochs_assigned, removed_end, removed_start)
    if inputs.had_clean_shutdown and log_end is not None:
        recovery_point = next_offset
    else:
        recovery_point = min(inputs.recovery_point_checkpoint, next_offset)
    hw = inputs.high_watermark_checkpoint or 0
    high_watermark = min(max(hw, log_start), next_offset)
    plan_producer_state(p, bases, log_start, next_offset)
    plan = LoadPlan(p.dir, p.config, inputs, p.now_ms, tuple(p.files.values()), tuple(p.steps),
                    tuple(verifying), tuple(bases), log_start, next_offset, recovery_point,
                    high_watermark, tuple(p.epochs.epoch_entries()), tuple(p.notes))
    logger.debug("Planned the load of %s: %d steps", p.dir, len(plan.steps))
    return plan


def _epoch_reason(assigned: list[EpochEntry], removed_end: list[EpochEntry],
                  removed_start: list[EpochEntry], log_end: int, log_start: int) -> str:
    parts = []
    if assigned:
        parts.append("recovery assigns the leader epochs its batches start "
                     "(LogSegment.recover)")
    if removed_end:
        parts.append(f"entries at or above the log end offset {log_end} are removed "
                     f"(truncateFromEnd)")
    if removed_start:
        parts.append(f"entries up to the checkpointed log start offset {log_start} are "
                     f"folded into one starting there (truncateFromStart)")
    return "; ".join(parts) or "the cache is normalised"
