"""``__remote_log_metadata`` records: framing, and the Java ``toString()`` Kafka prints for them.

The expected strings are what Kafka 4.4's ``kafka-dump-log --remote-log-metadata-decoder``
printed for these very records (``tests/cli/test_cli_dump_decoders_vs_kafka.py`` keeps checking
that against the real tool where Java is installed); here they hold without Java.
"""

from __future__ import annotations

import pytest

from coordinator_support import record
from pylogctl.format.message import KafkaUuid
from pylogctl.format.metadata_records import MetadataRecordBodyError, UnknownMetadataTypeError
from pylogctl.format.remote_log_metadata_records import (RemoteLogMetadataError,
                                                         decode_remote_log_metadata,
                                                         encode_remote_log_metadata, java_text)
from pylogctl.tools.metadata_parser import RemoteLogMetadataMessageParser
from pylogctl.tools.record_parsers import KafkaText

TOPIC_ID = KafkaUuid(bytes(range(16)))
SEGMENT_ID = KafkaUuid(bytes(range(100, 116)))
TIP = {"name": "orders", "id": TOPIC_ID, "partition": 3}
RLSID = {"topicIdPartition": TIP, "id": SEGMENT_ID}
SEGMENT = {"remoteLogSegmentId": RLSID, "startOffset": 0, "endOffset": 99, "brokerId": 1,
           "maxTimestampMs": 1700000000123, "eventTimestampMs": 1700000000456,
           "segmentLeaderEpochs": [{"leaderEpoch": 5, "offset": 40},
                                   {"leaderEpoch": 0, "offset": 0},
                                   {"leaderEpoch": 5, "offset": 50}],
           "segmentSizeInBytes": 1048576, "customMetadata": None, "remoteLogSegmentState": 0}
SEGMENT_ID_TEXT = ("RemoteLogSegmentId{topicIdPartition=AAECAwQFBgcICQoLDA0ODw:orders-3, "
                   "id=ZGVmZ2hpamtsbW5vcHFycw}")


def text(api_key: int, data: dict) -> str:
    return java_text(decode_remote_log_metadata(encode_remote_log_metadata(api_key, data)))


def test_segment_metadata():
    # a repeated leader epoch keeps its last offset; the map prints in epoch order
    assert text(0, SEGMENT) == (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={SEGMENT_ID_TEXT}, startOffset=0, "
        f"endOffset=99, brokerId=1, maxTimestampMs=1700000000123, "
        f"eventTimestampMs=1700000000456, segmentLeaderEpochs={{0=0, 5=50}}, "
        f"segmentSizeInBytes=1048576, customMetadata=Optional.empty, "
        f"state=COPY_SEGMENT_STARTED, txnIdxEmpty=false}}")
    finished = text(0, {**SEGMENT, "customMetadata": b"abc", "remoteLogSegmentState": 1,
                        "txnIndexEmpty": True})
    assert finished.endswith("customMetadata=Optional[CustomMetadata{3 bytes}], "
                             "state=COPY_SEGMENT_FINISHED, txnIdxEmpty=true}")


def test_update_delete_and_snapshot():
    assert text(1, {"remoteLogSegmentId": RLSID, "brokerId": 2, "eventTimestampMs": 5,
                    "customMetadata": b"", "remoteLogSegmentState": 3}) == (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={SEGMENT_ID_TEXT}, "
        f"customMetadata=Optional[CustomMetadata{{0 bytes}}], state=DELETE_SEGMENT_FINISHED, "
        f"eventTimestampMs=5, brokerId=2}}")
    assert text(2, {"topicIdPartition": TIP, "brokerId": 3, "eventTimestampMs": 7,
                    "remotePartitionDeleteState": 2}) == (
        "RemotePartitionDeleteMetadata{topicPartition=AAECAwQFBgcICQoLDA0ODw:orders-3, "
        "state=DELETE_PARTITION_FINISHED, eventTimestampMs=7, brokerId=3}")
    assert text(3, {"segmentId": SEGMENT_ID, "startOffset": -3, "endOffset": -9,
                    "maxTimestampMs": 1, "segmentLeaderEpochs": [
                        {"leaderEpoch": -1, "offset": 3}, {"leaderEpoch": 2, "offset": 8}],
                    "segmentSizeInBytes": 10, "customMetadata": b"x" * 300,
                    "remoteLogSegmentState": 2, "txnIndexEmpty": True}) == (
        "RemoteLogSegmentMetadataSnapshot{segmentId=ZGVmZ2hpamtsbW5vcHFycw, startOffset=-3, "
        "endOffset=-9, maxTimestampMs=1, segmentLeaderEpochs={-1=3, 2=8}, "
        "segmentSizeInBytes=10, customMetadata=Optional[CustomMetadata{300 bytes}], "
        "state=DELETE_SEGMENT_STARTED, txnIdxEmpty=true}")


@pytest.mark.parametrize("api_key,data,message", [
    (0, {**SEGMENT, "startOffset": -1}, "Unexpected start offset = -1. StartOffset for a "
                                        "remote segment cannot be negative"),
    (0, {**SEGMENT, "endOffset": -5}, "Unexpected end offset = -5. EndOffset for a remote "
                                      "segment cannot be less than startOffset = 0"),
    (0, {**SEGMENT, "segmentLeaderEpochs": []}, "segmentLeaderEpochs can not be null or empty"),
    (0, {**SEGMENT, "remoteLogSegmentState": 9}, "state can not be null"),
    # the epochs are checked while the segment is still COPY_SEGMENT_STARTED
    (0, {**SEGMENT, "remoteLogSegmentState": 9, "segmentLeaderEpochs": []},
     "segmentLeaderEpochs can not be null or empty"),
    (2, {"topicIdPartition": TIP, "remotePartitionDeleteState": 7}, "null"),
    (3, {"segmentId": SEGMENT_ID, "segmentLeaderEpochs": [], "remoteLogSegmentState": 8},
     "state can not be null"),
])
def test_what_kafkas_constructors_refuse(api_key, data, message):
    with pytest.raises(RemoteLogMetadataError) as info:
        text(api_key, data)
    assert info.value.message == message


def test_frames_are_the_metadata_logs():
    whole = encode_remote_log_metadata(0, SEGMENT)
    assert whole[:3] == b"\x01\x00\x00"  # frame version 1, apiKey 0, version 0
    with pytest.raises(UnknownMetadataTypeError):
        decode_remote_log_metadata(b"\x01\x04\x00")
    with pytest.raises(MetadataRecordBodyError):  # a nested struct refuses a newer version
        decode_remote_log_metadata(b"\x01\x00\x01" + whole[3:])


def test_parser_prints_kafkas_text_and_keeps_the_data():
    parser = RemoteLogMetadataMessageParser()
    parsed = parser.parse(record(None, encode_remote_log_metadata(0, SEGMENT)))
    assert isinstance(parsed.payload, KafkaText) and parsed.key is None
    assert parsed.payload.kafka_text.startswith("RemoteLogSegmentMetadata{")
    assert parsed.payload["type"] == "REMOTE_LOG_SEGMENT_METADATA_RECORD"
    assert parsed.payload["data"]["remoteLogSegmentId"]["id"] == "ZGVmZ2hpamtsbW5vcHFycw"
    assert parser.parse(record(None, b"", offset=15)).payload == \
        "Error at offset 15, skipping. Error while reading frame version"
    assert parser.parse(record(None, None, offset=14)).payload.startswith(
        'Error at offset 14, skipping. Cannot invoke "java.nio.ByteBuffer.remaining()"')
