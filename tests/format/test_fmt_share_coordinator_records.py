"""``__share_group_state`` records (KIP-932), and ``--share-group-state-decoder``'s lines.

The two records are bytes a real Kafka 4.4 broker wrote (a share group's first snapshot of a
partition, then an update once 40 records were acknowledged), and the expected lines are what
Kafka 4.4's ``kafka-dump-log --share-group-state-decoder`` printed for them.
"""

from __future__ import annotations

import pytest

from coordinator_support import i16, printed, record
from pylogctl.format.coordinator_record import UnknownRecordTypeError, UnknownRecordVersionError
from pylogctl.format.share_coordinator_records import (RECORD_TYPES, decode_share_record,
                                                       encode_share_record)
from pylogctl.tools.record_parsers import get_parser

KEY = "000b73686172652d67726f75704b1cd73600034f41bba8cb67f2c11a6500000000"
SNAPSHOT = (bytes.fromhex("0000" + KEY), bytes.fromhex(
    "0000000000000000000200000000ffffffffffffffff000001a21a8cae5b000001a21a8cae5b0100"))
UPDATE = (bytes.fromhex("0001" + KEY), bytes.fromhex(
    "000000000000000000000000000000000000020000000000000000000000000000002702000100"
    "01000400000028"))
KEY_JSON = '"data":{"groupId":"share-group","topicId":"SxzXNgADT0G7qMtn8sEaZQ","partition":0}}'


def parse(key, value, offset=0):
    parsed = get_parser("share-group-state").parse(record(key, value, offset))
    return printed(parsed.key), printed(parsed.payload)


def test_snapshot_and_update_print_as_kafka_printed_them():
    assert parse(*SNAPSHOT) == (
        '{"type":"0",' + KEY_JSON,
        '{"version":"0","data":{"snapshotEpoch":0,"stateEpoch":2,"leaderEpoch":0,'
        '"startOffset":-1,"createTimestamp":1795741757019,"writeTimestamp":1795741757019,'
        '"stateBatches":[]}}')
    # DeliveryCompleteCount is tagged (default -1): printed once the broker tracks it
    assert parse(*UPDATE) == (
        '{"type":"1",' + KEY_JSON,
        '{"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"deliveryCompleteCount":40,"stateBatches":[{"firstOffset":0,"lastOffset":39,'
        '"deliveryState":2,"deliveryCount":1}]}}')
    assert parse(UPDATE[0], None) == ('{"type":"1",' + KEY_JSON, "<DELETE>")


def test_round_trip_and_refusals():
    rec = decode_share_record(*UPDATE)
    assert rec.group_id == "share-group" and rec.type_name == "SHARE_UPDATE"
    assert encode_share_record(1, rec.key, 0, rec.value) == UPDATE
    assert sorted(RECORD_TYPES) == [0, 1]
    with pytest.raises(UnknownRecordTypeError):
        decode_share_record(i16(2) + UPDATE[0][2:], None)
    with pytest.raises(UnknownRecordVersionError):
        decode_share_record(UPDATE[0], i16(1) + UPDATE[1][2:])
    assert parse(i16(2) + UPDATE[0][2:], None, offset=7) == (
        "Unknown record type 2 at offset 7, skipping.", None)
