"""Benchmark: ``pylogctl dump-segment`` on a ~1 GiB segment, against ``cat`` and other parsers.

Usage::

    python bench/dump_segment.py [--size-mib 1024] [--repeat 3] [--keep] [--no-kafka]
                                 [--dir /tmp/pylogctl-bench]

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
   d) ``pylogctl dump-segment --deep-iteration FILE > /dev/null``, and with
      ``--print-data-log`` (a line per record, key and payload printed), as records/s;
   e) Apache Kafka's own tool on the same file, as the anchor: ``kafka-dump-log --files FILE``
      (shallow: Kafka's batch lines) and ``kafka-dump-log --files FILE --deep-iteration
      --print-data-log``, stdout to ``/dev/null``, each timed as a command with its JVM start
      included (that is what an operator pays), run as its ``bin/`` script runs it on a full JIT
      (``deployed_kafka.tool_command``: ``-server``, 1 GiB heap); and both tools on an empty
      segment, which is start-up alone (the JVM's, and pylogctl's with ``dump-segment``
      imported). ``--no-kafka`` leaves Kafka out, and so does a machine without Java or the
      jars (``tests/kafka_jvm.missing_reason``), with the reason printed.

3. Outside every timing, checks that pylogctl prints what Kafka 4.x prints for the same
   options, line for line: both tools run at once over the same path, their stdouts read in
   lockstep through pipes and compared line by line over the whole output (not a prefix: a
   difference deep in the file, e.g. in one record shape, would be missed by a prefix, and
   streaming holds only one line of each in memory, where the deep output of a 1 GiB segment is
   about 1.2 GB). Unlike hashing both streams, this names the first differing line. A
   difference is reported, never fixed here, and does not stop the benchmark.

Fairness: every parser runs in its own child process (so a library's import-time switch is
honoured and no run inherits another one's garbage), on a warm page cache. pylogctl reads the
file through ``FileRecords`` (an mmap, its normal way); kafka-python and aiokafka get the whole
file as one ``bytes`` object read before the timed region (their normal input, the body of a
fetch response). None of the deep loops checks CRCs (none of the three libraries does while
iterating). Command-line timings include interpreter start-up, shown on its own line.
Against Kafka both sides are whole commands given the same path and writing the same text to
``/dev/null``; the JVM and the interpreter each start cold (no daemon, no class-data archive
beyond the JDK's default one), so the ratios are what running either tool costs. Each pylogctl
command set against Kafka's is timed in turn with it (Kafka, pylogctl, Kafka, ...; best of
``--repeat`` each), so that on a machine shared with other jobs both see the same load; the
Kafka table's shallow pylogctl row is that paired measurement, not the one timed beside ``cat``.

Prints tables and one ``TARGET MET`` / ``TARGET MISSED`` line per target (shallow dump
<= 3x cat; pylogctl deep records/s >= 2x kafka-python; ``kafka-dump-log`` time / ``pylogctl
dump-segment`` time >= 2x, shallow and ``--deep-iteration --print-data-log``). It never fails
on a timing: this is a benchmark, not a test. The segment is deleted at the end unless
``--keep`` is given.
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
import tempfile
import time
from pathlib import Path

from workload import (BASE_TIMESTAMP, RECORDS_PER_BATCH, producer_batch, pylogctl_command,
                      value_pool, verdict, warm_page_cache)

SEGMENT_NAME = "00000000000000000000.log"
SHALLOW_TARGET = 3.0  # shallow dump wall time <= 3x cat
DEEP_TARGET = 2.0  # pylogctl deep records/s >= 2x kafka-python
KAFKA_TARGET = 2.0  # kafka-dump-log time / pylogctl dump-segment time, same options
KAFKA_DEEP = ("--deep-iteration", "--print-data-log")


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


def _time_once(argv: list[str], **env: str) -> float:
    """Wall time of one run of ``argv`` with stdout to /dev/null; it must exit 0."""
    t = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=_child_env(**env))
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)} exited {proc.returncode}:\n"
                         f"{proc.stderr.decode(errors='replace')}")
    return elapsed


def time_command(argv: list[str], repeat: int, **env: str) -> float:
    """Best wall time of ``argv`` over ``repeat`` runs, stdout to /dev/null."""
    return min(_time_once(argv, **env) for _ in range(repeat))


def time_alternately(commands: list[list[str]], repeat: int) -> list[float]:
    """Best wall time of each command, the commands run in turn ``repeat`` times (A B A B ...):
    on a machine shared with other jobs, each command of a pair sees the same load."""
    times = [[] for _ in commands]
    for _ in range(repeat):
        for argv, runs in zip(commands, times):
            runs.append(_time_once(argv))
    return [min(runs) for runs in times]


# -- Apache Kafka's kafka-dump-log, the anchor ----------------------------------------------------

def kafka_tool() -> tuple[str | None, object, str]:
    """``(reason Kafka cannot run or None, tool_command, Kafka version)``.

    Imported here, not at the top: ``kafka_jvm`` imports pytest, and the timing workers (which
    import this module) should not carry its objects through their garbage collections.
    """
    from deployed_kafka import tool_command
    from kafka_jvm import KAFKA_VERSION, missing_reason

    return missing_reason(), tool_command, KAFKA_VERSION


def compare_outputs(kafka_argv: list[str], ours_argv: list[str]) -> dict:
    """Run both commands at once and compare their stdouts line by line, in lockstep.

    Returns the line counts of each and ``first``: ``None`` when identical, else
    ``(line number, Kafka's line, pylogctl's line)`` (``None`` for a line past a stream's end).
    Only a line of each is held at a time, so the deep output of a large segment fits.
    """
    with tempfile.TemporaryFile() as k_err, tempfile.TemporaryFile() as o_err:
        kafka = subprocess.Popen(kafka_argv, stdout=subprocess.PIPE, stderr=k_err,
                                 bufsize=1 << 20, env=_child_env())
        ours = subprocess.Popen(ours_argv, stdout=subprocess.PIPE, stderr=o_err,
                                bufsize=1 << 20, env=_child_env())
        n_kafka = n_ours = 0
        first = None
        with kafka, ours:  # closes the pipes and waits for both
            k_read, o_read = kafka.stdout.readline, ours.stdout.readline
            while True:
                a, b = k_read(), o_read()
                if not a and not b:
                    break
                n_kafka += bool(a)
                n_ours += bool(b)
                if a != b and first is None:
                    first = (max(n_kafka, n_ours), a or None, b or None)
        for name, proc, err in (("kafka-dump-log", kafka, k_err), ("pylogctl", ours, o_err)):
            if proc.returncode != 0:
                err.seek(0)
                raise SystemExit(f"bench: {name} exited {proc.returncode} while comparing:\n"
                                 f"{err.read()[-2000:].decode(errors='replace')}")
    return {"kafka_lines": n_kafka, "ours_lines": n_ours, "first": first}


def _describe_difference(first: tuple) -> list[str]:
    """The first differing line of each tool, cut around the first differing character."""
    line_no, a, b = first
    a = a.decode(errors="replace").rstrip("\n") if a is not None else None
    b = b.decode(errors="replace").rstrip("\n") if b is not None else None
    col = 0
    if a is not None and b is not None:
        col = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(col - 120, 0)

    def cut(text):
        if text is None:
            return "<end of output>"
        return ("..." if start else "") + text[start:start + 400] + \
            ("..." if len(text) > start + 400 else "")

    if a == b:
        a, b = repr(first[1]), repr(first[2])  # they differ only in the line ending
    return [f"    first difference at line {line_no:,}, column {col + 1}:",
            f"    kafka-dump-log: {cut(a)}", f"    pylogctl:       {cut(b)}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024, help="segment size (default 1024)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the segment afterwards")
    ap.add_argument("--dir", default="/tmp/pylogctl-bench", help="where to build the segment")
    ap.add_argument("--no-kafka", action="store_true",
                    help="leave Apache Kafka's kafka-dump-log out")
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
    empty = work / "empty" / SEGMENT_NAME  # start-up alone: a segment with nothing in it
    try:
        return _run(seg, empty, args)
    finally:
        empty.unlink(missing_ok=True)
        try:
            empty.parent.rmdir()
        except OSError:
            pass
        if not args.keep:
            seg.unlink(missing_ok=True)
            if made_dir:
                try:
                    work.rmdir()  # only a directory this run created, and only if empty
                except OSError:
                    pass
        else:
            print(f"kept {seg}")


def _run(seg: Path, empty: Path, args) -> int:
    repeat = args.repeat
    if args.no_kafka:
        kafka_reason, tool_command, kafka_version = "--no-kafka given", None, None
    else:
        kafka_reason, tool_command, kafka_version = kafka_tool()
    if kafka_reason:
        print(f"Leaving Apache Kafka out: {kafka_reason}", flush=True)
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
    empty.parent.mkdir(exist_ok=True)
    empty.touch()
    # the commands set against Kafka's; with Kafka, each is timed in turn with Kafka's own
    pairs = {"empty": (str(empty),), "shallow": (str(seg),), "deep": (str(seg), *KAFKA_DEEP)}
    kafka, ours = {}, {}
    if kafka_reason:
        ours = {name: time_command(cli + ["dump-segment", *a], repeat)
                for name, a in pairs.items()}
    else:
        print(f"Measuring Apache Kafka {kafka_version}'s kafka-dump-log and pylogctl "
              f"dump-segment in turn (best of {repeat}) ...", flush=True)
        for name, a in pairs.items():
            kafka[name], ours[name] = time_alternately(
                [tool_command("kafka-dump-log", "--files", *a), cli + ["dump-segment", *a]],
                repeat)
        # outside the timings: the same text for the same options, over the whole output
        print("Comparing kafka-dump-log's and pylogctl's output line by line ...", flush=True)
        same = {name: compare_outputs(tool_command("kafka-dump-log", "--files", *pairs[name]),
                                      cli + ["dump-segment", *pairs[name]])
                for name in ("shallow", "deep")}
        expected_lines = {"shallow": 2 + batches, "deep": 2 + batches + records}
        for name, r in same.items():
            if r["first"] is None and r["kafka_lines"] != expected_lines[name]:
                raise SystemExit(f"bench: kafka-dump-log printed {r['kafka_lines']:,} lines "
                                 f"({name}), expected {expected_lines[name]:,}")
    cli_data_s, empty_s = ours["deep"], ours["empty"]

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
            ("  same, PYLOGCTL_NO_SPEEDUPS=1", cli_deep_py_s),
            ("  same, with --print-data-log (a line per record)", cli_data_s)]
    for name, s in rows:
        print(f"{name:<{w}} {s:>8.3f} {records / s:>11,.0f} {kp / s:>7.2f} {aio / s:>7.2f}")
    print()
    print("Inputs: pylogctl reads the file through FileRecords (mmap); kafka-python and aiokafka")
    print("parse one bytes object holding the file, read before the timed region. Each parser runs")
    print("in its own process; CLI rows include interpreter start-up.")
    print()
    if kafka:
        print(f"{'Against Apache Kafka ' + kafka_version + ' (commands, stdout > /dev/null)':<{w}}"
              f" {'seconds':>8} {'GiB/s':>7} {'x cat':>7}")
        for name, s in (("kafka-dump-log --files FILE  (shallow, JVM start included)",
                         kafka["shallow"]),
                        ("pylogctl dump-segment FILE  (shallow)", ours["shallow"]),
                        ("kafka-dump-log --files FILE --deep-iteration --print-data-log",
                         kafka["deep"]),
                        ("pylogctl dump-segment FILE --deep-iteration --print-data-log",
                         cli_data_s)):
            print(f"{name:<{w}} {s:>8.3f} {gib / s:>7.2f} {s / cat_s:>7.2f}")
        for name, s in (("kafka-dump-log on an empty segment  (JVM start-up alone)",
                         kafka["empty"]),
                        ("pylogctl dump-segment on an empty segment  (start-up alone)",
                         empty_s)):
            print(f"{name:<{w}} {s:>8.3f} {'-':>7} {s / cat_s:>7.2f}")
        print()
        for name, label in (("shallow", "shallow"), ("deep", " ".join(KAFKA_DEEP))):
            r = same[name]
            if r["first"] is None:
                print(f"Same text as kafka-dump-log ({label}): all {r['kafka_lines']:,} lines "
                      f"identical")
            else:
                print(f"DIFFERENT from kafka-dump-log ({label}): Kafka printed "
                      f"{r['kafka_lines']:,} lines, pylogctl {r['ours_lines']:,}")
                print("\n".join(_describe_difference(r["first"])))
        print()
    else:
        print(f"pylogctl dump-segment on an empty segment (start-up alone): {empty_s:.3f} s; "
              f"Apache Kafka left out: {kafka_reason}")
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
    if kafka:
        for name, label in (("shallow", "shallow"), ("deep", " ".join(KAFKA_DEEP))):
            ratio = kafka[name] / ours[name]
            note = "" if same[name]["first"] is None else "; the outputs DIFFER, see above"
            print(f"{verdict(ratio >= KAFKA_TARGET)}: kafka-dump-log / pylogctl dump-segment "
                  f"time, {label} = {ratio:.2f}x (target >= {KAFKA_TARGET:g}x{note})")
        # best-of times of separate commands: on a loaded machine pylogctl's shallow run can be
        # within start-up noise of its empty-segment run, where no ratio means anything
        net = [f"{(kafka[name] - kafka['empty']) / (ours[name] - empty_s):.2f}x"
               if ours[name] - empty_s > 0.01 else "n/a (within start-up noise)"
               for name in ("shallow", "deep")]
        print(f"INFO: same, start-up subtracted on both sides (empty-segment runs): shallow "
              f"{net[0]}, {' '.join(KAFKA_DEEP)} {net[1]}; Kafka's JVM start-up / "
              f"pylogctl's = {kafka['empty'] / empty_s:.2f}x")
        print(f"INFO: {' '.join(KAFKA_DEEP)}: kafka-dump-log / cat = {kafka['deep'] / cat_s:.2f}x,"
              f" pylogctl / cat = {cli_data_s / cat_s:.2f}x")
    else:
        print(f"SKIPPED: the kafka-dump-log targets (>= {KAFKA_TARGET:g}x): {kafka_reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
