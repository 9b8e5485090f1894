"""Finishing, or undoing, segment replacements a crash interrupted (phases 1 to 4 of the load:
Kafka's ``removeTempFilesAndCollectSwapFiles`` and ``completeSwapOperations``), and planning the
one replacement the load itself makes: the split of a segment whose offsets overflow
(``splitOverflowedSegment``, retried by ``retryOnOffsetOverflow``).

Both are the same move on disk, new segments swapped in for old ones (see
:mod:`pylogctl.storage.segment_swap`): the clean-up decides, from which ``.cleaned`` and
``.swap`` files survive, whether a replacement got far enough to complete; a split replaces a
segment with the new ones its scratch files stand in for
(:mod:`pylogctl.storage.loader.segment_split`).
"""

from __future__ import annotations

from typing import Callable, TypeVar

from ..checkpoint import TEMP_SUFFIX
from .plan import SEGMENT_FILE_SUFFIXES, DeleteSnapshot, RenameFile, SplitSegment
from .planner import LoadError, LoadPlanner, OffsetOverflow
from ..log_config import LONG_MAX
from ..naming import (CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, LOG_SUFFIX,
                     PRODUCER_SNAPSHOT_SUFFIX, SWAP_FILE_SUFFIX, offset_from_name, segment_name)
from ..segment_check import read_next_offset
from .segment_split import SegmentSplitError, overflow_text, split_source

KRAFT_SNAPSHOT_DELETED = ".checkpoint.deleted"

T = TypeVar("T")


# -- phases 1 to 4: temporary files and interrupted swaps -------------------------------------
def remove_temp_files_and_collect_swaps(p: LoadPlanner) -> list[str]:
    cleaned, swaps = [], []
    for name in p.view.names():
        if name.endswith(DELETED_FILE_SUFFIX) and not name.endswith(KRAFT_SNAPSHOT_DELETED):
            p.delete_file(name, "a stray .deleted file (a deletion the broker did not finish)")
        elif name.endswith(TEMP_SUFFIX):
            # pylogctl's addition: Kafka leaves these (its next write of the file reuses
            # them); the lock is held, so no writer is behind one
            p.delete_file(name, "a stray .tmp file (an atomic write of a checkpoint, snapshot "
                          "or index interrupted before its rename; the file it would have "
                          "replaced is intact)")
        elif name.endswith(CLEANED_FILE_SUFFIX):
            cleaned.append(name)
        elif name.endswith(SWAP_FILE_SUFFIX):
            swaps.append(name)
    cleaned_offsets = [o for o in map(offset_from_name, cleaned) if o is not None]
    min_cleaned = min(cleaned_offsets, default=LONG_MAX)
    valid = []
    for name in swaps:
        offset = offset_from_name(name)
        if offset is not None and offset >= min_cleaned:
            p.delete_file(name, f"an invalid swap file: its offset is at or above the smallest "
                          f".cleaned offset {min_cleaned}, so it belongs to an unfinished split "
                          f"or clean (KAFKA-6264)")
        else:
            valid.append(name)
    for name in cleaned:
        p.delete_file(name, "a stray .cleaned file (a compaction or split the broker did not "
                      "finish; the segments it would replace are intact)")
    return valid


def complete_swap_operations(p: LoadPlanner, swaps: list[str]) -> None:
    low, high = LONG_MAX, -LONG_MAX - 1
    for name in swaps:
        base = offset_from_name(name)
        if base is None or not name[:-len(SWAP_FILE_SUFFIX)].endswith(LOG_SUFFIX):
            continue
        next_offset, _, problem = read_next_offset(p.path(name), base)
        if problem:
            p.notes.append(f"{name}: {problem}")
        low, high = min(low, base), max(high, next_offset)
    for name in p.view.names():
        offset = offset_from_name(name)
        if not name.endswith(SWAP_FILE_SUFFIX) and offset is not None and low <= offset < high:
            p.delete_file(name, f"compacted or split into the swap files covering offsets "
                          f"[{low}, {high}) but not yet deleted")
    if low <= high:
        _delete_split_source(p, low, high)
    for name in p.view.names():
        if name.endswith(SWAP_FILE_SUFFIX):
            target = name[:-len(SWAP_FILE_SUFFIX)]
            p.steps.append(RenameFile(p.path(name), p.path(target), p.view.size(name),
                                      "the swap operation completed before the crash: install "
                                      "its result"))
            p.view.rename(name, target)


def _delete_split_source(p: LoadPlanner, low: int, high: int) -> None:
    """pylogctl's rule beside Kafka's range (see :func:`segment_split.split_source`)."""
    logs = {offset_from_name(n): p.path(n) for n in p.view.names() if n.endswith(LOG_SUFFIX)}
    base = split_source({o: path for o, path in logs.items() if o is not None}, low, high)
    if base is None:
        return
    for name in p.view.names():
        if offset_from_name(name) == base and not name.endswith(SWAP_FILE_SUFFIX):
            p.delete_file(name, f"split into the swap files covering offsets [{low}, {high}), "
                          f"which hold every batch of segment {base}, but not yet deleted "
                          f"(pylogctl's rule: Kafka's range starts at the first split segment, "
                          f"above {base})")


# -- a segment that overflows ------------------------------------------------------------------
def retry_on_offset_overflow(p: LoadPlanner, attempt: Callable[[], T]) -> T:
    """Run ``attempt``; while a recovery in it overflows, split that segment and run it again."""
    while True:
        try:
            return attempt()
        except OffsetOverflow as overflow:
            split_overflowed_segment(p, overflow)


def split_overflowed_segment(p: LoadPlanner, overflow: OffsetOverflow) -> None:
    """Kafka's ``splitOverflowedSegment``, then ``deleteProducerSnapshotsAsync`` of the old
    segment if no new one takes its base offset: the new segments are written to scratch
    files that stand in for them until apply writes them (see :mod:`segment_split`)."""
    error = overflow.error
    base = error.base_offset
    name = segment_name(base, LOG_SUFFIX)
    source = p.log_path(base)
    if p.scratch.holds(source):  # each split segment fits its range by construction
        raise AssertionError(f"a segment written by a split overflows: {error.message}")
    try:
        parts, files = p.scratch.split(source)
    except SegmentSplitError as exc:
        raise LoadError(f"Segment {base}: {overflow_text(error)}, and it cannot be split as "
                        f"Kafka splits it: {exc.message}", path=source,
                        position=exc.position) from None
    size = p.view.size(name)
    for suffix in SEGMENT_FILE_SUFFIXES:
        p.view.delete(segment_name(base, suffix))
    p.segments.pop(base, None)
    p.segments.update((part.base_offset, part.size) for part in parts)  # (replaceSegments)
    for written, (path, written_size) in files.items():
        p.view.add(written, path, written_size)
    p.steps.append(SplitSegment(
        base, p.path(name), size, error.offset, error.position, parts,
        f"{overflow_text(error)}, found while recovering the segment ({overflow.trigger}); "
        f"Kafka splits it, each new segment starting at the first batch the previous one "
        f"cannot index, and loads again (retryOnOffsetOverflow)"))
    snapshot = segment_name(base, PRODUCER_SNAPSHOT_SUFFIX)
    if snapshot in p.view and all(part.base_offset != base for part in parts):
        p.steps.append(DeleteSnapshot(base, p.path(snapshot), "the split segment's producer "
                                      "snapshot goes with it (Kafka's "
                                      "deleteProducerSnapshotsAsync after a split)"))
        p.view.delete(snapshot)
