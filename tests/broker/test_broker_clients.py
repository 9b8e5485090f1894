"""``pylogctl broker`` with real clients over loopback: kafka-python, aiokafka and
confluent-kafka (librdkafka) produce keyed records, consume them in a group and commit; the
broker restarts on the same log dir and the group resumes from its committed offset; then the
offline commands read the broker's files: ``consumer-groups --describe`` shows the committed
offsets with no lag, ``recover --check`` finds nothing to do, ``dump-segment`` verifies every
batch.

Waiting is on the clients' own blocking calls (flush, poll with a deadline) -- no sleeps."""

from __future__ import annotations

import asyncio
import time

import pytest

from broker_support import round_trip_across_restart

DEADLINE_S = 30


# -- kafka-python -------------------------------------------------------------------------------
def test_kafka_python_round_trip(tmp_path, cli):
    from kafka import KafkaConsumer, KafkaProducer

    log_dir = tmp_path / "logs"

    def produce(bootstrap: str, first: int, count: int) -> None:
        producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True,
                                 compression_type="gzip")
        futures = [producer.send("kp", key=f"key-{i}".encode(), value=f"value-{i}".encode())
                   for i in range(first, first + count)]
        producer.flush(DEADLINE_S)
        assert all(f.get(DEADLINE_S).offset >= 0 for f in futures)
        producer.close()

    def consume(bootstrap: str, count: int) -> set[tuple[bytes, bytes]]:
        consumer = KafkaConsumer("kp", bootstrap_servers=bootstrap, group_id="kp-group",
                                 auto_offset_reset="earliest", enable_auto_commit=False)
        got: set[tuple[bytes, bytes]] = set()
        deadline = time.monotonic() + DEADLINE_S
        while len(got) < count and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                got.update((r.key, r.value) for r in records)
        consumer.commit()
        consumer.close()
        return got

    def session(bootstrap: str, first: int, count: int) -> set[tuple[bytes, bytes]]:
        produce(bootstrap, first, count)
        return consume(bootstrap, count)

    round_trip_across_restart(cli, log_dir, session, group="kp-group", topic="kp", partitions=3)


# -- aiokafka -----------------------------------------------------------------------------------
def test_aiokafka_round_trip(tmp_path, cli):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    log_dir = tmp_path / "logs"

    async def session(bootstrap: str, first: int, count: int) -> set[tuple[bytes, bytes]]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
        await producer.start()
        try:
            for i in range(first, first + count):
                await producer.send_and_wait("ak", key=f"key-{i}".encode(),
                                             value=f"value-{i}".encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer("ak", bootstrap_servers=bootstrap, group_id="ak-group",
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        got: set[tuple[bytes, bytes]] = set()
        try:
            async with asyncio.timeout(DEADLINE_S):
                while len(got) < count:
                    for records in (await consumer.getmany(timeout_ms=1000)).values():
                        got.update((r.key, r.value) for r in records)
            await consumer.commit()
        finally:
            await consumer.stop()
        return got

    round_trip_across_restart(cli, log_dir, lambda *a: asyncio.run(session(*a)),
                              group="ak-group", topic="ak", partitions=2)


# -- confluent-kafka (librdkafka) ---------------------------------------------------------------
@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_confluent_kafka_round_trip(tmp_path, cli, codec):
    ck = pytest.importorskip("confluent_kafka")
    log_dir = tmp_path / "logs"

    def produce(bootstrap: str, first: int, count: int) -> None:
        producer = ck.Producer({"bootstrap.servers": bootstrap, "compression.type": codec,
                                "enable.idempotence": True, "linger.ms": 5})
        errors: list = []
        for i in range(first, first + count):
            producer.produce("ck", key=f"key-{i}".encode(), value=f"value-{i}".encode(),
                             on_delivery=lambda e, m: errors.append(e) if e else None)
        assert producer.flush(DEADLINE_S) == 0 and errors == []

    def consume(bootstrap: str, count: int) -> set[tuple[bytes, bytes]]:
        consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "ck-group",
                                "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe(["ck"])
        got: set[tuple[bytes, bytes]] = set()
        deadline = time.monotonic() + DEADLINE_S
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                got.add((message.key(), message.value()))
        consumer.commit(asynchronous=False)
        consumer.close()
        return got

    def session(bootstrap: str, first: int, count: int) -> set[tuple[bytes, bytes]]:
        produce(bootstrap, first, count)
        return consume(bootstrap, count)

    round_trip_across_restart(cli, log_dir, session, group="ck-group", topic="ck", partitions=2)
    r = cli("dump-segment", *sorted(str(p) for p in log_dir.glob("ck-*/*.log")))
    assert f"compresscodec: {codec}" in r.out
