"""__transaction_state records: both value versions, tagged fields, states, tombstones, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator_support import (NO_TAGS, as_read, compact_string, i8, i16, i32, i64,
                                 message_values, string, uvarint)
from pylogctl.format.coordinator_record import CoordinatorRecordError, UnknownRecordTypeError
from pylogctl.format.message import to_json
from pylogctl.format.transaction_log_records import (TRANSACTION_LOG_KEY, TRANSACTION_LOG_VALUE,
                                                     TransactionLogRecord, TransactionState,
                                                     decode_transaction_record,
                                                     encode_transaction_record)

KEY = i16(0) + string("txn-1")


ONE_TOPIC = i32(1) + string("t") + i32(2) + i32(0) + i32(3)


def v0_value(status: int = 1, partitions: bytes = ONE_TOPIC) -> bytes:
    return (i16(0) + i64(1000) + i16(2) + i32(60000) + i8(status) + partitions + i64(111)
            + i64(100))


def test_v0_value():
    rec = decode_transaction_record(KEY, v0_value())
    assert isinstance(rec, TransactionLogRecord)
    assert (rec.record_type, rec.type_name, rec.transactional_id) == (0, "TRANSACTION_LOG", "txn-1")
    assert rec.value_version == 0 and rec.state is TransactionState.Ongoing
    assert rec.value == {"producerId": 1000, "producerEpoch": 2, "transactionTimeoutMs": 60000,
                         "transactionStatus": 1,
                         "transactionPartitions": [{"topic": "t", "partitionIds": [0, 3]}],
                         "transactionLastUpdateTimestampMs": 111,
                         "transactionStartTimestampMs": 100}


def test_v0_null_partitions():
    rec = decode_transaction_record(KEY, v0_value(status=0, partitions=i32(-1)))
    assert rec.value["transactionPartitions"] is None and rec.state is TransactionState.Empty


def test_v1_value_tagged_fields():
    body = (i64(12) + i16(2) + i32(14) + i8(4) + uvarint(1) + i64(123) + i64(13))
    plain = decode_transaction_record(KEY, i16(1) + body + NO_TAGS).value
    assert "previousProducerId" not in plain and "clientTransactionVersion" not in plain
    tags = (uvarint(3) + uvarint(0) + uvarint(8) + i64(11) + uvarint(1) + uvarint(8) + i64(10)
            + uvarint(2) + uvarint(2) + i16(2))
    rec = decode_transaction_record(KEY, i16(1) + body + tags)
    assert to_json(rec.value) == (
        '{"producerId":12,"previousProducerId":11,"nextProducerId":10,"producerEpoch":2,'
        '"transactionTimeoutMs":14,"transactionStatus":4,"transactionPartitions":[],'
        '"transactionLastUpdateTimestampMs":123,"transactionStartTimestampMs":13,'
        '"clientTransactionVersion":2}')
    assert rec.state is TransactionState.CompleteCommit
    # tagged fields equal to their default (-1, -1, 0) are left out
    tags = uvarint(2) + uvarint(0) + uvarint(8) + i64(-1) + uvarint(2) + uvarint(2) + i16(0)
    assert decode_transaction_record(KEY, i16(1) + body + tags).value == plain


def test_transaction_states():
    assert [str(s) for s in TransactionState] == [
        "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
        "Dead", "PrepareEpochFence"]
    assert decode_transaction_record(KEY, v0_value(status=9)).state is None


def test_tombstone():
    rec = decode_transaction_record(KEY, None)
    assert rec.value is None and rec.state is None and rec.transactional_id == "txn-1"


@pytest.mark.parametrize("version", [0, 1])
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_round_trip(version, data):
    tid = data.draw(st.text(max_size=10))
    value = data.draw(message_values(TRANSACTION_LOG_VALUE, version))
    key, raw = encode_transaction_record(tid, version, value)
    assert key == i16(0) + string(tid)
    rec = decode_transaction_record(key, raw)
    assert rec.transactional_id == tid and rec.value_version == version
    assert rec.value == as_read(TRANSACTION_LOG_VALUE.fields, value, version, version >= 1)


def test_key_schema():
    assert [f.json_name for f in TRANSACTION_LOG_KEY.fields] == ["transactionalId"]


def test_unknown_record_type():
    with pytest.raises(UnknownRecordTypeError) as info:
        decode_transaction_record(i16(1) + string("x"), None)
    assert info.value.record_type == 1


@pytest.mark.parametrize("key, value, kafka_message", [
    (b"", None, "Could not read version from key's buffer."),
    (i16(0) + i16(9) + b"x", None, "Could not read record with version 0 from key's buffer due to: "
     "Error reading byte array of 9 byte(s): only 1 byte(s) available."),
    (KEY, b"\x00", "Could not read version from value's buffer."),
    (KEY, v0_value()[:20], "Could not read record with version 0 from value's buffer due to: null."),
    (KEY, i16(1) + i64(1) + i16(0) + i32(0) + i8(0) + uvarint(5),
     "Could not read record with version 1 from value's buffer due to: Tried to allocate a "
     "collection of size 4, but there are only 0 bytes remaining.."),
])
def test_malformed(key, value, kafka_message):
    with pytest.raises(CoordinatorRecordError) as info:
        decode_transaction_record(key, value)
    assert info.value.kafka_message == kafka_message


def test_a_value_version_above_the_range_is_refused():
    """Kafka 4.4's CoordinatorRecordSerde checks the version before reading the value."""
    body = i64(1) + i16(0) + i32(0) + i8(0) + uvarint(0) + i64(0) + i64(0) + NO_TAGS
    with pytest.raises(CoordinatorRecordError) as info:
        decode_transaction_record(KEY, i16(5) + body)
    assert info.value.kafka_message == "Found an unknown record version 5 for 0 type"


def test_key_is_never_flexible():
    # a compact string's length byte is read as the high byte of an int16 length
    with pytest.raises(CoordinatorRecordError):
        decode_transaction_record(i16(0) + compact_string("abc"), None)
