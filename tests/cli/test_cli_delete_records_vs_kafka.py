"""``pylogctl delete-records`` against ``kafka-delete-records`` on copies of the same log dir.

A real Kafka 4.4 broker writes ``dr`` (partition 0 over three 1 MiB segments, partition 1
small) and a compact-only topic, and stops. Two copies: the real broker, started on one, runs
``kafka-delete-records`` and its retention deletes the segments below the new log start; on
the other, ``pylogctl delete-records --execute`` runs offline. Then: the same low watermarks
printed, the same segments left and the same ``log-start-offset-checkpoint`` entries;
``kafka-get-offsets --time -2`` after a restart says the same on both, and a consumer from
earliest on pylogctl's copy gets its first record at the new log start offset.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from kafka_jvm import KafkaBroker, require_kafka
from kafka_scenarios import _producer, _topic
from support import run_pylogctl

DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"
REQUEST = {"partitions": [{"topic": "dr", "partition": 0, "offset": 1500},
                          {"topic": "dr", "partition": 1, "offset": -1}], "version": 1}


def _write(broker: KafkaBroker) -> None:
    _topic(broker, "dr", 2, segment_bytes=1048576)
    _topic(broker, "kept", 1, cleanup_policy="compact")
    p = _producer(broker, **{"compression.type": "none"})
    for i in range(2600):
        p.produce("dr", key=f"k{i}".encode(), value=bytes(1000), partition=0)
    for i in range(7):
        p.produce("dr", value=b"small", partition=1)
    p.produce("kept", key=b"k", value=b"v")
    p.flush(30)


def _segments(part: Path) -> list[str]:
    return sorted(p.name for p in part.glob("*.log"))


def _checkpoint(log_dir: Path) -> dict[str, str]:
    lines = (log_dir / "log-start-offset-checkpoint").read_text().splitlines()[2:]
    return {" ".join(line.split()[:2]): line.split()[2] for line in lines}


def _first_offset(broker: KafkaBroker, topic: str, partition: int) -> int:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "first",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    try:
        for _ in range(30):
            m = c.poll(2)
            if m is not None and m.error() is None:
                return m.offset()
        raise AssertionError("no record")
    finally:
        c.close()


def _restart_earliest(log_dir: Path) -> tuple[str, int]:
    broker = KafkaBroker(log_dir=log_dir, work_dir=log_dir.parent / "broker-again")
    broker.start()
    try:
        return (broker.tool("kafka-get-offsets", "--topic", "dr", "--time", "-2").stdout,
                _first_offset(broker, "dr", 0))
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    require_kafka()
    root = tmp_path_factory.mktemp("delete-records")
    source = root / "source" / "logs"
    broker = KafkaBroker(log_dir=source, work_dir=root / "source" / "broker")
    broker.format()
    broker.start()
    try:
        _write(broker)
    finally:
        broker.stop()
    theirs, ours = root / "kafka" / "logs", root / "pylogctl" / "logs"
    for target in (theirs, ours):
        shutil.copytree(source, target)
    request = root / "request.json"
    request.write_text(json.dumps(REQUEST))

    kafka = KafkaBroker(log_dir=theirs, work_dir=theirs.parent / "broker")
    kafka.start()
    try:
        said = kafka.tool(DELETE_RECORDS, "--offset-json-file", request).stdout
        deadline = time.monotonic() + 60
        while len(_segments(theirs / "dr-0")) > 2 or list((theirs / "dr-0").glob("*.deleted")):
            assert time.monotonic() < deadline, "Kafka's retention did not delete the segments"
            time.sleep(0.5)
    finally:
        kafka.stop()
    run = run_pylogctl("delete-records", ours, "--offset-json-file", request, "--execute")
    assert run.returncode == 0, run.stderr
    return theirs, ours, said, run


def test_delete_records_prints_kafkas_low_watermarks(copies):
    _, _, said, run = copies
    head = ["Executing records delete operation", "Records delete operation completed:"]
    assert said.splitlines()[:2] == run.stdout.splitlines()[:2] == head
    # Kafka's Admin client iterates an unmodifiable map whose order changes from run to run
    assert sorted(said.splitlines()[2:]) == sorted(run.stdout.splitlines()[2:]) == [
        "partition: dr-0\tlow_watermark: 1500", "partition: dr-1\tlow_watermark: 7"]


def test_delete_records_leaves_the_files_kafka_leaves(copies):
    theirs, ours, _, _ = copies
    assert _segments(ours / "dr-0") == _segments(theirs / "dr-0")
    assert len(_segments(ours / "dr-0")) == 2  # the first segment went
    assert _segments(ours / "dr-1") == _segments(theirs / "dr-1")
    assert {k: v for k, v in _checkpoint(ours).items() if k.startswith("dr ")} == {
        k: v for k, v in _checkpoint(theirs).items() if k.startswith("dr ")}


def test_kafka_starts_on_the_result_and_serves_from_the_new_start(copies):
    theirs, ours, _, _ = copies
    kafka_view = _restart_earliest(theirs)
    ours_view = _restart_earliest(ours)
    assert ours_view == kafka_view == ("dr:0:1500\ndr:1:7\n", 1500)


def test_refusals_are_one_line_and_write_nothing(copies, tmp_path):
    _, ours, _, _ = copies
    before = {p: p.read_bytes() for p in ours.rglob("*") if p.is_file()}
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"partitions": [{"topic": "dr", "partition": 0, "offset": 5}')
    cases = [
        (("--topic", "dr", "--partition", "0", "--offset", "99999"), 5,
         "Cannot increment the log start offset to 99999 of partition dr-0 since it is larger "
         "than the high watermark 2600 (OFFSET_OUT_OF_RANGE)"),
        (("--topic", "kept", "--partition", "0", "--offset", "0"), 5,
         "Records of partition kept-0 can not be deleted due to the configured policy "
         "(POLICY_VIOLATION)"),
        (("--topic", "dr", "--partition", "9", "--offset", "0"), 2,
         "dr-9: no such partition in the log dirs given (UNKNOWN_TOPIC_OR_PARTITION)"),
        (("--topic", "nope", "--partition", "0", "--offset", "0"), 2, "nope-0: no such"),
        (("--offset-json-file", bad_json), 2,
         f"{bad_json}: The input string is not a valid JSON: Expecting ',' delimiter (line 1 "
         f"column 61, byte position 60)"),
    ]
    for args, code, message in cases:
        run = run_pylogctl("delete-records", ours, *args, "--execute")
        assert run.returncode == code, run.stderr
        assert run.stdout == "" and len(run.stderr.splitlines()) == 1, run.stderr
        assert message in run.stderr
    assert {p: p.read_bytes() for p in ours.rglob("*") if p.is_file()} == before
