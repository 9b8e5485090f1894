"""Walking a buffer of batches, as Kafka's ``FileLogInputStream`` does.

All three formats share their first 17 bytes' layout (offset int64, size int32, 4 bytes, magic
int8), so the magic byte picks the parser. The rules that decide where a segment's valid data
ends are Kafka's: fewer than 17 bytes left, or a batch running past the end, ends iteration
quietly (the rest are "invalid bytes at the end"); a size field below the v0 minimum record
overhead (14) is corruption and raises.
"""

from __future__ import annotations

import os
import struct
from typing import Iterator, Union

from ..errors import CorruptRecordError, UnsupportedFormatError
from .legacy import LegacyBatch
from .record_batch import RECORD_BATCH_OVERHEAD, RecordBatch

HEADER_SIZE_UP_TO_MAGIC = 17
MIN_RECORD_OVERHEAD = 14
LOG_OVERHEAD = 12

AnyBatch = Union[RecordBatch, LegacyBatch]
_SIZE = struct.Struct(">i")


def iter_batches(buf, start: int = 0, end: int | None = None,
                 path: str | os.PathLike[str] | None = None) -> Iterator[AnyBatch]:
    """Yield each batch of ``buf[start:end]`` with its absolute ``position``.

    Stops at the first incomplete batch; the caller compares the last batch end with ``end``
    to report trailing bytes. ``path`` only feeds error messages.
    """
    if end is None:
        end = len(buf)
    pos = start
    unpack_size = _SIZE.unpack_from
    while pos < end - HEADER_SIZE_UP_TO_MAGIC:
        (size,) = unpack_size(buf, pos + 8)
        if size < MIN_RECORD_OVERHEAD:
            where = f" in file {os.fspath(path)}" if path is not None else ""
            raise CorruptRecordError(
                f"Found record size {size} smaller than minimum record overhead "
                f"({MIN_RECORD_OVERHEAD}){where}.", path=path, position=pos)
        if pos > end - LOG_OVERHEAD - size:
            return
        magic = buf[pos + 16]
        if magic == 2:
            if size + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordError(
                    f"Record batch is corrupt (the size {size + LOG_OVERHEAD} is smaller than the "
                    f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})", path=path, position=pos)
            batch: AnyBatch = RecordBatch(buf, pos)
        elif magic < 2:
            try:
                batch = LegacyBatch(buf, pos)
            except (CorruptRecordError, UnsupportedFormatError) as exc:
                raise exc.at(path, pos)
        else:
            raise UnsupportedFormatError(f"Unknown magic value {magic if magic < 128 else magic - 256} "
                                         f"in batch header", path=path, position=pos)
        yield batch
        pos += size + LOG_OVERHEAD


_OFFSET_AND_SIZE = struct.Struct(">qi")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


def batch_spans(buf) -> Iterator[tuple[int, int, int]]:
    """``(size, last offset, max timestamp)`` of each batch of ``buf``, which holds complete,
    already validated batches (an append): what ``LogSegment.append`` walks to place index
    entries, read from the v2 header without building batch objects."""
    pos, end = 0, len(buf)
    while pos < end:
        base_offset, length = _OFFSET_AND_SIZE.unpack_from(buf, pos)
        if buf[pos + 16] == 2:
            last_offset = base_offset + _INT32.unpack_from(buf, pos + 23)[0]
            max_timestamp = _INT64.unpack_from(buf, pos + 35)[0]
        else:
            legacy = LegacyBatch(buf, pos)
            last_offset, max_timestamp = legacy.last_offset, legacy.max_timestamp
        yield length + LOG_OVERHEAD, last_offset, max_timestamp
        pos += length + LOG_OVERHEAD


def valid_bytes_end(buf, start: int = 0, end: int | None = None) -> int:
    """Byte position just past the last complete batch (raises on a corrupt size field)."""
    pos = start
    for batch in iter_batches(buf, start, end):
        pos = batch.position + batch.size_in_bytes
    return pos
