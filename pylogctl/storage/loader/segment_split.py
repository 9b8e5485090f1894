"""Splitting a segment whose offsets overflow its base offset + 2^31-1 (KAFKA-6264): the writer
the loader's plan and its apply step share.

Brokers before 0.11 could write a segment holding offsets more than 2^31-1 away from its base
offset (the log cleaner grouped segments by size alone), which its indexes cannot name. Kafka's
loader notices when it recovers such a segment (``LogSegmentOffsetOverflowException``) and
splits it (``LocalLog.splitOverflowedSegment``): from byte 0, a new segment based at the first
batch's base offset copies batches (``LogSegment.appendFromFile``: appends of up to 1 MiB,
indexed as appends are) until one no longer fits its range; the next new segment starts at that
batch. The new segments hold exactly the old bytes and take the old segment's mtime (retention
of timestamp-less magic-0 data goes by it); the loader then swaps them in and loads again.

Where Kafka's split fails, so does :func:`write_split` (:class:`SegmentSplitError`): bytes after
the last whole batch (``NoSuchElementException``), a corrupt size field or wrapper, a batch whose
own offsets span more than 2^31-1 ("Failed to append records").

Planning must read the segments a split will write, so :class:`SplitScratch` writes them, with
this same code, into a private temporary dir (``TMPDIR``) that planning removes when it ends:
one copy of the overflowing segment, and the plan reasons about the very bytes apply writes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Mapping

from ...errors import CorruptRecordError, LogSegmentOffsetOverflowError, PylogctlError
from ..file_records import FileRecords
from .plan import SEGMENT_FILE_SUFFIXES, SplitPart
from ..log_config import LogConfig
from ..naming import segment_file
from ..segment import LogSegment


class SegmentSplitError(PylogctlError):
    """The segment cannot be split the way Kafka splits it (Kafka's load fails there too)."""


def write_split(source: str, directory: str, config: LogConfig,
                file_suffix: str = "") -> tuple[SplitPart, ...]:
    """Write the segments that split the ``.log`` at ``source`` into ``directory``, named with
    ``file_suffix`` (``.cleaned`` in a partition dir): flushed, closed, with the source's mtime.
    Returns their layout; on an error the files written so far are removed."""
    mtime_ms = os.stat(source).st_mtime_ns // 1_000_000
    written: list[LogSegment] = []
    parts: list[SplitPart] = []
    try:
        with FileRecords(source) as records:
            position, size = 0, records.size_in_bytes
            while position < size:
                base = _first_base_offset(records, position)
                LogSegment.delete_files_if_exist(directory, base, file_suffix)
                segment = LogSegment.create(directory, base, config, file_suffix=file_suffix)
                written.append(segment)
                try:
                    copied = segment.append_from_file(records, position)
                except CorruptRecordError as exc:
                    raise _split_error(source, exc, position) from None
                if copied == 0:
                    raise SegmentSplitError(
                        f"Failed to append records from position {position} in {source}: the "
                        f"batch there spans more offsets than a segment can index",
                        path=source, position=position)
                parts.append(SplitPart(base, position, copied))
                position += copied
        for segment in written:
            segment.on_become_inactive_segment()
            segment.flush()
            segment.close()
            segment.set_last_modified(mtime_ms)  # after the last write to its files
    except Exception:
        for segment in written:
            segment.delete_if_exists()
        raise
    return tuple(parts)


def _first_base_offset(records: FileRecords, position: int) -> int:
    """The base offset of the batch at ``position`` (a compressed legacy wrapper is
    decompressed for it, as in Kafka)."""
    batches = records.batches(position)
    try:
        batch = next(batches, None)
        if batch is None:
            end = records.size_in_bytes
            raise SegmentSplitError(
                f"{end - position} bytes at the end of {records.path} are not a whole batch "
                f"(byte position {position}); Kafka's split fails on them too "
                f"(NoSuchElementException)", path=records.path, position=position)
        return batch.base_offset
    except CorruptRecordError as exc:
        raise _split_error(records.path, exc, position) from None
    finally:
        batches.close()


def _split_error(path: str, exc: PylogctlError, position: int) -> SegmentSplitError:
    where = exc.position if exc.position is not None else position
    return SegmentSplitError(f"Cannot split {path}: {exc.message}", path=path, position=where)


def rename_segment_files(directory: str, base_offset: int, old_suffix: str,
                         new_suffix: str) -> None:
    """Kafka's ``changeFileSuffixes`` for a closed segment: each of its files that exists, the
    ``.log`` first (so a half-renamed segment still has a file under the old suffix)."""
    for suffix in SEGMENT_FILE_SUFFIXES:
        source = segment_file(directory, base_offset, suffix, old_suffix)
        if os.path.exists(source):
            os.replace(source, segment_file(directory, base_offset, suffix, new_suffix))


def overflow_text(error: LogSegmentOffsetOverflowError) -> str:
    """Why the segment must be split, for plans and errors."""
    return (f"offset {error.offset} (byte position {error.position}) lies beyond the base "
            f"offset {error.base_offset} + 2^31-1, which the segment's indexes cannot name "
            f"(KAFKA-6264: written by a broker before 0.11)")


def split_source(logs: Mapping[int, str], low: int, high: int) -> int | None:
    """The base offset of the segment an interrupted split whose ``.swap`` files cover
    ``[low, high)`` replaces, when Kafka's range rule misses it: a split names its first
    segment after the first batch, above the old segment's base offset when the cleaner had
    removed the records before it. The segment just below ``low`` (``logs``: base -> ``.log``)
    whose every batch lies in the range is that source; Kafka would keep it and serve its
    records twice, pylogctl deletes it with the range."""
    below = [base for base in logs if base < low]
    if not below:
        return None
    base = max(below)
    first = next_offset = None
    try:
        with FileRecords(logs[base]) as records:
            for batch in records.batches():
                if first is None:
                    first = batch.base_offset
                next_offset = batch.next_offset
    except PylogctlError:
        return None
    inside = first is not None and next_offset is not None and low <= first and next_offset <= high
    return base if inside else None


class SplitScratch:
    """Where planning writes the segments a planned split creates, to read them in place of
    the files apply will write (one subdirectory per split)."""

    def __init__(self, config: LogConfig) -> None:
        self.config = config
        self.dir: str | None = None
        self._splits = 0

    def split(self, source: str) -> tuple[tuple[SplitPart, ...], dict[str, tuple[str, int]]]:
        """Split ``source``: its layout, and each file written (name -> (path, size))."""
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="pylogctl-split-")
        target = os.path.join(self.dir, str(self._splits))
        self._splits += 1
        os.mkdir(target)
        parts = write_split(source, target, self.config)
        with os.scandir(target) as it:
            files = {e.name: (e.path, e.stat().st_size) for e in it}
        return parts, files

    def holds(self, path: str) -> bool:
        return self.dir is not None and os.path.commonpath([self.dir, path]) == self.dir

    def close(self) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
