"""Benchmark: ``pylogctl broker`` throughput under librdkafka (confluent-kafka), against
librdkafka's own mock cluster (``test.mock.num.brokers``) in the same run.

Usage::

    python bench/broker.py [--messages 100000] [--sizes 100,1024] [--partitions 3]
                           [--repeat 1] [--dir /tmp/pylogctl-bench-broker] [--keep]

For each value size: a producer (``linger.ms`` 5, acks=all, no compression) sends
``--messages`` keyed records and flushes; then a group consumer (``auto.offset.reset``
earliest) reads them all back. Both are timed against the broker (in this process's event loop
thread, on loopback, on a fresh log dir) and against the mock cluster, which keeps records in
memory and is therefore the ceiling of what the client itself can do here: the ratios say how
much of the client's speed the broker leaves. Prints msgs/s, MB/s (value bytes) and the ratios
(best of ``--repeat``); never fails on a timing. The log dir is deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "broker"))


def produce(ck, config: dict, topic: str, messages: int, size: int) -> float:
    """Seconds to produce and flush ``messages`` records with ``size``-byte values."""
    producer = ck.Producer({**config, "linger.ms": 5, "acks": "all",
                            "queue.buffering.max.messages": 1_000_000})
    value = b"v" * size
    start = time.perf_counter()
    for i in range(messages):
        while True:
            try:
                producer.produce(topic, key=b"key-%08d" % i, value=value)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError("flush did not finish")
    return time.perf_counter() - start


def consume(ck, config: dict, topic: str, messages: int, group: str) -> float:
    """Seconds for a new group member to read ``messages`` records (join included)."""
    consumer = ck.Consumer({**config, "group.id": group, "auto.offset.reset": "earliest",
                            "enable.auto.commit": False})
    consumer.subscribe([topic])
    seen = 0
    start = time.perf_counter()
    deadline = start + 300
    while seen < messages and time.perf_counter() < deadline:
        for message in consumer.consume(10_000, 1.0):
            if message.error() is None:
                seen += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    if seen < messages:
        raise RuntimeError(f"consumed {seen} of {messages}")
    return elapsed


def run_target(ck, name: str, config: dict, args, size: int, round_: int) -> tuple[float, float]:
    topic = f"bench-{size}-{round_}"
    # Both auto-create the topic on first produce: the broker with --partitions, the mock
    # cluster with its own default (CreateTopics against it timed out here).
    p = produce(ck, config, topic, args.messages, size)
    c = consume(ck, config, topic, args.messages, f"g-{topic}")
    return p, c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sizes", default="100,1024")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/pylogctl-bench-broker"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    import confluent_kafka as ck
    from broker_support import BrokerThread

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
    broker = BrokerThread(args.dir / "logs", num_partitions=args.partitions).start()
    try:
        ours_config = {"bootstrap.servers": broker.bootstrap}
        for size in sizes:
            best: dict[str, tuple[float, float]] = {}
            for round_ in range(args.repeat):
                for name, config in (("mock", mock_config), ("broker", ours_config)):
                    p, c = run_target(ck, name, config, args, size, round_)
                    old = best.get(name, (float("inf"), float("inf")))
                    best[name] = (min(old[0], p), min(old[1], c))
            mb = args.messages * size / 1e6
            print(f"\nvalue size {size} B")
            for i, what in enumerate(("produce", "consume")):
                for name in ("mock", "broker"):
                    s = best[name][i]
                    print(f"  {what:8s} {name:7s} {s:7.2f} s  {args.messages / s:10,.0f} msgs/s"
                          f"  {mb / s:8.1f} MB/s")
                ratio = best["mock"][i] / best["broker"][i]
                print(f"  {what:8s} broker/mock throughput ratio {ratio:.2f}")
    finally:
        broker.stop()
        holder.flush(5)
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
