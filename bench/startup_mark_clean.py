"""Benchmark: the real Kafka broker's start-up after a crash, with and without
``pylogctl recover --execute --mark-clean`` first.

Usage::

    python bench/startup_mark_clean.py [--size-mib 2048] [--partitions 4] [--segment-mib 256]
                                       [--threads 1,2] [--keep] [--whole-log]
                                       [--dir /tmp/pylogctl-bench-startup]

    # thousands of small partitions, as on a broker with many topics:
    python bench/startup_mark_clean.py --size-mib 1024 --partitions 1000 --segment-mib 1 \
                                       --whole-log

What it does, in one run:

1. Starts a real Kafka 4.4 broker (KRaft, ``tests/kafka_jvm.py``; the jars of
   ``tests/install-tools.sh``) and fills one topic of ``--partitions`` partitions with
   ``--size-mib`` MiB through Kafka's own ``ProducerPerformance`` (1 KiB records, lz4 off,
   ``acks=1``), segments of ``--segment-mib`` MiB, then SIGKILLs it: no ``.kafka_cleanshutdown``, recovery
   points behind the log ends, active indexes preallocated. Kafka flushes a segment when it
   rolls, so only the active segments are then behind the recovery point; ``--whole-log``
   also deletes ``recovery-point-offset-checkpoint`` (a broker killed before it first wrote
   it, or a lost file), so that every segment must be recovered.
2. Copies the dir twice (page cache warm for both) and:

   a) the floor: ``cat`` of every segment to ``/dev/null``;
   b) Kafka recovering it itself: the broker starts on copy A; its ``LogManager`` line
      ``Loaded N logs in X ms`` and the wall time until ``Kafka Server started``;
   c) ``pylogctl recover --execute --mark-clean --threads N`` on a copy per N of
      ``--threads`` (wall time, the CLI; Kafka 4's own default is 2 recovery threads per log
      dir, ``num.recovery.threads.per.data.dir``), then the broker starts on the last copy:
      the same two figures, and whether its log says it found the clean shutdown file and
      recovered no segment.

3. Both brokers must serve the same log end offsets (``kafka-get-offsets``).

Prints the figures and ratios (Kafka's own load time over the one after ``--mark-clean``;
pylogctl's recovery over Kafka's, and over the ``cat`` floor). Never fails on a timing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from deployed_kafka import DeployedKafka  # noqa: E402
from kafka_jvm import require_kafka, run_tool  # noqa: E402

TOPIC = "bench"
LOADED = re.compile(r"Loaded (\d+) logs in (\d+)ms")


def fill(log_dir: Path, work: Path, size_mib: int, partitions: int, segment_mib: int) -> None:
    broker = DeployedKafka(log_dir=log_dir, work_dir=work / "fill")
    broker.format()
    broker.start()
    try:
        broker.tool("kafka-topics", "--create", "--topic", TOPIC, "--partitions",
                    str(partitions), "--config", f"segment.bytes={segment_mib * 1024 * 1024}")
        records = size_mib * 1024 * 1024 // 1100  # ~1 KiB values plus record overhead
        out = run_tool("org.apache.kafka.tools.ProducerPerformance", "--topic", TOPIC,
                       "--num-records", str(records), "--record-size", "1024",
                       "--throughput", "-1", "--producer-props",
                       f"bootstrap.servers={broker.bootstrap}", "acks=1", "linger.ms=20",
                       "batch.size=262144", "compression.type=none", timeout=1800)
        if out.returncode != 0:
            raise SystemExit(f"ProducerPerformance failed:\n{out.stderr[-2000:]}")
        print(out.stdout.strip().splitlines()[-1], file=sys.stderr)
    finally:
        broker.kill()


def cat_floor(log_dir: Path) -> float:
    segments = sorted(str(p) for p in log_dir.glob(f"{TOPIC}-*/*.log"))
    started = time.perf_counter()
    subprocess.run(["cat", *segments], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def warm(log_dir: Path) -> None:
    """Page cache warm, and the copy just made written back, so that neither Kafka nor
    pylogctl is timed flushing it (--mark-clean flushes the file system)."""
    os.sync()
    cat_floor(log_dir)


def delete_indexes(log_dir: Path) -> int:
    """Every offset, time and transaction index of the topic gone, as after a crash that lost
    them (or an operator who deleted them): both tools must rebuild them from the segments."""
    doomed = [p for suffix in ("index", "timeindex", "txnindex")
              for p in log_dir.glob(f"{TOPIC}-*/*.{suffix}")]
    for path in doomed:
        path.unlink()
    return len(doomed)


def start(log_dir: Path, work: Path) -> dict:
    broker = DeployedKafka(log_dir=log_dir, work_dir=work)
    started = time.perf_counter()
    broker.start(timeout=1800)
    wall = time.perf_counter() - started
    try:
        offsets = broker.tool("kafka-get-offsets", "--topic", TOPIC, "--time", "-1").stdout
    finally:
        broker.stop()
    log = broker.log_text()
    loaded = [int(m.group(2)) for m in LOADED.finditer(log)]
    return {"wall": wall, "load_ms": sum(loaded), "ends": sorted(offsets.split()),
            "recovered_segments": log.count("Recovering unflushed segment")
            - log.count("Recovering unflushed segment 0. 0 recovered for __cluster_metadata"),
            "clean": "since clean shutdown file was found" in log}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=2048)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--segment-mib", type=int, default=256)
    parser.add_argument("--threads", default="1,2",
                        help="comma-separated recover --threads values, one copy each")
    parser.add_argument("--dir", default="/tmp/pylogctl-bench-startup")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--whole-log", action="store_true",
                        help="delete recovery-point-offset-checkpoint: every segment recovers")
    parser.add_argument("--delete-indexes", action="store_true",
                        help="delete every index file of the topic after the kill")
    args = parser.parse_args()
    require_kafka()
    root = Path(args.dir)
    shutil.rmtree(root, ignore_errors=True)
    source = root / "source"
    fill(source, root, args.size_mib, args.partitions, args.segment_mib)
    if args.whole_log:
        (source / "recovery-point-offset-checkpoint").unlink()
    deleted = delete_indexes(source) if args.delete_indexes else 0
    theirs = root / "kafka" / "logs"
    shutil.copytree(source, theirs)
    size = sum(p.stat().st_size for p in source.glob(f"{TOPIC}-*/*.log"))
    warm(theirs)
    floor = cat_floor(theirs)
    kafka = start(theirs, root / "kafka" / "broker")
    walls: dict[int, float] = {}
    for threads in [int(t) for t in args.threads.split(",")]:
        ours = root / f"pylogctl-{threads}" / "logs"
        shutil.copytree(source, ours)
        warm(ours)
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pylogctl", "recover", str(ours),
                               "--execute", "--mark-clean", "--threads", str(threads)],
                              capture_output=True, text=True)
        walls[threads] = time.perf_counter() - began
        if done.returncode != 0:
            raise SystemExit(f"pylogctl recover failed:\n{done.stderr[-2000:]}")
    marked = start(ours, ours.parent / "broker")
    recover_wall = min(walls.values())
    print(f"data: {size / 2**20:.0f} MiB in {args.partitions} partitions "
          f"(segments of {args.segment_mib} MiB), the broker SIGKILLed after filling them"
          f"{', its recovery points lost' if args.whole_log else ''}"
          f"{f', {deleted} index files deleted' if args.delete_indexes else ''}")
    print(f"{'measurement':58} {'seconds':>9}")
    print(f"{'cat of every segment (I/O floor)':58} {floor:9.2f}")
    print(f"{'Kafka recovers it itself (2 threads): LogManager load':58} "
          f"{kafka['load_ms'] / 1000:9.2f}")
    print(f"{'  ... start to serving (wall)':58} {kafka['wall']:9.2f}")
    for threads, wall in walls.items():
        label = f"pylogctl recover --execute --mark-clean --threads {threads} (CLI)"
        print(f"{label:58} {wall:9.2f}")
    print(f"{'Kafka after --mark-clean: LogManager load':58} {marked['load_ms'] / 1000:9.2f}")
    print(f"{'  ... start to serving (wall)':58} {marked['wall']:9.2f}")
    print(f"segments Kafka recovered: {kafka['recovered_segments']} on its own, "
          f"{marked['recovered_segments']} after --mark-clean "
          f"(clean shutdown file found: {marked['clean']})")
    print(f"same log end offsets served: {kafka['ends'] == marked['ends']}")
    load = kafka["load_ms"] / max(1, marked["load_ms"])
    speed = kafka["load_ms"] / 1000 / recover_wall
    print(f"ratios: Kafka's own log load / its load after --mark-clean = {load:.1f}x; "
          f"Kafka's own load / pylogctl recover = {speed:.2f}x (pylogctl faster above 1); "
          f"pylogctl recover / cat = {recover_wall / floor:.2f}x")
    print(f"TARGET {'MET' if speed >= 1.0 else 'MISSED'}: pylogctl recover (the CLI, start-up "
          f"included) at least as fast as Kafka's own log load ({speed:.2f}x)")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
