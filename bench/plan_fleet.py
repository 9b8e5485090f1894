"""Benchmark: planning a scan over a fleet's log dirs (issue 23: planning at scale).

Usage::

    python bench/plan_fleet.py [--brokers 20] [--partitions 2000] [--dir DIR] [--keep] [--s3]
                               [--replicas all|one]

Writes ``--brokers`` log dirs of ``--partitions`` partition dirs each (every partition on 3
brokers, one tiny segment with empty indexes: ``tests/pipeline/pipeline_support.write_fleet``),
then times ``plan_scan`` over the dir holding them, reading every replica and choosing one per
partition, and counts the directory listings and ``stat`` calls it made. It never fails on a
timing; ``tests/pipeline/test_pipeline_plan_scale.py`` pins the counts.

With ``--s3`` the fleet is a bucket of s3proxy on loopback (``tests/s3_server.py``; seeded into
the server's storage once and cached under the tests' cache dir), planned from its URL; it
prints the requests the server was sent, by verb, and the bytes it served.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "pipeline"), str(ROOT / "tests"), str(ROOT)]

from pipeline_support import write_fleet  # noqa: E402
from pylogctl.pipeline.plan import plan_scan  # noqa: E402


def counted_plan(root: Path, replicas: str) -> tuple[float, int, Counter]:
    calls: Counter = Counter()
    real = {name: getattr(os, name) for name in ("scandir", "stat")}

    def spy(name):
        def call(*args, **kwargs):
            calls[name] += 1
            return real[name](*args, **kwargs)
        return call
    for name in real:
        setattr(os, name, spy(name))
    try:
        started = time.perf_counter()
        plan = plan_scan([str(root)], replicas=replicas)
        elapsed = time.perf_counter() - started
    finally:
        for name, fn in real.items():
            setattr(os, name, fn)
    return elapsed, len(plan.splits), calls


def s3_plan(brokers: int, partitions: int, modes: list[str]) -> None:
    from kafka_jvm import TEST_CACHE
    from s3_server import BUCKET, S3Server, missing_reason
    from pylogctl.storage import filesystems, remote_mirror

    if missing_reason():
        sys.exit(f"plan_fleet: {missing_reason()}")
    root = TEST_CACHE / f"s3-fleet-{brokers}x{partitions}"
    server = S3Server(root)
    if not (root / "seeded").exists():
        shutil.rmtree(root / "objects", ignore_errors=True)
        started = time.perf_counter()
        server.seed(BUCKET, "fleet", lambda folder: write_fleet(folder, brokers, partitions))
        (root / "seeded").write_text("")
        print(f"seeded s3://{BUCKET}/fleet: {brokers} log dirs x {partitions} partition dirs "
              f"in {time.perf_counter() - started:.1f} s")
    server.start()
    os.environ.update(server.env)
    listing = [0.0]
    real_list_tree = filesystems.list_tree

    def timed_list_tree(url: str) -> dict[str, int]:
        started = time.perf_counter()
        try:
            return real_list_tree(url)
        finally:
            listing[0] += time.perf_counter() - started
    filesystems.list_tree = timed_list_tree
    try:
        for replicas in modes:
            remote_mirror._mirrors.clear()
            server.proxy.reset()
            listing[0] = 0.0
            started = time.perf_counter()
            plan = plan_scan([f"s3://{BUCKET}/fleet"], replicas=replicas)
            elapsed = time.perf_counter() - started
            verbs = ", ".join(f"{n} {verb}" for verb, n in sorted(server.proxy.requests.items()))
            print(f"plan s3 replicas={replicas}: {elapsed:.2f} s ({listing[0]:.2f} s listing), "
                  f"{len(plan.splits)} splits, "
                  f"{server.proxy.request_count} requests ({verbs}), "
                  f"{server.proxy.bytes_served:,} bytes served")
    finally:
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--brokers", type=int, default=20)
    ap.add_argument("--partitions", type=int, default=2000)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--s3", action="store_true", help="plan from a bucket of s3proxy")
    ap.add_argument("--replicas", choices=("all", "one"), action="append",
                    help="plan reading every replica, choosing one (default: both)")
    args = ap.parse_args()
    modes = args.replicas or ["all", "one"]
    if args.s3:
        return s3_plan(args.brokers, args.partitions, modes)
    root = args.dir or Path(tempfile.mkdtemp(prefix="pylogctl-bench-fleet-")) / "fleet"
    started = time.perf_counter()
    unique = write_fleet(root, args.brokers, args.partitions)
    dirs = args.brokers * args.partitions
    print(f"wrote {args.brokers} log dirs x {args.partitions} partition dirs ({unique} "
          f"partitions x 3 replicas) in {time.perf_counter() - started:.1f} s")
    try:
        for replicas in modes:
            elapsed, splits, calls = counted_plan(root, replicas)
            print(f"plan replicas={replicas}: {elapsed:.2f} s, {splits} splits, "
                  f"{calls['scandir']} listings ({calls['scandir'] / dirs:.2f} per partition "
                  f"dir), {calls['stat']} stat calls")
    finally:
        if not args.keep:
            shutil.rmtree(root.parent if args.dir is None else root)


if __name__ == "__main__":
    main()
