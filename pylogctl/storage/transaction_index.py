"""The transaction index (``.txnindex``): aborted transactions whose data is in the segment.

A flat array of 34-byte entries ``version int16 | producerId int64 | firstOffset int64 |
lastOffset int64 | lastStableOffset int64``, not preallocated. Read-committed fetches use it to
drop aborted records. A partial entry at the end is ignored, as Kafka's reader does.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from ..errors import CorruptRecordError
from .files import read_bytes

ENTRY = struct.Struct(">hqqqq")
CURRENT_VERSION = 0


@dataclass(frozen=True)
class AbortedTxn:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def read_transaction_index(path: str | os.PathLike[str]) -> list[AbortedTxn]:
    path = os.fspath(path)
    data = read_bytes(path)
    out = []
    for pos in range(0, len(data) - ENTRY.size + 1, ENTRY.size):
        entry = AbortedTxn(*ENTRY.unpack_from(data, pos))
        if entry.version > CURRENT_VERSION:
            raise CorruptRecordError(f"Unexpected aborted transaction version {entry.version} in "
                                     f"transaction index {os.path.abspath(path)}, current version "
                                     f"is {CURRENT_VERSION}", path=path, position=pos)
        out.append(entry)
    return out
