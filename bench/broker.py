"""Benchmark: ``pylogctl broker`` against the real Apache Kafka broker, in the same run, with
two clients: librdkafka (confluent-kafka) and Kafka's own Java perf tools
(``kafka-producer-perf-test``, ``kafka-consumer-perf-test``); librdkafka's mock cluster
(``test.mock.num.brokers``) stays as the ceiling of what the client alone can do.

Usage::

    python bench/broker.py [--messages 300000] [--sizes 100,1024] [--partitions 4]
                           [--repeat 3] [--clients librdkafka,java] [--no-kafka]
                           [--max-mib 512] [--plot bench/broker-throughput.png]
                           [--dir /tmp/pylogctl-bench-broker] [--keep]

    # the plot of docs/benchmarks.md: throughput over value sizes
    python bench/broker.py --sizes 100,1024,10240,102400 --plot bench/broker-throughput.png

For each value size, client and round, on every target: a producer (acks=all, no
compression; librdkafka with ``linger.ms`` 5, the Java producer with its defaults) sends
``--messages`` records (fewer for large values: at most ``--max-mib`` MiB of values) and
flushes; then a new group member reads them all back, timed from its first record
(librdkafka) or by the tool's own fetch time (``fetch.nMsg.sec``: the group join is not the
broker's throughput). Topics are created before the clock starts, with
``--partitions`` partitions everywhere.

Both brokers run as they are deployed, in their own process, on log dirs under ``--dir``
(the same disk): ``pylogctl broker start``, and Kafka 4.4 in KRaft combined mode with the JVM
options of ``kafka-server-start.sh`` (1 GiB heap, G1) and the broker's default thread counts.
The Java tools run with a full JIT (not the test suite's quick-start flags). Prints msgs/s and
MB/s (value bytes), and the ratios pylogctl/Kafka (target: at least 1.0) and pylogctl/mock,
best of ``--repeat``; never fails on a timing. The log dirs are deleted unless ``--keep``.
``--plot`` draws MB/s over value size, pylogctl against Kafka, per client and direction
(matplotlib: the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "broker"))
sys.path.insert(0, str(ROOT / "tests"))

from deployed_kafka import DeployedKafka, run_tool, wait_for_leaders  # noqa: E402

MOCK_PARTITIONS = 4  # librdkafka's mock cluster auto-creates topics with 4 partitions


def _failures(failed: list[str]):
    """A delivery callback that keeps only the errors (a failed record is not throughput)."""
    def report(error, _message) -> None:
        if error is not None:
            failed.append(str(error))
    return report


def produce(ck, config: dict, topic: str, messages: int, size: int) -> float:
    """Records/s to produce and flush ``messages`` records with ``size``-byte values."""
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
    return messages / (time.perf_counter() - start)


def consume(ck, config: dict, topic: str, group: str) -> float:
    """Records/s for a new group member to read every record the topic still holds, timed
    from the first one. The mock cluster drops old message sets of a large partition (its low
    watermark moves), so the records to read are counted from the watermarks."""
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
    return seen / elapsed


def create_topic(ck, config: dict, topic: str, partitions: int, mock: bool) -> None:
    """Create ``topic`` and wait until every partition has a leader (the mock only
    auto-creates: CreateTopics times out on it)."""
    if not mock:
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient(config)
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(60)
    if not wait_for_leaders(ck.Producer(config), topic):
        raise RuntimeError(f"topic {topic} was not created")


def java_produce(bootstrap: str, topic: str, messages: int, size: int) -> float:
    out = run_tool("kafka-producer-perf-test", "--topic", topic, "--num-records", str(messages),
                "--record-size", str(size), "--throughput", "-1", "--command-property",
                f"bootstrap.servers={bootstrap}", "acks=all")
    last = [ln for ln in out.splitlines() if "records sent" in ln][-1]
    return float(re.search(r"([\d.]+) records/sec", last).group(1))


def java_consume(bootstrap: str, topic: str, messages: int) -> float:
    out = run_tool("kafka-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic,
                "--num-records", str(messages), "--group", f"perf-{topic}")
    lines = [ln for ln in out.splitlines() if ln.strip()]
    header = [h.strip() for h in lines[-2].split(",")]
    values = [v.strip() for v in lines[-1].split(",")]
    return float(values[header.index("fetch.nMsg.sec")])


def messages_for(args, size: int) -> int:
    """``--messages``, or fewer for large values: at most ``--max-mib`` of values a round."""
    return max(1000, min(args.messages, args.max_mib * 2**20 // size))


def plot(results: dict, sizes: list[int], path: Path, title: str) -> None:
    """Throughput (MB/s of values) over value size, pylogctl against Kafka, one panel per
    direction, one line per broker and client."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, panels = plt.subplots(1, 2, figsize=(11, 4.5), sharex=True)
    styles = {"pylogctl": "-", "kafka": "--"}  # the mock's figures are not a broker's
    markers = {"librdkafka": "o", "java": "s"}
    for i, (panel, what) in enumerate(zip(panels, ("produce", "consume"))):
        for (target, client) in sorted({(t, c) for (_, c, t) in results if t != "mock"}):
            points = [(size, results[(size, client, target)][i] * size / 1e6)
                      for size in sizes if (size, client, target) in results]
            if points:
                xs, ys = zip(*points)
                panel.plot(xs, ys, styles.get(target, "-"), marker=markers.get(client, "o"),
                           label=f"{target}, {client}")
        panel.set_xscale("log")
        panel.set_xticks(sizes, [f"{s} B" if s < 1024 else f"{s // 1024} KiB" for s in sizes])
        panel.set_xlabel("value size")
        panel.set_ylabel("MB/s of values")
        panel.set_title(what)
        panel.grid(True, alpha=0.3)
    panels[0].legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def run_round(ck, target: str, bootstrap: str, client: str, args, size: int,
              round_: int) -> tuple[float, float]:
    """Produce and consume rates (records/s) of one round."""
    config = {"bootstrap.servers": bootstrap}
    topic = f"bench-{client}-{size}-{round_}"
    create_topic(ck, config, topic, args.partitions, target == "mock")
    messages = messages_for(args, size)
    if client == "java":
        return (java_produce(bootstrap, topic, messages, size),
                java_consume(bootstrap, topic, messages))
    return (produce(ck, config, topic, messages, size),
            consume(ck, config, topic, f"g-{topic}"))


def start_kafka(root: Path) -> DeployedKafka:
    kafka = DeployedKafka(log_dir=root / "kafka" / "logs", work_dir=root / "kafka")
    kafka.format()
    return kafka.start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=300_000)
    parser.add_argument("--sizes", default="100,1024")
    parser.add_argument("--max-mib", type=int, default=512,
                        help="fewer messages for large values: at most this many MiB a round")
    parser.add_argument("--plot", type=Path,
                        help="write a PNG of throughput over value sizes (needs matplotlib)")
    parser.add_argument("--partitions", type=int, default=MOCK_PARTITIONS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", default="librdkafka,java")
    parser.add_argument("--no-kafka", action="store_true",
                        help="leave the real broker (and the Java tools) out")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/pylogctl-bench-broker"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    import confluent_kafka as ck
    from broker_support import BrokerProcess
    from kafka_jvm import KAFKA_VERSION, missing_reason

    sizes = [int(s) for s in args.sizes.split(",")]
    clients = args.clients.split(",")
    use_kafka = not args.no_kafka and missing_reason() is None
    if not use_kafka:
        clients = [c for c in clients if c != "java"]
        print(f"real Kafka left out: {missing_reason() or '--no-kafka'}")
    print(f"python {platform.python_version()}, {platform.machine()}, confluent-kafka "
          f"{ck.version()[0]}, librdkafka {ck.libversion()[0]}, Kafka {KAFKA_VERSION}; "
          f"{args.messages} messages, {args.partitions} partitions, best of {args.repeat}")
    shutil.rmtree(args.dir, ignore_errors=True)
    # A mock cluster lives inside the client that asks for it: this producer holds it, and
    # the others connect to its brokers' loopback addresses.
    holder = ck.Producer({"test.mock.num.brokers": 1})
    brokers = holder.list_topics(timeout=10).brokers.values()
    targets = {"mock": ",".join(f"{b.host}:{b.port}" for b in brokers)}
    ours = BrokerProcess(args.dir / "logs", "--num-partitions", str(args.partitions)).start()
    targets["pylogctl"] = ours.bootstrap
    kafka = start_kafka(args.dir) if use_kafka else None
    results: dict[tuple[int, str, str], tuple[float, float]] = {}
    if kafka is not None:
        targets["kafka"] = kafka.bootstrap
    try:
        for size in sizes:
            for client in clients:
                best: dict[str, tuple[float, float]] = {}
                for round_ in range(args.repeat):
                    for name, bootstrap in targets.items():
                        if client == "java" and name == "mock":
                            continue  # the mock serves librdkafka only
                        p, c = run_round(ck, name, bootstrap, client, args, size, round_)
                        old = best.get(name, (0.0, 0.0))
                        best[name] = (max(old[0], p), max(old[1], c))
                results.update({(size, client, name): rates for name, rates in best.items()})
                print(f"\nvalue size {size} B, {client} client")
                for i, what in enumerate(("produce", "consume")):
                    for name, rates in best.items():
                        print(f"  {what:8s} {name:9s} {rates[i]:10,.0f} msgs/s  "
                              f"{rates[i] * size / 1e6:8.1f} MB/s")
                    for anchor in ("kafka", "mock"):
                        if anchor in best:
                            ratio = best["pylogctl"][i] / best[anchor][i]
                            print(f"  {what:8s} pylogctl/{anchor} throughput ratio {ratio:.2f}")
        if args.plot:
            plot(results, sizes, args.plot,
                 f"pylogctl broker vs Apache Kafka {KAFKA_VERSION}, {platform.machine()}, "
                 f"{os.cpu_count()} cores; acks=all, {args.partitions} partitions, best of "
                 f"{args.repeat}")
            print(f"plot written to {args.plot}")
    finally:
        ours.stop()
        if kafka is not None:
            kafka.stop()
        holder.flush(5)
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
