"""Clients for the broker's background-task tests (retention, cleaner): produce to partition
0 with explicit timestamps, ListOffsets earliest, read from the beginning, and waiting on a
condition with a deadline."""

from __future__ import annotations

import time
from typing import Callable

import confluent_kafka as ck

DEADLINE_S = 30


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def wait_for(predicate: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def produce(bootstrap: str, topic: str, values: list[tuple[bytes | None, bytes, int]],
            per_batch: int = 10) -> list[int]:
    """``(key, value, timestamp)`` records to partition 0, a flush every ``per_batch`` (so
    batches stay small next to the segments); returns their offsets."""
    producer = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    offsets: list[int] = []
    errors: list = []

    def report(err, msg) -> None:
        errors.append(err) if err else offsets.append(msg.offset())

    for i, (key, value, ts) in enumerate(values):
        producer.produce(topic, key=key, value=value, partition=0, timestamp=ts,
                         on_delivery=report)
        if (i + 1) % per_batch == 0:
            assert producer.flush(DEADLINE_S) == 0
    assert producer.flush(DEADLINE_S) == 0 and errors == []
    return sorted(offsets)


def earliest(bootstrap: str, topic: str) -> int:
    """The log start offset as a client sees it (ListOffsets, earliest)."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        low, _ = consumer.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10)
        return low
    finally:
        consumer.close()


def consume_from_earliest(bootstrap: str, topic: str, end: int) -> list[tuple[int, bytes]]:
    """Every ``(offset, value)`` from the beginning of partition 0 up to ``end``."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "reader",
                            "enable.auto.commit": False})
    consumer.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])
    out: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + DEADLINE_S
    try:
        while (not out or out[-1][0] < end - 1) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                out.append((message.offset(), message.value()))
    finally:
        consumer.close()
    return out
