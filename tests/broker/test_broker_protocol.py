"""The network layer with hand-built frames (independent of the protocol library): the KIP-511
ApiVersions fallback, per-connection ordering of pipelined requests, the request size limit,
and malformed or unknown requests closing only their own connection -- plus a bounded smoke
run of mutated frames after which the broker still serves."""

from __future__ import annotations

import random
import socket
import struct

import pytest

from broker_support import BrokerThread
from wire import compact_string

TIMEOUT = 10


def request(api_key: int, version: int, correlation_id: int, body: bytes = b"",
            flexible: bool = False) -> bytes:
    header = struct.pack(">hhi", api_key, version, correlation_id) + struct.pack(">h", 4) + \
        b"test"
    if flexible:
        header += b"\x00"
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock: socket.socket) -> bytes | None:
    """One response frame, or None when the broker closed the connection."""
    head = _read(sock, 4)
    if head is None:
        return None
    return _read(sock, struct.unpack(">i", head)[0])


def _read(sock: socket.socket, n: int) -> bytes | None:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def api_versions_v0(frame: bytes) -> tuple[int, int, dict[int, tuple[int, int]]]:
    correlation_id, error, count = struct.unpack_from(">ihi", frame)
    keys = {}
    for i in range(count):
        key, lo, hi = struct.unpack_from(">hhh", frame, 10 + 6 * i)
        keys[key] = (lo, hi)
    return correlation_id, error, keys


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerThread(tmp_path_factory.mktemp("logs"),
                      socket_request_max_bytes=64 * 1024) as b:
        yield b


def connect(broker) -> socket.socket:
    return socket.create_connection(("127.0.0.1", broker.port), timeout=TIMEOUT)


def test_api_versions_v0_lists_the_supported_apis(broker):
    with connect(broker) as s:
        s.sendall(request(18, 0, 7))
        correlation_id, error, keys = api_versions_v0(read_frame(s))
    assert (correlation_id, error) == (7, 0)
    assert keys[18] == (0, 4) and keys[1][0] == 4
    # Produce is advertised from v0 (KAFKA-18659: old librdkafka compresses only then) ...
    assert keys[0][0] == 0
    assert {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 22} <= set(keys)


def test_newer_api_versions_gets_unsupported_version_in_a_v0_body(broker):
    body = compact_string("test-client") + compact_string("9.9") + b"\x00"
    with connect(broker) as s:
        s.sendall(request(18, 99, 11, body, flexible=True))
        correlation_id, error, keys = api_versions_v0(read_frame(s))
        assert (correlation_id, error) == (11, 35) and keys[18] == (0, 4)
        s.sendall(request(18, 3, 12, body, flexible=True))  # the retry at our version
        frame = read_frame(s)
    assert struct.unpack_from(">ih", frame) == (12, 0)  # header v0 even for v3


def test_pipelined_requests_are_answered_in_order(broker):
    with connect(broker) as s:
        s.sendall(b"".join(request(18, 0, i) for i in range(20)))
        assert [api_versions_v0(read_frame(s))[0] for _ in range(20)] == list(range(20))


@pytest.mark.parametrize("frame", [
    struct.pack(">i", 10 * 1024 * 1024) + b"x" * 16,  # over socket.request.max.bytes
    struct.pack(">i", -5),  # a negative size
    struct.pack(">i", 3) + b"abc",  # too short for a header
    request(9999, 0, 1),  # an unknown API
    request(3, 999, 1),  # an unknown Metadata version
    request(0, 2, 1, b"\xff\xff" + b"\x00" * 10),  # ... but Produce below v3 is refused
    request(3, 12, 1, b"\xff\xff\xff", flexible=True),  # a body that does not parse
])
def test_bad_frames_close_only_their_connection(broker, frame):
    with connect(broker) as bad, connect(broker) as good:
        bad.sendall(frame)
        assert read_frame(bad) is None
        good.sendall(request(18, 0, 3))
        assert api_versions_v0(read_frame(good))[:2] == (3, 0)


def test_mutated_frames_never_stop_the_broker(broker):
    """Random mutations of valid requests: each is answered or its connection closed, and a
    fresh connection is served afterwards (a bounded smoke run; tests/fuzz goes further)."""
    rng = random.Random(7)
    seeds = [request(18, 0, 1), request(3, 1, 2, struct.pack(">i", 0)),
             request(10, 0, 3, struct.pack(">h", 2) + b"gg"),
             request(3, 12, 4, b"\x01\x00\x00\x00", flexible=True)]
    for _ in range(150):
        frame = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(4, len(frame))
            frame[position] = rng.randrange(256)
        if rng.random() < 0.3:
            frame = frame[:rng.randrange(4, len(frame) + 1)]
            frame[0:4] = struct.pack(">i", len(frame) - 4)
        with connect(broker) as s:
            s.sendall(bytes(frame))
            s.shutdown(socket.SHUT_WR)
            while read_frame(s) is not None:
                pass
    with connect(broker) as s:
        s.sendall(request(18, 0, 5))
        assert api_versions_v0(read_frame(s))[:2] == (5, 0)
