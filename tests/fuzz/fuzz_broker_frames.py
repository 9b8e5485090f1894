#!/usr/bin/env python3
"""Fuzz the broker's request path (``SocketServer._process``: header peek, version check, kio
decode, the API's handler, response encode) in-process with random and mutated request
frames. Not part of the CI suite.

    python tests/fuzz/fuzz_broker_frames.py --seconds 60 [--seed N]
    python tests/fuzz/fuzz_broker_frames.py --atheris [libFuzzer flags, e.g. -max_total_time=60]

Seeds are valid requests for every API and version the broker advertises, built with kio from
field-aware random values (existing and unknown topics, small timeouts so handlers do not
park, real v2 record batches, idempotent ones too), and raw random bytes. Mutations
(:func:`mutate`): bit and byte flips, boundary int16/int32 overwrites, truncation, extension,
deleted or repeated chunks, splices of two requests, a different api key or version, client
ids whose length lies or is not UTF-8, huge varints anywhere and, found by walking the schema,
in place of a compact collection length.

Each frame must be refused with ``InvalidRequestError`` (the network layer closes the
connection), or answered with a response that parses back as the response of the frame's API
and version with its correlation id, or take longer than a second (a parked fetch or join:
cancelled). Anything else is a handler bug: the input is saved under
``tests/fuzz/crashes/broker-*`` and the traceback printed. Exit status 1 on any failure.
With ``--atheris`` the same check is a libFuzzer target (``TestOneInput``: one frame without
its size prefix), its seed corpus written to a temporary dir.

tests/broker/test_broker_fuzz.py imports the generators (:func:`valid_frame`,
:func:`mutate`, :func:`random_frame`, :func:`check_response`) to fuzz a broker process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import random
import struct
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]

TOPICS = ("fuzz-a", "fuzz-b", "fuzz-new", "__consumer_offsets", "bad topic!", "")
GROUPS = ("fuzz-group", "other-group", "")
TXN_IDS = ("fuzz-txn", "other-txn")
CONFIG_NAMES = ("segment.bytes", "cleanup.policy", "retention.ms", "max.message.bytes",
                "min.insync.replicas", "no.such.config")
BOUNDARY_16 = (0, 1, -1, 0x7FFF, -0x8000)
BOUNDARY_32 = (0, 1, -1, 0x7FFFFFFF, -0x80000000, 0x10000, 100 * 1024 * 1024)


# -- valid requests ----------------------------------------------------------------------------
def advertised() -> list[tuple[int, int]]:
    """Every (api key, version) the broker serves (the versions ApiVersions advertises below
    the served floor are refused, so they are the mutations' business)."""
    from pylogctl.broker.kafka_apis import SUPPORTED

    return [(key, v) for key, (_, lo, hi) in sorted(SUPPORTED.items())
            for v in range(lo, hi + 1)]


def record_batch(rng: random.Random) -> bytes:
    """One valid uncompressed v2 batch of 1-3 records, sometimes idempotent or transactional
    (its producer id is unknown to the broker, which must answer with an error code)."""
    from pylogctl.format.record_batch import encode_batch_header, encode_record

    count = rng.randint(1, 3)
    area = b"".join(encode_record(i, i, rng.choice((None, b"k%d" % i)), b"v" * rng.randint(0, 20))
                    for i in range(count))
    idempotent = rng.random() < 0.3
    now = int(time.time() * 1000)
    return encode_batch_header(
        base_offset=0, records_area=area, last_offset_delta=count - 1,
        partition_leader_epoch=-1,
        attributes=0x10 if idempotent and rng.random() < 0.3 else 0,
        base_timestamp=now, max_timestamp=now + count - 1,
        producer_id=rng.randint(0, 5) if idempotent else -1,
        producer_epoch=0 if idempotent else -1,
        base_sequence=rng.choice((0, 7)) if idempotent else -1, records_count=count)


def _string(rng: random.Random, name: str) -> str:
    if "topic" in name or name == "name":
        return rng.choice(TOPICS)
    if "group" in name and "instance" not in name:
        return rng.choice(GROUPS)
    if "transactional" in name:
        return rng.choice(TXN_IDS)
    if "protocol_type" in name:
        return "consumer"
    if "member" in name:
        return rng.choice(("", "fuzz-member"))
    if "value" in name:
        return rng.choice(("14", "1024", "compact", "delete", "-1", "x"))
    return rng.choice(("", "range", "x" * rng.randint(1, 40), "\u00e9\u4e2d"))


def _int(rng: random.Random, name: str, bits: int) -> int:
    if name == "acks":
        return rng.choice((-1, 0, 1, 1, -1, 2))
    if "partition" in name or name == "index":
        return rng.choice((0, 0, 1, 2, -1, 1000))
    if name == "num_partitions":
        return rng.choice((-1, 1, 2, 3, 0))
    if name == "replication_factor":
        return rng.choice((-1, 1, 3))
    if "timestamp" in name:
        return rng.choice((-1, -2, -3, 0, int(time.time() * 1000)))
    if "offset" in name:
        return rng.choice((0, 1, 5, -1, -2, 1 << 40))
    if "producer_id" in name:
        return rng.choice((-1, 0, 1, 1000))
    if "epoch" in name:
        return rng.choice((-1, 0, 1))
    if name in ("min_bytes",):
        return rng.choice((0, 1, 1 << 20))
    if "bytes" in name:
        return rng.choice((0, 1, 1024, 1 << 20, 0x7FFFFFFF))
    if "isolation" in name:
        return rng.choice((0, 1, 7))
    top = (1 << (bits - 1)) - 1
    return rng.choice((0, 1, -1, 2, 4, rng.randint(-top - 1, top)))


def _value(rng: random.Random, field: dataclasses.Field, kind: Any, depth: int) -> Any:
    from pylogctl.broker.protocol import _kio

    intro = _kio().serial._introspect
    name = field.name
    if intro.is_optional(field) and rng.random() < 0.1:
        return None
    if isinstance(kind, intro.EntityField):
        return _entity(rng, kind.type_, depth + 1)
    if isinstance(kind, intro.EntityTupleField):
        return tuple(_entity(rng, kind.type_, depth + 1)
                     for _ in range(rng.choice((0, 1, 1, 2, 3)) if depth < 4 else 0))
    kafka_type = field.metadata.get("kafka_type", "")
    if isinstance(kind, intro.PrimitiveTupleField):
        return tuple(_primitive(rng, name, kafka_type) for _ in range(rng.randint(0, 3)))
    return _primitive(rng, name, kafka_type)


def _primitive(rng: random.Random, name: str, kafka_type: str) -> Any:
    if kafka_type == "bool":
        return rng.random() < 0.5
    if kafka_type in ("int8", "int16", "int32", "int64"):
        return _int(rng, name, int(kafka_type[3:]))
    if kafka_type == "string":
        return _string(rng, name)
    if kafka_type == "bytes":
        return rng.randbytes(rng.randint(0, 16))
    if kafka_type == "records":
        return rng.choice((record_batch(rng), record_batch(rng) + record_batch(rng),
                           rng.randbytes(rng.randint(0, 80)), None))
    if kafka_type == "uuid":
        return rng.choice((uuid.UUID(int=0), uuid.UUID(int=rng.getrandbits(128))))
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        # short: a fetch or join that waits its whole timeout slows the fuzz down
        return datetime.timedelta(milliseconds=rng.choice((0, 0, 10, 100, 300, 6000)))
    if kafka_type == "datetime_i64":
        return datetime.datetime.now(datetime.timezone.utc)
    if kafka_type == "error_code":
        from kio.schema.errors import ErrorCode
        return ErrorCode(0)
    raise ValueError(f"no generator for kafka type {kafka_type!r} ({name})")


def _entity(rng: random.Random, cls: type, depth: int = 0) -> Any:
    from pylogctl.broker.protocol import _kio

    intro = _kio().serial._introspect
    return cls(**{f.name: _value(rng, f, intro.classify_field(f), depth)
                  for f in dataclasses.fields(cls)})


def encode_request(api_key: int, version: int, correlation_id: int, body: Any,
                   client_id: str | None = "fuzz") -> bytes:
    """A request frame without its size prefix."""
    from pylogctl.broker.protocol import _kio

    kio = _kio()
    cls = type(body)
    header_cls = cls.__header_schema__
    out = _Buffer()
    kio.serial.entity_writer(header_cls)(out, header_cls(
        request_api_key=api_key, request_api_version=version, correlation_id=correlation_id,
        client_id=client_id))
    kio.serial.entity_writer(cls)(out, body)
    return bytes(out.data)


class _Buffer:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> int:
        self.data += data
        return len(data)


def valid_frame(rng: random.Random, api_key: int, version: int, correlation_id: int) -> bytes:
    """A random valid request of ``api_key`` v``version`` (no size prefix)."""
    from pylogctl.broker.protocol import _kio

    cls = _kio().index.load_request_schema(api_key, version)
    client_id = rng.choice(("fuzz", "fuzz", None, "", "\u00e9" * 5))
    return encode_request(api_key, version, correlation_id, _entity(rng, cls), client_id)


def random_frame(rng: random.Random, correlation_id: int) -> bytes:
    """Random bytes, sometimes behind a plausible header (a known or unknown api key and a
    random version)."""
    body = rng.randbytes(rng.choice((0, 1, 3, 7, rng.randint(0, 300))))
    if rng.random() < 0.5:
        return body
    api_key = rng.choice((*range(0, 30), 67, 1000, -1, 0x7FFF))
    return struct.pack(">hhi", api_key, rng.randint(-2, 20), correlation_id) + body


# -- mutations -------------------------------------------------------------------------------
def _huge_uvarint(rng: random.Random) -> bytes:
    return rng.choice((b"\xff\xff\xff\xff\x0f", b"\xff\xff\xff\x7f", b"\x80\x80\x80\x80\x80\x01",
                       b"\xff" * 10, b"\x00"))


def mutate(rng: random.Random, frame: bytes, others: list[bytes]) -> tuple[bytes, list[str]]:
    """One to four mutations of a request frame (no size prefix); returns the names too."""
    data = bytearray(frame)
    names = []
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(("flip", "byte", "int16", "int32", "truncate", "extend", "delete",
                         "repeat", "splice", "version", "api_key", "client_id", "varint"))
        names.append(op)
        n = len(data)
        if op == "flip" and n:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(n)] ^= 1 << rng.randrange(8)
        elif op == "byte" and n:
            data[rng.randrange(n)] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
        elif op == "int16" and n >= 2:
            pos = rng.randrange(n - 1)
            data[pos:pos + 2] = struct.pack(">h", rng.choice(BOUNDARY_16))
        elif op == "int32" and n >= 4:
            pos = rng.randrange(n - 3)
            data[pos:pos + 4] = struct.pack(">i", rng.choice(BOUNDARY_32))
        elif op == "truncate" and n:
            del data[rng.randrange(n):]
        elif op == "extend":
            data += rng.randbytes(rng.randint(1, 64))
        elif op == "delete" and n:
            pos = rng.randrange(n)
            del data[pos:pos + rng.randint(1, 16)]
        elif op == "repeat" and n:
            pos = rng.randrange(n)
            data[pos:pos] = data[pos:pos + rng.randint(1, 32)]
        elif op == "splice" and others:
            other = rng.choice(others)
            cut = rng.randrange(len(other) + 1)
            data = data[:rng.randrange(n + 1)] + other[cut:]
        elif op == "version" and n >= 4:
            (version,) = struct.unpack_from(">h", data, 2)
            version = rng.choice((version - 1, version + 1, 0, -1, 99, rng.randint(0, 20)))
            data[2:4] = struct.pack(">h", max(-0x8000, min(version, 0x7FFF)))
        elif op == "api_key" and n >= 2:
            data[0:2] = struct.pack(">h", rng.choice((rng.randint(0, 70), -1, 0x7FFF, 4, 17)))
        elif op == "client_id" and n >= 10:
            (length,) = struct.unpack_from(">h", data, 8)
            data[8:10] = struct.pack(">h", rng.choice((-2, -1, 0x7FFF, min(length + 5, 0x7FFF),
                                                       max(length - 1, 0))))
            if rng.random() < 0.5 and n > 10:
                data[10:12] = b"\xff\xfe"  # not UTF-8
        elif op == "varint" and n > 10:
            pos = rng.randrange(10, n)
            huge = _huge_uvarint(rng)
            if rng.random() < 0.5:
                data[pos:pos + len(huge)] = huge
            else:
                data[pos:pos] = huge
    return bytes(data), names


def length_positions(frame: bytes) -> list[tuple[int, int]]:
    """Where the compact collection lengths of a valid flexible request are (start, end of
    each varint), found by walking its schema as pylogctl.broker.frame_check does."""
    from pylogctl.broker import frame_check as fc
    from pylogctl.broker.protocol import _kio

    kio = _kio()
    api_key, version = struct.unpack_from(">hh", frame)
    cls = kio.index.load_request_schema(api_key, version)
    if not cls.__flexible__:
        return []
    found: list[tuple[int, int]] = []

    def field(plan: Any, pos: int) -> int:
        kind, arg = plan
        if kind == "fixed":
            return pos + arg
        if kind == "varlen":
            n, end = fc._uvarint(frame, pos, len(frame))
            return end + max(n - 1, 0)
        if kind == "entity":
            return entity(arg, pos)
        if kind == "nullable":
            return pos + 1 if frame[pos] == 0xFF else entity(arg, pos + 1)
        n, end = fc._uvarint(frame, pos, len(frame))
        found.append((pos, end))
        for _ in range(max(n - 1, 0)):
            end = entity(arg, end) if kind == "entities" else field(arg, end)
        return end

    def entity(plan: Any, pos: int) -> int:
        for f in plan[0]:
            pos = field(f, pos)
        count, pos = fc._uvarint(frame, pos, len(frame))
        for _ in range(count):
            _, pos = fc._uvarint(frame, pos, len(frame))
            size, pos = fc._uvarint(frame, pos, len(frame))
            pos += size
        return pos

    _, start = kio.serial.entity_reader(cls.__header_schema__)(frame, 0)
    entity(fc._entity_plan(cls), start)
    return found


def huge_length(rng: random.Random, frame: bytes) -> bytes | None:
    """``frame`` with one of its compact collection lengths made huge (up to 2^32 - 2
    elements: kio's native reader would try to allocate them), or None if it has none."""
    positions = length_positions(frame)
    if not positions:
        return None
    start, end = rng.choice(positions)
    return frame[:start] + _huge_uvarint(rng) + frame[end:]


def any_frame(rng: random.Random, seeds: list[bytes], correlation_id: int) -> tuple[bytes, str]:
    """A frame for one fuzz step (no size prefix), and what it is."""
    roll = rng.random()
    if roll < 0.1:
        return random_frame(rng, correlation_id), "random"
    api_key, version = rng.choice(advertised())
    frame = valid_frame(rng, api_key, version, correlation_id)
    if roll < 0.25:
        return frame, f"valid {api_key}v{version}"
    if roll < 0.3:
        huge = huge_length(rng, frame)
        if huge is not None:
            return huge, f"{api_key}v{version} huge-length"
    mutated, names = mutate(rng, frame, seeds)
    return mutated, f"{api_key}v{version} " + ",".join(names)


# -- responses --------------------------------------------------------------------------------
DESCRIBE_TRANSACTIONS = 65


def check_response(request: bytes, response: bytes) -> str | None:
    """Why ``response`` (a frame without its size prefix) is not a well-formed answer to
    ``request`` (same), or None: it must parse completely as the response of the request's
    API and version (the KIP-511 v0 fallback for an ApiVersions newer than served) and carry
    its correlation id."""
    from pylogctl.broker.kafka_apis import SUPPORTED
    from pylogctl.broker.protocol import API_VERSIONS_KEY, UNSUPPORTED_VERSION, _kio

    kio = _kio()
    if len(request) < 8:
        return f"answered a request of {len(request)} bytes"
    api_key, version, correlation_id = struct.unpack_from(">hhi", request)
    entry = SUPPORTED.get(api_key)
    fallback = api_key == API_VERSIONS_KEY and not (entry[1] <= version <= entry[2])
    if entry is None or (not fallback and not entry[1] <= version <= entry[2]):
        return f"answered unsupported api {api_key} v{version}"
    cls = kio.index.load_response_schema(api_key, 0 if fallback else version)
    if api_key == DESCRIBE_TRANSACTIONS:
        # Kafka answers -1 for the start time of an id with no transaction running, which
        # kio's reader refuses (a timestamp); the frame is parsed with the -1 values zeroed
        response = response.replace(b"\xff" * 8, b"\0" * 8)
    try:
        # kio's readers return how many bytes they consumed
        header, pos = kio.serial.entity_reader(cls.__header_schema__)(response, 0)
        body, size = kio.serial.entity_reader(cls)(response, pos)
        pos += size
    except Exception as exc:  # noqa: BLE001 - any parse failure is the finding
        return f"response to {api_key}v{version} does not parse: {type(exc).__name__}: {exc}"
    if pos != len(response):
        return f"response to {api_key}v{version} has {len(response) - pos} trailing bytes"
    if header.correlation_id != correlation_id:
        return f"correlation id {header.correlation_id}, expected {correlation_id}"
    if fallback and body.error_code != UNSUPPORTED_VERSION:
        return f"ApiVersions v{version} fallback with error {body.error_code}"
    return None


# -- the in-process target ---------------------------------------------------------------------
class Target:
    """A started broker (on an ephemeral port, unused) whose ``SocketServer._process`` gets
    the frames; ``run`` returns None or why the frame exposed a bug."""

    PARK_SECONDS = 1.0

    def __init__(self, log_dir: Path) -> None:
        from pylogctl.broker import Broker, BrokerConfig
        from pylogctl.broker.group_metadata import GroupConfig

        self.loop = asyncio.new_event_loop()
        self.broker = Broker(BrokerConfig(
            log_dir=str(log_dir), port=0,
            group=GroupConfig(offsets_topic_partitions=2, initial_rebalance_delay_ms=0)))
        self.loop.run_until_complete(self.broker.start())
        for topic in TOPICS[:2]:
            self.broker.server.apis.replicas.create_topic(topic, 3)
        self.parked = self.refused = self.answered = 0

    def run(self, frame: bytes) -> str | None:
        from pylogctl.broker.kafka_apis import close_response_regions
        from pylogctl.broker.protocol import Connection, InvalidRequestError

        server = self.broker.server
        task = self.loop.create_task(server._process(frame, Connection("/fuzz")))
        try:
            response = self.loop.run_until_complete(asyncio.wait_for(task, self.PARK_SECONDS))
        except asyncio.TimeoutError:
            self.parked += 1
            return None
        except InvalidRequestError:
            self.refused += 1
            return None
        except Exception:  # noqa: BLE001 - what the network layer logs as unexpected
            return traceback.format_exc()
        self.answered += 1
        if response is None:
            return None
        try:
            encoded = b"".join(p if not hasattr(p, "fileno") else _read_region(p)
                               for p in response.parts)
        finally:
            close_response_regions(response.parts)
        (size,) = struct.unpack_from(">i", encoded)
        if size != len(encoded) - 4:
            return f"size prefix {size} for {len(encoded) - 4} bytes"
        return check_response(frame, encoded[4:])

    def close(self) -> None:
        self.loop.run_until_complete(self.broker.stop())
        self.loop.close()


def _read_region(region: Any) -> bytes:
    import os
    return os.pread(region.fileno, region.size, region.position)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--atheris" in argv:
        return run_atheris([a for a in argv if a != "--atheris"])
    import fuzz_support

    args = fuzz_support.parse_args(__doc__, argv)
    seed, rng = fuzz_support.start(args)
    print(f"fuzz_broker_frames: seed {seed}", flush=True)
    failures = inputs = 0
    seeds: list[bytes] = []
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory(prefix="pylogctl-fuzz-broker-") as tmp:
        target = Target(Path(tmp) / "logs")
        try:
            while time.monotonic() < deadline:
                frame, what = any_frame(rng, seeds, inputs)
                if len(seeds) < 200 and what.startswith("valid"):
                    seeds.append(frame)
                inputs += 1
                try:
                    with fuzz_support.time_limit(args.timeout):
                        problem = target.run(frame)
                except Exception as exc:  # noqa: BLE001
                    problem = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
                if problem is not None:
                    failures += 1
                    dest = fuzz_support.save_failure("broker", frame, {"what": what}, problem)
                    print(f"\nFAILURE ({what}) saved in {dest}:\n{problem}", flush=True)
        finally:
            target.close()
    print(f"inputs: {inputs} ({target.answered} answered, {target.refused} refused, "
          f"{target.parked} parked); failures: {failures}")
    return 1 if failures else 0


def run_atheris(argv: list[str]) -> int:
    import atheris

    rng = random.Random(0)
    tmp = Path(tempfile.mkdtemp(prefix="pylogctl-fuzz-broker-"))
    corpus = tmp / "corpus"
    corpus.mkdir()
    for i, (api_key, version) in enumerate(advertised()):
        (corpus / f"{api_key}-{version}").write_bytes(valid_frame(rng, api_key, version, i))
    target = Target(tmp / "logs")

    def test_one_input(data: bytes) -> None:
        problem = target.run(data)
        if problem is not None:
            raise AssertionError(problem)

    atheris.instrument_all()  # coverage feedback from every loaded module (kio, pylogctl)
    atheris.Setup([sys.argv[0], *argv, str(corpus)], test_one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
