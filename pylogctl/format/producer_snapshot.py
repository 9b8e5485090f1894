"""Producer-state snapshots (``{offset}.snapshot``): what a broker remembers per producer id.

Layout: ``version int16 (1) | crc uint32 | entries int32-counted``; each entry is producerId
int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32, timestamp int64,
coordinatorEpoch int32, currentTxnFirstOffset int64. The CRC-32C covers everything after the CRC
field. A stored lastOffset < 0 means the entry has no batch metadata.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import CorruptRecordError
from .crc import crc32c
from .message import Field, read_struct

PRODUCER_ENTRIES_OFFSET = 6
VERSION = 1
_ENTRY_FIELDS = (
    Field("ProducerId", "int64"), Field("Epoch", "int16"), Field("LastSequence", "int32"),
    Field("LastOffset", "int64"), Field("OffsetDelta", "int32"), Field("Timestamp", "int64"),
    Field("CoordinatorEpoch", "int32"), Field("CurrentTxnFirstOffset", "int64"),
)
_SNAPSHOT_FIELDS = (Field("Crc", "uint32"), Field("ProducerEntries", "[]ProducerEntry",
                                                  fields=_ENTRY_FIELDS))


class CorruptSnapshotError(CorruptRecordError):
    """Kafka's CorruptSnapshotException: bad version, schema or CRC."""


@dataclass(frozen=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    last_timestamp: int
    current_txn_first_offset: int | None
    last_sequence: int
    last_offset: int
    offset_delta: int

    @property
    def has_batch_metadata(self) -> bool:
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        """lastSequence - offsetDelta, wrapping like Kafka's ``decrementSequence``."""
        if self.last_sequence < self.offset_delta:
            return 0x7FFFFFFF - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta


def read_producer_snapshot(data: bytes) -> list[ProducerStateEntry]:
    """Parse and CRC-check a snapshot, raising Kafka's messages on failure."""
    try:
        if len(data) < 2:
            raise CorruptRecordError("Snapshot is shorter than its version field")
        (version,) = struct.unpack_from(">h", data, 0)
        if version != VERSION:
            raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
        values, end = read_struct(data, _SNAPSHOT_FIELDS, version, False, 2)
    except CorruptRecordError as exc:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: {exc.message}",
                                   position=exc.position) from None
    computed = crc32c(memoryview(data)[PRODUCER_ENTRIES_OFFSET:])
    if values["crc"] != computed:
        raise CorruptSnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: "
                                   f"{values['crc']}. Computed crc: {computed}", position=2)
    out = []
    for e in values["producerEntries"]:
        txn = e["currentTxnFirstOffset"]
        out.append(ProducerStateEntry(e["producerId"], e["epoch"], e["coordinatorEpoch"],
                                      e["timestamp"], txn if txn >= 0 else None,
                                      e["lastSequence"], e["lastOffset"], e["offsetDelta"]))
    return out
