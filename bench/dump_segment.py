"""Benchmark: ``pylogctl dump-segment`` on a ~1 GiB segment, against ``cat`` and other parsers.

Usage::

    python bench/dump_segment.py [--size-mib 1024] [--repeat 3] [--keep] [--dir /tmp/pylogctl-bench]

What it does, in one run and over the same bytes:

1. Builds ``00000000000000000000.log`` with pylogctl's own writer (``RecordBatchBuilder``, one
   builder per batch): 16 records per batch (~17 KiB, like a producer's ``batch.size`` /
   ``linger.ms`` batching), uncompressed, 10-byte keys, values of 900-1150 bytes (1 KiB on
   average), two headers on about a quarter of the records, idempotent-producer fields, and
   consecutive offsets with valid CRCs. aiokafka's compiled reader then checks every batch's
   CRC and the offsets once, outside any timing, so the file is known to be a valid segment.
2. Reads the file once so the page cache is warm, then measures (best of ``--repeat``):

   a) ``cat FILE > /dev/null``: the I/O floor;
   b) ``pylogctl dump-segment FILE > /dev/null`` (a batch line per batch, CRC checked), and the
      same scan in-process: ``FileRecords(path).batches()`` reading ``is_valid``;
   c) deep iteration, records/s, touching offset, key and value of every record:
      pylogctl's library (with its C accelerator if built, and forced to pure Python with
      ``PYLOGCTL_NO_SPEEDUPS=1``), kafka-python (pure Python), aiokafka's compiled Cython
      reader (asserted to be the extension modules) and aiokafka with
      ``AIOKAFKA_NO_EXTENSIONS=1`` (its ``_DefaultRecordBatchPy`` and pure-Python varints);
   d) ``pylogctl dump-segment --deep-iteration FILE > /dev/null``, as records/s.

Fairness: every parser runs in its own child process (so a library's import-time switch is
honoured and no run inherits another one's garbage), on a warm page cache. pylogctl reads the
file through ``FileRecords`` (an mmap, its normal way); kafka-python and aiokafka get the whole
file as one ``bytes`` object read before the timed region (their normal input, the body of a
fetch response). None of the deep loops checks CRCs (none of the three libraries does while
iterating). Command-line timings include interpreter start-up, shown on its own line.

Prints a table and one ``TARGET MET`` / ``TARGET MISSED`` line per target (shallow dump
<= 3x cat; pylogctl deep records/s >= 2x kafka-python). It never fails on a timing: this is
a benchmark, not a test. The segment is deleted at the end unless ``--keep`` is given.
"""

from __future__ import annotations

import argparse
import gc
import importlib.machinery
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

from workload import (BASE_TIMESTAMP, RECORDS_PER_BATCH, producer_batch, pylogctl_command,
                      value_pool, verdict, warm_page_cache)

SEGMENT_NAME = "00000000000000000000.log"
SHALLOW_TARGET = 3.0  # shallow dump wall time <= 3x cat
DEEP_TARGET = 2.0  # pylogctl deep records/s >= 2x kafka-python


# -- building the segment ----------------------------------------------------------------------

def build_segment(path: Path, size_bytes: int, seed: int = 20240501) -> dict:
    """Write a valid segment of at least ``size_bytes``; return what it holds.

    One ``RecordBatchBuilder`` per batch, so every batch has its own keys, values, timestamps and
    producer sequence numbers, and its own CRC.
    """
    rng = random.Random(seed)
    pool = value_pool(rng)
    offset = batches = written = value_bytes = with_headers = 0
    ts = BASE_TIMESTAMP
    with open(path, "wb", buffering=1 << 20) as f:
        while written < size_bytes:
            data, ts, n_bytes, n_headers = producer_batch(rng, pool, offset,
                                                          offset % (1 << 31), ts)
            value_bytes += n_bytes
            with_headers += n_headers
            f.write(data)
            written += len(data)
            offset += RECORDS_PER_BATCH
            batches += 1
    return {"bytes": written, "batches": batches, "records": offset,
            "avg_value": value_bytes / offset, "with_headers": with_headers / offset}


def verify_segment(path: Path, batches: int, records: int) -> None:
    """Independent check (aiokafka's compiled reader): every CRC valid, offsets 0..records-1."""
    from aiokafka.record.memory_records import MemoryRecords

    seen = 0
    expected = 0
    mr = MemoryRecords(path.read_bytes())
    while (batch := mr.next_batch()) is not None:
        if not batch.validate_crc():
            raise SystemExit(f"bench: built segment has a bad CRC at batch {seen}")
        for rec in batch:
            if rec.offset != expected:
                raise SystemExit(f"bench: offset {rec.offset} where {expected} was expected")
            expected += 1
        seen += 1
    if (seen, expected) != (batches, records):
        raise SystemExit(f"bench: aiokafka saw {seen} batches / {expected} records, "
                         f"expected {batches} / {records}")


# -- what the child processes time ---------------------------------------------------------------

def _pylogctl_deep(path: str) -> int:
    from pylogctl.storage.file_records import FileRecords

    n = 0
    with FileRecords(path) as fr:
        for batch in fr.batches():
            for rec in batch.records():
                rec.offset, rec.key, rec.value
                n += 1
    return n


def _pylogctl_shallow(path: str) -> int:
    from pylogctl.storage.file_records import FileRecords

    n = 0
    with FileRecords(path) as fr:
        for batch in fr.batches():
            if not batch.is_valid:
                raise SystemExit(f"bench: invalid batch at position {batch.position}")
            n += 1
    return n


def _kafka_python_deep(data: bytes) -> int:
    from kafka.record import MemoryRecords

    n = 0
    for batch in MemoryRecords(data):
        for rec in batch:
            rec.offset, rec.key, rec.value
            n += 1
    return n


def _aiokafka_deep(data: bytes) -> int:
    from aiokafka.record.memory_records import MemoryRecords

    n = 0
    mr = MemoryRecords(data)
    while (batch := mr.next_batch()) is not None:
        for rec in batch:
            rec.offset, rec.key, rec.value
            n += 1
    return n


def _is_extension(obj) -> bool:
    """True when ``obj``'s module was loaded from a compiled extension (.so/.pyd)."""
    mod = sys.modules.get(getattr(obj, "__module__", ""), None)
    return bool(mod is not None and getattr(mod, "__file__", None)
                and mod.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)))


def _describe(kind: str) -> str:
    """Say (and check) which implementation this child process really runs."""
    if kind in ("pylogctl", "pylogctl-shallow"):
        from pylogctl.format import record_batch as rb

        c = getattr(rb, "_c_decode", None)
        if kind == "pylogctl-shallow":
            return "FileRecords.batches() + is_valid"
        return ("C accelerator (pylogctl.format._speedups)" if c is not None
                else "pure Python (C accelerator not built)")
    if kind == "pylogctl-py":
        from pylogctl.format import record_batch as rb

        assert rb.decode_records is getattr(rb, "decode_records_py", rb.decode_records)
        return "pure Python (PYLOGCTL_NO_SPEEDUPS=1)"
    if kind == "kafka-python":
        import kafka

        return f"kafka-python {kafka.__version__}, pure Python"
    import aiokafka
    from aiokafka.record import default_records, memory_records, util

    if kind == "aiokafka":
        for cls in (memory_records.MemoryRecords, default_records.DefaultRecordBatch):
            assert _is_extension(cls), f"{cls!r} is not the compiled aiokafka extension"
        return f"aiokafka {aiokafka.__version__}, compiled Cython (_crecords)"
    assert default_records.DefaultRecordBatch is default_records._DefaultRecordBatchPy
    assert not _is_extension(memory_records.MemoryRecords)
    assert util.decode_varint is util.decode_varint_py
    return f"aiokafka {aiokafka.__version__}, _DefaultRecordBatchPy (AIOKAFKA_NO_EXTENSIONS=1)"


def worker(kind: str, path: str, repeat: int) -> None:
    """Child process: time ``kind`` best-of-``repeat`` and print one JSON line."""
    if kind in ("pylogctl", "pylogctl-py"):
        fn = lambda: _pylogctl_deep(path)  # noqa: E731
    elif kind == "pylogctl-shallow":
        fn = lambda: _pylogctl_shallow(path)  # noqa: E731
    else:
        data = Path(path).read_bytes()  # outside the timed region
        fn = (lambda: _kafka_python_deep(data)) if kind == "kafka-python" else \
            (lambda: _aiokafka_deep(data))
    impl = _describe(kind)
    times = []
    count = 0
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - t)
    print(json.dumps({"kind": kind, "impl": impl, "best": min(times), "times": times,
                      "count": count}))


# -- the parent: orchestration and report --------------------------------------------------------

def _child_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYLOGCTL_NO_SPEEDUPS", "AIOKAFKA_NO_EXTENSIONS")}
    env.update(extra)
    return env


def run_worker(kind: str, path: Path, repeat: int, **env: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", kind, "--segment", str(path),
                           "--repeat", str(repeat)], capture_output=True, text=True,
                          env=_child_env(**env))
    if proc.returncode != 0:
        raise SystemExit(f"bench: {kind} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_command(argv: list[str], repeat: int, **env: str) -> float:
    """Best wall time of ``argv`` with stdout to /dev/null; it must exit 0."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=_child_env(**env))
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            raise SystemExit(f"bench: {' '.join(argv)} exited {proc.returncode}:\n"
                             f"{proc.stderr.decode(errors='replace')}")
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024, help="segment size (default 1024)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the segment afterwards")
    ap.add_argument("--dir", default="/tmp/pylogctl-bench", help="where to build the segment")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--segment", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.segment, args.repeat)
        return 0
    if args.size_mib < 1 or args.repeat < 1:
        ap.error("--size-mib and --repeat must be at least 1")

    work = Path(args.dir)
    made_dir = not work.exists()
    work.mkdir(parents=True, exist_ok=True)
    seg = work / SEGMENT_NAME
    try:
        return _run(seg, args)
    finally:
        if not args.keep:
            seg.unlink(missing_ok=True)
            if made_dir:
                try:
                    work.rmdir()  # only a directory this run created, and only if empty
                except OSError:
                    pass
        else:
            print(f"kept {seg}")


def _run(seg: Path, args) -> int:
    repeat = args.repeat
    print(f"Building {seg} ({args.size_mib} MiB) with RecordBatchBuilder ...", flush=True)
    t = time.perf_counter()
    info = build_segment(seg, args.size_mib << 20)
    built = time.perf_counter() - t
    size, batches, records = info["bytes"], info["batches"], info["records"]
    print(f"  {size / 2**20:,.0f} MiB, {batches:,} batches x {RECORDS_PER_BATCH} records = "
          f"{records:,} records; values avg {info['avg_value']:,.0f} B; "
          f"{info['with_headers']:.0%} with 2 headers; built in {built:.1f} s", flush=True)
    verify_segment(seg, batches, records)
    print("  verified with aiokafka: every batch CRC valid, offsets consecutive", flush=True)
    warm_page_cache([seg])

    cli = pylogctl_command()
    print(f"Measuring (best of {repeat}) ...", flush=True)
    cat_s = time_command(["cat", str(seg)], repeat)
    startup_s = time_command(cli + ["--version"], repeat)
    shallow_s = time_command(cli + ["dump-segment", str(seg)], repeat)
    lib_shallow = run_worker("pylogctl-shallow", seg, repeat)
    deep = {kind: run_worker(kind, seg, repeat, **env) for kind, env in (
        ("pylogctl", {}),
        ("pylogctl-py", {"PYLOGCTL_NO_SPEEDUPS": "1"}),
        ("kafka-python", {}),
        ("aiokafka", {}),
        ("aiokafka-py", {"AIOKAFKA_NO_EXTENSIONS": "1"}),
    )}
    for kind, r in deep.items():
        if r["count"] != records:
            raise SystemExit(f"bench: {kind} read {r['count']} records, expected {records}")
    if lib_shallow["count"] != batches:
        raise SystemExit(f"bench: shallow scan saw {lib_shallow['count']} batches, "
                         f"expected {batches}")
    cli_deep_s = time_command(cli + ["dump-segment", "--deep-iteration", str(seg)], repeat)
    cli_deep_py_s = time_command(cli + ["dump-segment", "--deep-iteration", str(seg)], repeat,
                                 PYLOGCTL_NO_SPEEDUPS="1")

    # -- report --------------------------------------------------------------------------------
    gib = size / 2**30
    print()
    print(f"pylogctl dump-segment benchmark -- {size / 2**20:,.0f} MiB segment, {batches:,} "
          f"batches, {records:,} records; Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs; best of {repeat}, warm page cache")
    print()
    w = 66
    print(f"{'Shallow (batch headers + CRC)':<{w}} {'seconds':>8} {'GiB/s':>7} {'x cat':>7}")
    for name, s in (("cat FILE > /dev/null  (I/O floor)", cat_s),
                    ("pylogctl dump-segment FILE > /dev/null  (CLI)", shallow_s),
                    ("FileRecords(p).batches(), is_valid  (library, in-process)",
                     lib_shallow["best"])):
        print(f"{name:<{w}} {s:>8.3f} {gib / s:>7.2f} {s / cat_s:>7.2f}")
    print(f"{'pylogctl --version  (CLI start-up alone, reads nothing)':<{w}} {startup_s:>8.3f} "
          f"{'-':>7} {startup_s / cat_s:>7.2f}")
    print()
    kp = deep["kafka-python"]["best"]
    aio = deep["aiokafka"]["best"]
    print(f"{'Deep iteration (offset, key, value of every record)':<{w}} {'seconds':>8} "
          f"{'records/s':>11} {'x k-py':>7} {'x aio-C':>7}")
    rows = [(f"pylogctl library: {deep['pylogctl']['impl']}", deep["pylogctl"]["best"]),
            (f"pylogctl library: {deep['pylogctl-py']['impl']}", deep["pylogctl-py"]["best"]),
            (deep["kafka-python"]["impl"], kp),
            (deep["aiokafka"]["impl"], aio),
            (deep["aiokafka-py"]["impl"], deep["aiokafka-py"]["best"]),
            ("pylogctl dump-segment --deep-iteration > /dev/null (CLI)", cli_deep_s),
            ("  same, PYLOGCTL_NO_SPEEDUPS=1", cli_deep_py_s)]
    for name, s in rows:
        print(f"{name:<{w}} {s:>8.3f} {records / s:>11,.0f} {kp / s:>7.2f} {aio / s:>7.2f}")
    print()
    print("Inputs: pylogctl reads the file through FileRecords (mmap); kafka-python and aiokafka")
    print("parse one bytes object holding the file, read before the timed region. Each parser runs")
    print("in its own process; CLI rows include interpreter start-up.")
    print()
    shallow_ratio = shallow_s / cat_s
    deep_ratio = kp / deep["pylogctl"]["best"]
    aio_ratio = aio / deep["pylogctl"]["best"]
    py_ratio = kp / deep["pylogctl-py"]["best"]
    print(f"{verdict(shallow_ratio <= SHALLOW_TARGET)}: shallow dump-segment / cat = "
          f"{shallow_ratio:.2f}x (target <= {SHALLOW_TARGET:g}x)")
    print(f"{verdict(deep_ratio >= DEEP_TARGET)}: pylogctl deep records/s / kafka-python = "
          f"{deep_ratio:.2f}x (target >= {DEEP_TARGET:g}x; pure-Python path alone: "
          f"{py_ratio:.2f}x)")
    print(f"INFO: shallow dump-segment without CLI start-up / cat = "
          f"{max(shallow_s - startup_s, 0) / cat_s:.2f}x; library scan alone / cat = "
          f"{lib_shallow['best'] / cat_s:.2f}x")
    print(f"INFO: pylogctl deep records/s / aiokafka compiled = {aio_ratio:.2f}x (no target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
