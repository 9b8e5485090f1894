"""--offsets-decoder and --transaction-log-decoder: Kafka's exact strings (spec §1.9), the <=3.7
legacy strings, error reporting, and every coordinator record of the real corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator_support import i16, i32, i64, printed, record, string
from pylogctl.format.group_coordinator_records import (CONSUMER_PROTOCOL_ASSIGNMENT,
                                                       CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                       encode_consumer_protocol,
                                                       encode_group_record)
from pylogctl.format.java_collections import spread
from pylogctl.format.transaction_log_records import encode_transaction_record
from pylogctl.groups.java_hash_map import topic_partition_hash
from pylogctl.groups.offset_commits import TopicPartition
from pylogctl.groups.partitioner import java_string_hash
from pylogctl.storage.file_records import FileRecords
from pylogctl.tools import coordinator_parsers as cp
from pylogctl.tools.coordinator_parsers import OffsetsMessageParser, TransactionLogMessageParser
from pylogctl.tools.record_parsers import DecoderAbortError, get_parser

OFFSETS = OffsetsMessageParser(legacy_format=False)
LEGACY = OffsetsMessageParser(legacy_format=True)
TXN = TransactionLogMessageParser(legacy_format=False)
TXN_LEGACY = TransactionLogMessageParser(legacy_format=True)


def parse(parser, key, value, offset=0):
    result = parser.parse(record(key, value, offset))
    return printed(result.key), printed(result.payload)


def test_get_parser_builds_these_parsers():
    assert isinstance(get_parser("offsets"), OffsetsMessageParser)
    assert get_parser("offsets", legacy_format=True).legacy_format
    assert isinstance(get_parser("transaction-log"), TransactionLogMessageParser)


# -- Kafka's own expectations (DumpLogSegmentsTest), byte for byte ------------------------------

def test_consumer_group_metadata_record():
    key, value = encode_group_record(3, {"groupId": "group"}, 0, {"epoch": 10})
    assert parse(OFFSETS, key, value) == ('{"type":"3","data":{"groupId":"group"}}',
                                          '{"version":"0","data":{"epoch":10}}')


def _classic_group(subscription: bytes, assignment: bytes, version: int = 4):
    return encode_group_record(2, {"group": "group"}, version, {
        "protocolType": "consumer", "generation": 10, "protocol": "range", "leader": "member",
        "members": [{"memberId": "member", "groupInstanceId": "instance", "clientId": "client",
                     "clientHost": "host", "rebalanceTimeout": 1000, "sessionTimeout": 100,
                     "subscription": subscription, "assignment": assignment}]})


# ConsumerProtocol.serializeSubscription / serializeAssignment at their highest version (3)
SUBSCRIPTION = encode_consumer_protocol(3, {
    "topics": ["foo"], "userData": None, "ownedPartitions": [{"topic": "foo", "partitions": [0]}],
    "generationId": 0, "rackId": "rack"}, CONSUMER_PROTOCOL_SUBSCRIPTION)
ASSIGNMENT = encode_consumer_protocol(3, {
    "assignedPartitions": [{"topic": "foo", "partitions": [0]}], "userData": None},
    CONSUMER_PROTOCOL_ASSIGNMENT)


def test_embedded_consumer_protocol_bytes_layout():
    assert SUBSCRIPTION == (i16(3) + i32(1) + string("foo") + i32(-1) + i32(1) + string("foo")
                            + i32(1) + i32(0) + i32(0) + string("rack"))
    assert ASSIGNMENT == i16(3) + i32(1) + string("foo") + i32(1) + i32(0) + i32(-1)


def test_group_metadata_with_consumer_protocol():
    assert parse(OFFSETS, *_classic_group(SUBSCRIPTION, ASSIGNMENT)) == (
        '{"type":"2","data":{"group":"group"}}',
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
        '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')


def test_malformed_consumer_protocol_stays_base64():
    _, payload = parse(OFFSETS, *_classic_group(b"Subscription", b"Assignment"))
    assert payload == (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u",'
        '"assignment":"QXNzaWdubWVudA=="}]}}')


def test_other_protocol_types_keep_base64():
    key, value = encode_group_record(2, {"group": "g"}, 3, {
        "protocolType": "connect", "generation": 1, "protocol": "sessioned", "leader": "m",
        "members": [{"memberId": "m", "clientId": "c", "clientHost": "h", "sessionTimeout": 1,
                     "subscription": SUBSCRIPTION, "assignment": b"\x01"}]})
    assert '"subscription":"AAMAAAABAANmb2//////AAAAAQADZm9vAAAAAQAAAAAAAAAAAARyYWNr"' in \
        parse(OFFSETS, key, value)[1]


def test_tombstone():
    key, _ = encode_group_record(3, {"groupId": "group"})
    assert parse(OFFSETS, key, None) == ('{"type":"3","data":{"groupId":"group"}}', "<DELETE>")


def test_unknown_record_type():
    assert parse(OFFSETS, i16(32767), b"") == ("Unknown record type 32767 at offset 0, skipping.",
                                                None)
    # 9: the KIP-932 preview's share-group partition metadata, gone from Kafka 4.4
    assert parse(OFFSETS, i16(9) + string("g"), None, offset=42) == (
        "Unknown record type 9 at offset 42, skipping.", None)
    assert parse(OFFSETS, i16(17) + string("g"), None, offset=42) == (
        '{"type":"17","data":{"groupId":"g"}}', "<DELETE>")


def test_unknown_value_version():
    key, value = encode_group_record(1, {"group": "g", "topic": "t", "partition": 0}, 3,
                                     {"offset": 1, "metadata": "", "commitTimestamp": 2})
    assert parse(OFFSETS, key, i16(7) + value[2:], offset=5) == (
        "Error at offset 5, skipping. Found an unknown record version 7 for 1 type", None)


def test_parse_error():
    # Kafka's test: a ConsumerGroupMemberMetadataValue with all defaults under a type-3 key
    member_defaults = (b"\x01" * 4 + b"\x01" + b"\x01" + i32(-1) + b"\x01" + b"\x00")
    assert parse(OFFSETS, i16(3) + string("group"), i16(0) + member_defaults) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer "
        "due to: Error reading byte array of 536870911 byte(s): only 1 byte(s) available.", None)


@pytest.mark.parametrize("parser", [OFFSETS, LEGACY, TXN, TXN_LEGACY],
                         ids=["offsets", "offsets-legacy", "txn", "txn-legacy"])
def test_missing_key_aborts(parser):
    with pytest.raises(DecoderAbortError) as info:
        parser.parse(record(None, None, offset=7))
    assert info.value.message == ("Failed to decode message at offset 7 using the specified "
                                  "decoder (message had a missing key)")


TXN_KEY = '{"type":"0","data":{"transactionalId":"txnId"}}'


def test_transaction_log_records():
    key, value = encode_transaction_record("txnId", 0, {"producerId": 123})
    assert parse(TXN, key, value) == (TXN_KEY, (
        '{"version":"0","data":{"producerId":123,"producerEpoch":0,"transactionTimeoutMs":0,'
        '"transactionStatus":"Empty","transactionPartitions":[],'
        '"transactionLastUpdateTimestampMs":0,"transactionStartTimestampMs":0}}'))
    assert parse(TXN, key, None) == (TXN_KEY, "<DELETE>")
    assert parse(TXN, i16(32767), b"") == ("Unknown record type 32767 at offset 0, skipping.",
                                           None)
    key, value = encode_transaction_record("txnId", 1, {
        "clientTransactionVersion": 0, "nextProducerId": 10, "previousProducerId": 11,
        "producerEpoch": 2, "producerId": 12, "transactionLastUpdateTimestampMs": 123,
        "transactionPartitions": [{"topic": "topic1", "partitionIds": [0, 1, 2]},
                                  {"topic": "topic2", "partitionIds": [3, 4, 5]}],
        "transactionStartTimestampMs": 13, "transactionStatus": 0, "transactionTimeoutMs": 14})
    assert parse(TXN, key, value) == (TXN_KEY, (
        '{"version":"1","data":{"producerId":12,"previousProducerId":11,"nextProducerId":10,'
        '"producerEpoch":2,"transactionTimeoutMs":14,"transactionStatus":"Empty",'
        '"transactionPartitions":[{"topic":"topic1","partitionIds":[0,1,2]},'
        '{"topic":"topic2","partitionIds":[3,4,5]}],"transactionLastUpdateTimestampMs":123,'
        '"transactionStartTimestampMs":13}}'))


def test_transaction_log_error():
    key, _ = encode_transaction_record("txnId")
    assert parse(TXN, key, i16(0) + i64(1), offset=3) == (
        "Error at offset 3, skipping. Could not read record with version 0 from value's buffer "
        "due to: null.", None)


# -- garbage never raises ------------------------------------------------------------------------

GARBAGE = [b"", b"\x00", b"\xff\xff", b"\x00\x02\x00", b"\x00\x01" + b"\xff" * 40,
           b"\x00\x05\x00\x01g\x00\x01m", bytes(range(64)), b"\x00\x10" + b"\x7f" * 9]


@pytest.mark.parametrize("parser", [OFFSETS, LEGACY, TXN, TXN_LEGACY],
                         ids=["offsets", "offsets-legacy", "txn", "txn-legacy"])
@pytest.mark.parametrize("key", GARBAGE)
@pytest.mark.parametrize("value", [None] + GARBAGE)
def test_garbage_gives_a_line_not_an_exception(parser, key, value):
    result = parser.parse(record(key, value, offset=5))
    assert isinstance(result.key, (str, dict))
    if isinstance(result.key, str) and result.key.startswith("Error at offset 5, skipping. "):
        assert result.payload is None


# -- the <=3.7 strings -------------------------------------------------------------------------

OFFSET_KEY = encode_group_record(1, {"group": "grp", "topic": "orders", "partition": 3})[0]


def test_legacy_offset_commit():
    value = encode_group_record(1, {"group": "g", "topic": "t", "partition": 0}, 3, {
        "offset": 42, "leaderEpoch": 1, "metadata": "", "commitTimestamp": 5})[1]
    assert parse(LEGACY, OFFSET_KEY, value) == ("offset_commit::group=grp,partition=orders-3",
                                                "offset=42")
    value = i16(1) + i64(7) + string("some meta") + i64(1) + i64(2)
    assert parse(LEGACY, OFFSET_KEY, value) == ("offset_commit::group=grp,partition=orders-3",
                                                "offset=7,metadata=some meta")
    assert parse(LEGACY, OFFSET_KEY, None) == ("offset_commit::group=grp,partition=orders-3",
                                               "<DELETE>")


def test_legacy_unknown_key_versions():
    key, value = encode_group_record(3, {"groupId": "group"}, 0, {"epoch": 10})
    assert parse(LEGACY, key, value) == ("unknown::version=3", None)
    assert parse(LEGACY, i16(-2), None) == ("unknown::version=-2", None)


def test_legacy_unknown_value_version():
    assert parse(LEGACY, OFFSET_KEY, i16(5) + i64(1)) == (
        "Error at offset 0, skipping. Unknown offset message version: 5", None)
    assert parse(LEGACY, i16(2) + string("g"), i16(-1)) == (
        "Error at offset 0, skipping. Unknown group metadata message version: -1", None)


def _legacy_group(protocol_type, members, protocol="range"):
    return encode_group_record(2, {"group": "grp"}, 3, {
        "protocolType": protocol_type, "generation": 5, "protocol": protocol, "leader": None,
        "members": [{"memberId": m, "clientId": "c", "clientHost": "h", "sessionTimeout": 1,
                     "subscription": b"", "assignment": a} for m, a in members]})


def _assignment(partitions, user_data=None, version=1):
    topics = {}
    for t, p in partitions:
        topics.setdefault(t, []).append(p)
    return encode_consumer_protocol(version, {
        "assignedPartitions": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        "userData": user_data}, CONSUMER_PROTOCOL_ASSIGNMENT)


def test_legacy_group_metadata_consumer():
    members = [("b", _assignment([("t", 0), ("t", 1), ("u", 2)])),
               ("a", _assignment([], user_data=b"\x00\x0a\xff")),
               ("c", _assignment([("t", 2)], user_data=b""))]
    # "a", "b", "c" hash to 97, 98, 99: the Scala HashMap iterates them in that order
    assert parse(LEGACY, *_legacy_group("consumer", members)) == (
        "group_metadata::group=grp",
        '{"protocolType":"consumer","protocol":"range","generationId":5,'
        '"assignment":"{a=[]:AFF,b=[t-0, t-1, u-2],c=[t-2]}"}')


def test_legacy_group_metadata_other_protocol_and_escaping():
    key, value = _legacy_group("", [("m\"1", b"\x00\x01\xab"), ("m2", b"")], protocol=None)
    assert parse(LEGACY, key, value)[1] == (
        '{"protocolType":"","protocol":null,"generationId":5,"assignment":"{m2=,m\\"1=1AB}"}')
    key, value = _legacy_group("x\x01\n", [])
    assert parse(LEGACY, key, value)[1] == (
        '{"protocolType":"x\\u0001\\n","protocol":"range","generationId":5,"assignment":"{}"}')


def test_legacy_group_metadata_bad_assignment():
    key, value = _legacy_group("consumer", [("m", b"\x00")])
    assert parse(LEGACY, key, value) == (
        "Error at offset 0, skipping. Buffer underflow while parsing consumer protocol's header",
        None)
    key, value = _legacy_group("consumer", [("m", i16(-1))])
    assert parse(LEGACY, key, value)[0] == \
        "Error at offset 0, skipping. Unsupported assignment version: -1"
    key, value = _legacy_group("consumer", [("m", i16(0) + i32(1) + b"\x00")])
    assert parse(LEGACY, key, value)[0] == \
        "Error at offset 0, skipping. Buffer underflow while parsing consumer protocol's assignment"


def test_legacy_transaction_log():
    key, value = encode_transaction_record("txnId", 0, {
        "producerId": 12, "producerEpoch": 2, "transactionTimeoutMs": 14, "transactionStatus": 1,
        "transactionPartitions": [{"topic": "t", "partitionIds": [0, 1, 2]}],
        "transactionLastUpdateTimestampMs": 123, "transactionStartTimestampMs": 13})
    # TopicPartition("t", p).hashCode() = 31 * (31 + p) + 116 = 1077 + 31p; in a 16-bucket
    # Scala HashSet they land in buckets 5, 4, 3, so the set iterates t-2, t-1, t-0
    assert parse(TXN_LEGACY, key, value) == (
        "transaction_metadata::transactionalId=txnId",
        "producerId:12,producerEpoch:2,state=Ongoing,partitions=[t-2,t-1,t-0],"
        "txnLastUpdateTimestamp=123,txnTimeoutMs=14")
    assert parse(TXN_LEGACY, key, None) == ("transaction_metadata::transactionalId=txnId",
                                            "<DELETE>")
    assert parse(TXN_LEGACY, i16(1) + string("x"), None) == ("unknown::version=1", None)


def test_legacy_transaction_log_empty_state_drops_partitions():
    key, value = encode_transaction_record("id", 1, {
        "producerId": 1, "producerEpoch": 0, "transactionTimeoutMs": 5, "transactionStatus": 0,
        "transactionPartitions": [{"topic": "t", "partitionIds": [0]}],
        "transactionLastUpdateTimestampMs": 9, "transactionStartTimestampMs": -1})
    assert parse(TXN_LEGACY, key, value)[1] == (
        "producerId:1,producerEpoch:0,state=Empty,partitions=[],txnLastUpdateTimestamp=9,"
        "txnTimeoutMs=5")


@pytest.mark.parametrize("fields, message", [
    ({"transactionStatus": 8}, "Unknown transaction state id 8 from the transaction status message"),
    ({"clientTransactionVersion": 3}, "No feature:transaction.version with feature level 3"),
])
def test_legacy_transaction_log_errors(fields, message):
    key, value = encode_transaction_record("id", 1, {"producerId": 1, **fields})
    assert parse(TXN_LEGACY, key, value) == (f"Error at offset 0, skipping. {message}", None)
    assert parse(TXN_LEGACY, key, i16(2) + value[2:]) == (
        "Error at offset 0, skipping. Unknown version 2 from the transaction log message value",
        None)


def test_java_hash_codes():
    # values printed by a JVM (jshell) for the same inputs
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -2147483648
    assert java_string_hash("consumer-1-\u00e9\U0001F600") == -1788431399
    assert topic_partition_hash(TopicPartition("topic1", 7)) == -868033156
    assert spread(-1788431399) == -1788467521


def test_scala_hash_table_orders():
    # 12 keys: the 12th put finds contentSize + 1 >= threshold (12) and doubles the table
    keys = [f"member-{i}" for i in range(13)]
    order = cp._scala_map_order(keys)
    hashes = {k: spread(java_string_hash(k)) for k in keys}
    assert order == sorted(keys, key=lambda k: (hashes[k] & 31, hashes[k]))
    assert cp._scala_map_order(["x", "y", "x"]) == ["x", "y"]
    # a topic with more than four partitions is sized by sizeHint: 6 -> 16 buckets, 13 -> 32
    assert cp._table_size_for(int(7 / 0.75)) == 16 and cp._table_size_for(int(14 / 0.75)) == 32


# -- the real corpus -----------------------------------------------------------------------------

def _coordinator_records(corpus: Path, pattern: str):
    for part in sorted(corpus.rglob(pattern)):
        if not part.is_dir():
            continue
        for log in sorted(part.glob("*.log")):
            with FileRecords(log) as fr:
                for batch in fr.batches():
                    if batch.is_control:
                        continue
                    for rec in batch.records():
                        yield part, rec


def _check_corpus(corpus: Path, pattern: str, parsers) -> dict[str, int]:
    checked: dict[str, int] = {}
    for part, rec in _coordinator_records(corpus, pattern):
        for parser in parsers:
            result = parser.parse(rec)
            assert isinstance(result.key, (str, dict)), (part, rec.offset)
            text = printed(result.key)
            assert not text.startswith(("Error at offset", "Unknown record type")), \
                (part, rec.offset, text)
            assert result.payload is not None, (part, rec.offset)
        top = part.relative_to(corpus).parts[0]
        checked[top] = checked.get(top, 0) + 1
    return checked


@pytest.mark.corpus
def test_corpus_consumer_offsets_decode(corpus):
    checked = _check_corpus(corpus, "__consumer_offsets-*", (OFFSETS, LEGACY))
    assert sum(checked.values()) > 1000, checked
    # legacy group values from the corpus decode their consumer assignments too
    for part, rec in _coordinator_records(corpus, "__consumer_offsets-*"):
        key = printed(LEGACY.parse(rec).key)
        assert key.startswith(("offset_commit::group=", "group_metadata::group=")), key


@pytest.mark.corpus
def test_corpus_transaction_state_decodes(corpus):
    checked = _check_corpus(corpus, "__transaction_state-*", (TXN, TXN_LEGACY))
    # a corpus fact, pinned: ksql-kraft-2023 has 50 __transaction_state partitions whose
    # segments are all empty, so there is nothing to decode (the generated-record tests above
    # cover the decoder); if records ever appear, every one of them must decode
    partitions = sorted(corpus.glob("*/__transaction_state-*"))
    assert partitions
    if not checked:
        assert all(seg.stat().st_size == 0 for p in partitions for seg in p.glob("*.log"))
