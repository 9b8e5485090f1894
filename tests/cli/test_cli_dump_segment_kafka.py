"""Kafka's own DumpLogSegmentsTest, case by case, against ``pylogctl dump-segment`` (spec §1.10).

Each test builds its input with pylogctl's writer the way Kafka's test appends it to a
UnifiedLog, runs the CLI in-process, and checks the output the way Kafka's test does: lines are
split into ``name: value`` tokens with Kafka's strict parser (``parseMetadataFields``), batch and
record lines are read in turn (``readBatchMetadata`` / ``readBatchRecords``), and decoder strings
are compared byte for byte.

Already covered elsewhere, so not repeated here:
- item 5 (``--max-bytes`` = the sizes of the first half of the batches): exactly
  ``test_max_bytes_dumps_exactly_the_batches_that_fit`` in ``test_cli_dump_segment.py``;
- item 3 (index verification of a flushed, zero-padded index) and the plain empty-index case:
  ``tests/tools/test_dump_index.py``;
- the offsets/transaction parsers' strings at the library level:
  ``tests/tools/test_coordinator_parsers.py`` (here they go through the CLI and a segment file).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from coordinator_support import i16, i32
from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.format.compression import Codec
from pylogctl.format.control import (KRAFT_VERSION, KRAFT_VOTERS, LEADER_CHANGE, SNAPSHOT_FOOTER,
                                     SNAPSHOT_HEADER, ControlRecordType)
from pylogctl.format.group_coordinator_records import (CONSUMER_PROTOCOL_ASSIGNMENT,
                                                       CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                       encode_consumer_protocol,
                                                       encode_group_record)
from pylogctl.format.message import KafkaUuid, write_message
from pylogctl.format.metadata_records import encode_metadata_record
from pylogctl.format.transaction_log_records import encode_transaction_record
from pylogctl.storage.file_records import FileRecords

NOW = 1_727_354_207_209
BATCH_FIELDS = ("baseOffset", "lastOffset", "partitionLeaderEpoch", "producerId", "producerEpoch",
                "baseSequence", "isTransactional", "isControl", "compresscodec")


# -- Kafka's test helpers ------------------------------------------------------------------------

def parse_metadata_fields(line: str) -> dict[str, str]:
    """Kafka's ``parseMetadataFields``: every token must be ``name:`` followed by a value."""
    tokens = iter(t for t in line.split() if t)
    fields: dict[str, str] = {}
    for token in tokens:
        assert token.endswith(":"), f"Unexpected non-field token {token!r} in {line!r}"
        value = next(tokens, None)
        assert value is not None, f"Failed to parse value for {token[:-1]} in {line!r}"
        fields[token[:-1]] = value
    return fields


class Lines:
    """A list iterator with ``previous()``, like the ``ListIterator`` Kafka's test walks."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.i = 0

    def __iter__(self) -> Iterator[str]:
        while self.i < len(self.lines):
            self.i += 1
            yield self.lines[self.i - 1]

    def previous(self) -> None:
        self.i -= 1


def read_batch_metadata(lines: Lines) -> str | None:
    for line in lines:
        assert not line.startswith("|"), f"Read unexpected record entry {line!r}"
        if line.startswith("baseOffset"):
            return line
    return None


def read_batch_records(lines: Lines) -> list[str]:
    records = []
    for line in lines:
        if not line.startswith("|"):
            lines.previous()
            break
        records.append(line[1:])
    return records


def _write(path: Path, batches: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(batches))
    return path


class Log:
    """Appends batches at the next offset, as ``UnifiedLog.appendAsLeader`` assigns them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.batches: list[bytes] = []
        self.next_offset = 0

    def append(self, records, leader_epoch: int, **kw) -> None:
        b = RecordBatchBuilder(base_offset=self.next_offset, partition_leader_epoch=leader_epoch,
                               **kw)
        for rec in records:
            b.append(*rec)
        self.batches.append(b.build())
        self.next_offset = b.next_offset()

    def append_raw(self, batch_builder: RecordBatchBuilder) -> None:
        self.batches.append(batch_builder.build())
        self.next_offset = batch_builder.next_offset()

    def append_marker(self, **kw) -> None:
        self.batches.append(build_end_txn_marker(offset=self.next_offset, **kw))
        self.next_offset += 1

    def flush(self) -> Path:
        return _write(self.path, self.batches)


def _log_path(tmp_path: Path, topic: str = "kafka-0") -> Path:
    return tmp_path / topic / "00000000000000000000.log"


# -- item 1: batch and record metadata -----------------------------------------------------------

@pytest.fixture
def metadata_log(tmp_path) -> Path:
    """testBatchAndRecordMetadataOutput: six appends at leader epochs 0/3/3/3/5/7.

    ``SimpleRecord("a")`` has no key and no timestamp (-1); ``time.milliseconds()`` is NOW.
    """
    log = Log(_log_path(tmp_path))
    log.append([(-1, None, b"a"), (-1, None, b"b")], 0)
    log.append([(NOW, b"c", b"1"), (-1, None, b"d")], 3, codec=Codec.GZIP)
    log.append([(-1, b"e", None), (-1, None, b"f"), (-1, None, b"g")], 3)
    log.append([(-1, None, b"h")], 3, producer_id=29342342, producer_epoch=15,
               base_sequence=234123)
    log.append([(-1, None, b"i"), (-1, None, b"j")], 5, codec=Codec.GZIP, producer_id=98323,
               producer_epoch=99, base_sequence=266, is_transactional=True)
    log.append_marker(producer_id=98323, producer_epoch=99, commit=True, coordinator_epoch=100,
                      timestamp=NOW, partition_leader_epoch=7)
    return log.flush()


def test_batch_and_record_metadata_output(cli, metadata_log):
    res = cli("dump-segment", "--deep-iteration", "--files", metadata_log)
    assert res.code == 0, res.err
    assert res.err == ""
    lines = Lines(res.out)
    # what Kafka reads back with log.read(0, ...): here the library's own reader
    with FileRecords(metadata_log) as fr:
        expected = [(b, list(b.records())) for b in fr.batches()]
    assert len(expected) == 6
    for batch, records in expected:
        line = read_batch_metadata(lines)
        assert line is not None
        parsed = parse_metadata_fields(line)
        assert int(parsed["baseOffset"]) == batch.base_offset
        assert int(parsed["lastOffset"]) == batch.last_offset
        assert int(parsed["count"]) == batch.records_count
        assert int(parsed["partitionLeaderEpoch"]) == batch.partition_leader_epoch
        assert parsed["isTransactional"] == str(batch.is_transactional).lower()
        assert parsed["isControl"] == str(batch.is_control).lower()
        assert int(parsed["producerId"]) == batch.producer_id
        assert int(parsed["producerEpoch"]) == batch.producer_epoch
        assert int(parsed["baseSequence"]) == batch.base_sequence
        assert parsed["compresscodec"] == str(batch.codec)
        parsed_records = read_batch_records(lines)
        assert len(parsed_records) == len(records)
        for rec, rec_line in zip(records, parsed_records):
            fields = parse_metadata_fields(rec_line)
            assert int(fields["offset"]) == rec.offset
            assert int(fields["keySize"]) == (-1 if rec.key is None else len(rec.key))
            assert int(fields["valueSize"]) == (-1 if rec.value is None else len(rec.value))
            assert int(fields["CreateTime"]) == rec.timestamp
            assert int(fields["sequence"]) == rec.sequence
            for name in BATCH_FIELDS:
                assert name not in fields, (name, rec_line)
    assert read_batch_metadata(lines) is None


def test_batch_and_record_metadata_values(cli, metadata_log):
    """The same dump against values written down by hand (not read back through pylogctl)."""
    out = cli("dump-segment", "--deep-iteration", "--files", metadata_log).out
    batches = [parse_metadata_fields(l) for l in out.splitlines() if l.startswith("baseOffset")]
    assert [tuple(b[f] for f in ("baseOffset", "lastOffset", "count", "partitionLeaderEpoch",
                                 "isTransactional", "isControl", "producerId", "producerEpoch",
                                 "baseSequence", "lastSequence", "compresscodec"))
            for b in batches] == [
        ("0", "1", "2", "0", "false", "false", "-1", "-1", "-1", "-1", "none"),
        ("2", "3", "2", "3", "false", "false", "-1", "-1", "-1", "-1", "gzip"),
        ("4", "6", "3", "3", "false", "false", "-1", "-1", "-1", "-1", "none"),
        ("7", "7", "1", "3", "false", "false", "29342342", "15", "234123", "234123", "none"),
        ("8", "9", "2", "5", "true", "false", "98323", "99", "266", "267", "gzip"),
        ("10", "10", "1", "7", "true", "true", "98323", "99", "-1", "-1", "none"),
    ]
    records = [parse_metadata_fields(l[1:]) for l in out.splitlines() if l.startswith("|")]
    assert [(r["offset"], r["CreateTime"], r["keySize"], r["valueSize"], r["sequence"])
            for r in records] == [
        ("0", "-1", "-1", "1", "-1"), ("1", "-1", "-1", "1", "-1"),
        ("2", str(NOW), "1", "1", "-1"), ("3", "-1", "-1", "1", "-1"),
        ("4", "-1", "1", "-1", "-1"), ("5", "-1", "-1", "1", "-1"), ("6", "-1", "-1", "1", "-1"),
        ("7", "-1", "-1", "1", "234123"),
        ("8", "-1", "-1", "1", "266"), ("9", "-1", "-1", "1", "267"),
        ("10", str(NOW), "4", "6", "-1"),
    ]
    assert records[-1]["endTxnMarker"] == "COMMIT" and records[-1]["coordinatorEpoch"] == "100"
    assert all(r["headerKeys"] == "[]" for r in records)


# -- item 2: print flags -------------------------------------------------------------------------

BATCH_INFOS = [(range(0, 10), True, True, 2), (range(10, 30), True, False, 3),
               (range(30, 50), False, True, 5), (range(50, 60), False, False, 7)]


@pytest.fixture
def simple_records_log(tmp_path) -> Path:
    """addSimpleRecords: 10 key+value, 20 key-only, 20 value-only, 10 neither, at epoch 0."""
    log = Log(_log_path(tmp_path))
    for offsets, has_keys, has_values, step in BATCH_INFOS:
        log.append([(NOW + i * step, f"message key {i}".encode() if has_keys else None,
                     f"message value {i}".encode() if has_values else None) for i in offsets], 0)
    return log.flush()


def _is_batch(index: int) -> bool:
    i = 0
    for offsets, *_ in BATCH_INFOS:
        if i == index:
            return True
        i += 1
        for _ in offsets:
            if i == index:
                return False
            i += 1
    raise AssertionError(f"No match for index {index}")


@pytest.mark.parametrize("check_keys_and_values, flags", [
    (True, ["--print-data-log"]),
    (True, ["--print-data-log", "--deep-iteration"]),
    (True, ["--value-decoder", "string"]),
    (True, ["--key-decoder", "string"]),
    (False, ["--deep-iteration"]),
], ids=["print-data-log", "print-data-log+deep", "value-decoder", "key-decoder", "deep-only"])
def test_print_data_log(cli, simple_records_log, check_keys_and_values, flags):
    """testPrintDataLog.verifyRecordsInOutput: the last lines alternate batch / record lines."""
    res = cli("dump-segment", *flags, "--files", simple_records_log)
    assert res.code == 0 and res.err == ""
    lines = res.out.split("\n")
    assert lines[-1] == ""  # the output ends with a newline
    lines = lines[:-1]
    assert len(lines) > 2, f"Data not printed: {res.out}"
    total_records = sum(len(o) for o, *_ in BATCH_INFOS)
    total = total_records + len(BATCH_INFOS)
    assert len(lines) == total + 2  # Dumping ..., Log starting offset: 0
    offset = 0
    batch_iter = iter(BATCH_INFOS)
    batch = None
    for index in range(total):
        line = lines[len(lines) - total + index]
        if _is_batch(index):
            assert line.startswith(f"baseOffset: {offset} lastOffset: "), line
            batch = next(batch_iter)
        else:
            assert line.startswith(f"| offset: {offset}"), line
            if check_keys_and_values:
                suffix = "headerKeys: []"
                if batch[1]:
                    suffix += f" key: message key {offset}"
                if batch[2]:
                    suffix += f" payload: message value {offset}"
                assert line.endswith(suffix), line
            else:
                assert line.endswith("headerKeys: []"), line  # no key or payload part
            offset += 1
    assert offset == total_records


def test_print_data_log_not_printed_by_default(cli, simple_records_log):
    """testPrintDataLog.verifyNoRecordsInOutput (Kafka matches the whole output, DOTALL)."""
    res = cli("dump-segment", "--files", simple_records_log)
    assert res.code == 0
    assert not re.fullmatch(r"(?s).*offset: [0-9]* isvalid.*", res.out)
    assert "| offset" not in res.out and "payload:" not in res.out


# -- item 4: empty index -------------------------------------------------------------------------

def test_dump_empty_index_verify_only(cli, tmp_path):
    """testDumpEmptyIndex: an empty index beside an empty segment, verified (verifyOnly=true)."""
    log = _write(_log_path(tmp_path), [])
    index = log.with_suffix(".index")
    index.write_bytes(b"")
    res = cli("dump-segment", "--verify-index-only", "--files", index)
    assert res.code == 0 and res.err == ""
    assert res.out == f"Dumping {index}\n{index} is empty.\n"
    assert res.out.splitlines()[-1] == f"{index} is empty."  # the Java test's exact text


# -- item 6: offsets and transaction-log parsers through the CLI --------------------------------

SUBSCRIPTION = encode_consumer_protocol(3, {
    "topics": ["foo"], "userData": None, "ownedPartitions": [{"topic": "foo", "partitions": [0]}],
    "generationId": 0, "rackId": "rack"}, CONSUMER_PROTOCOL_SUBSCRIPTION)
ASSIGNMENT = encode_consumer_protocol(3, {
    "assignedPartitions": [{"topic": "foo", "partitions": [0]}], "userData": None},
    CONSUMER_PROTOCOL_ASSIGNMENT)


def _classic_group(subscription: bytes, assignment: bytes):
    return encode_group_record(2, {"group": "group"}, 4, {
        "protocolType": "consumer", "generation": 10, "protocol": "range", "leader": "member",
        "members": [{"memberId": "member", "groupInstanceId": "instance", "clientId": "client",
                     "clientHost": "host", "rebalanceTimeout": 1000, "sessionTimeout": 100,
                     "subscription": subscription, "assignment": assignment}]})


GROUP_KEY = '{"type":"2","data":{"group":"group"}}'
GROUP_VALUE_HEAD = ('{"version":"4","data":{"protocolType":"consumer","generation":10,'
                    '"protocol":"range","leader":"member","currentStateTimestamp":-1,"members":'
                    '[{"memberId":"member","groupInstanceId":"instance","clientId":"client",'
                    '"clientHost":"host","rebalanceTimeout":1000,"sessionTimeout":100,')
CG_KEY = '{"type":"3","data":{"groupId":"group"}}'
# Kafka's parse-error case: ConsumerGroupMemberMetadataValue with all defaults under a type-3 key
MEMBER_DEFAULTS = i16(0) + b"\x01" * 4 + b"\x01" + b"\x01" + i32(-1) + b"\x01" + b"\x00"

# (key, value, the line's expected " key: ... payload: ..." tail) in record order
OFFSETS_RECORDS = [
    (*encode_group_record(3, {"groupId": "group"}, 0, {"epoch": 10}),
     f' key: {CG_KEY} payload: {{"version":"0","data":{{"epoch":10}}}}'),
    (*_classic_group(SUBSCRIPTION, ASSIGNMENT),
     f' key: {GROUP_KEY} payload: {GROUP_VALUE_HEAD}"subscription":{{"topics":["foo"],'
     '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],"generationId":0,'
     '"rackId":"rack"},"assignment":{"assignedPartitions":[{"topic":"foo","partitions":[0]}],'
     '"userData":null}}]}}'),
    (*_classic_group(b"Subscription", b"Assignment"),
     f' key: {GROUP_KEY} payload: {GROUP_VALUE_HEAD}"subscription":"U3Vic2NyaXB0aW9u",'
     '"assignment":"QXNzaWdubWVudA=="}]}}'),
    (encode_group_record(3, {"groupId": "group"})[0], None, f" key: {CG_KEY} payload: <DELETE>"),
    (i16(32767), b"", " key: Unknown record type 32767 at offset 4, skipping."),
    (encode_group_record(3, {"groupId": "group"})[0], MEMBER_DEFAULTS,
     " key: Error at offset 5, skipping. Could not read record with version 0 from value's "
     "buffer due to: Error reading byte array of 536870911 byte(s): only 1 byte(s) available."),
]


@pytest.fixture
def offsets_log(tmp_path) -> Path:
    log = Log(_log_path(tmp_path, "__consumer_offsets-0"))
    log.append([(NOW, k, v) for k, v, _ in OFFSETS_RECORDS], 0)
    return log.flush()


def test_offsets_decoder_prints_kafkas_strings(cli, offsets_log):
    res = cli("dump-segment", "--offsets-decoder", "--files", offsets_log)
    assert res.code == 0 and res.err == ""
    records = [l for l in res.out.splitlines() if l.startswith("| offset:")]
    assert len(records) == len(OFFSETS_RECORDS)
    for i, (line, (_, _, tail)) in enumerate(zip(records, OFFSETS_RECORDS)):
        assert line.startswith(f"| offset: {i} CreateTime: {NOW} keySize: ")
        assert line.endswith(" headerKeys: []" + tail), line


def test_offsets_decoder_skip_record_metadata(cli, offsets_log):
    res = cli("dump-segment", "--offsets-decoder", "--skip-record-metadata", offsets_log)
    assert res.code == 0
    records = res.out.splitlines()[3:]
    assert records == ["|" + tail for _, _, tail in OFFSETS_RECORDS]


def test_offsets_decoder_json_embeds_objects(cli, offsets_log):
    res = cli("dump-segment", "--offsets-decoder", "-o", "json", offsets_log)
    assert res.code == 0
    recs = json.loads(res.out)[0]["batches"][0]["records"]
    assert recs[0]["key"] == {"type": "3", "data": {"groupId": "group"}}
    assert recs[0]["value"] == {"version": "0", "data": {"epoch": 10}}
    assert recs[1]["value"]["data"]["members"][0]["subscription"]["topics"] == ["foo"]
    assert recs[2]["value"]["data"]["members"][0]["assignment"] == "QXNzaWdubWVudA=="
    assert recs[3]["value"] == "<DELETE>"
    assert recs[4]["key"] == "Unknown record type 32767 at offset 4, skipping."
    assert "value" not in recs[4] and "value" not in recs[5]
    # the text output's JSON is exactly the embedded object, compact
    text = cli("dump-segment", "--offsets-decoder", offsets_log).out
    assert json.dumps(recs[1]["value"], separators=(",", ":")) in text
    # yaml carries the same document
    assert yaml.safe_load(cli("dump-segment", "--offsets-decoder", "-o", "yaml",
                              offsets_log).out) == json.loads(res.out)
    ndjson = [json.loads(l) for l in cli("dump-segment", "--offsets-decoder", "-o", "ndjson",
                                         offsets_log).out.splitlines()]
    assert ndjson[0]["records"][0]["key"] == recs[0]["key"]


def test_offsets_decoder_legacy_format(cli, tmp_path):
    log = Log(_log_path(tmp_path, "__consumer_offsets-1"))
    commit_key = encode_group_record(1, {"group": "grp", "topic": "orders", "partition": 3})[0]
    value = encode_group_record(1, {"group": "g", "topic": "t", "partition": 0}, 3, {
        "offset": 42, "leaderEpoch": 1, "metadata": "", "commitTimestamp": 5})[1]
    group_key, group_value = _classic_group(SUBSCRIPTION, ASSIGNMENT)
    log.append([(NOW, commit_key, value), (NOW, commit_key, None), (NOW, group_key, group_value),
                (NOW, *encode_group_record(3, {"groupId": "group"}, 0, {"epoch": 10}))], 0)
    path = log.flush()
    res = cli("dump-segment", "--offsets-decoder", "--legacy-format", "--skip-record-metadata",
              path)
    assert res.code == 0 and res.err == ""
    assert res.out.splitlines()[3:] == [
        "| key: offset_commit::group=grp,partition=orders-3 payload: offset=42",
        "| key: offset_commit::group=grp,partition=orders-3 payload: <DELETE>",
        '| key: group_metadata::group=group payload: {"protocolType":"consumer",'
        '"protocol":"range","generationId":10,"assignment":"{member=[foo-0]}"}',
        "| key: unknown::version=3",
    ]
    doc = json.loads(cli("dump-segment", "--offsets-decoder", "--legacy-format", "-o", "json",
                         path).out)
    assert doc[0]["batches"][0]["records"][0]["value"] == "offset=42"  # a string, not an object


TXN_KEY = '{"type":"0","data":{"transactionalId":"txnId"}}'
TXN_V0 = ('{"version":"0","data":{"producerId":123,"producerEpoch":0,"transactionTimeoutMs":0,'
          '"transactionStatus":"Empty","transactionPartitions":[],'
          '"transactionLastUpdateTimestampMs":0,"transactionStartTimestampMs":0}}')


@pytest.fixture
def txn_log(tmp_path) -> Path:
    log = Log(_log_path(tmp_path, "__transaction_state-0"))
    v1 = encode_transaction_record("txnId", 1, {
        "clientTransactionVersion": 0, "nextProducerId": 10, "previousProducerId": 11,
        "producerEpoch": 2, "producerId": 12, "transactionLastUpdateTimestampMs": 123,
        "transactionPartitions": [{"topic": "t", "partitionIds": [0, 1, 2]}],
        "transactionStartTimestampMs": 13, "transactionStatus": 1, "transactionTimeoutMs": 14})
    log.append([(NOW, *encode_transaction_record("txnId", 0, {"producerId": 123})),
                (NOW, *encode_transaction_record("txnId")),
                (NOW, i16(32767), b""),
                (NOW, *v1),
                (NOW, encode_transaction_record("txnId")[0], i16(0) + b"\x00" * 8)], 0)
    return log.flush()


def test_transaction_log_decoder(cli, txn_log):
    res = cli("dump-segment", "--transaction-log-decoder", "--skip-record-metadata", txn_log)
    assert res.code == 0 and res.err == ""
    assert res.out.splitlines()[3:] == [
        f"| key: {TXN_KEY} payload: {TXN_V0}",
        f"| key: {TXN_KEY} payload: <DELETE>",
        "| key: Unknown record type 32767 at offset 2, skipping.",
        f'| key: {TXN_KEY} payload: {{"version":"1","data":{{"producerId":12,'
        '"previousProducerId":11,"nextProducerId":10,"producerEpoch":2,'
        '"transactionTimeoutMs":14,"transactionStatus":"Ongoing","transactionPartitions":'
        '[{"topic":"t","partitionIds":[0,1,2]}],"transactionLastUpdateTimestampMs":123,'
        '"transactionStartTimestampMs":13}}',
        "| key: Error at offset 4, skipping. Could not read record with version 0 from value's "
        "buffer due to: null.",
    ]
    doc = json.loads(cli("dump-segment", "--transaction-log-decoder", "-o", "json", txn_log).out)
    recs = doc[0]["batches"][0]["records"]
    assert recs[0]["key"] == {"type": "0", "data": {"transactionalId": "txnId"}}
    assert recs[0]["value"]["data"]["producerId"] == 123 and recs[1]["value"] == "<DELETE>"


def test_transaction_log_decoder_legacy_format(cli, txn_log):
    res = cli("dump-segment", "--transaction-log-decoder", "--legacy-format",
              "--skip-record-metadata", txn_log)
    assert res.code == 0
    lines = res.out.splitlines()[3:]
    assert lines[0] == ("| key: transaction_metadata::transactionalId=txnId payload: "
                        "producerId:123,producerEpoch:0,state=Empty,partitions=[],"
                        "txnLastUpdateTimestamp=0,txnTimeoutMs=0")
    assert lines[1] == "| key: transaction_metadata::transactionalId=txnId payload: <DELETE>"
    assert lines[2] == "| key: unknown::version=32767"
    # Ongoing keeps its partitions, in the order of a Scala HashSet (t-2, t-1, t-0)
    assert lines[3] == ("| key: transaction_metadata::transactionalId=txnId payload: "
                        "producerId:12,producerEpoch:2,state=Ongoing,partitions=[t-2,t-1,t-0],"
                        "txnLastUpdateTimestamp=123,txnTimeoutMs=14")
    assert lines[4].startswith("| key: Error at offset 4, skipping. ") and "payload" not in lines[4]


@pytest.mark.parametrize("flag", ["--offsets-decoder", "--transaction-log-decoder"])
@pytest.mark.parametrize("legacy", [False, True], ids=["json", "legacy"])
def test_missing_key_aborts_with_one_line(cli, tmp_path, flag, legacy):
    """Kafka throws on a record with no key; pylogctl stops with exit 1 and one stderr line."""
    log = Log(_log_path(tmp_path, "__consumer_offsets-2"))
    log.append([(NOW, *encode_group_record(3, {"groupId": "group"}, 0, {"epoch": 10}))], 0)
    first_size = len(log.batches[0])
    log.append([(NOW, None, b"no key here")], 0)
    path = log.flush()
    res = cli("dump-segment", flag, *(["--legacy-format"] if legacy else []), path)
    assert res.code == 1
    assert "Traceback" not in res.err
    assert res.err.splitlines() == [
        f"pylogctl: Failed to decode message at offset 1 using the specified decoder (message "
        f"had a missing key) ({path}, byte position {first_size})"]
    # the first batch was dumped before the abort
    assert sum(l.startswith("baseOffset:") for l in res.out.splitlines()) == 1
    doc = json.loads(cli("dump-segment", flag, "-o", "json", path).out)
    assert doc[0]["error"]["position"] == first_size
    assert "missing key" in doc[0]["error"]["message"]


def test_internal_topic_decoder_flags_exclude_each_other(cli, offsets_log):
    res = cli("dump-segment", "--offsets-decoder", "--cluster-metadata-decoder", offsets_log)
    assert res.code == 2 and "at most one of" in res.err and "Traceback" not in res.err
    res = cli("dump-segment", "--legacy-format", offsets_log)
    assert res.code == 2 and "--legacy-format needs" in res.err


# -- item 7: cluster metadata ------------------------------------------------------------------

UUID = bytes.fromhex("fbffbf0123456789abcdeffedcba9876")
METADATA_RECORDS = [
    encode_metadata_record(0, 0, {"brokerId": 0, "brokerEpoch": 10}),
    encode_metadata_record(0, 0, {"brokerId": 1, "brokerEpoch": 20}),
    encode_metadata_record(2, 0, {"name": "test-topic", "topicId": UUID}),
    encode_metadata_record(5, 0, {"topicId": UUID, "leader": 1, "partitionId": 0,
                                  "isr": [0, 1, 2]}),
]
BOGUS = bytes([0x90, 0x4E, 0x90, 0x4E])  # two unsigned varints of 10000


def test_dump_metadata_records(cli, tmp_path):
    """testDumpMetadataRecords: the four records at epoch 1, then a bogus one and the four again."""
    log = Log(_log_path(tmp_path, "__cluster_metadata-0"))
    log.append([(NOW, None, v) for v in METADATA_RECORDS], 1)
    path = log.flush()
    res = cli("dump-segment", "--cluster-metadata-decoder", "--files", path)
    assert res.code == 0 and res.err == ""
    assert "Log starting offset: 0" in res.out
    assert "TOPIC_RECORD" in res.out and "BROKER_RECORD" in res.out
    payloads = [l.split(" payload: ", 1)[1] for l in res.out.splitlines() if " payload: " in l]
    assert [json.loads(p)["type"] for p in payloads] == [
        "REGISTER_BROKER_RECORD", "REGISTER_BROKER_RECORD", "TOPIC_RECORD",
        "PARTITION_CHANGE_RECORD"]
    assert payloads[2] == ('{"type":"TOPIC_RECORD","version":0,"data":{"name":"test-topic",'
                           '"topicId":"-_-_ASNFZ4mrze_-3LqYdg"}}')
    assert " key: " not in res.out  # metadata records print no key
    res = cli("dump-segment", "--cluster-metadata-decoder", "--skip-record-metadata", "--files",
              path)
    assert "TOPIC_RECORD" in res.out and "BROKER_RECORD" in res.out
    assert "| offset:" not in res.out

    log.append([(NOW, None, BOGUS)], 2)
    log.append([(NOW, None, v) for v in METADATA_RECORDS], 2)
    log.flush()
    res = cli("dump-segment", "--cluster-metadata-decoder", "--skip-record-metadata", "--files",
              path)
    assert res.code == 0
    assert "TOPIC_RECORD" in res.out and "BROKER_RECORD" in res.out and "skipping" in res.out
    assert ("| payload: Error at 4, skipping. Could not deserialize metadata record due to "
            "unknown frame version 10000(only frame version 1 is supported)") in res.out.splitlines()
    doc = json.loads(cli("dump-segment", "--cluster-metadata-decoder", "-o", "json", path).out)
    values = [r.get("value") for b in doc[0]["batches"] for r in b["records"]]
    assert values[2] == {"type": "TOPIC_RECORD", "version": 0,
                         "data": {"name": "test-topic", "topicId": "-_-_ASNFZ4mrze_-3LqYdg"}}
    assert isinstance(values[4], str) and values[4].startswith("Error at 4, skipping.")
    assert all("key" not in r for b in doc[0]["batches"] for r in b["records"])


def _control_value(ctype: ControlRecordType, values: dict) -> bytes:
    schema = {ControlRecordType.LEADER_CHANGE: LEADER_CHANGE,
              ControlRecordType.SNAPSHOT_HEADER: SNAPSHOT_HEADER,
              ControlRecordType.SNAPSHOT_FOOTER: SNAPSHOT_FOOTER,
              ControlRecordType.KRAFT_VERSION: KRAFT_VERSION,
              ControlRecordType.KRAFT_VOTERS: KRAFT_VOTERS}[ctype]
    return write_message(schema, values, 0)


def _voter(i: int) -> dict:
    return {"voterId": i, "voterDirectoryId": KafkaUuid(bytes([i]) * 16),
            "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 9990 + i}],
            "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}


@pytest.fixture
def metadata_snapshot(tmp_path) -> Path:
    """What RecordsSnapshotWriter writes for OffsetAndEpoch(0, 0) with KRaft version 1 and three
    voters: a control batch (SnapshotHeader, KRaftVersion, KRaftVoters), the records, then a
    control batch with the SnapshotFooter."""
    log = Log(tmp_path / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint")
    header = RecordBatchBuilder(base_offset=0, is_control=True)
    header.append_control(ControlRecordType.SNAPSHOT_HEADER, _control_value(
        ControlRecordType.SNAPSHOT_HEADER, {"version": 0, "lastContainedLogTimestamp": 10000}), 0)
    header.append_control(ControlRecordType.KRAFT_VERSION, _control_value(
        ControlRecordType.KRAFT_VERSION, {"version": 0, "kRaftVersion": 1}), 0)
    header.append_control(ControlRecordType.KRAFT_VOTERS, _control_value(
        ControlRecordType.KRAFT_VOTERS, {"version": 0, "voters": [_voter(i) for i in (1, 2, 3)]}),
        0)
    log.append_raw(header)
    log.append([(0, None, v) for v in METADATA_RECORDS], -1)
    footer = RecordBatchBuilder(base_offset=log.next_offset, is_control=True)
    footer.append_control(ControlRecordType.SNAPSHOT_FOOTER, _control_value(
        ControlRecordType.SNAPSHOT_FOOTER, {"version": 0}), 0)
    log.append_raw(footer)
    return log.flush()


CONTROL_NAMES = ("SnapshotHeader", "SnapshotFooter", "KRaftVersion", "KRaftVoters")


def test_dump_metadata_snapshot(cli, metadata_snapshot):
    res = cli("dump-segment", "--cluster-metadata-decoder", "--files", metadata_snapshot)
    assert res.code == 0 and res.err == ""
    out = res.out
    lines = out.splitlines()
    assert lines[:2] == [f"Dumping {metadata_snapshot}", "Snapshot end offset: 0, epoch: 0"]
    assert "TOPIC_RECORD" in out and "BROKER_RECORD" in out
    for name in CONTROL_NAMES:
        assert name in out, name
    assert '"lastContainedLogTimestamp":10000' in out
    records = [l for l in lines if l.startswith("| offset:")]
    assert records[0].endswith(' headerKeys: [] SnapshotHeader {"version":0,'
                               '"lastContainedLogTimestamp":10000}')
    assert records[1].endswith(' headerKeys: [] KRaftVersion {"version":0,"kRaftVersion":1}')
    assert records[2].endswith(
        ' headerKeys: [] KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":'
        '"AQEBAQEBAQEBAQEBAQEBAQ","endpoints":[{"name":"CONTROLLER","host":"localhost",'
        '"port":9991}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}},'
        '{"voterId":2,"voterDirectoryId":"AgICAgICAgICAgICAgICAg","endpoints":[{"name":'
        '"CONTROLLER","host":"localhost","port":9992}],"kRaftVersionFeature":'
        '{"minSupportedVersion":0,"maxSupportedVersion":1}},{"voterId":3,"voterDirectoryId":'
        '"AwMDAwMDAwMDAwMDAwMDAw","endpoints":[{"name":"CONTROLLER","host":"localhost",'
        '"port":9993}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}')
    assert records[-1].endswith(' headerKeys: [] SnapshotFooter {"version":0}')
    assert sum(" payload: {" in l for l in records) == 4

    res = cli("dump-segment", "--cluster-metadata-decoder", "--skip-record-metadata", "--files",
              metadata_snapshot)
    assert res.code == 0
    out = res.out
    assert "Snapshot end offset: 0, epoch: 0" in out
    assert "TOPIC_RECORD" in out and "BROKER_RECORD" in out
    for name in CONTROL_NAMES:
        assert name not in out, name
    assert "lastContainedLogTimestamp" not in out
    # each control record is an empty line (Kafka prints only the newline)
    lines = out.splitlines()
    assert lines[3:6] == ["", "", ""] and lines[-1] == ""
    doc = json.loads(cli("dump-segment", "--cluster-metadata-decoder", "--skip-record-metadata",
                         "-o", "json", metadata_snapshot).out)
    assert doc[0]["type"] == "snapshot" and doc[0]["snapshotEndOffset"] == 0
    assert doc[0]["batches"][0]["records"] == [{}, {}, {}]


def test_bootstrap_checkpoint_header(cli, metadata_snapshot, tmp_path):
    boot = tmp_path / "bootstrap.checkpoint"
    boot.write_bytes(metadata_snapshot.read_bytes())
    res = cli("dump-segment", "--cluster-metadata-decoder", boot)
    assert res.code == 0
    assert res.out.splitlines()[:2] == [f"Dumping {boot}", "KRaft bootstrap snapshot"]
    assert "REGISTER_BROKER_RECORD" in res.out


# -- item 9 (Java rewrite): control records and legacy records ------------------------------------

def test_dump_control_records(cli, tmp_path):
    """testDumpControlRecord: one control batch of each kind, dumped with the metadata decoder."""
    log = Log(_log_path(tmp_path, "__cluster_metadata-0"))
    log.append_marker(producer_id=0, producer_epoch=0, commit=True, coordinator_epoch=100,
                      timestamp=0, partition_leader_epoch=0)
    for ctype, values in ((ControlRecordType.LEADER_CHANGE, {}),
                          (ControlRecordType.SNAPSHOT_HEADER, {}),
                          (ControlRecordType.SNAPSHOT_FOOTER, {"version": 0}),
                          (ControlRecordType.KRAFT_VERSION, {}),
                          (ControlRecordType.KRAFT_VOTERS, {})):
        b = RecordBatchBuilder(base_offset=log.next_offset, is_control=True,
                               partition_leader_epoch=0)
        b.append_control(ctype, _control_value(ctype, values), 0)
        log.append_raw(b)
    b = RecordBatchBuilder(base_offset=log.next_offset, is_control=True, partition_leader_epoch=0)
    b.append_control(99, b"\x00\x00", 0)  # a type this Kafka does not know
    log.append_raw(b)
    path = log.flush()
    res = cli("dump-segment", "--cluster-metadata-decoder", "--files", path)
    assert res.code == 0 and res.err == ""
    for name in ("endTxnMarker", "LeaderChange", "SnapshotHeader", "SnapshotFooter",
                 "KRaftVersion", "KRaftVoters"):
        assert name in res.out, name
    tails = [l.split(" headerKeys: []", 1)[1] for l in res.out.splitlines()
             if l.startswith("| offset:")]
    assert tails == [
        " endTxnMarker: COMMIT coordinatorEpoch: 100",
        ' LeaderChange: {"version":0,"leaderId":0,"voters":[],"grantingVoters":[]}',
        ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":0}',
        ' SnapshotFooter {"version":0}',
        ' KRaftVersion {"version":0,"kRaftVersion":0}',
        ' KRaftVoters {"version":0,"voters":[]}',
        " controlType: UNKNOWN(99)",
    ]
    doc = json.loads(cli("dump-segment", "--deep-iteration", "-o", "json", path).out)
    controls = [b["records"][0]["control"] for b in doc[0]["batches"]]
    assert controls[0] == {"type": "COMMIT", "typeId": 1, "coordinatorEpoch": 100}
    assert controls[1] == {"type": "LEADER_CHANGE", "typeId": 2, "data": {
        "version": 0, "leaderId": 0, "voters": [], "grantingVoters": []}}
    assert controls[-1] == {"type": "UNKNOWN", "typeId": 99}
    assert all(b["isControl"] for b in doc[0]["batches"])


def _legacy_segment(path: Path) -> Path:
    """Magic 1: two plain messages and a gzip wrapper of two; then a magic-0 message."""
    import struct

    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    out = b""
    b = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    b.append(0, NOW, b"k0", b"v0")
    b.append(1, NOW + 1, None, b"v1")
    out += bytes(b.build())
    b = LegacyRecordBatchBuilder(magic=1, compression_type=1, batch_size=1 << 20)
    b.append(0, NOW + 2, b"k2", b"v2")
    b.append(1, NOW + 3, b"k3", None)
    wrapper = bytes(b.build())
    out += struct.pack(">q", 3) + wrapper[8:]  # the wrapper carries its last inner offset
    b = LegacyRecordBatchBuilder(magic=0, compression_type=0, batch_size=1 << 20)
    b.append(4, None, b"k4", b"v4")
    out += bytes(b.build())
    return _write(path, [out])


def test_dump_legacy_records(cli, tmp_path):
    path = _legacy_segment(_log_path(tmp_path, "legacy-0"))
    res = cli("dump-segment", "--deep-iteration", "--files", path)
    assert res.code == 0 and res.err == ""
    lines = res.out.splitlines()
    batches = [l for l in lines[2:] if not l.startswith("|")]
    records = [l for l in lines if l.startswith("|")]
    assert [parse_metadata_fields(b)["offset"] for b in batches] == ["0", "1", "3", "4"]
    assert [parse_metadata_fields(b)["magic"] for b in batches] == ["1", "1", "1", "0"]
    assert parse_metadata_fields(batches[2])["compresscodec"] == "gzip"
    assert len(records) == 5
    for i, line in enumerate(records):
        fields = parse_metadata_fields(line[1:])  # strict: a stray "}" would not parse
        assert fields["offset"] == str(i)
        assert fields["isValid"] == "true" and fields["crc"].isdigit()
        assert "sequence" not in fields and "headerKeys" not in fields
        assert line.count("{") == line.count("}")
        assert re.search(r" isValid: true crc: \d+$", line), line
    assert parse_metadata_fields(records[0][1:])["CreateTime"] == str(NOW)
    assert parse_metadata_fields(records[4][1:])["NoTimestampType"] == "-1"
    res = cli("dump-segment", "--print-data-log", "--files", path)
    data = [l for l in res.out.splitlines() if l.startswith("|")]
    assert re.fullmatch(r"\| offset: 0 CreateTime: \d+ keySize: 2 valueSize: 2 isValid: true "
                        r"crc: \d+ key: k0 payload: v0", data[0])
    assert data[3].endswith(" key: k3") and data[1].endswith(" payload: v1")
    assert all(l.count("{") == l.count("}") for l in data)
    doc = json.loads(cli("dump-segment", "--deep-iteration", "-o", "json", path).out)
    rec = doc[0]["batches"][0]["records"][0]
    assert rec["isValid"] is True and isinstance(rec["crc"], int) and "sequence" not in rec
