"""Swapping new segments in for old ones, crash-safely (Kafka's ``LocalLog.replaceSegments``).

The log cleaner writes its output as a ``.cleaned`` segment; then, in this order:

1. each new segment is renamed ``.cleaned`` -> ``.swap``, the newest first (so a ``.swap`` at or
   above the smallest ``.cleaned`` offset marks an unfinished swap), and takes its place in the
   segment map (replacing the old segment with the same base offset);
2. the directory is fsynced (pylogctl's addition, as in its segment split: the ``.swap`` names
   are durable before anything old goes);
3. each old segment is renamed to ``.deleted`` (the ``.log`` first), oldest first, and leaves
   the map unless the first new segment took its base offset;
4. each ``.swap`` is renamed to its final name, the directory fsynced;
5. the ``.deleted`` files are removed (Kafka waits ``file.delete.delay.ms`` for readers; an
   offline tool has none, a broker passes its scheduler as ``delete_files``).

A kill at any point leaves a state Kafka's loader (and ``pylogctl recover``) resolves: before
every ``.swap`` exists, ``.cleaned`` files and the ``.swap`` files above them are deleted and
the old segments stay; after, the old segments' files in the swap's offset range are deleted
and the ``.swap`` files installed; ``.deleted`` leftovers are deleted. One case keeps Kafka's
behaviour rather than improving on it: an old segment of the group whose every record the
cleaner dropped starts at or above the new segment's next offset, so it is outside the swap's
range and survives a kill between steps 1 and 3 (its records are all superseded by later ones;
the next cleaning removes them again).
"""

from __future__ import annotations

import logging
import os
from typing import Callable, Sequence

from .backup import Backup
from .files import fsync_dir
from .log_segments import LogSegments
from .naming import CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX
from .segment import LogSegment

logger = logging.getLogger(__name__)


def replace_segments(segments: LogSegments[LogSegment], new_segments: Sequence[LogSegment],
                     old_segments: Sequence[LogSegment], directory: str | os.PathLike[str], *,
                     backup: Backup | None = None,
                     delete_files: Callable[[LogSegment], None] = LogSegment.delete_if_exists
                     ) -> list[LogSegment]:
    """Install ``new_segments`` (``.cleaned``, flushed) in place of ``old_segments`` in the map
    ``segments`` and on disk; returns the old segments deleted and not replaced (whose producer
    snapshots the caller deletes, as ``UnifiedLog.replaceSegments`` does)."""
    directory = os.fspath(directory)
    new_sorted = sorted(new_segments, key=lambda s: s.base_offset)
    old_sorted = sorted((s for s in old_segments if s.base_offset in segments),
                        key=lambda s: s.base_offset)
    for segment in reversed(new_sorted):
        segment.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        segments.add(segment)
    fsync_dir(directory)
    new_bases = {s.base_offset for s in new_sorted}
    deleted_not_replaced = []
    for segment in old_sorted:
        if segment.base_offset != new_sorted[0].base_offset:
            segments.remove(segment.base_offset)
        if backup is not None:
            for path in segment_paths(segment):
                backup.save(path, will_delete=True)
        if not segment.has_suffix(DELETED_FILE_SUFFIX):
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
        if segment.base_offset not in new_bases:
            deleted_not_replaced.append(segment)
    for segment in new_sorted:
        segment.change_file_suffixes(SWAP_FILE_SUFFIX, "")
    fsync_dir(directory)
    for segment in old_sorted:
        logger.info("Deleting segment files %s", segment)
        delete_files(segment)
    return deleted_not_replaced


def segment_paths(segment: LogSegment) -> list[str]:
    """The four files of ``segment`` (some may not exist)."""
    return [segment.log.path, segment.lazy_offset_index.path, segment.lazy_time_index.path,
            segment.txn_index.path]
