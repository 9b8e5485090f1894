"""The records of ``__share_group_state``: schemas, record types and a decoder.

The share coordinator (KIP-932) keeps, per share group and partition, which records have been
delivered and acknowledged: record type 0 holds a full snapshot of that state, type 1 an update
to the last snapshot. Both keys name the group, the topic id and the partition; both values
carry the state batches (offset ranges with a delivery state and count). The schemas restate
Kafka 4.4's ``share-coordinator/src/main/resources/common/message/Share{Snapshot,Update}*.json``;
the framing and the errors are the coordinator topics' own
(:mod:`pylogctl.format.coordinator_record`), as Kafka's ``ShareCoordinatorRecordSerde`` shares
them with the group and transaction coordinators.
"""

from __future__ import annotations

import enum
from typing import Any

from .coordinator_record import (CoordinatorRecord, RecordType, coordinator_key,
                                 coordinator_value, decode_coordinator_record,
                                 encode_coordinator_record, tagged)
from .message import Field

TOPIC = "__share_group_state"


class ShareRecordType(enum.IntEnum):
    """Record-type numbers of ``__share_group_state`` (the key's int16 prefix)."""

    SHARE_SNAPSHOT = 0
    SHARE_UPDATE = 1


_KEY_FIELDS = (Field("GroupId", "string", versions="0"), Field("TopicId", "uuid", versions="0"),
               Field("Partition", "int32", versions="0"))
_STATE_BATCH = (Field("FirstOffset", "int64"), Field("LastOffset", "int64"),
                Field("DeliveryState", "int8"), Field("DeliveryCount", "int16"))
# how many records are fully delivered (acknowledged or archived); -1 when not tracked
_DELIVERY_COMPLETE_COUNT = tagged("DeliveryCompleteCount", "int32", 0, default=-1)

SHARE_SNAPSHOT_VALUE = coordinator_value(
    "ShareSnapshotValue",
    Field("SnapshotEpoch", "int32"),
    Field("StateEpoch", "int32"),
    Field("LeaderEpoch", "int32"),
    Field("StartOffset", "int64"),
    _DELIVERY_COMPLETE_COUNT,
    Field("CreateTimestamp", "int64"),
    Field("WriteTimestamp", "int64"),
    Field("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
)
SHARE_UPDATE_VALUE = coordinator_value(
    "ShareUpdateValue",
    Field("SnapshotEpoch", "int32"),
    Field("LeaderEpoch", "int32"),
    Field("StartOffset", "int64"),
    _DELIVERY_COMPLETE_COUNT,
    Field("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
)

RECORD_TYPES: dict[int, RecordType] = {
    0: RecordType(0, ShareRecordType.SHARE_SNAPSHOT.name,
                  coordinator_key("ShareSnapshotKey", *_KEY_FIELDS), SHARE_SNAPSHOT_VALUE),
    1: RecordType(1, ShareRecordType.SHARE_UPDATE.name,
                  coordinator_key("ShareUpdateKey", *_KEY_FIELDS), SHARE_UPDATE_VALUE),
}


class ShareStateRecord(CoordinatorRecord):
    """A decoded ``__share_group_state`` record (see :class:`CoordinatorRecord`)."""

    @property
    def group_id(self) -> str:
        return self.key["groupId"]


def decode_share_record(key: bytes, value: bytes | None) -> ShareStateRecord:
    """Decode one ``__share_group_state`` record.

    Raises :class:`~pylogctl.format.coordinator_record.UnknownRecordTypeError`,
    :class:`~pylogctl.format.coordinator_record.UnknownRecordVersionError` or
    :class:`~pylogctl.format.coordinator_record.CoordinatorRecordError`, as
    :func:`~pylogctl.format.group_coordinator_records.decode_group_record` does.
    """
    return decode_coordinator_record(key, value, RECORD_TYPES, TOPIC, ShareStateRecord)


def encode_share_record(record_type: int, key: dict[str, Any], value_version: int | None = None,
                        value: dict[str, Any] | None = None) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes of a record; ``value=None`` makes a tombstone."""
    return encode_coordinator_record(RECORD_TYPES, record_type, key, value_version, value)


__all__ = ["TOPIC", "RECORD_TYPES", "ShareRecordType", "ShareStateRecord", "decode_share_record",
           "encode_share_record", "SHARE_SNAPSHOT_VALUE", "SHARE_UPDATE_VALUE"]
