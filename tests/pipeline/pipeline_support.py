"""Helpers of the pipeline tests: reference filtering and small log dirs to damage."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterable

from pylogctl.pipeline.local_engine import LocalEngine
from pylogctl.pipeline.scan_filter import ScanFilter

# small corpus dirs that together cover every format the corpus has: magic 1 (xpx), gzip
# (node-logx), lz4 and LogAppendTime (spooldir), headers and multi-segment partitions with
# indexes (smartassets), transactions and control records (ksql), replicas of three brokers
# (kraft3-cluster)
ENGINE_DIRS = ("node-logx", "smartassets-connect", "spooldir-cp512", "xpx-2016",
               "ksql-kraft-2023", "kraft3-cluster")


def brute_force(rows: Iterable[dict[str, Any]], f: ScanFilter) -> list[dict[str, Any]]:
    """The rows a filter keeps, tested one by one with no skipping at all."""
    return [r for r in rows
            if f.wants_topic(r["topic"]) and f.wants_partition(r["partition"])
            and f.offset_from <= r["offset"] < f.offset_to
            and f.time_from <= r["timestamp"] < f.time_to
            and (f.key is None or r["key"] == f.key)
            and (f.value_contains is None or (r["value"] is not None
                                              and f.value_contains in r["value"]))]


def all_rows(path: Path | str, columns: tuple[str, ...] | None = None,
             **engine) -> list[dict[str, Any]]:
    return list(LocalEngine([str(path)], **engine).rows(ScanFilter(), columns))


def copy_dir(src: Path, dst: Path) -> Path:
    """A writable copy of a corpus dir (the corpus is read-only)."""
    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def write_fleet(root: Path, brokers: int, partitions: int, replication: int = 3,
                per_topic: int = 200) -> int:
    """A fleet's log dirs, ``brokers`` of them with ``partitions`` partition dirs each, every
    partition on ``replication`` consecutive brokers (as Kafka's rack-unaware assignment
    spreads them) and holding one tiny segment (a one-record batch) with its empty indexes;
    returns the number of distinct partitions."""
    from pylogctl.format.builder import build_batch

    batch = build_batch([(1_700_000_000_000, b"k", b"v")])
    unique = brokers * partitions // replication
    dirs = [root / f"broker-{b}" for b in range(brokers)]
    for b, d in enumerate(dirs):
        d.mkdir(parents=True)
        (d / "meta.properties").write_text(f"version=1\nnode.id={b}\ncluster.id=fleet\n")
    for u in range(unique):
        for r in range(replication):
            part = dirs[(u + r) % brokers] / f"topic{u // per_topic}-{u % per_topic}"
            part.mkdir()
            (part / "00000000000000000000.log").write_bytes(batch)
            (part / "00000000000000000000.index").write_bytes(b"")
            (part / "00000000000000000000.timeindex").write_bytes(b"")
    return unique


def spark_missing_reason() -> str | None:
    """Why a Spark session cannot start here (None: it can)."""
    for module in ("pyspark", "pyarrow"):
        try:
            __import__(module)
        except ImportError:
            return (f"{module} is not installed (the test extra installs it: "
                    f"pip install -e '.[test]')")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        return "no Java runtime for Spark (java on PATH or JAVA_HOME)"
    return None
