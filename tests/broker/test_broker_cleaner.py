"""The broker's log cleaner compacts live logs with the offline ``pylogctl compact`` code: many
updates to a few keys (a compacted topic, and offset commits in ``__consumer_offsets``) shrink,
below the active segment, to the latest record per key; ``cleaner-offset-checkpoint`` records
the progress; consumers and the group coordinator read the same data before and after; and
after a clean stop the offline commands find a clean log dir, nothing left to clean, and the
same committed offsets. Real clients (confluent-kafka); waiting polls with a deadline."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path

import pytest

from broker_support import BrokerThread
from pylogctl.broker.replica_manager import OFFSETS_TOPIC
from pylogctl.storage.cleaner.cleaner_config import CleanerConfig
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_dir import CLEANER_OFFSET_CHECKPOINT

ck = pytest.importorskip("confluent_kafka")

from log_task_support import (DEADLINE_S, consume_from_earliest, now_ms,  # noqa: E402
                              produce, wait_for)

TOPIC = "profiles"
GROUP = "billing"
FAST_CLEANER = CleanerConfig(backoff_ms=50, dedupe_buffer_size=4 * 1024 * 1024)
COMPACTED = LogConfig(cleanup_policy=("compact",), segment_bytes=4096,
                      min_cleanable_dirty_ratio=0.01, file_delete_delay_ms=0)


def cleaned_to_active(b: BrokerThread, topic: str, partition: int) -> bool:
    """Whether the cleaner's checkpoint reached the active segment (all it may clean)."""
    def check() -> bool:
        assert b.broker is not None
        m = b.broker.log_manager
        active = m.logs[(topic, partition)].log.active_segment.base_offset
        return active > 0 and m.cleaner_checkpoints.get((topic, partition)) == active
    return b.call(check)


def records_below(part: Path, end: int) -> list[tuple[int, bytes | None, bytes | None]]:
    """``(offset, key, value)`` of the data records below offset ``end``, from the files."""
    out = []
    for path in sorted(part.glob("*.log")):
        with FileRecords(path) as records:
            for batch in records.batches():
                if not batch.is_control:
                    out += [(r.offset, r.key, r.value) for r in batch.records()
                            if r.offset < end]
    return out


def checkpointed(log_dir: Path) -> dict[tuple[str, int], int]:
    lines = (log_dir / CLEANER_OFFSET_CHECKPOINT).read_text().splitlines()[2:]
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines)}


def test_compacted_topic_keeps_the_latest_value_per_key(tmp_path: Path, cli) -> None:
    keys = [b"user-%d" % k for k in range(8)]
    updates = [(keys[i % len(keys)], b"%s=v%03d" % (keys[i % len(keys)], i) + b"." * 60,
                now_ms()) for i in range(400)]
    with BrokerThread(tmp_path, log_config=COMPACTED, cleaner=FAST_CLEANER) as b:
        offsets = produce(b.bootstrap, TOPIC, updates)
        assert offsets == list(range(400))
        wait_for(lambda: cleaned_to_active(b, TOPIC, 0), "the cleaner to reach the active "
                 "segment")
        assert b.broker is not None
        active = b.call(lambda: b.broker.log_manager.logs[(TOPIC, 0)].log.active_segment
                        .base_offset)
        part = tmp_path / f"{TOPIC}-0"
        below = records_below(part, active)
        latest_below = {}
        for offset, (key, value, _) in enumerate(updates[:active]):
            latest_below[key] = (offset, key, value)
        assert sorted(below) == sorted(latest_below.values())
        read = consume_from_earliest(b.bootstrap, TOPIC, 400)
        expected = sorted(latest_below.values()) + [(o, *updates[o][:2])
                                                    for o in range(active, 400)]
        assert read == [(o, v) for o, _, v in expected]
        latest = {v.split(b"=")[0]: v for _, v in read}
        assert latest == {key: value for key, value, _ in updates}
    assert checkpointed(tmp_path)[(TOPIC, 0)] == active
    r = cli("recover", "--check", tmp_path)
    assert r.code == 0, r.out + r.err
    r = cli("dump-segment", *sorted(str(p) for p in part.glob("*.log")))
    assert r.code == 0 and "isvalid: false" not in r.out
    r = cli("compact", tmp_path, "--config", "cleanup.policy=compact", "--config",
            "min.cleanable.dirty.ratio=0.01", "-o", "json")
    assert r.code == 0, r.out + r.err
    plans = [s for s in json.loads(r.out) if s["partition"] == f"{TOPIC}-0"]
    assert [(p["clean"], p["firstDirtyOffset"]) for p in plans] == [(False, active)]


def _commit(consumer, offset: int) -> None:
    consumer.commit(offsets=[ck.TopicPartition("orders", 0, offset)], asynchronous=False)


def _committed(bootstrap: str) -> int:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP})
    try:
        return consumer.committed([ck.TopicPartition("orders", 0)], DEADLINE_S)[0].offset
    finally:
        consumer.close()


def test_consumer_offsets_compacted_while_committing(tmp_path: Path, cli) -> None:
    """Repeated commits of one group shrink to one offset record per key in the segments
    below the active one; the coordinator, a restarted broker and the offline describe all
    report the last commit."""
    with BrokerThread(tmp_path, cleaner=FAST_CLEANER) as b:
        produce(b.bootstrap, "orders", [(None, b"o", now_ms())] * 5)
        consumer = ck.Consumer({"bootstrap.servers": b.bootstrap, "group.id": GROUP,
                                "enable.auto.commit": False})
        try:
            _commit(consumer, 1)
            assert b.broker is not None
            manager = b.broker.log_manager

            def small_segments() -> list[int]:
                """Roll __consumer_offsets every KB and clean it eagerly (as a topic config
                change would); returns its non-empty partitions."""
                used = []
                for (topic, partition), loaded in manager.logs.items():
                    if topic == OFFSETS_TOPIC:
                        loaded.log.config = dataclasses.replace(
                            loaded.log.config, segment_bytes=1024,
                            min_cleanable_dirty_ratio=0.01, file_delete_delay_ms=0)
                        if loaded.log.log_end_offset:
                            used.append(partition)
                return used

            [partition] = b.call(small_segments)
            for offset in range(2, 202):
                _commit(consumer, offset)
        finally:
            consumer.close()
        wait_for(lambda: cleaned_to_active(b, OFFSETS_TOPIC, partition),
                 "the cleaner to reach the active segment of __consumer_offsets")
        active = b.call(lambda: manager.logs[(OFFSETS_TOPIC, partition)].log.active_segment
                        .base_offset)
        below = records_below(tmp_path / f"{OFFSETS_TOPIC}-{partition}", active)
        assert below and len({key for _, key, _ in below}) == len(below)
        assert active > 10 * len(below)  # most commits were compacted away
        assert _committed(b.bootstrap) == 201
    r = cli("consumer-groups", tmp_path, "--describe", "--group", GROUP, "-o", "json")
    assert r.code == 0, r.err
    assert [row["currentOffset"] for row in json.loads(r.out) if row["topic"] == "orders"] \
        == [201]
    r = cli("recover", "--check", tmp_path)
    assert r.code == 0, r.out + r.err
    with BrokerThread(tmp_path) as b:
        assert _committed(b.bootstrap) == 201


def test_reads_during_cleaning_see_the_produced_records(tmp_path: Path) -> None:
    """While the cleaner swaps segments under them, consumers reading the partition again and
    again (CRCs checked) only ever get, at each offset, the record produced there."""
    keys = [b"k%d" % k for k in range(5)]
    updates = [(keys[i % 5], b"v%04d" % i + b"." * 60, now_ms()) for i in range(1500)]
    produced: dict[int, bytes] = {}
    seen: list[tuple[int, bytes]] = []
    errors: list[str] = []
    reads = 0
    with BrokerThread(tmp_path, log_config=COMPACTED,
                      cleaner=dataclasses.replace(FAST_CLEANER, backoff_ms=10)) as b:
        done = threading.Event()

        def produce_all() -> None:
            try:
                for start in range(0, len(updates), 100):
                    offsets = produce(b.bootstrap, TOPIC, updates[start:start + 100])
                    produced.update(zip(offsets, (v for _, v, _ in updates[start:start + 100])))
            finally:
                done.set()

        producer = threading.Thread(target=produce_all)
        producer.start()
        consumer = ck.Consumer({"bootstrap.servers": b.bootstrap, "group.id": "during",
                                "check.crcs": True, "enable.partition.eof": True,
                                "topic.metadata.refresh.interval.ms": 100})
        try:
            while not done.is_set() or reads < 3:
                consumer.assign([ck.TopicPartition(TOPIC, 0, ck.OFFSET_BEGINNING)])
                deadline = time.monotonic() + DEADLINE_S
                while time.monotonic() < deadline:
                    message = consumer.poll(0.5)
                    if message is None:
                        continue
                    if message.error() is not None:
                        if message.error().code() == ck.KafkaError._PARTITION_EOF:
                            break
                        errors.append(str(message.error()))
                        continue
                    seen.append((message.offset(), message.value()))
                reads += 1
        finally:
            consumer.close()
            producer.join(DEADLINE_S)
        assert errors == []
        assert seen and all(produced[o] == v for o, v in seen)
        wait_for(lambda: cleaned_to_active(b, TOPIC, 0), "the cleaner to catch up")
