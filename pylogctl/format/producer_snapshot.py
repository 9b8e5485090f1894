"""Producer-state snapshots (``{offset}.snapshot``): what a broker remembers per producer id.

Layout: ``version int16 (1) | crc uint32 | entries int32-counted``; each entry is producerId
int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32, timestamp int64,
coordinatorEpoch int32, currentTxnFirstOffset int64. The CRC-32C covers everything after the CRC
field. A stored lastOffset < 0 means the entry has no batch metadata; a currentTxnFirstOffset < 0
means no open transaction. :func:`write_producer_snapshot` is the inverse of the reader, byte for
byte as Kafka's ``ProducerStateManager.writeSnapshot`` (entries in the order given).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable

from ..errors import CorruptRecordError
from .crc import crc32c
from .message import Field, read_struct, write_struct
from .record import decrement_sequence

CRC_OFFSET = 2
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
class ProducerSnapshotEntry:
    """One producer as a snapshot stores it (Kafka's generated ``ProducerSnapshot.ProducerEntry``);
    the live, mutable state is :class:`pylogctl.storage.producer_state.ProducerStateEntry`."""

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
        return decrement_sequence(self.last_sequence, self.offset_delta)


def read_producer_snapshot(data: bytes) -> list[ProducerSnapshotEntry]:
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
                                   f"{values['crc']}. Computed crc: {computed}",
                                   position=CRC_OFFSET)
    out = []
    for e in values["producerEntries"]:
        txn = e["currentTxnFirstOffset"]
        out.append(ProducerSnapshotEntry(e["producerId"], e["epoch"], e["coordinatorEpoch"],
                                         e["timestamp"], txn if txn >= 0 else None,
                                         e["lastSequence"], e["lastOffset"], e["offsetDelta"]))
    return out


def write_producer_snapshot(entries: Iterable[ProducerSnapshotEntry]) -> bytes:
    """Encode a version-1 snapshot: the struct with a zero CRC, then the CRC-32C of everything
    from the entry count on written into bytes 2-5, as Kafka fills it in after serialising."""
    body = {"crc": 0, "producerEntries": [
        {"producerId": e.producer_id, "epoch": e.producer_epoch,
         "lastSequence": e.last_sequence, "lastOffset": e.last_offset,
         "offsetDelta": e.offset_delta, "timestamp": e.last_timestamp,
         "coordinatorEpoch": e.coordinator_epoch,
         "currentTxnFirstOffset": (-1 if e.current_txn_first_offset is None
                                   else e.current_txn_first_offset)}
        for e in entries]}
    out = bytearray(struct.pack(">h", VERSION))
    out += write_struct(_SNAPSHOT_FIELDS, body, VERSION, False)
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[PRODUCER_ENTRIES_OFFSET:]))
    return bytes(out)
