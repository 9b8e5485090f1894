"""Incremental fetch sessions (KIP-227), judged by the real broker: one script of Fetch v12
requests, hand-built so that every session id and epoch is the test's choice, runs against a
fresh real Kafka 4.4 broker and a fresh ``pylogctl broker`` holding the same records, and the
transcripts must be the same.

The script: a full fetch of two partitions opens a session; incremental fetches then answer
only the partitions with records or a moved high watermark (one at a stale fetch offset keeps
getting its records, one whose offset caught up drops out, one that gets a record comes
back); a stale epoch gets INVALID_FETCH_SESSION_EPOCH and an unknown session
FETCH_SESSION_ID_NOT_FOUND; forgetting every partition closes the session; a full fetch with
epoch -1 gets no session. A transcript line is the top-level error, whether a session id came
back (ids are random), and for each partition answered its index, error, high watermark, log
start offset and record bytes.
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker_support import BrokerProcess
from kafka_jvm import KafkaBroker, require_kafka

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from fuzz_broker_frames import encode_request  # noqa: E402 - needs the path above

TOPIC = "fs"
FETCH = 1


class Client:
    """One connection speaking Fetch v12."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.correlation = 0

    def fetch(self, session_id: int, epoch: int, partitions: dict[int, int],
              forgotten: tuple[int, ...] = ()) -> tuple:
        from pylogctl.broker.protocol import _kio, build

        kio = _kio()
        cls = kio.index.load_request_schema(FETCH, 12)
        body = build(cls, {
            "replica_id": -1, "max_wait": 50, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": session_id, "session_epoch": epoch,
            "topics": [{"topic": TOPIC, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": offset,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20} for p, offset in partitions.items()]}]
            if partitions else [],
            "forgotten_topics_data": [{"topic": TOPIC, "partitions": list(forgotten)}]
            if forgotten else [],
            "rack_id": ""})
        self.correlation += 1
        frame = encode_request(FETCH, 12, self.correlation, body, client_id="fs")
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        answer = self._read(struct.unpack(">i", self._read(4))[0])
        response_cls = kio.index.load_response_schema(FETCH, 12)
        _, pos = kio.serial.entity_reader(response_cls.__header_schema__)(answer, 0)
        response, _ = kio.serial.entity_reader(response_cls)(answer, pos)
        self.session_id = int(response.session_id)
        return (int(response.error_code), response.session_id != 0, sorted(
            (int(p.partition_index), int(p.error_code), int(p.high_watermark),
             int(p.log_start_offset), len(p.records or b""))
            for t in response.responses for p in t.partitions))

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            assert chunk, "the broker closed the connection"
            out += chunk
        return out


def _produce(bootstrap: str, partition: int, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0,
                         "enable.idempotence": False})
    for value in values:
        # now, not a fixed time: the real broker's retention would delete an old record
        producer.produce(TOPIC, value, key=b"k", partition=partition,
                         timestamp=time.time_ns() // 1_000_000)
        assert producer.flush(30) == 0  # one batch per record: the same sizes on both


def transcript(bootstrap: str) -> list[tuple]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(30)
    _produce(bootstrap, 0, [b"a", b"b", b"c"])
    client = Client(bootstrap)
    lines = [client.fetch(0, 0, {0: 0, 1: 0})]  # full: opens a session
    session = client.session_id
    lines.append(client.fetch(session, 1, {}))  # partition 0 still at offset 0: records again
    lines.append(client.fetch(session, 2, {0: 3}))  # caught up: nothing changed, nothing sent
    _produce(bootstrap, 1, [b"d"])
    lines.append(client.fetch(session, 3, {}))  # partition 1 has a record and a new HW
    lines.append(client.fetch(session, 3, {}))  # the epoch was used: refused
    lines.append(client.fetch(session + 1 if session < 2**31 - 1 else 1, 1, {}))  # no session
    lines.append(client.fetch(session, 4, {1: 1}))  # partition 1 caught up too
    lines.append(client.fetch(session, 5, {}, forgotten=(0, 1)))  # empty: session closed
    lines.append(client.fetch(session, 6, {}))  # the closed session is gone
    lines.append(client.fetch(0, -1, {0: 1, 1: 0}))  # full, sessionless
    return lines


def test_fetch_sessions_answer_as_kafkas_do(tmp_path):
    require_kafka()
    kafka = KafkaBroker(log_dir=tmp_path / "kafka" / "logs", work_dir=tmp_path / "kafka")
    kafka.format()
    kafka.start()
    try:
        theirs = transcript(kafka.bootstrap)
    finally:
        kafka.stop()
    with BrokerProcess(tmp_path / "pylogctl" / "logs") as broker:
        ours = transcript(broker.bootstrap)
    for n, (mine, kafkas) in enumerate(zip(ours, theirs)):
        assert mine == kafkas, n
    assert theirs[0][1] and [line[0] for line in theirs] == [0, 0, 0, 0, 71, 70, 0, 0, 70, 0]
    assert [p[0] for p in theirs[1][2]] == [0] and theirs[2][2] == [] and \
        [p[0] for p in theirs[3][2]] == [1]
