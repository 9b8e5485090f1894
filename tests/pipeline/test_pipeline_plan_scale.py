"""Planning a fleet's worth of log dirs costs one listing per directory, not a request per
file: pinned by counting the file system calls planning makes on a generated fleet (brokers
whose partitions each hold one tiny segment, replicated on three brokers), never by time.
``bench/plan_fleet.py`` times the same on 20 brokers x 2,000 partitions."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from pipeline_support import write_fleet
from pylogctl.pipeline.plan import plan_scan

BROKERS, PARTITIONS = 4, 30


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, int]:
    root = tmp_path_factory.mktemp("fleet")
    return root, write_fleet(root, BROKERS, PARTITIONS)


@pytest.fixture
def calls(monkeypatch) -> dict[str, Counter]:
    """The paths planning lists and stats (``os.stat``, which ``os.path`` tests use too)."""
    seen: dict[str, Counter] = {"scandir": Counter(), "stat": Counter()}
    for name in seen:
        real = getattr(os, name)

        def spy(path, *args, _real=real, _name=name, **kwargs):
            seen[_name][os.fspath(path)] += 1
            return _real(path, *args, **kwargs)
        monkeypatch.setattr(os, name, spy)
    return seen


def partition_dirs(root: Path) -> list[str]:
    return [str(p) for b in sorted(root.iterdir()) for p in sorted(b.iterdir()) if p.is_dir()]


def test_planning_every_replica_lists_each_partition_dir_once_and_stats_only_segments(
        fleet, calls):
    root, _ = fleet
    parts, log_dirs = partition_dirs(root), [str(b) for b in root.iterdir()]
    calls["scandir"].clear(), calls["stat"].clear()
    plan = plan_scan([str(root)], replicas="all")
    assert len(plan.splits) == len(parts) == BROKERS * PARTITIONS
    listed = calls["scandir"]
    assert all(listed[p] == 1 for p in parts)
    others = {p: n for p, n in listed.items() if p not in set(parts)}
    # the root and each log dir, a few times each: per broker, not per partition
    assert set(others) == {str(root), *log_dirs}
    assert sum(others.values()) <= 4 * (BROKERS + 1)
    stats = calls["stat"]
    segments = {p for p in stats if p.endswith(".log")}
    assert len(segments) == len(parts) and all(stats[p] == 1 for p in segments)
    # the log dirs' own files (meta.properties, checkpoints): per broker, not per partition
    assert sum(n for p, n in stats.items() if not p.endswith(".log")) <= 12 * (BROKERS + 1)


def test_choosing_one_replica_lists_each_partition_dir_at_most_twice(fleet, calls):
    root, unique = fleet
    parts = partition_dirs(root)
    calls["scandir"].clear()
    plan = plan_scan([str(root)])
    assert len(plan.splits) == unique
    assert max(calls["scandir"][p] for p in parts) <= 2
    assert sum(calls["scandir"][p] for p in parts) <= len(parts) + unique


# -- the same fleet in a bucket: requests counted by the S3 server's counting proxy --------------

S3_BROKERS, S3_PARTITIONS = 2, 334  # every partition on both: 1,003 keys per log dir, 2 pages


@pytest.fixture(scope="module")
def s3_fleet(s3_server) -> str:
    from s3_server import BUCKET

    return s3_server.seed(BUCKET, "plan-scale",
                          lambda folder: write_fleet(folder, S3_BROKERS, S3_PARTITIONS, 2))


def listing_requests() -> int:
    """The top level, then each log dir recursively, 1,000 keys a page."""
    keys = 3 * S3_PARTITIONS + 1  # a segment and its two indexes per partition dir, the meta
    return 1 + S3_BROKERS * -(-keys // 1000)


def test_planning_every_replica_from_a_bucket_costs_its_listings_and_the_log_dirs_files(
        s3_server, s3_fleet):
    s3_server.proxy.reset()
    plan = plan_scan([s3_fleet], replicas="all")
    assert len(plan.splits) == S3_BROKERS * S3_PARTITIONS
    # the listings and each log dir's meta.properties (a HEAD for its size, a GET): nothing
    # per partition dir
    assert s3_server.proxy.requests == {"GET": listing_requests() + S3_BROKERS,
                                        "HEAD": S3_BROKERS}


def test_choosing_one_replica_from_a_bucket_reads_each_copy_s_log_end_once(s3_server, s3_fleet):
    s3_server.proxy.reset()
    plan = plan_scan([s3_fleet])
    assert len(plan.splits) == S3_PARTITIONS
    # and per copy of a partition held by several log dirs, its last segment (a HEAD, a GET):
    # what decides among replicas; its empty indexes cost nothing
    copies = S3_BROKERS * S3_PARTITIONS
    assert s3_server.proxy.requests == {"GET": listing_requests() + S3_BROKERS + copies,
                                        "HEAD": S3_BROKERS + copies}
