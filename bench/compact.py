"""Benchmark: compacting a partition (Kafka's log cleaner, ``pylogctl compact``) against reading
the same bytes.

Usage::

    python bench/compact.py [--size-mib 1024] [--segment-mib 256] [--repeat 3] [--keep]
                            [--profile] [--dir /tmp/pylogctl-bench-compact]

What it does, in one run and over the same bytes:

1. Builds a log dir holding one partition, ``bench-0``, of ``--size-mib`` MiB in segments of
   ``--segment-mib`` MiB plus an empty active segment, with the producer workload of
   ``bench/workload.py``: batches of 16 records (~17 KiB), 10-byte keys drawn from 100,000,
   values of 900-1150 bytes (1 KiB on average), headers on a quarter of the records, one
   idempotent producer. About 950,000 records over 100,000 keys: compaction keeps about 10% of
   them. The segments' indexes are built by ``LogSegment.recover`` and the log is closed by
   :class:`~pylogctl.storage.log.Log` (a producer snapshot at the log end), with
   ``.kafka_cleanshutdown`` and the high watermark at the log end, as a broker leaves it.
2. Reads the files once so the page cache is warm, then measures (best of ``--repeat``, every
   compaction on a fresh copy of the log dir, each in its own process):

   a) the floor: decoding every record of every batch once (``FileRecords.batches()`` and
      ``RecordBatch.records()``, the C decoder): the least a record-level tool reading these
      bytes does; and two references, a plain read of the files' bytes and a Python loop over
      the batch headers computing each batch's CRC-32C;
   b) the library call ``pylogctl compact --execute`` makes (``Compaction(...)``: load the
      partition, build the offset map, clean every group, swap the cleaned segments in, write
      the cleaner checkpoint), and the dry run of the plan (no output written);
   c) ``pylogctl compact --execute`` on the log dir (the CLI, interpreter start-up included).

After the timings the result is checked: every key's latest record is present, the log holds
nothing else, and ``pylogctl rebuild-index --verify`` passes.

Prints MB/s (of the partition's bytes) and ratios to the floor, and ``TARGET MET`` /
``TARGET MISSED`` for the targets (at least 100 MB/s, within 4x of the floor). It never fails on
a timing: this is a benchmark, not a test. ``--profile`` prints where the library call spends
its time (cProfile, top functions). The data is deleted at the end unless ``--keep`` is given.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from workload import (BASE_TIMESTAMP, KEY_FORMAT, RECORDS_PER_BATCH, crc_floor, producer_batch,
                      SegmentFiles, pylogctl_command, run_in_new_dir, value_pool, verdict,
                      warm_page_cache)

PARTITION = "bench-0"
NOW_MS = BASE_TIMESTAMP + 86_400_000
TARGET_MBPS = 100.0
TARGET_RATIO = 4.0
CONFIG = ["--config", "cleanup.policy=compact"]


# -- building the partition ----------------------------------------------------------------

def build_log_dir(log_dir: Path, size_bytes: int, segment_bytes: int,
                  seed: int = 20240611) -> dict:
    """Segments of about ``segment_bytes`` until ``size_bytes``, indexed, closed cleanly."""
    from pylogctl.storage.checkpoint import format_checkpoint
    from pylogctl.storage.log import Log
    from pylogctl.storage.log_config import LogConfig
    from pylogctl.storage.segment import LogSegment

    part = log_dir / PARTITION
    part.mkdir(parents=True)
    rng = random.Random(seed)
    pool = value_pool(rng)
    offset = sequence = batches = 0
    ts = BASE_TIMESTAMP
    with SegmentFiles(part, segment_bytes) as files:
        while files.written < size_bytes:
            data, ts, _, _ = producer_batch(rng, pool, offset, sequence, ts)
            files.write(offset, data)
            offset += RECORDS_PER_BATCH
            sequence = (sequence + RECORDS_PER_BATCH) % (1 << 31)
            batches += 1
    bases = files.bases
    for base in bases:
        with LogSegment.open(part, base, LogConfig()) as segment:
            segment.recover()
    with Log.load(part, LogConfig(), recovery_point_checkpoint=offset,
                  high_watermark_checkpoint=offset, had_clean_shutdown=True) as log:
        log.roll()  # an empty active segment: every segment written above is cleanable
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        (log_dir / name).write_text(format_checkpoint([f"bench 0 {offset}"]))
    (log_dir / ".kafka_cleanshutdown").write_text("")
    return {"bytes": files.written, "batches": batches, "records": offset,
            "segments": len(bases)}


def segment_logs(log_dir: Path) -> list[str]:
    return sorted(str(p) for p in (log_dir / PARTITION).glob("*.log") if p.stat().st_size)


# -- what the child processes time -----------------------------------------------------------

def _read_files(logs: list[str]) -> int:
    buf = bytearray(8 << 20)
    n = 0
    for path in logs:
        with open(path, "rb", buffering=0) as f:
            while (got := f.readinto(buf)):
                n += got
    return n


def _decode_records(logs: list[str]) -> int:
    from pylogctl.storage.file_records import FileRecords

    n = 0
    for path in logs:
        with FileRecords(path) as records:
            for batch in records.batches():
                n += len(batch.records())
    return n


def _compact(log_dir: str, execute: bool) -> int:
    from pylogctl.tools.compact import CompactOptions, Compaction
    from pylogctl.tools.config import ConfigOptions

    options = CompactOptions(now_ms=NOW_MS, execute=execute,
                             config=ConfigOptions({"cleanup.policy": "compact"}))
    section, = Compaction([log_dir], options).partitions()
    if section.error is not None or not section.rounds:
        raise SystemExit(f"bench: compaction failed: {section.error or section.decision}")
    return section.bytes_after


def worker(kind: str, pristine: str, scratch: str, repeat: int, profile: bool) -> None:
    """Child process: time ``kind`` best-of-``repeat`` and print one JSON line."""
    logs = segment_logs(Path(pristine))
    times, cpu, count = [], [], 0
    for _ in range(repeat):
        target = pristine
        if kind in ("compact", "plan"):
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(pristine, scratch)
            warm_page_cache(segment_logs(Path(scratch)))
            target = scratch
        fn = {"read": lambda: _read_files(logs), "crc": lambda: crc_floor(logs),
              "decode": lambda: _decode_records(logs),
              "compact": lambda: _compact(target, True),
              "plan": lambda: _compact(target, False)}[kind]
        gc.collect()
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            t, c = time.perf_counter(), time.process_time()
            count = profiler.runcall(fn)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            stats = pstats.Stats(profiler, stream=sys.stderr)
            stats.sort_stats("tottime").print_stats(18)
            break
        t, c = time.perf_counter(), time.process_time()
        count = fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    print(json.dumps({"kind": kind, "best": min(times), "times": times, "cpu": min(cpu),
                      "count": count}))


# -- the parent: orchestration and report ------------------------------------------------------

def run_worker(kind: str, pristine: Path, scratch: Path, repeat: int,
               profile: bool = False) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", kind, "--pristine",
                           str(pristine), "--scratch", str(scratch), "--repeat", str(repeat)]
                          + (["--profile"] if profile else []),
                          stdout=subprocess.PIPE, stderr=None if profile else subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench: {kind} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_cli(argv: list[str], pristine: Path, scratch: Path, repeat: int) -> dict:
    """Best wall and CPU time of ``argv`` (stdout to /dev/null) on a fresh copy each time."""
    times, cpu = [], []
    for _ in range(repeat):
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(pristine, scratch)
        warm_page_cache(segment_logs(scratch))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if proc.returncode != 0:
            raise SystemExit(f"bench: {' '.join(argv)} exited {proc.returncode}:\n"
                             f"{proc.stderr.decode(errors='replace')}")
    return {"best": min(times), "cpu": min(cpu)}


def check_result(pristine: Path, compacted: Path, cli: list[str]) -> int:
    """Every key's latest record is in the compacted log, and nothing else; its indexes
    verify. Returns the number of records left."""
    from pylogctl.storage.file_records import FileRecords

    def records(log_dir: Path):
        for path in segment_logs(log_dir):
            with FileRecords(path) as f:
                for batch in f.batches():
                    yield from batch.records()

    latest = {}
    for r in records(pristine):
        latest[r.key] = (r.offset, r.value)
    left = {r.offset: r.value for r in records(compacted)}
    if left != {offset: value for offset, value in latest.values()}:
        raise SystemExit("bench: the compacted log is not each key's latest record")
    verify = subprocess.run(cli + ["rebuild-index", "--verify", str(compacted)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if verify.returncode != 0:
        raise SystemExit(f"bench: rebuild-index --verify failed:\n{verify.stderr.decode()}")
    return len(left)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024, help="partition size (default 1024)")
    ap.add_argument("--segment-mib", type=int, default=256, help="segment size (default 256)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the data afterwards")
    ap.add_argument("--profile", action="store_true",
                    help="also profile the library compaction once (cProfile, to stderr)")
    ap.add_argument("--dir", default="/tmp/pylogctl-bench-compact",
                    help="where to build (created; must not exist yet)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--pristine", help=argparse.SUPPRESS)
    ap.add_argument("--scratch", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.pristine, args.scratch, args.repeat, args.profile)
        return 0
    if args.size_mib < 1 or args.segment_mib < 1 or args.repeat < 1:
        ap.error("--size-mib, --segment-mib and --repeat must be at least 1")
    root = Path(args.dir)
    free = shutil.disk_usage(root.parent).free
    if free < 3.5 * (args.size_mib << 20):
        ap.error(f"{root.parent} has {free >> 20} MiB free; the run needs about "
                 f"{int(3.5 * args.size_mib)} MiB (the log, a copy, the compacted copy)")
    return run_in_new_dir(ap.error, root, args.keep, lambda: _run(root, args))


def _run(root: Path, args) -> int:
    repeat = args.repeat
    pristine, scratch = root / "pristine", root / "scratch"
    print(f"Building {pristine / PARTITION} ({args.size_mib} MiB in {args.segment_mib} MiB "
          f"segments) ...", flush=True)
    t = time.perf_counter()
    info = build_log_dir(pristine, args.size_mib << 20, args.segment_mib << 20)
    size = info["bytes"]
    print(f"  {size / 2**20:,.0f} MiB, {info['segments']} segments, {info['batches']:,} batches, "
          f"{info['records']:,} records over 100,000 keys "
          f"({KEY_FORMAT.decode()}); built in {time.perf_counter() - t:.1f} s", flush=True)
    warm_page_cache(segment_logs(pristine))

    cli = pylogctl_command()
    print(f"Measuring (best of {repeat}) ...", flush=True)
    read = run_worker("read", pristine, scratch, repeat)
    crc = run_worker("crc", pristine, scratch, repeat)
    decode = run_worker("decode", pristine, scratch, repeat)
    if decode["count"] != info["records"]:
        raise SystemExit(f"bench: the floor decoded {decode['count']} records, expected "
                         f"{info['records']}")
    plan = run_worker("plan", pristine, scratch, repeat)
    compact = run_worker("compact", pristine, scratch, repeat)
    cli_run = time_cli(cli + ["compact", str(scratch), "--now-ms", str(NOW_MS), *CONFIG,
                              "--execute"], pristine, scratch, repeat)
    left = check_result(pristine, scratch, cli)
    if args.profile:
        print("Profiling the library compaction (stderr) ...", flush=True)
        run_worker("compact", pristine, scratch, 1, profile=True)

    # -- report ----------------------------------------------------------------------------------
    mb = size / 1e6
    fl, fl_cpu = decode["best"], decode["cpu"]
    print()
    from pylogctl.storage import offset_map  # the children import it the same way

    loops = "C" if offset_map._map_batch is not None else "Python (no extension)"
    print(f"pylogctl compaction benchmark -- {size / 2**20:,.0f} MiB partition, "
          f"{info['segments']} segments, {info['records']:,} records, {left:,} left after "
          f"compaction ({100 * left / info['records']:.1f}%), {compact['count'] / 2**20:,.0f} "
          f"MiB written; cleaner loops in {loops}; Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; best of {repeat}, "
          f"warm page cache")
    print()
    w = 70
    print(f"{'':<{w}} {'seconds':>8} {'MB/s':>6} {'x floor':>7} {'CPU s':>7} {'x floor':>7}")
    rows = [("floor: decode every record once (FileRecords + RecordBatch.records)", decode),
            ("reference: read the files' bytes (8 MiB reads)", read),
            ("reference: Python batch-header loop + crc32c of every batch", crc),
            ("Compaction(...), executing  (compact --execute's library call)", compact),
            ("Compaction(...), planning  (dry run of the cleaning, nothing written)", plan),
            ("pylogctl compact --execute LOG_DIR  (CLI)", cli_run)]
    for name, r in rows:
        s, c = r["best"], r["cpu"]
        print(f"{name:<{w}} {s:>8.3f} {mb / s:>6,.0f} {s / fl:>7.2f} {c:>7.3f} {c / fl_cpu:>7.2f}")
    print()
    print("Checked after timing: the compacted log holds exactly each key's latest record, and "
          "rebuild-index --verify passes. Each library row runs in its own process on a fresh "
          "copy; the CLI row includes start-up. CPU s is the process's CPU time (user + system): "
          "on a busy machine it shows what wall time hides.")
    print()
    lib_mbps = mb / compact["best"]
    print(f"{verdict(lib_mbps >= TARGET_MBPS)}: compaction library call = {lib_mbps:,.0f} MB/s "
          f"(target >= {TARGET_MBPS:g} MB/s); CLI = {mb / cli_run['best']:,.0f} MB/s; by CPU "
          f"time {mb / compact['cpu']:,.0f} MB/s")
    print(f"{verdict(compact['best'] <= TARGET_RATIO * fl)}: compaction / floor = "
          f"{compact['best'] / fl:.2f}x (target <= {TARGET_RATIO:g}x); by CPU time "
          f"{compact['cpu'] / fl_cpu:.2f}x; CLI / floor = {cli_run['best'] / fl:.2f}x")
    print(f"INFO: plan (dry run) / floor = {plan['best'] / fl:.2f}x; byte read / floor = "
          f"{read['best'] / fl:.2f}x; batch CRC loop / floor = {crc['best'] / fl:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
