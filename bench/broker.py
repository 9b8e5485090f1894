"""Benchmark: ``pylogctl broker`` throughput under librdkafka (confluent-kafka), against
librdkafka's own mock cluster (``test.mock.num.brokers``) in the same run.

Usage::

    python bench/broker.py [--messages 300000] [--sizes 100,1024] [--partitions 4]
                           [--repeat 3] [--dir /tmp/pylogctl-bench-broker] [--keep]

For each value size and round: a producer (``linger.ms`` 5, acks=all, no compression) sends
``--messages`` keyed records and flushes; then a group consumer (``auto.offset.reset``
earliest) reads them all back, timed from its first record (the group join is not the
broker's throughput, and the mock's join waits out a rebalance). The topic is created before
the clock starts, with the mock's auto-create partition count (4) on both.

The broker runs as ``pylogctl broker start`` in its own process, as it is deployed; the mock
cluster runs inside the client process (C threads, no GIL), keeps records in memory and is
therefore the ceiling of what the client itself can do here: the ratios say how much of the
client's speed the broker leaves. Prints msgs/s, MB/s (value bytes) and the ratios (best of
``--repeat``; the targets are at least 1.0 for consume and 0.5 for produce); never fails on a
timing. The log dir is deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "broker"))


MOCK_PARTITIONS = 4  # librdkafka's mock cluster auto-creates topics with 4 partitions


def _failures(failed: list[str]):
    """A delivery callback that keeps only the errors (a failed record is not throughput)."""
    def report(error, _message) -> None:
        if error is not None:
            failed.append(str(error))
    return report


def produce(ck, config: dict, topic: str, messages: int, size: int) -> float:
    """Seconds to produce and flush ``messages`` records with ``size``-byte values."""
    failed: list[str] = []
    producer = ck.Producer({**config, "linger.ms": 5, "acks": "all",
                            "queue.buffering.max.messages": 1_000_000,
                            "error_cb": lambda e: failed.append(str(e))})
    value = b"v" * size
    start = time.perf_counter()
    for i in range(messages):
        while True:
            try:
                producer.produce(topic, key=b"key-%08d" % i, value=value,
                                 on_delivery=_failures(failed))
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError("flush did not finish")
    if failed:
        raise RuntimeError(f"{len(failed)} produce errors, first: {failed[0]}")
    return time.perf_counter() - start


def consume(ck, config: dict, topic: str, group: str) -> tuple[float, int]:
    """``(seconds, records)`` for a new group member to read every record the topic still
    holds, timed from the first one. The mock cluster drops old message sets of a large
    partition (its low watermark moves), so the records to read are counted from the
    watermarks rather than assumed."""
    consumer = ck.Consumer({**config, "group.id": group, "auto.offset.reset": "earliest",
                            "enable.auto.commit": False})
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    expected = 0
    for index in partitions:
        low, high = consumer.get_watermark_offsets(ck.TopicPartition(topic, index), timeout=10)
        expected += high - low
    consumer.subscribe([topic])
    seen = 0
    start = None
    deadline = time.perf_counter() + 300
    while seen < expected and time.perf_counter() < deadline:
        for message in consumer.consume(10_000, 1.0):
            if message.error() is None:
                if start is None:
                    start = time.perf_counter()
                seen += 1
    elapsed = time.perf_counter() - (start or 0.0)
    consumer.close()
    if seen < expected:
        raise RuntimeError(f"consumed {seen} of {expected} from {config['bootstrap.servers']}")
    return elapsed, seen


def create_topic(ck, config: dict, topic: str) -> None:
    """Auto-create ``topic`` (a metadata request; CreateTopics times out on the mock) and
    wait until every partition has a leader."""
    producer = ck.Producer(config)
    deadline = time.perf_counter() + 30
    while time.perf_counter() < deadline:
        meta = producer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and meta.partitions and all(
                p.leader >= 0 for p in meta.partitions.values()):
            return
        time.sleep(0.1)
    raise RuntimeError(f"topic {topic} was not created")


def run_target(ck, config: dict, args, size: int, round_: int) -> tuple[float, float]:
    """Produce and consume rates (records/s) of one round."""
    topic = f"bench-{size}-{round_}"
    create_topic(ck, config, topic)
    p = produce(ck, config, topic, args.messages, size)
    c, consumed = consume(ck, config, topic, f"g-{topic}")
    return args.messages / p, consumed / c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=300_000)
    parser.add_argument("--sizes", default="100,1024")
    parser.add_argument("--partitions", type=int, default=MOCK_PARTITIONS,
                        help="partitions of the broker's auto-created topics (the mock's "
                        "are 4)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/pylogctl-bench-broker"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    import confluent_kafka as ck
    from broker_support import BrokerProcess

    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"python {platform.python_version()}, confluent-kafka {ck.version()[0]}, "
          f"librdkafka {ck.libversion()[0]}; {args.messages} messages, "
          f"{args.partitions} partitions")
    shutil.rmtree(args.dir, ignore_errors=True)
    # A mock cluster lives inside the client that asks for it: this producer holds it, and
    # the others connect to its brokers' loopback addresses.
    holder = ck.Producer({"test.mock.num.brokers": 1})
    brokers = holder.list_topics(timeout=10).brokers.values()
    mock_config = {"bootstrap.servers": ",".join(f"{b.host}:{b.port}" for b in brokers)}
    broker = BrokerProcess(args.dir / "logs", "--num-partitions", str(args.partitions)).start()
    try:
        ours_config = {"bootstrap.servers": broker.bootstrap}
        for size in sizes:
            best: dict[str, tuple[float, float]] = {}
            for round_ in range(args.repeat):
                for name, config in (("mock", mock_config), ("broker", ours_config)):
                    p, c = run_target(ck, config, args, size, round_)
                    old = best.get(name, (0.0, 0.0))
                    best[name] = (max(old[0], p), max(old[1], c))
            print(f"\nvalue size {size} B")
            for i, what in enumerate(("produce", "consume")):
                for name in ("mock", "broker"):
                    rate = best[name][i]
                    print(f"  {what:8s} {name:7s} {rate:10,.0f} msgs/s  {rate * size / 1e6:8.1f} MB/s")
                ratio = best["broker"][i] / best["mock"][i]
                print(f"  {what:8s} broker/mock throughput ratio {ratio:.2f}")
    finally:
        broker.stop()
        holder.flush(5)
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
