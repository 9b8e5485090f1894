"""Scans of a log dir in object storage: the same rows as the local copy, and a filtered scan
fetches a small fraction of the bytes (counted by the proxy in front of the S3 server)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pylogctl.pipeline.local_engine import LocalEngine
from pylogctl.pipeline.scan_filter import ScanFilter
from support import run_pylogctl

TOPIC = "orders"
BASE_TS = 1_760_000_000_000
PER_BATCH = 10


@pytest.fixture(scope="module")
def indexed_log_dir(tmp_path_factory, s3_server) -> tuple[Path, str, int, int]:
    """A log dir written by pylogctl's segment writer (offset and time indexes every 4 KiB, as
    a broker writes them): 2 partitions of 3 segments of ~1.5 MiB; uploaded to the bucket.
    Timestamps are ``BASE_TS + offset``. Returns (local dir, URL, bytes of its .log files,
    each partition's log end offset)."""
    from pylogctl.storage.log_config import LogConfig
    from pylogctl.storage.segment import LogSegment
    from segment_support import append, batch

    root = tmp_path_factory.mktemp("indexed") / "broker0"
    root.mkdir()
    (root / "meta.properties").write_text("version=0\nbroker.id=0\n")
    for p in range(2):
        (root / f"{TOPIC}-{p}").mkdir()
        offset = 0
        for _ in range(3):
            segment = LogSegment.open(root / f"{TOPIC}-{p}", offset, LogConfig(),
                                      file_already_exists=False)
            while segment.size < 1_500_000:
                append(segment, batch(offset, PER_BATCH, BASE_TS + offset))
                offset += PER_BATCH
            segment.on_become_inactive_segment()
            segment.close()
    url = s3_server.upload(root, "kafka-logs", "indexed/broker0")
    return root, url, sum(p.stat().st_size for p in root.rglob("*.log")), offset


def _rows(path: str, f: ScanFilter) -> list[dict]:
    rows = list(LocalEngine([path]).rows(f))
    for row in rows:
        row["segment"] = row["segment"].rsplit("/", 2)[-2:]
    return rows


@pytest.mark.parametrize("f", [
    ScanFilter(),
    ScanFilter().narrowed(offset_from=12_345, offset_to=12_400),
    ScanFilter().narrowed(partitions=[1], offset_from=20_000),
    ScanFilter().narrowed(time_from=BASE_TS + 30_000, time_to=BASE_TS + 30_050),
    ScanFilter().narrowed(offset_to=7),
], ids=["all", "offset-range", "partition-from", "time-range", "head"])
def test_the_bucket_gives_the_local_copys_rows(indexed_log_dir, f):
    local, url, _, _ = indexed_log_dir
    assert _rows(url, f) == _rows(str(local), f)


def _served(s3_server, *args: str) -> tuple[int, int, str]:
    s3_server.proxy.reset()
    done = run_pylogctl("scan", *args)
    assert done.returncode == 0, done.stderr
    return s3_server.proxy.bytes_served, s3_server.proxy.request_count, done.stdout


def test_a_filtered_scan_fetches_a_small_fraction_of_the_bytes(s3_server, indexed_log_dir):
    """A fresh process (listing, the small files, the index, the range: all counted) reads
    under 2% of the segment bytes for 50 records by offset or the newest records by time;
    the unfiltered count reads them all."""
    local, url, log_bytes, end = indexed_log_dir
    whole, _, out = _served(s3_server, url, "--count")
    assert int(out) == int(run_pylogctl("scan", local, "--count").stdout)
    assert whole >= log_bytes
    by_offset, requests, out = _served(s3_server, url, "--partition", "0", "--from-offset",
                                       "23450", "--to-offset", "23500", "-o", "json")
    assert [r["offset"] for r in json.loads(out)] == list(range(23450, 23500))
    assert by_offset < 0.02 * log_bytes, (by_offset, log_bytes)
    assert requests < 40  # a listing, the partitions' small files, one index, one range
    # the newest records by time: the time index finds their offset, the offset index their
    # position (a --to-time bound cannot skip bytes: Kafka's timestamps need not increase)
    since = str(BASE_TS + end - 170)  # the last 170 records of each partition
    by_time, _, out = _served(s3_server, url, "--from-time", since, "--count")
    assert int(out) == 2 * 170 == int(run_pylogctl("scan", local, "--from-time", since,
                                                   "--count").stdout)
    assert by_time < 0.02 * log_bytes, (by_time, log_bytes)


def test_a_remote_split_names_its_url_and_byte_range(indexed_log_dir):
    """The plan's splits carry the URL and the byte range (what a Spark executor reads)."""
    _, url, _, _ = indexed_log_dir
    engine = LocalEngine([url], split_bytes=256 * 1024)
    plan = engine.plan(ScanFilter())
    assert all(s.path.startswith(url + "/") and s.file_size for s in plan.splits)
    assert len(plan.splits) > 6  # cut at index positions, read from the mirror's indexes
    assert engine.count() == sum(1 for _ in LocalEngine([url]).rows(ScanFilter(),
                                                                     ("offset",)))


def test_a_url_to_a_prefix_with_no_log_dir_is_a_usage_error(s3_server, indexed_log_dir,
                                                            tmp_path):
    junk = tmp_path / "notes"
    junk.mkdir()
    (junk / "README.txt").write_text("not a log dir\n")
    url = s3_server.upload(junk, "kafka-logs", "notes")
    done = run_pylogctl("scan", url, "--count")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"pylogctl: {url} is neither a partition dir, a log dir nor a dir holding log dirs: no "
        f"meta.properties or offset checkpoint, no {{topic}}-{{partition}} dirs with segments, "
        f"no segment files (found README.txt)"]
    shutil.rmtree(junk)
