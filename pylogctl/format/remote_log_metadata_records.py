"""The records of ``__remote_log_metadata``: tiered storage's segment metadata (KIP-405).

With ``remote.log.storage.system.enable``, the default remote-log metadata manager
(``TopicBasedRemoteLogMetadataManager``) publishes every copy and deletion of a segment in
remote storage to this topic. A record value is a frame as in the KRaft metadata log
(:func:`pylogctl.format.metadata_records.decode_frame`: frame version, apiKey, version, then a
flexible message) of one of four record types, restated from Kafka 4.4's
``storage/src/main/resources/message/Remote*Record.json``:

0. RemoteLogSegmentMetadataRecord -- a segment's copy started (or its full state),
1. RemoteLogSegmentMetadataUpdateRecord -- a segment's copy finished, its deletion started or
   finished,
2. RemotePartitionDeleteMetadataRecord -- a partition's remote data is being deleted,
3. RemoteLogSegmentMetadataSnapshotRecord -- a segment's state in a metadata snapshot.

``kafka-dump-log --remote-log-metadata-decoder`` prints ``RemoteLogMetadataSerde.deserialize``
of a value: the ``toString()`` of the Java object the record becomes (``RemoteLogSegmentMetadata``
and friends). Building that object validates the record; the checks and their messages are
those of Kafka 4.4's constructors (:func:`java_text` raises :class:`RemoteLogMetadataError`
with Java's exception message). ``null`` stands for an exception without a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CorruptRecordError
from .message import Field, KafkaUuid, Schema, to_json_value
from .metadata_records import decode_frame, encode_frame, type_name

_TOPIC_ID_PARTITION = (Field("Name", "string"), Field("Id", "uuid"), Field("Partition", "int32"))
_SEGMENT_ID = Field("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", fields=(
    Field("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION),
    Field("Id", "uuid"),
))
_LEADER_EPOCHS = Field("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", fields=(
    Field("LeaderEpoch", "int32"), Field("Offset", "int64")))
_CUSTOM_METADATA = Field("CustomMetadata", "bytes", nullable="0+")
_TXN_INDEX_EMPTY = Field("TxnIndexEmpty", "bool", tag=0)


def _schema(name: str, *fields: Field) -> Schema:
    return Schema(name, fields, flexible="0+", valid="0")


# what a segment's metadata (type 0) and a snapshot's entry (type 3) both hold after the id
_SEGMENT_FIELDS = (
    Field("StartOffset", "int64"),
    Field("EndOffset", "int64"),
    Field("BrokerId", "int32"),
    Field("MaxTimestampMs", "int64"),
    Field("EventTimestampMs", "int64"),
    _LEADER_EPOCHS,
    Field("SegmentSizeInBytes", "int32"),
    _CUSTOM_METADATA,
    Field("RemoteLogSegmentState", "int8"),
    _TXN_INDEX_EMPTY,
)

SCHEMAS: dict[int, Schema] = {
    0: _schema("RemoteLogSegmentMetadataRecord", _SEGMENT_ID, *_SEGMENT_FIELDS),
    1: _schema("RemoteLogSegmentMetadataUpdateRecord",
               _SEGMENT_ID,
               Field("BrokerId", "int32"),
               Field("EventTimestampMs", "int64"),
               _CUSTOM_METADATA,
               Field("RemoteLogSegmentState", "int8")),
    2: _schema("RemotePartitionDeleteMetadataRecord",
               Field("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION),
               Field("BrokerId", "int32"),
               Field("EventTimestampMs", "int64"),
               Field("RemotePartitionDeleteState", "int8")),
    3: _schema("RemoteLogSegmentMetadataSnapshotRecord", Field("SegmentId", "uuid"),
               *_SEGMENT_FIELDS),
}
TYPE_NAMES: dict[int, str] = {key: type_name(s.name) for key, s in SCHEMAS.items()}

# RemoteLogSegmentState / RemotePartitionDeleteState ids (forId gives null for any other)
SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED",
                  2: "DELETE_SEGMENT_STARTED", 3: "DELETE_SEGMENT_FINISHED"}
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                           2: "DELETE_PARTITION_FINISHED"}


class RemoteLogMetadataError(CorruptRecordError):
    """A record that decodes but that Kafka's constructors refuse; ``message`` is Java's."""


@dataclass(frozen=True)
class RemoteLogMetadataRecord:
    """One decoded record: ``data`` by camelCase name, in schema order (as
    :class:`~pylogctl.format.metadata_records.MetadataRecord`)."""

    api_key: int
    version: int
    data: dict[str, Any]

    @property
    def type_name(self) -> str:
        return TYPE_NAMES[self.api_key]

    def to_json(self) -> dict[str, Any]:
        """``{"type", "version", "data"}``, the shape of the cluster-metadata decoder's JSON."""
        return {"type": self.type_name, "version": self.version,
                "data": to_json_value(self.data)}


def decode_remote_log_metadata(value: bytes | bytearray | memoryview) -> RemoteLogMetadataRecord:
    """Decode one ``__remote_log_metadata`` value; raises what
    :func:`~pylogctl.format.metadata_records.decode_frame` raises."""
    return RemoteLogMetadataRecord(*decode_frame(value, SCHEMAS))


def encode_remote_log_metadata(api_key: int, data: dict[str, Any], version: int = 0) -> bytes:
    """Frame one record (``data`` by camelCase name, missing fields at their default)."""
    return encode_frame(api_key, version, data, SCHEMAS[api_key])


# -- Java's toString() of the objects RemoteLogMetadataSerde builds -------------------------------

def _bool(value: bool) -> str:
    return "true" if value else "false"


def _topic_id_partition(tip: dict[str, Any]) -> str:
    """``TopicIdPartition.toString``: ``topicId:topic-partition``."""
    return f"{KafkaUuid(tip['id'])}:{tip['name']}-{tip['partition']}"


def _segment_id(entry: dict[str, Any]) -> str:
    return (f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(entry['topicIdPartition'])}"
            f", id={KafkaUuid(entry['id'])}}}")


def _custom_metadata(raw: bytes | None) -> str:
    """``Optional<CustomMetadata>.toString``."""
    return "Optional.empty" if raw is None else f"Optional[CustomMetadata{{{len(raw)} bytes}}]"


def _leader_epochs(entries: list[dict[str, Any]]) -> str:
    """The epochs as the transform collects them (a HashMap: a repeated epoch keeps its last
    offset) and the object keeps them (a TreeMap, by epoch): ``{0=0, 3=120}``; never empty."""
    epochs = {e["leaderEpoch"]: e["offset"] for e in entries}
    if not epochs:
        raise RemoteLogMetadataError("segmentLeaderEpochs can not be null or empty")
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _segment_state(state_id: int) -> str:
    state = SEGMENT_STATES.get(state_id)
    if state is None:
        raise RemoteLogMetadataError("state can not be null")
    return state


def _segment_metadata(d: dict[str, Any]) -> str:
    """``RemoteLogSegmentMetadata``: built in COPY_SEGMENT_STARTED (offsets and epochs checked
    there), then given the record's state through a ``RemoteLogSegmentMetadataUpdate``."""
    start, end = d["startOffset"], d["endOffset"]
    segment_id = _segment_id(d["remoteLogSegmentId"])
    if start < 0:
        raise RemoteLogMetadataError(f"Unexpected start offset = {start}. StartOffset for a "
                                     f"remote segment cannot be negative")
    if end < start:
        raise RemoteLogMetadataError(f"Unexpected end offset = {end}. EndOffset for a remote "
                                     f"segment cannot be less than startOffset = {start}")
    epochs = _leader_epochs(d["segmentLeaderEpochs"])
    state = _segment_state(d["remoteLogSegmentState"])
    return (f"RemoteLogSegmentMetadata{{remoteLogSegmentId={segment_id}, startOffset={start}, "
            f"endOffset={end}, brokerId={d['brokerId']}, maxTimestampMs={d['maxTimestampMs']}, "
            f"eventTimestampMs={d['eventTimestampMs']}, segmentLeaderEpochs={epochs}, "
            f"segmentSizeInBytes={d['segmentSizeInBytes']}, "
            f"customMetadata={_custom_metadata(d['customMetadata'])}, state={state}, "
            f"txnIdxEmpty={_bool(d.get('txnIndexEmpty', False))}}}")


def _segment_metadata_update(d: dict[str, Any]) -> str:
    segment_id = _segment_id(d["remoteLogSegmentId"])
    state = _segment_state(d["remoteLogSegmentState"])
    return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={segment_id}, "
            f"customMetadata={_custom_metadata(d['customMetadata'])}, state={state}, "
            f"eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}")


def _partition_delete_metadata(d: dict[str, Any]) -> str:
    state = PARTITION_DELETE_STATES.get(d["remotePartitionDeleteState"])
    if state is None:
        raise RemoteLogMetadataError("null")  # Objects.requireNonNull(state): no message
    return (f"RemotePartitionDeleteMetadata{{topicPartition="
            f"{_topic_id_partition(d['topicIdPartition'])}, state={state}, "
            f"eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}")


def _segment_metadata_snapshot(d: dict[str, Any]) -> str:
    state = _segment_state(d["remoteLogSegmentState"])
    epochs = _leader_epochs(d["segmentLeaderEpochs"])
    return (f"RemoteLogSegmentMetadataSnapshot{{segmentId={KafkaUuid(d['segmentId'])}, "
            f"startOffset={d['startOffset']}, endOffset={d['endOffset']}, "
            f"maxTimestampMs={d['maxTimestampMs']}, segmentLeaderEpochs={epochs}, "
            f"segmentSizeInBytes={d['segmentSizeInBytes']}, "
            f"customMetadata={_custom_metadata(d['customMetadata'])}, state={state}, "
            f"txnIdxEmpty={_bool(d.get('txnIndexEmpty', False))}}}")


_TO_STRING = {0: _segment_metadata, 1: _segment_metadata_update, 2: _partition_delete_metadata,
              3: _segment_metadata_snapshot}


def java_text(record: RemoteLogMetadataRecord) -> str:
    """What ``RemoteLogMetadataSerde.deserialize(bytes).toString()`` gives for ``record``;
    raises :class:`RemoteLogMetadataError` where Kafka's constructors throw."""
    return _TO_STRING[record.api_key](record.data)


__all__ = ["PARTITION_DELETE_STATES", "RemoteLogMetadataError", "RemoteLogMetadataRecord",
           "SCHEMAS", "SEGMENT_STATES", "TYPE_NAMES", "decode_remote_log_metadata",
           "encode_remote_log_metadata", "java_text"]
