"""Thousands of random and mutated request frames against a ``pylogctl broker start`` process
(a subprocess, so a crash of the interpreter -- e.g. an abort in kio's native reader -- shows
as a dead process, not a dead test run).

Frames come from tests/fuzz/fuzz_broker_frames.py: valid requests for every advertised API and
version built with kio, then mutated (flips, boundary ints, truncation, splices, wrong api
keys and versions, lying client id lengths, huge compact lengths), and raw random bytes. Their
size prefixes sometimes lie too (negative, beyond socket.request.max.bytes, shorter or longer
than the frame), and some connections carry two or three frames. For each connection, every
response must parse as the answer to one of the frames the broker could read from it, in
order, with its correlation id; anything else must end in the broker closing the connection.
After every batch a fresh connection gets well-formed ApiVersions and Metadata answers; at the
end a real client still produces and consumes, and the broker never logged an error (an
exception escaping a handler is logged as one before its connection is closed).
"""

from __future__ import annotations

import random
import socket
import struct
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from broker_support import BrokerProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import fuzz_broker_frames as frames  # noqa: E402 - needs the path above

SEED = 20240607
CONNECTIONS = 3000
BATCH = 150
MAX_REQUEST_BYTES = 100 * 1024 * 1024  # the CLI's socket.request.max.bytes
READ_TIMEOUT = 8.0


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return bytes(out)


def read_frames(sock: socket.socket) -> tuple[list[bytes], bool]:
    """Every response frame until the broker closes; and whether it did (False: it kept the
    connection silent for READ_TIMEOUT, i.e. a request is parked)."""
    responses = []
    try:
        while True:
            head = _read_exact(sock, 4)
            if head is None:
                return responses, True
            body = _read_exact(sock, struct.unpack(">i", head)[0])
            if body is None:
                return responses, True
            responses.append(body)
    except socket.timeout:
        return responses, False
    except ConnectionResetError:
        return responses, True


def readable_frames(stream: bytes) -> list[bytes]:
    """The frames the broker reads from ``stream`` before it closes the connection."""
    out, pos = [], 0
    while pos + 4 <= len(stream):
        (size,) = struct.unpack_from(">i", stream, pos)
        if size < 0 or size > MAX_REQUEST_BYTES or pos + 4 + size > len(stream):
            break
        out.append(stream[pos + 4:pos + 4 + size])
        pos += 4 + size
    return out


def with_size(rng: random.Random, frame: bytes) -> bytes:
    """``frame`` behind its size, which now and then lies."""
    roll = rng.random()
    if roll < 0.85:
        return struct.pack(">i", len(frame)) + frame
    lie = rng.choice((-1, -0x80000000, MAX_REQUEST_BYTES + 1, 0x7FFFFFFF, 0,
                      max(len(frame) - rng.randint(1, 8), 0), len(frame) + rng.randint(1, 64)))
    return struct.pack(">i", lie) + frame


def connection_streams(rng: random.Random) -> list[tuple[bytes, str]]:
    """What each fuzz connection sends, generated up front so the run is reproducible."""
    seeds: list[bytes] = []
    streams = []
    correlation_id = 0
    for _ in range(CONNECTIONS):
        parts, whats = [], []
        for _ in range(rng.choice((1, 1, 1, 1, 2, 3))):
            correlation_id += 1
            frame, what = frames.any_frame(rng, seeds, correlation_id)
            if what.startswith("valid") and len(seeds) < 200:
                seeds.append(frame)
            parts.append(with_size(rng, frame))
            whats.append(what)
        if rng.random() < 0.02:
            parts[-1] = parts[-1][:rng.randrange(len(parts[-1]) + 1)]  # cut mid-frame
            whats.append("cut")
        streams.append((b"".join(parts), " | ".join(whats)))
    return streams


def exchange(port: int, stream: bytes, what: str) -> tuple[str | None, bool]:
    """Send one connection's bytes; returns (what was wrong with the answers, parked)."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT) as sock:
        try:
            sock.sendall(stream)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed already (e.g. a bad size prefix): nothing was answered
        responses, closed = read_frames(sock)
    requests = readable_frames(stream)
    j = 0
    for response in responses:
        while j < len(requests) and frames.check_response(requests[j], response) is not None:
            j += 1
        if j == len(requests):
            reason = frames.check_response(requests[-1], response) if requests else "no frame"
            return f"{what}: unexpected response {response[:64].hex()} ({reason})", not closed
        j += 1
    return None, not closed


def health_check(port: int) -> None:
    """ApiVersions v3 and Metadata v12 on a fresh connection: well-formed, no error."""
    from pylogctl.broker.protocol import _kio, build

    kio = _kio()
    api_versions = build(kio.index.load_request_schema(18, 3),
                         {"client_software_name": "health", "client_software_version": "1"})
    metadata = build(kio.index.load_request_schema(3, 12),
                     {"topics": [{"name": "fuzz-a", "topic_id": uuid.UUID(int=0)}],
                      "allow_auto_topic_creation": True,
                      "include_topic_authorized_operations": False})
    requests = [frames.encode_request(18, 3, 1, api_versions),
                frames.encode_request(3, 12, 2, metadata)]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"".join(struct.pack(">i", len(r)) + r for r in requests))
        answers = [_read_exact(sock, struct.unpack(">i", _read_exact(sock, 4))[0])
                   for _ in requests]
    for request, answer in zip(requests, answers):
        assert frames.check_response(request, answer) is None
    cls = kio.index.load_response_schema(3, 12)
    header, pos = kio.serial.entity_reader(cls.__header_schema__)(answers[1], 0)
    body, _ = kio.serial.entity_reader(cls)(answers[1], pos)
    assert [(t.name, int(t.error_code)) for t in body.topics] == [("fuzz-a", 0)]
    assert [b.node_id for b in body.brokers] == [1]


def produce_and_consume(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "enable.idempotence": True})
    for i in range(20):
        producer.produce("after-fuzz", key=b"k%d" % i, value=b"v%d" % i)
    assert producer.flush(30) == 0
    del producer
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "after-fuzz",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["after-fuzz"])
    values = []
    try:
        for _ in range(300):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
            if len(values) == 20:
                break
    finally:
        consumer.close()
    assert sorted(values) == sorted(b"v%d" % i for i in range(20))  # 3 partitions


def test_fuzzed_frames_are_answered_or_closed(tmp_path):
    rng = random.Random(SEED)
    streams = connection_streams(rng)
    with BrokerProcess(tmp_path / "logs", "--num-partitions", "3") as broker:
        health_check(broker.port)
        problems, parked = [], 0
        with ThreadPoolExecutor(8) as pool:
            for start in range(0, len(streams), BATCH):
                batch = streams[start:start + BATCH]
                for problem, was_parked in pool.map(lambda s: exchange(broker.port, *s), batch):
                    parked += was_parked
                    if problem is not None:
                        problems.append(problem)
                assert broker.proc.poll() is None, "".join(broker.stderr[-40:])
                health_check(broker.port)
        produce_and_consume(broker.bootstrap)
        assert broker.proc.poll() is None
    assert problems == []
    assert parked <= CONNECTIONS // 200  # a handful of fetches or joins waiting long
    errors = [line for line in broker.stderr if " ERROR " in line or "Traceback" in line]
    assert errors == []


def test_findings_of_the_fuzz(tmp_path):
    """What the fuzz found, pinned: a compact array length near 2^32 (kio's native reader
    would allocate it and abort the process) and a null non-nullable array (handlers would
    raise on it) close their connection without an error logged; CreateTopics asking for
    more than 10,000 partitions gets POLICY_VIOLATION instead of the broker creating them."""
    from pylogctl.broker.protocol import _kio, build

    kio = _kio()
    header = struct.pack(">hhih", 3, 12, 1, 4) + b"fuzz" + b"\x00"
    huge_array = header + b"\xff\xff\xff\xff\x0f" + b"\x00" * 16
    null_groups = struct.pack(">hhih", 15, 0, 2, 4) + b"fuzz" + struct.pack(">i", -1)
    create = build(kio.index.load_request_schema(19, 7), {
        "topics": [{"name": "too-many", "num_partitions": 100_000, "replication_factor": 1,
                    "assignments": [], "configs": []}],
        "timeout": 30_000, "validate_only": False})
    create_frame = frames.encode_request(19, 7, 3, create)
    with BrokerProcess(tmp_path / "logs") as broker:
        for bad in (huge_array, null_groups):
            with socket.create_connection(("127.0.0.1", broker.port), timeout=30) as sock:
                sock.sendall(struct.pack(">i", len(bad)) + bad)
                assert read_frames(sock) == ([], True)
            health_check(broker.port)
        with socket.create_connection(("127.0.0.1", broker.port), timeout=30) as sock:
            sock.sendall(struct.pack(">i", len(create_frame)) + create_frame)
            (answer,) = [_read_exact(sock, struct.unpack(">i", _read_exact(sock, 4))[0])]
        assert frames.check_response(create_frame, answer) is None
        cls = kio.index.load_response_schema(19, 7)
        _, pos = kio.serial.entity_reader(cls.__header_schema__)(answer, 0)
        body, _ = kio.serial.entity_reader(cls)(answer, pos)
        assert [(t.name, int(t.error_code)) for t in body.topics] == [("too-many", 44)]
        assert not (tmp_path / "logs" / "too-many-0").exists()
    assert [line for line in broker.stderr if " ERROR " in line or "Traceback" in line] == []
