"""``--cluster-metadata-decoder`` (pylogctl.tools.metadata_parser): Kafka's exact strings.

Mirrors DumpLogSegmentsTest.testDumpMetadataRecords: records print as
``{"type":"…","version":n,"data":{…}}`` with no key, and a bogus record prints
``Error at {offset}, skipping. {message}``. The corpus test decodes every metadata record
of every KRaft log, snapshot and bootstrap checkpoint under the corpus.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.metadata_records import (TYPE_NAMES, decode_metadata_record,
                                              encode_metadata_record)
from pylogctl.format.record import Record
from pylogctl.storage.file_records import FileRecords
from pylogctl.tools.metadata_parser import ClusterMetadataMessageParser
from pylogctl.tools.record_parsers import ParsedRecord, get_parser

UUID = bytes.fromhex("fbffbf0123456789abcdeffedcba9876")
UUID_STR = "-_-_ASNFZ4mrze_-3LqYdg"

TOPIC = encode_metadata_record(2, 0, {"name": "test-topic", "topicId": UUID})
BROKER = encode_metadata_record(0, 0, {"brokerId": 1, "brokerEpoch": 20})
BOGUS = bytes([0x90, 0x4E, 0x90, 0x4E])  # Kafka's test: two unsigned varints of 10000


def parse(value: bytes | None, offset: int = 0) -> ParsedRecord:
    return ClusterMetadataMessageParser().parse(Record(offset, 0, None, value))


def printed(payload) -> str:
    return payload if isinstance(payload, str) else json.dumps(
        payload, separators=(",", ":"), ensure_ascii=False)


def test_get_parser_builds_this_parser():
    assert isinstance(get_parser("cluster-metadata"), ClusterMetadataMessageParser)


def test_topic_record():
    parsed = parse(TOPIC)
    assert parsed.key is None
    assert printed(parsed.payload) == (
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"test-topic","topicId":"%s"}}'
        % UUID_STR)


def test_register_broker_record():
    assert printed(parse(BROKER).payload) == (
        '{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":1,'
        '"incarnationId":"AAAAAAAAAAAAAAAAAAAAAA","brokerEpoch":20,"endPoints":[],"features":[],'
        '"rack":"","fenced":true}}')


def test_partition_change_record_from_kafkas_test():
    raw = encode_metadata_record(5, 0, {"topicId": UUID, "leader": 1, "partitionId": 0,
                                        "isr": [0, 1, 2]})
    assert printed(parse(raw).payload) == (
        '{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,'
        f'"topicId":"{UUID_STR}","isr":[0,1,2],"leader":1}}}}')


@pytest.mark.parametrize("value,message", [
    (BOGUS, "Could not deserialize metadata record due to unknown frame version 10000(only "
            "frame version 1 is supported)"),
    (b"\x00\x02\x00", "Could not deserialize metadata record with frame version 0. Note that "
                      "upgrades from the preview release of KRaft in 2.8 to newer versions are "
                      "not supported."),
    (b"", "Error while reading frame version"),
    (b"\x01", "Error while reading type"),
    (b"\x01\x02", "Error while reading version"),
    (b"\x01\x02\x80\x80\x02", "Value for version was too large."),
    (b"\x01\x10\x00", "org.apache.kafka.common.errors.UnsupportedVersionException: "
                      "Unknown metadata id 16"),
    (TOPIC[:-3], "Failed to deserialize record with type 2"),
    (BROKER + b"\x00\x00", "Found 2 byte(s) of garbage after 0"),
    (None, "null"),
])
def test_errors_are_kafkas_lines(value, message):
    parsed = parse(value, offset=42)
    assert parsed.key is None
    assert parsed.payload == f"Error at 42, skipping. {message}"


def _segment(path: Path, values: list[bytes | None], base_offset: int = 0) -> Path:
    b = RecordBatchBuilder(base_offset=base_offset)
    for v in values:
        b.append(0, None, v)
    path.write_bytes(b.build())
    return path


def test_cli_dump_with_a_bogus_record(cli, tmp_path):
    seg = _segment(tmp_path / "00000000000000000000.log", [BROKER, TOPIC, BOGUS, TOPIC])
    res = cli("dump-segment", "--cluster-metadata-decoder", "--skip-record-metadata", seg)
    assert res.code == 0, res.err
    payloads = [line.split("payload: ", 1)[1] for line in res.lines if "payload: " in line]
    assert payloads == [
        printed(parse(BROKER).payload), printed(parse(TOPIC).payload),
        "Error at 2, skipping. Could not deserialize metadata record due to unknown frame "
        "version 10000(only frame version 1 is supported)",
        printed(parse(TOPIC).payload)]
    assert not any("key:" in line for line in res.lines)
    assert "Log starting offset: 0" in res.out


# --- corpus ---------------------------------------------------------------------------------

def _metadata_files(root: Path) -> list[Path]:
    """Metadata log segments, KRaft snapshots and bootstrap checkpoints below ``root``."""
    return sorted(p for p in root.rglob("*") if p.is_file() and (
        (p.suffix == ".log" and p.parent.name == "__cluster_metadata-0")
        or (p.name.endswith(".checkpoint") and p.parent.name == "__cluster_metadata-0")
        or p.name == "bootstrap.checkpoint"))


# non-control metadata records per corpus dir (logs + snapshots + bootstrap.checkpoint)
CORPUS_COUNTS = {"airquality-kraft": 56840 + 427, "kraft3-cluster": 8954 + 3,
                 "ksql-kraft-2023": 16593 + 220 + 1, "stocksys-kraft": 432 + 1}


def test_corpus_metadata_records_all_decode(corpus):
    parser = ClusterMetadataMessageParser()
    per_dir: Counter[str] = Counter()
    types: Counter[str] = Counter()
    failures = []
    for path in _metadata_files(corpus):
        with FileRecords(path) as fr:
            for batch in fr.batches():
                if batch.is_control:
                    continue
                for rec in batch.records():
                    per_dir[path.relative_to(corpus).parts[0]] += 1
                    parsed = parser.parse(rec)
                    if isinstance(parsed.payload, str) or parsed.key is not None:
                        failures.append(f"{path}@{rec.offset}: {parsed.payload}")
                        continue
                    types[parsed.payload["type"]] += 1
                    value = bytes(rec.value)
                    decoded = decode_metadata_record(value)
                    assert decoded.known_version, f"{path}@{rec.offset}: new version"
                    # the encoder reproduces Kafka's bytes exactly
                    assert encode_metadata_record(decoded.api_key, decoded.version,
                                                  decoded.data) == value, f"{path}@{rec.offset}"
    assert not failures, failures[:10]
    if not per_dir:
        pytest.skip("no KRaft metadata in the corpus")
    assert {d: n for d, n in per_dir.items() if d in CORPUS_COUNTS} == {
        d: n for d, n in CORPUS_COUNTS.items() if (corpus / d).is_dir()}
    assert set(types) <= set(TYPE_NAMES.values())
    assert {"TOPIC_RECORD", "PARTITION_RECORD", "FEATURE_LEVEL_RECORD"} <= set(types)
