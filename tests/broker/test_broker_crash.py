"""SIGKILL during a produce storm loses no record acknowledged with acks=-1 (issue 7).

Three rounds on one log dir, each with its own seed: concurrent idempotent producers
(confluent-kafka, and kafka-python) write to a topic whose 16 KiB segments roll every few
hundred records, every delivery acknowledgement is recorded as (key, value, partition,
offset), and the broker is SIGKILLed at a random moment while they write -- often mid-roll. The
broker then restarts on the same dir (recovery of the unflushed segments) and every record
acknowledged in any round so far must be at its acknowledged offset with its value, exactly
once. After the last round the broker stops cleanly and ``recover --check`` and
``dump-segment`` find a clean, valid log.

Why it holds: a single-node broker acknowledges acks=-1 once the batch is written to the
segment file (pwrite, before the response); a SIGKILL keeps the page cache, so what was
written survives, and recovery only cuts what was never acknowledged.
"""

from __future__ import annotations

import collections
import random
import signal
import threading
import time
from pathlib import Path

from broker_support import BrokerProcess

TOPIC = "storm"
PARTITIONS = 3
ROUNDS = (11, 22, 33)  # one seed per round
CONFLUENT_PRODUCERS = 3

Acked = dict[tuple[int, int], tuple[bytes, bytes]]  # (partition, offset) -> (key, value)


def create_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1,
                                            config={"segment.bytes": "16384"})])
    futures[TOPIC].result(30)


class Storm:
    """Producers writing until stopped; ``acked`` gets every acknowledged record."""

    def __init__(self, bootstrap: str, round_seed: int) -> None:
        self.bootstrap = bootstrap
        self.seed = round_seed
        self.acked: Acked = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._confluent, args=(n,), daemon=True)
                        for n in range(CONFLUENT_PRODUCERS)]
        self.threads.append(threading.Thread(target=self._kafka_python, daemon=True))

    def __enter__(self) -> "Storm":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)
        assert not any(t.is_alive() for t in self.threads)

    def _record(self, key: bytes, value: bytes, partition: int, offset: int) -> None:
        with self.lock:
            assert (partition, offset) not in self.acked, "two records acked at one offset"
            self.acked[(partition, offset)] = (key, value)

    def _value(self, rng: random.Random, key: bytes) -> bytes:
        return key + b":" + rng.randbytes(rng.randint(10, 200)).hex().encode()

    def _confluent(self, n: int) -> None:
        from confluent_kafka import Producer

        rng = random.Random(self.seed * 100 + n)
        producer = Producer({"bootstrap.servers": self.bootstrap, "acks": "all",
                             "enable.idempotence": True, "linger.ms": rng.choice((0, 2, 5)),
                             "message.timeout.ms": 3000, "reconnect.backoff.max.ms": 200})

        def delivered(err, message) -> None:
            if err is None:
                self._record(message.key(), message.value(), message.partition(),
                             message.offset())
        i = 0
        while not self.stop.is_set():
            key = f"r{self.seed}-c{n}-{i}".encode()
            try:
                producer.produce(TOPIC, key=key, value=self._value(rng, key),
                                 on_delivery=delivered)
                i += 1
            except BufferError:
                pass
            producer.poll(0 if i % 50 else 0.001)
        producer.flush(10)  # the broker is dead: outstanding messages time out

    def _kafka_python(self) -> None:
        from kafka import KafkaProducer

        rng = random.Random(self.seed * 100 + 99)
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", linger_ms=2,
                                 request_timeout_ms=2000, max_block_ms=2000, retries=0,
                                 delivery_timeout_ms=3000)  # lets close() flush in time
        i = 0
        try:
            while not self.stop.is_set():
                key = f"r{self.seed}-k-{i}".encode()
                value = self._value(rng, key)
                try:
                    future = producer.send(TOPIC, key=key, value=value)
                except Exception:  # noqa: BLE001 - the broker is gone: stop sending
                    break
                future.add_callback(lambda md, k=key, v=value:
                                    self._record(k, v, md.partition, md.offset))
                i += 1
                if i % 100 == 0:
                    time.sleep(0.001)
        finally:
            producer.close(timeout=10)


def read_log(bootstrap: str) -> dict[tuple[int, int], tuple[bytes, bytes]]:
    """Every record of the topic by (partition, offset), read from the beginning."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "crash-check",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    ends = {p: consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=30)[1]
            for p in range(PARTITIONS)}
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    found: dict[tuple[int, int], tuple[bytes, bytes]] = {}
    deadline = time.monotonic() + 60
    try:
        while sum(1 for p, o in found if o == ends[p] - 1) < sum(1 for e in ends.values() if e):
            assert time.monotonic() < deadline, f"read {len(found)} of {sum(ends.values())}"
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            found[(message.partition(), message.offset())] = (message.key(), message.value())
    finally:
        consumer.close()
    return found


def check_acked(bootstrap: str, acked: Acked) -> None:
    log = read_log(bootstrap)
    missing = {at: kv for at, kv in acked.items() if log.get(at) != kv}
    assert not missing, f"{len(missing)} acked records lost or moved, e.g. " \
                        f"{next(iter(missing.items()))}"
    counts = collections.Counter(key for key, _ in log.values())
    duplicated = {key for key, _ in acked.values() if counts[key] > 1}
    assert not duplicated, f"{len(duplicated)} acked records written twice"


def test_sigkill_during_produce_storm_loses_no_acked_record(tmp_path: Path, cli) -> None:
    log_dir = tmp_path / "logs"
    acked: Acked = {}
    broker = BrokerProcess(log_dir).start()
    create_topic(broker.bootstrap)
    for seed in ROUNDS:
        rng = random.Random(seed)
        with Storm(broker.bootstrap, seed) as storm:
            delay = rng.uniform(0.3, 2.5)
            start = time.monotonic()
            while time.monotonic() - start < delay or not storm.acked:
                assert time.monotonic() - start < 60, "no acknowledgement in a minute"
                time.sleep(0.02)
            assert broker.stop(signal.SIGKILL) == -signal.SIGKILL
        assert storm.acked.keys().isdisjoint(acked)
        acked.update(storm.acked)
        assert not (log_dir / ".kafka_cleanshutdown").exists()
        broker = BrokerProcess(log_dir).start()  # recovers the killed broker's segments
        check_acked(broker.bootstrap, acked)
    assert broker.stop(signal.SIGTERM) == 0
    assert len(list(log_dir.glob(f"{TOPIC}-0/*.log"))) > 1  # segments rolled
    result = cli("recover", "--check", log_dir)
    assert result.code == 0, result.out + result.err
    result = cli("dump-segment", *sorted(str(p) for p in log_dir.glob(f"{TOPIC}-*/*.log")))
    assert result.code == 0, result.err
    assert "isvalid: false" not in result.out
