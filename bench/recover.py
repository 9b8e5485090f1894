"""Benchmark: rebuilding a partition's indexes (``LogSegment.recover``, ``pylogctl
rebuild-index``) against reading the same bytes and checking every batch's CRC.

Usage::

    python bench/recover.py [--size-mib 2048] [--segment-mib 512] [--repeat 3] [--keep]
                            [--dir /tmp/pylogctl-bench-recover]

What it does, in one run and over the same bytes:

1. Builds a log dir holding one partition, ``bench-0``, of ``--size-mib`` MiB in segments of
   ``--segment-mib`` MiB (Kafka rolls at 1 GiB by default), written with pylogctl's own
   writer (``RecordBatchBuilder``, one builder per batch) straight into the segment files, as
   ``bench/dump_segment.py`` does: 16 records per batch (~17 KiB, a producer's ``batch.size``
   worth), uncompressed, 10-byte keys, values of 900-1150 bytes, two headers on a quarter of
   the records, an idempotent producer, and every 500th batch a one-batch transaction of a
   second producer, half of them aborted (so the ``.txnindex`` has entries). No index file is
   written: every ``.index``, ``.timeindex`` and ``.txnindex`` is missing, as after a crash
   that lost them.
2. Reads the files once so the page cache is warm, then measures (best of ``--repeat``, the
   indexes deleted again before each run):

   a) the floor: a Python loop over the batch headers computing ``crc32c.crc32c`` over each
      batch's CRC-covered bytes (what validating every batch costs at least), and a second
      reference: ``crc32c.crc32c`` of each whole file (no per-batch work at all);
   b) ``LogSegment.open(...).recover()`` on each segment (the index rebuild of Kafka's log
      recovery; runs of valid v2 batches go through the C accelerator's ``scan_recovery``),
      the same with its pure-Python loop only (``PYLOGCTL_NO_SPEEDUPS=1``, the reference;
      INFO only), and with a ``ProducerStateManager`` replaying every batch (what the
      broker's loader feeds it; INFO only);
   c) the library call ``rebuild-index`` makes (``IndexRebuild(...).segments()``: rebuild
      into scratch files, compare, write atomically) and ``pylogctl rebuild-index --execute``
      on the partition dir (the CLI, interpreter start-up included).

Every library run is in its own child process on a warm page cache. After the timings the
rebuilt files are checked: the CLI's indexes equal ``recover()``'s byte for byte, and the
``.txnindex`` files list every aborted transaction.

Prints a table of MB/s and ratios to the floor, and ``TARGET MET`` / ``TARGET MISSED`` for
the target (a rebuild within 2x of the floor). It never fails on a timing: this is a
benchmark, not a test. The data is deleted at the end unless ``--keep`` is given.
"""

from __future__ import annotations

import argparse
import gc
import json
import mmap
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

from workload import (BASE_TIMESTAMP, RECORDS_PER_BATCH, crc_floor, producer_batch,
                      SegmentFiles, pylogctl_command, run_in_new_dir, value_pool, verdict,
                      warm_page_cache)

PARTITION = "bench-0"
TXN_PRODUCER_ID = 5000
TXN_EVERY = 500  # batches between transactions of the transactional producer
TARGET = 2.0  # rebuild wall time <= 2x the floor
INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


# -- building the partition ----------------------------------------------------------------

def build_partition(part: Path, size_bytes: int, segment_bytes: int,
                    seed: int = 20240502) -> dict:
    """Write segments of about ``segment_bytes`` until ``size_bytes``; return what they hold."""
    from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker

    rng = random.Random(seed)
    pool = value_pool(rng)
    offset = batches = aborted = 0
    sequence = txn_epoch = 0
    ts = BASE_TIMESTAMP
    with SegmentFiles(part, segment_bytes) as files:
        while files.written < size_bytes:
            base = offset
            if batches % TXN_EVERY == TXN_EVERY - 1:  # a transaction: one batch, then a marker
                builder = RecordBatchBuilder(base_offset=offset, producer_id=TXN_PRODUCER_ID,
                                             producer_epoch=txn_epoch, base_sequence=0,
                                             is_transactional=True, partition_leader_epoch=0)
                builder.append(ts, b"txn", pool[:200])
                abort = (batches // TXN_EVERY) % 2 == 0
                data = builder.build() + build_end_txn_marker(
                    offset=offset + 1, producer_id=TXN_PRODUCER_ID, producer_epoch=txn_epoch,
                    commit=not abort, coordinator_epoch=0, timestamp=ts,
                    partition_leader_epoch=0)
                aborted += abort
                txn_epoch += 1
                offset += 2
                batches += 2
            else:
                data, ts, _, _ = producer_batch(rng, pool, offset, sequence, ts)
                offset += RECORDS_PER_BATCH
                sequence = (sequence + RECORDS_PER_BATCH) % (1 << 31)
                batches += 1
            files.write(base, data)
    return {"bytes": files.written, "batches": batches, "records": offset,
            "segments": files.bases, "aborted": aborted}


def delete_indexes(part: Path) -> None:
    for p in part.iterdir():
        if p.suffix in INDEX_SUFFIXES or p.name.endswith(".tmp"):
            p.unlink()


# -- what the child processes time -----------------------------------------------------------

def _floor_files(logs: list[str]) -> int:
    import crc32c

    for path in logs:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            crc32c.crc32c(m)
    return len(logs)


def _recover(logs: list[str], with_producer_state: bool) -> int:
    from pylogctl.storage.log_config import LogConfig
    from pylogctl.storage.naming import offset_from_file
    from pylogctl.storage.producer_state import ProducerStateManager
    from pylogctl.storage.segment import LogSegment

    part = os.path.dirname(logs[0])
    state = ProducerStateManager(part) if with_producer_state else None
    truncated = 0
    for path in logs:
        with LogSegment.open(part, offset_from_file(path), LogConfig()) as segment:
            truncated += segment.recover(state)
    if truncated:
        raise SystemExit(f"bench: recovery truncated {truncated} bytes")
    return len(logs)


def _rebuild(logs: list[str]) -> int:
    from pylogctl.tools.rebuild_index import IndexRebuild, RebuildOptions

    written = 0
    with IndexRebuild([os.path.dirname(logs[0])], RebuildOptions(execute=True)) as run:
        for segment in run.segments():
            if segment.error is not None or segment.invalid_bytes:
                raise SystemExit(f"bench: rebuild failed on {segment.path}")
            written += sum(r.done for r in segment.indexes)
    return written


def worker(kind: str, part: str, repeat: int) -> None:
    """Child process: time ``kind`` best-of-``repeat`` and print one JSON line."""
    logs = sorted(str(p) for p in Path(part).glob("*.log"))
    fn = {"floor": lambda: crc_floor(logs), "floor-file": lambda: _floor_files(logs),
          "recover": lambda: _recover(logs, False), "recover-ps": lambda: _recover(logs, True),
          "rebuild": lambda: _rebuild(logs)}[kind]
    times = []
    count = 0
    for _ in range(repeat):
        delete_indexes(Path(part))
        gc.collect()
        t = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - t)
    print(json.dumps({"kind": kind, "best": min(times), "times": times, "count": count}))


# -- the parent: orchestration and report ------------------------------------------------------

def run_worker(kind: str, part: Path, repeat: int, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", kind, "--partition", str(part),
                           "--repeat", str(repeat)], capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})
    if proc.returncode != 0:
        raise SystemExit(f"bench: {kind} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_cli(argv: list[str], part: Path, repeat: int) -> float:
    """Best wall time of ``argv`` (stdout to /dev/null) on a partition without indexes."""
    times = []
    for _ in range(repeat):
        delete_indexes(part)
        t = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            raise SystemExit(f"bench: {' '.join(argv)} exited {proc.returncode}:\n"
                             f"{proc.stderr.decode(errors='replace')}")
    return min(times)


def index_files(part: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(part.iterdir()) if p.suffix in INDEX_SUFFIXES}


def check_rebuilt(part: Path, cli: list[str], info: dict) -> None:
    """The CLI's files equal recover()'s; the .txnindex files hold every aborted transaction."""
    from pylogctl.storage.transaction_index import read_transaction_index

    delete_indexes(part)
    run_worker("recover-ps", part, 1)
    by_recover = index_files(part)
    delete_indexes(part)
    subprocess.run(cli + ["rebuild-index", "--execute", str(part)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    by_cli = index_files(part)
    if by_cli != by_recover:
        raise SystemExit("bench: rebuild-index wrote other indexes than LogSegment.recover")
    aborted = sum(len(read_transaction_index(part / n)) for n in by_cli if n.endswith(".txnindex"))
    if aborted != info["aborted"]:
        raise SystemExit(f"bench: {aborted} aborted transactions indexed, {info['aborted']} "
                         f"written")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=2048, help="partition size (default 2048)")
    ap.add_argument("--segment-mib", type=int, default=512, help="segment size (default 512)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the data afterwards")
    ap.add_argument("--dir", default="/tmp/pylogctl-bench-recover",
                    help="the log dir to build (created; must not exist yet)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--partition", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.partition, args.repeat)
        return 0
    if args.size_mib < 1 or args.segment_mib < 1 or args.repeat < 1:
        ap.error("--size-mib, --segment-mib and --repeat must be at least 1")
    log_dir = Path(args.dir)

    def run() -> int:
        part = log_dir / PARTITION
        part.mkdir(parents=True)
        return _run(part, args)
    return run_in_new_dir(ap.error, log_dir, args.keep, run)


def _run(part: Path, args) -> int:
    repeat = args.repeat
    print(f"Building {part} ({args.size_mib} MiB in {args.segment_mib} MiB segments) with "
          f"RecordBatchBuilder ...", flush=True)
    t = time.perf_counter()
    info = build_partition(part, args.size_mib << 20, args.segment_mib << 20)
    size, batches = info["bytes"], info["batches"]
    print(f"  {size / 2**20:,.0f} MiB, {len(info['segments'])} segments, {batches:,} batches, "
          f"{info['records']:,} records ({info['aborted']} aborted transactions); no index "
          f"files; built in {time.perf_counter() - t:.1f} s", flush=True)
    warm_page_cache(sorted(part.glob("*.log")))

    cli = pylogctl_command()
    print(f"Measuring (best of {repeat}) ...", flush=True)
    floor = run_worker("floor", part, repeat)
    if floor["count"] != batches:
        raise SystemExit(f"bench: the floor saw {floor['count']} batches, expected {batches}")
    floor_file = run_worker("floor-file", part, repeat)
    recover = run_worker("recover", part, repeat)
    recover_py = run_worker("recover", part, repeat, {"PYLOGCTL_NO_SPEEDUPS": "1"})
    recover_ps = run_worker("recover-ps", part, repeat)
    rebuild = run_worker("rebuild", part, repeat)
    startup_s = time_cli(cli + ["--version"], part, repeat)
    cli_s = time_cli(cli + ["rebuild-index", "--execute", str(part)], part, repeat)
    check_rebuilt(part, cli, info)

    # -- report ----------------------------------------------------------------------------------
    mb = size / 1e6
    fl = floor["best"]
    print()
    print(f"pylogctl index rebuild benchmark -- {size / 2**20:,.0f} MiB partition, "
          f"{len(info['segments'])} segments, {batches:,} batches; Python "
          f"{platform.python_version()}, {os.cpu_count()} CPUs; best of {repeat}, warm page cache, "
          f"all index files missing")
    print()
    w = 72
    print(f"{'':<{w}} {'seconds':>8} {'MB/s':>7} {'x floor':>8}")
    rows = [("floor: Python batch-header loop + crc32c of every batch", fl),
            ("reference: crc32c of each whole file (no per-batch work)", floor_file["best"]),
            ("LogSegment.recover() per segment  (library)", recover["best"]),
            ("  same, pure-Python loop  (PYLOGCTL_NO_SPEEDUPS=1)", recover_py["best"]),
            ("  same, replaying every batch into a ProducerStateManager", recover_ps["best"]),
            ("IndexRebuild(...).segments(), executing  (rebuild-index's library call)",
             rebuild["best"]),
            ("pylogctl rebuild-index --execute PARTITION  (CLI)", cli_s)]
    for name, s in rows:
        print(f"{name:<{w}} {s:>8.3f} {mb / s:>7,.0f} {s / fl:>8.2f}")
    print(f"{'pylogctl --version  (CLI start-up alone, reads nothing)':<{w}} {startup_s:>8.3f} "
          f"{'-':>7} {startup_s / fl:>8.2f}")
    print()
    print("Checked after timing: rebuild-index wrote the same bytes as LogSegment.recover, and "
          "the .txnindex files")
    print(f"list all {info['aborted']} aborted transactions. Each library row runs in its own "
          f"process; CLI rows include start-up.")
    print()
    print(f"{verdict(recover['best'] <= TARGET * fl)}: LogSegment.recover / floor = "
          f"{recover['best'] / fl:.2f}x (target <= {TARGET:g}x)")
    print(f"{verdict(rebuild['best'] <= TARGET * fl)}: rebuild-index library call / floor = "
          f"{rebuild['best'] / fl:.2f}x (target <= {TARGET:g}x)")
    print(f"{verdict(cli_s <= TARGET * fl)}: pylogctl rebuild-index --execute / floor = "
          f"{cli_s / fl:.2f}x (target <= {TARGET:g}x; without start-up "
          f"{max(cli_s - startup_s, 0) / fl:.2f}x)")
    print(f"INFO: recover with full producer-state replay / floor = {recover_ps['best'] / fl:.2f}x;"
          f" pure-Python recover / floor = {recover_py['best'] / fl:.2f}x;"
          f" whole-file crc32c / floor = {floor_file['best'] / fl:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
