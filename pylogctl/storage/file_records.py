"""A segment file's batches (Kafka's ``FileRecords``), read through an mmap.

Mapping keeps memory bounded for multi-GB segments: pages come from the page cache and are
dropped again by the kernel, and nothing is copied until a batch's records are decoded.

``FileRecords(path)`` is the read-only view the dump tools use. ``FileRecords.open(path)`` is
the mutable file a :class:`~pylogctl.storage.segment.LogSegment` writes: appends go to the
end with ``pwrite``, ``truncate_to`` cuts the tail, ``flush`` fsyncs, and ``close`` trims a
preallocated file to its data. Its ``size_in_bytes`` is the logical size, which for a freshly
preallocated file is 0 while the file is ``init_file_size`` long. The map follows the file as
it grows; batches handed out before a ``truncate_to`` or ``close`` must not be used after it.
"""

from __future__ import annotations

import mmap
import os
from typing import Iterator, NamedTuple

from ..errors import FileUnreadableError
from ..format import record_batch
from ..format.log_stream import LOG_OVERHEAD, AnyBatch, iter_batches
from ..format.record import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from ..format.record_batch import RecordBatch
from ..format.varint import INT32_MAX
from .files import delete_if_exists, open_for_read
from .remote_mirror import materialize

RELEASE_EVERY = 64 * 1024 * 1024
_DONTNEED = getattr(mmap, "MADV_DONTNEED", 0)

# The C batch walk (format/_speedups.c, scan_batches), when the accelerator is built and on
# (record_batch decides, through pylogctl/speedups.py) and builds RecordBatch
# objects itself; else iter_batches alone.
_c_scan = None
if record_batch.C_BUILDS[2]:
    from ..format._speedups import scan_batches as _c_scan
_SCAN_BYTES = 8 << 20  # per scan_batches call: bounds what is mapped before release()


class LogOffsetPosition(NamedTuple):
    """Where a batch is: its last offset, byte position and size."""

    offset: int
    position: int
    size: int


class TimestampAndOffset(NamedTuple):
    timestamp: int
    offset: int
    leader_epoch: int | None = None


class FileRecords:
    """Open a file for batch iteration; use as a context manager.

    ``end`` limits the view to the first ``end`` bytes, as Kafka's ``slice(0, maxBytes)``.
    """

    def __init__(self, path: str | os.PathLike[str], end: int | None = None) -> None:
        self.path = os.fspath(path)
        self.mutable = False
        self._unsynced = False
        self._file = open_for_read(self.path)
        self._map: mmap.mmap | None = None
        self._view = memoryview(b"")
        self._mapped = 0
        self._released = 0
        try:
            self.file_size = os.fstat(self._file.fileno()).st_size
            self._remap()
        except OSError as exc:
            self._file.close()
            raise FileUnreadableError(f"Cannot read {self.path}: {exc.strerror}", path=self.path) from None
        self.end = self.file_size if end is None else max(0, min(end, self.file_size))

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, file_already_exists: bool = True,
             init_file_size: int = 0, preallocate: bool = False) -> "FileRecords":
        """The mutable segment file (created if missing), as Kafka's ``FileRecords.open``.

        A new file with ``preallocate`` is extended to ``init_file_size`` and starts empty.
        """
        self = cls.__new__(cls)
        self.path = os.fspath(path)
        self.mutable = True
        self._unsynced = not file_already_exists
        self._map, self._view, self._mapped, self._released = None, memoryview(b""), 0, 0
        materialize(self.path)
        try:
            # not O_APPEND: Linux pwrite would ignore the offset and write after preallocation
            self._file = os.fdopen(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644), "r+b")
            self.file_size = os.fstat(self._file.fileno()).st_size
            if not file_already_exists and preallocate:
                self._file.truncate(init_file_size)
                self.file_size, self.end = init_file_size, 0
            else:
                self.end = self.file_size
        except OSError as exc:
            raise FileUnreadableError(f"Cannot open {self.path} for writing: {exc.strerror}",
                                      path=self.path) from None
        if self.end > INT32_MAX:
            self._file.close()
            raise FileUnreadableError(f"The size of segment {self.path} ({self.end}) is larger "
                                      f"than the maximum allowed segment size of {INT32_MAX}",
                                      path=self.path)
        return self

    # -- the mapping ------------------------------------------------------------------------
    def _remap(self) -> None:
        """Map the whole file as it is now (after growth), dropping the old map."""
        self._unmap()
        if self.file_size:
            self._map = mmap.mmap(self._file.fileno(), self.file_size, access=mmap.ACCESS_READ)
            if hasattr(mmap, "MADV_SEQUENTIAL"):
                self._map.madvise(mmap.MADV_SEQUENTIAL)
            self._view = memoryview(self._map)
        self._mapped = self.file_size

    def _unmap(self) -> None:
        self._view.release()
        self._view = memoryview(b"")
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:
                pass  # a caller still holds a record view; the map goes with the last reference
        self._map = None
        self._mapped = 0
        self._released = 0

    @property
    def view(self) -> memoryview:
        """The mapped bytes (at least the first ``end`` of them)."""
        if self._mapped < self.end:
            self._remap()
        return self._view

    @property
    def size_in_bytes(self) -> int:
        """Size of the (possibly sliced) view, as Kafka's ``sizeInBytes``."""
        return self.end

    # -- reading ----------------------------------------------------------------------------
    def batches(self, start: int = 0) -> Iterator[AnyBatch]:
        """Iterate batches from byte ``start`` to the end of the view.

        Every ``RELEASE_EVERY`` bytes the pages already passed are dropped from this process's
        mapping (they stay in the page cache and fault back in if a caller revisits a batch),
        so scanning a multi-GB segment keeps the resident set bounded.

        With the C accelerator, runs of plain v2 batches are framed by ``scan_batches``, a few
        at a time (4, doubling up to 256, or 8 MiB): a ``RecordBatch`` made in C costs a
        fraction of one made by ``iter_batches``. The batch at which it stops (a legacy one,
        a corrupt size, the end) goes to ``iter_batches``, which yields, raises or stops
        exactly as it always does, so the sequence of batches and errors is the same.

        Once the caller has asked ``is_valid`` of the last batch of a run, the next runs have
        their CRCs checked by the same C call, in one pass over the run once it is framed
        (``is_valid`` is then already known): that reads memory about twice as fast as one
        CRC call per batch between the interpreter's work. A caller that never asks (deep
        iteration) never pays for a CRC; one that stops early pays for at most one run.
        """
        view, end, path = self.view, self.end, self.path
        if _c_scan is None:
            for batch in iter_batches(view, start, end, path):
                yield batch
                self.release(batch.position)
            return
        pos = start
        want = 4
        check_crc = False
        while True:
            found = _c_scan(view, pos, end, want, _SCAN_BYTES, RecordBatch, check_crc)
            if found:
                yield from found
                last = found[-1]
                self.release(last.position)
                pos = last.position + LOG_OVERHEAD + last.length
                check_crc = last._valid is not None
                if want < 256:
                    want *= 2
                continue
            # not a plain v2 batch: Python's walk, back to C after its next v2 batch
            for batch in iter_batches(view, pos, end, path):
                yield batch
                self.release(batch.position)
                pos = batch.position + batch.size_in_bytes
                if isinstance(batch, RecordBatch):
                    break
            else:
                return

    def release(self, position: int) -> None:
        """Drop the mapped pages before ``position`` from the resident set, in steps of
        ``RELEASE_EVERY`` bytes, for scans that walk the view themselves."""
        if self._map is not None and _DONTNEED and position - self._released >= RELEASE_EVERY:
            upto = position - position % mmap.PAGESIZE
            self._map.madvise(_DONTNEED, self._released, upto - self._released)
            self._released = upto

    def read(self, position: int, size: int) -> bytes:
        return bytes(self.view[position:min(self.end, position + size)])

    def search_for_offset_with_size(self, target_offset: int,
                                    starting_position: int) -> LogOffsetPosition | None:
        """The first batch from ``starting_position`` whose last offset is >= the target."""
        for batch in self.batches(starting_position):
            if batch.last_offset >= target_offset:
                return LogOffsetPosition(batch.last_offset, batch.position, batch.size_in_bytes)
        return None

    def largest_timestamp_after(self, starting_position: int) -> TimestampAndOffset:
        """The largest batch max timestamp from ``starting_position`` on, with that batch's
        last offset (``(-1, -1)`` when no batch has a timestamp)."""
        best = TimestampAndOffset(NO_TIMESTAMP, -1)
        epoch = NO_PARTITION_LEADER_EPOCH
        for batch in self.batches(starting_position):
            if batch.max_timestamp > best.timestamp:
                best = TimestampAndOffset(batch.max_timestamp, batch.last_offset)
                epoch = batch.partition_leader_epoch
        return best._replace(leader_epoch=None if epoch == NO_PARTITION_LEADER_EPOCH else epoch)

    def search_for_timestamp(self, target_timestamp: int, starting_position: int,
                             starting_offset: int) -> TimestampAndOffset | None:
        """The first record at or after ``starting_position`` and ``starting_offset`` whose
        timestamp is >= the target (ListOffsets by time)."""
        for batch in self.batches(starting_position):
            if batch.max_timestamp >= target_timestamp:
                for record in batch.records():
                    if record.timestamp >= target_timestamp and record.offset >= starting_offset:
                        epoch = batch.partition_leader_epoch
                        return TimestampAndOffset(
                            record.timestamp, record.offset,
                            None if epoch == NO_PARTITION_LEADER_EPOCH else epoch)
        return None

    # -- writing (mutable files) ------------------------------------------------------------
    def _check_mutable(self) -> None:
        if not self.mutable:
            raise ValueError(f"{self.path} is open read-only")

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Write complete batches at the end; returns the bytes written."""
        self._check_mutable()
        size = len(data)
        if size > INT32_MAX - self.end:
            raise ValueError(f"Append of size {size} bytes is too large for segment with current "
                             f"file position at {self.end}")
        with memoryview(data) as view:
            written = 0
            while written < size:
                written += os.pwrite(self._file.fileno(), view[written:], self.end + written)
        self._unsynced = True
        self.end += size
        self.file_size = max(self.file_size, self.end)
        return size

    def truncate_to(self, target_size: int) -> int:
        """Cut the file to ``target_size`` bytes (not checked to be a batch boundary);
        returns the bytes dropped."""
        self._check_mutable()
        original = self.end
        if not 0 <= target_size <= original:
            raise ValueError(f"Attempt to truncate log segment {self.path} to {target_size} bytes "
                             f"failed, size of this log segment is {original} bytes.")
        if target_size < self.file_size:
            self._unmap()  # no page beyond the new end may stay mapped
            os.ftruncate(self._file.fileno(), target_size)
            self._unsynced = True
            self.file_size = self.end = target_size
        return original - target_size

    def trim(self) -> None:
        """Cut a preallocated tail off (segment rolled or closed)."""
        self.truncate_to(self.end)

    def flush(self) -> None:
        """fsync the data and the file's metadata, if this object changed them since it
        opened the file or last flushed it (recovery opens thousands of segments mutable and
        changes few; an fsync of an unchanged file still costs a journal commit)."""
        if self.mutable and self._unsynced:
            os.fsync(self._file.fileno())
            self._unsynced = False

    def close(self) -> None:
        if self.mutable and not self._file.closed:
            self.flush()
            self.trim()
        self._unmap()
        self._file.close()

    def close_handlers(self) -> None:
        """Close without flushing or trimming (the disk may have failed)."""
        self._unmap()
        self._file.close()

    def delete_if_exists(self) -> bool:
        self.close_handlers()
        return delete_if_exists(self.path)

    def rename_to(self, path: str | os.PathLike[str]) -> None:
        """Move the file (the open handle follows it); the new name is kept even on failure."""
        try:
            os.replace(self.path, path)
        finally:
            self.path = os.fspath(path)

    def update_parent_dir(self, directory: str | os.PathLike[str]) -> None:
        self.path = os.path.join(os.fspath(directory), os.path.basename(self.path))

    def __enter__(self) -> "FileRecords":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
