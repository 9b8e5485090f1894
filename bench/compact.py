"""Benchmark: compacting a partition, ``pylogctl compact`` against the real Kafka 4.4 log cleaner
on the same bytes, in the same run, and against reading those bytes.

Usage::

    python bench/compact.py [--size-mib 1024] [--segment-mib 256] [--repeat 3] [--no-kafka]
                            [--keep] [--profile] [--dir /tmp/pylogctl-bench-compact]

What it does, in one run and over the same bytes:

1. Builds one partition, ``bench-0``, of ``--size-mib`` MiB in segments of ``--segment-mib``
   MiB plus an empty active segment, with the producer workload of ``bench/workload.py``:
   batches of 16 records (~17 KiB), 10-byte keys drawn from 100,000, values of 900-1150 bytes
   (1 KiB on average), headers on a quarter of the records, one idempotent producer. About
   950,000 records over 100,000 keys: compaction keeps about 10% of them. The segments'
   indexes are built by ``LogSegment.recover`` and the log is closed by
   :class:`~pylogctl.storage.log.Log` (producer snapshots), as a broker leaves it.
2. Gives that partition to Kafka (unless ``--no-kafka``, or Kafka's jars or confluent-kafka are
   missing: then the log dir is pylogctl's own and the Kafka rows are left out, saying why).
   Kafka only serves a partition its KRaft metadata knows (``partition.metadata``'s topic id
   must be the metadata log's), so Kafka formats a log dir, starts, creates the topic ``bench``
   (1 partition, ``cleanup.policy=compact``, ``segment.bytes`` = the bench's segment size,
   ``min.compaction.lag.ms=0``, and ``min.cleanable.dirty.ratio=1.0``, which holds the cleaner
   off: Kafka cleans a log only when its dirty ratio is *above* the minimum) and stops cleanly.
   The built segments, indexes and producer snapshots then replace the topic's empty segment;
   Kafka's ``partition.metadata`` and ``leader-epoch-checkpoint`` (epoch 0 from offset 0, the
   epoch the batches carry) and its ``.kafka_cleanshutdown`` stay; the recovery point and high
   watermark of ``bench 0`` are set to the log end, so Kafka neither recovers nor truncates the
   partition. That dir is the pristine input of every run below, Kafka's and pylogctl's.
3. Reads the files once so the page cache is warm, then measures (best of ``--repeat``, every
   compaction on a fresh copy of the pristine dir, written back and read once first, each
   pylogctl row in its own process):

   a) the floor: decoding every record of every batch once (``FileRecords.batches()`` and
      ``RecordBatch.records()``, the C decoder): the least a record-level tool reading these
      bytes does; and two references, a plain read of the files' bytes and a Python loop over
      the batch headers computing each batch's CRC-32C;
   b) the library call ``pylogctl compact --execute`` makes (``Compaction(...)``: load the
      partition, build the offset map, clean every group, swap the cleaned segments in, write
      the cleaner checkpoint), and the dry run of the plan (no output written); and the span
      of pylogctl's own ``CleanerStats`` in that call (offset map, cleaning, swap: the span
      Kafka's statistics cover);
   c) ``pylogctl compact --execute`` on the log dir (the CLI, interpreter start-up included);
   d) Kafka's cleaner: the broker (``bench/deployed_kafka.py``: ``kafka-server-start.sh``'s
      JVM, default thread counts, so one cleaner thread and the default 128 MiB dedupe buffer;
      ``log.cleaner.backoff.ms=100``) starts on its copy; once it serves the partition and is
      idle, an ``IncrementalAlterConfigs`` sets ``min.cleanable.dirty.ratio=0.01`` and the
      cleaner thread picks the log up at its next check. Its timing is its own: the statistics
      block ``Log cleaner thread 0 cleaned log bench-0 (dirty section = [...]) ... MB of log
      processed in X seconds (Z MB/sec)`` Kafka's ``LogCleaner$CleanerThread`` logs per
      cleaning (to ``log-cleaner.log`` with Kafka's shipped log4j config; the harness's config
      sends it to ``server.log``). Seconds are taken as MiB processed / MiB per second (both
      printed to 0.1, where the seconds are printed to 0.1 s only). Kafka may clean in more than
      one pass: the passes are summed, and their dirty sections must cover the log from its
      start to the active segment. Each run is a fresh broker on a fresh copy; pylogctl gets
      the topic configs Kafka cleans under (``--config``: the same policy, segment size,
      ratio 0.01 and lag 0).

   Both tools get the same input bytes, and MB/s is the partition's bytes (10^6) over each
   one's seconds. Kafka's figure leaves out what its broker did before (loading the log) and
   after (the cleaner checkpoint); pylogctl's library and CLI rows include both, so the
   ratios to Kafka are conservative; the cleaner-statistics row compares the same span.

After the timings the results are checked: pylogctl's compacted log holds exactly each key's
latest record and ``pylogctl rebuild-index --verify`` passes; Kafka's cleaned partition holds
the same (offset, key) records as pylogctl's; whether the cleaned segment files are
byte-identical is reported (and, if not, the first batch that differs); and Kafka starts on
pylogctl's compacted dir and serves it: its log end offset, and every record consumed
(confluent-kafka) is pylogctl's survivor at the same offset.

Prints MB/s and ratios to the floor and to Kafka, and ``TARGET MET`` / ``TARGET MISSED`` for the
targets (at least Kafka's MB/s; at least 100 MB/s and within 4x of the floor). It never fails on
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
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from workload import (BASE_TIMESTAMP, KEY_FORMAT, RECORDS_PER_BATCH, crc_floor, producer_batch,
                      SegmentFiles, pylogctl_command, run_in_new_dir, value_pool, verdict,
                      warm_page_cache)

TOPIC = "bench"
PARTITION = f"{TOPIC}-0"
NOW_MS = BASE_TIMESTAMP + 86_400_000
TARGET_KAFKA = 1.0
TARGET_MBPS = 100.0
TARGET_RATIO = 4.0
# Kafka cleans a log whose dirty ratio is above the minimum; a full dirty log's ratio is 1.0
HOLD = {"min.cleanable.dirty.ratio": "1.0"}
# Kafka 4's LogCleaner$CleanerThread.recordStats; "MB" there is MiB
CLEANED = re.compile(
    r"Log cleaner thread \d+ cleaned log (?P<log>\S+) \(dirty section = \[(?P<first>\d+), "
    r"(?P<end>\d+)\]\)\s+(?P<mib>[\d,.]+) MB of log processed in (?P<secs>[\d,.]+) seconds "
    r"\((?P<rate>[\d,.]+) MB/sec\)\.\s+Indexed [\d,.]+ MB in [\d.]+ seconds \([^,]+, "
    r"(?P<index_pct>[\d.]+)% of total time\).*?Start size: [\d,.]+ MB \((?P<read>[\d,]+) "
    r"messages\)\s+End size: (?P<out_mib>[\d,.]+) MB \((?P<written>[\d,]+) messages\)", re.S)


def topic_config(segment_bytes: int) -> dict[str, str]:
    """The compacted topic both cleaners clean: the bench's segment size, cleanable at once."""
    return {"cleanup.policy": "compact", "segment.bytes": str(segment_bytes),
            "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0"}


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
        (log_dir / name).write_text(format_checkpoint([f"{TOPIC} 0 {offset}"]))
    (log_dir / ".kafka_cleanshutdown").write_text("")
    return {"bytes": files.written, "batches": batches, "records": offset,
            "segments": len(bases)}


def segment_logs(log_dir: Path) -> list[str]:
    return sorted(str(p) for p in (log_dir / PARTITION).glob("*.log") if p.stat().st_size)


def fresh_copy(pristine: Path, target: Path) -> None:
    """A copy of the pristine dir, written back and in the page cache, so that no run is
    timed flushing or reading the copy."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(pristine, target)
    os.sync()
    warm_page_cache(segment_logs(target))


def records(log_dir: Path):
    """Every record of the partition's segments, in offset order."""
    from pylogctl.storage.file_records import FileRecords

    for path in segment_logs(log_dir):
        with FileRecords(path) as f:
            for batch in f.batches():
                yield from batch.records()


# -- Kafka: the partition in its KRaft log dir, its cleaner, serving pylogctl's result ------

def kafka_missing() -> str | None:
    """Why the real Kafka cannot take part here, or None."""
    from kafka_jvm import missing_reason

    reason = missing_reason()
    if reason is None:
        import importlib.util

        if importlib.util.find_spec("confluent_kafka") is None:  # topic, config, consuming
            reason = "confluent-kafka is not installed"
    return reason


def _admin(kafka):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": kafka.bootstrap, "log_level": 4})  # warnings up


def _wait_for_leader(admin, timeout: float = 60) -> None:
    from deployed_kafka import wait_for_leaders
    if not wait_for_leaders(admin, TOPIC, timeout):
        raise SystemExit(f"bench: Kafka's partition {PARTITION} has no leader after {timeout} s")


def _set_entry(path: Path, offset: int | None) -> None:
    """``bench 0 offset`` in a log-dir checkpoint (``None``: no entry), other entries kept."""
    from pylogctl.storage.checkpoint import read_offset_checkpoint, write_checkpoint_atomically

    entries = read_offset_checkpoint(path).entries if path.exists() else []
    lines = [f"{e.topic} {e.partition} {e.offset}" for e in entries
             if (e.topic, e.partition) != (TOPIC, 0)]
    write_checkpoint_atomically(path, lines + ([] if offset is None else
                                               [f"{TOPIC} 0 {offset}"]))


def kafka_log_dir(built: Path, log_dir: Path, work: Path, config: dict, end_offset: int) -> None:
    """Move the partition built in ``built`` into a log dir Kafka formatted and created the
    topic in (the cleaner held off by ``HOLD``), as the module docstring describes."""
    from confluent_kafka.admin import NewTopic
    from deployed_kafka import DeployedKafka

    kafka = DeployedKafka(log_dir, work)
    kafka.format()
    kafka.start()
    try:
        admin = _admin(kafka)
        admin.create_topics([NewTopic(TOPIC, 1, 1, config={**config, **HOLD})])[TOPIC].result(60)
        _wait_for_leader(admin)
        del admin  # disconnected before the broker stops, not left retrying
    finally:
        kafka.stop()
    part = log_dir / PARTITION
    if not all(p.exists() for p in (log_dir / ".kafka_cleanshutdown", part / "partition.metadata")):
        raise SystemExit(f"bench: Kafka did not leave a cleanly shut down {part}")
    for f in part.iterdir():  # its empty segment, indexes and snapshot
        if f.name not in ("partition.metadata", "leader-epoch-checkpoint"):
            f.unlink()
    for f in (built / PARTITION).iterdir():
        os.replace(f, part / f.name)
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        _set_entry(log_dir / name, end_offset)
    _set_entry(log_dir / "log-start-offset-checkpoint", None)  # the first segment's base, 0


def cleaner_passes(log_text: str) -> list[dict]:
    """Kafka's statistics blocks for ``bench-0``: dirty section, seconds, bytes, records."""
    passes = []
    for m in CLEANED.finditer(log_text):
        if m["log"] != PARTITION:
            continue
        mib, rate = float(m["mib"].replace(",", "")), float(m["rate"].replace(",", ""))
        secs = mib / rate if rate else float(m["secs"].replace(",", ""))  # 0.1 s precision
        passes.append({"first": int(m["first"]), "end": int(m["end"]), "secs": secs,
                       "index_secs": secs * float(m["index_pct"]) / 100,
                       "bytes_read": mib * 2**20,
                       "bytes_written": float(m["out_mib"].replace(",", "")) * 2**20,
                       "records_read": int(m["read"].replace(",", "")),
                       "records_written": int(m["written"].replace(",", ""))})
    return passes


def kafka_clean(pristine: Path, run: Path, end_offset: int, config: dict,
                timeout: float) -> dict:
    """Kafka's cleaner on a fresh copy of ``pristine`` (in ``run/logs``), to the log end."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource
    from deployed_kafka import DeployedKafka

    shutil.rmtree(run, ignore_errors=True)
    fresh_copy(pristine, run / "logs")
    kafka = DeployedKafka(run / "logs", run, {"log.cleaner.backoff.ms": 100})
    kafka.start(timeout=600)
    try:
        admin = _admin(kafka)
        _wait_for_leader(admin)
        time.sleep(2)  # the broker idle (start-up done, partition led) before the cleaner runs
        mark = len(kafka.log_text())
        change = ConfigResource("topic", TOPIC, incremental_configs=[ConfigEntry(
            "min.cleanable.dirty.ratio", config["min.cleanable.dirty.ratio"],
            incremental_operation=AlterConfigOpType.SET)])
        admin.incremental_alter_configs([change])[change].result(60)
        del admin
        deadline = time.monotonic() + timeout
        while True:
            text = kafka.log_text()[mark:]
            passes = cleaner_passes(text)
            if passes and max(p["end"] for p in passes) >= end_offset:
                break
            if "as uncleanable" in text or time.monotonic() > deadline:
                raise SystemExit(f"bench: Kafka's cleaner did not clean {PARTITION} to offset "
                                 f"{end_offset}:\n{kafka.log_tail(60)}")
            time.sleep(0.2)
    finally:
        kafka.stop()
    covered = 0  # the dirty sections, in order, from the log start to the active segment
    for p in sorted(passes, key=lambda p: p["first"]):
        if p["first"] > covered:
            raise SystemExit(f"bench: Kafka's cleaner passes leave [{covered}, {p['first']}) "
                             f"uncleaned: {passes}")
        covered = max(covered, p["end"])
    return {"secs": sum(p["secs"] for p in passes),
            "index_secs": sum(p["index_secs"] for p in passes), "passes": passes}


def kafka_serves(log_dir: Path, work: Path, survivors: list[tuple[int, bytes]]) -> dict:
    """Start Kafka on ``log_dir`` (pylogctl's compacted dir) and consume the whole partition:
    its offsets, whether each record is pylogctl's survivor, whether it loaded the partition
    without recovering it."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
    from deployed_kafka import DeployedKafka

    kafka = DeployedKafka(log_dir, work)
    kafka.start(timeout=600)
    try:
        _wait_for_leader(_admin(kafka))
        consumer = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": "bench-check",
                             "enable.auto.commit": False, "enable.partition.eof": True})
        low, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=30)
        consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
        got = []
        while True:
            msg = consumer.poll(30)
            if msg is None:
                raise SystemExit(f"bench: Kafka served {len(got)} records, then nothing in 30 s")
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    break
                raise SystemExit(f"bench: consuming from Kafka failed: {msg.error()}")
            got.append((msg.offset(), msg.key()))
        consumer.close()
    finally:
        kafka.stop()
    log = kafka.log_text()
    recovered = re.search(rf"Recovering unflushed segment \d+.* for {PARTITION}", log)
    return {"low": low, "high": high, "count": len(got), "same": got == survivors,
            "clean_load": "since clean shutdown file was found" in log and not recovered}


def compare_outputs(kafka_dir: Path, ours_dir: Path) -> dict:
    """Kafka's and pylogctl's cleaned partitions: the same (offset, key) records? The same
    segment files, byte for byte? If not, what the first differing batch differs in."""
    from pylogctl.format.record_batch import HEADER
    from pylogctl.storage.file_records import FileRecords

    theirs = [(r.offset, r.key) for r in records(kafka_dir)]
    ours = [(r.offset, r.key) for r in records(ours_dir)]
    names = {}
    for side, d in (("kafka", kafka_dir), ("pylogctl", ours_dir)):
        for suffix in ("log", "index", "timeindex"):
            for p in (d / PARTITION).glob(f"*.{suffix}"):
                names.setdefault(p.name, {})[side] = p
    same_files, differ, only = [], [], []
    for name in sorted(names):
        pair = names[name]
        if len(pair) < 2:
            only.append(f"{name} (only {', '.join(pair)})")
        elif pair["kafka"].read_bytes() == pair["pylogctl"].read_bytes():
            same_files.append(name)
        else:
            differ.append(name)
    first = None
    for name in differ:
        if not name.endswith(".log"):
            continue
        fields = ("baseOffset length partitionLeaderEpoch magic crc attributes lastOffsetDelta "
                  "baseTimestamp maxTimestamp producerId producerEpoch baseSequence "
                  "recordsCount").split()
        with FileRecords(names[name]["kafka"]) as a, FileRecords(names[name]["pylogctl"]) as b:
            ka, kb = list(a.batches()), list(b.batches())
            for x, y in zip(ka, kb):
                bx = bytes(a.view[x.position:x.position + x.size_in_bytes])
                by = bytes(b.view[y.position:y.position + y.size_in_bytes])
                if bx != by:
                    hx, hy = HEADER.unpack_from(bx), HEADER.unpack_from(by)
                    diff = [f"{f} {u} vs {v}" for f, u, v in zip(fields, hx, hy) if u != v]
                    first = (f"{name}: {len(ka)} batches (Kafka) vs {len(kb)} (pylogctl); first "
                             f"differing batch at offset {x.base_offset}: "
                             f"{'; '.join(diff) or 'same header, different records'}")
                    break
            else:
                first = f"{name}: {len(ka)} batches (Kafka) vs {len(kb)} (pylogctl)"
        break
    entries = {}  # index entries of the differing indexes: how the two index the same bytes
    for suffix, width in (("index", 8), ("timeindex", 12)):
        pairs = [names[n] for n in differ if n.endswith(f".{suffix}")]
        if pairs:
            entries[suffix] = tuple(sum(p[side].stat().st_size // width for p in pairs)
                                    for side in ("kafka", "pylogctl"))
    return {"same_records": theirs == ours, "records": len(ours), "kafka_records": len(theirs),
            "same_files": same_files, "differ": differ + only, "first": first,
            "entries": entries}


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


def _compact(log_dir: str, execute: bool, config: dict) -> dict:
    from pylogctl.tools.compact import CompactOptions, Compaction
    from pylogctl.tools.config import ConfigOptions

    options = CompactOptions(now_ms=NOW_MS, execute=execute, config=ConfigOptions(config))
    sections = [s for s in Compaction([log_dir], options).partitions()
                if str(s.entry) == PARTITION]  # Kafka's dir also holds __cluster_metadata-0
    section, = sections
    if section.error is not None or not section.rounds:
        raise SystemExit(f"bench: compaction failed: {section.error or section.decision}")
    stats = [r.stats for r in section.rounds]
    return {"count": section.bytes_after, "span": sum(s.elapsed_secs for s in stats),
            "index": sum(s.elapsed_index_secs for s in stats)}


def worker(kind: str, pristine: str, scratch: str, repeat: int, profile: bool,
           config: dict) -> None:
    """Child process: time ``kind`` best-of-``repeat`` and print one JSON line."""
    logs = segment_logs(Path(pristine))
    times, cpu, results = [], [], []
    for _ in range(repeat):
        target = pristine
        if kind in ("compact", "plan"):
            fresh_copy(Path(pristine), Path(scratch))
            target = scratch
        fn = {"read": lambda: _read_files(logs), "crc": lambda: crc_floor(logs),
              "decode": lambda: _decode_records(logs),
              "compact": lambda: _compact(target, True, config),
              "plan": lambda: _compact(target, False, config)}[kind]
        gc.collect()
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            t, c = time.perf_counter(), time.process_time()
            results.append(profiler.runcall(fn))
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            stats = pstats.Stats(profiler, stream=sys.stderr)
            stats.sort_stats("tottime").print_stats(18)
            break
        t, c = time.perf_counter(), time.process_time()
        results.append(fn())
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    result = results[times.index(min(times))]
    extra = result if isinstance(result, dict) else {"count": result}
    print(json.dumps({"kind": kind, "best": min(times), "times": times, "cpu": min(cpu),
                      **extra}))


# -- the parent: orchestration and report ------------------------------------------------------

def run_worker(kind: str, pristine: Path, scratch: Path, repeat: int, segment_mib: int,
               profile: bool = False) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", kind, "--pristine",
                           str(pristine), "--scratch", str(scratch), "--repeat", str(repeat),
                           "--segment-mib", str(segment_mib)]
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
        fresh_copy(pristine, scratch)
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


def check_result(pristine: Path, compacted: Path, cli: list[str]) -> list[tuple[int, bytes]]:
    """Every key's latest record is in the compacted log, and nothing else; its indexes
    verify. Returns the (offset, key) of the records left."""
    latest = {}
    for r in records(pristine):
        latest[r.key] = (r.offset, r.value)
    left = {r.offset: (r.key, r.value) for r in records(compacted)}
    if {o: v for o, (_, v) in left.items()} != {offset: value for offset, value in
                                                 latest.values()}:
        raise SystemExit("bench: the compacted log is not each key's latest record")
    # the partition only: Kafka 4.4 leaves its metadata log's active indexes preallocated
    verify = subprocess.run(cli + ["rebuild-index", "--verify", str(compacted / PARTITION)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if verify.returncode != 0:
        raise SystemExit(f"bench: rebuild-index --verify failed:\n{verify.stderr.decode()}")
    return [(o, k) for o, (k, _) in sorted(left.items())]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024, help="partition size (default 1024)")
    ap.add_argument("--segment-mib", type=int, default=256, help="segment size (default 256)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings (default 3)")
    ap.add_argument("--no-kafka", action="store_true",
                    help="leave the real Kafka broker (its cleaner, its checks) out")
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
        worker(args.worker, args.pristine, args.scratch, args.repeat, args.profile,
               topic_config(args.segment_mib << 20))
        return 0
    if args.size_mib < 1 or args.segment_mib < 1 or args.repeat < 1:
        ap.error("--size-mib, --segment-mib and --repeat must be at least 1")
    if args.segment_mib > 1023:
        ap.error("--segment-mib must be under 1024 (Kafka's segment.bytes is an int)")
    root = Path(args.dir)
    free = shutil.disk_usage(root.parent).free
    if free < 3.5 * (args.size_mib << 20):
        ap.error(f"{root.parent} has {free >> 20} MiB free; the run needs about "
                 f"{int(3.5 * args.size_mib)} MiB (the log, a copy for each tool, their output)")
    return run_in_new_dir(ap.error, root, args.keep, lambda: _run(root, args))


def _run(root: Path, args) -> int:
    repeat = args.repeat
    config = topic_config(args.segment_mib << 20)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    missing = "--no-kafka" if args.no_kafka else kafka_missing()
    pristine, scratch = root / "pristine", root / "scratch"
    built = root / "built" if missing is None else pristine
    print(f"Building {built / PARTITION} ({args.size_mib} MiB in {args.segment_mib} MiB "
          f"segments) ...", flush=True)
    t = time.perf_counter()
    info = build_log_dir(built, args.size_mib << 20, args.segment_mib << 20)
    size = info["bytes"]
    print(f"  {size / 2**20:,.0f} MiB, {info['segments']} segments, {info['batches']:,} batches, "
          f"{info['records']:,} records over 100,000 keys "
          f"({KEY_FORMAT.decode()}); built in {time.perf_counter() - t:.1f} s", flush=True)
    if missing is None:
        print(f"Moving it into a log dir Kafka formatted and created topic {TOPIC} in "
              f"({pristine}) ...", flush=True)
        kafka_log_dir(built, pristine, root / "kafka-create", config, info["records"])
        shutil.rmtree(built)
    else:
        print(f"The real Kafka is left out: {missing}")
    warm_page_cache(segment_logs(pristine))

    cli = pylogctl_command()
    print(f"Measuring (best of {repeat}) ...", flush=True)
    read = run_worker("read", pristine, scratch, repeat, args.segment_mib)
    crc = run_worker("crc", pristine, scratch, repeat, args.segment_mib)
    decode = run_worker("decode", pristine, scratch, repeat, args.segment_mib)
    if decode["count"] != info["records"]:
        raise SystemExit(f"bench: the floor decoded {decode['count']} records, expected "
                         f"{info['records']}")
    plan = run_worker("plan", pristine, scratch, repeat, args.segment_mib)
    compact = run_worker("compact", pristine, scratch, repeat, args.segment_mib)
    options = [a for k, v in config.items() for a in ("--config", f"{k}={v}")]
    cli_run = time_cli(cli + ["compact", str(scratch), "--now-ms", str(NOW_MS), *options,
                              "--execute"], pristine, scratch, repeat)
    survivors = check_result(pristine, scratch, cli)
    kafka_runs, agree, served = [], None, None
    if missing is None:
        timeout = 300 + size / 5e6  # a stuck cleaner, not a slow one
        for n in range(repeat):
            print(f"  Kafka's cleaner, run {n + 1} of {repeat} (a fresh broker on a fresh "
                  f"copy) ...", flush=True)
            kafka_runs.append(kafka_clean(pristine, root / "kafka-run", info["records"],
                                          config, timeout))
        agree = compare_outputs(root / "kafka-run" / "logs", scratch)
        print("  Kafka serving pylogctl's compacted dir ...", flush=True)
        served = kafka_serves(scratch, root / "kafka-serve", survivors)
    if args.profile:
        print("Profiling the library compaction (stderr) ...", flush=True)
        run_worker("compact", pristine, scratch, 1, args.segment_mib, profile=True)

    # -- report ----------------------------------------------------------------------------------
    mb = size / 1e6
    left = len(survivors)
    fl, fl_cpu = decode["best"], decode["cpu"]
    print()
    from pylogctl.storage import offset_map  # the children import it the same way
    from kafka_jvm import KAFKA_VERSION

    loops = "C" if offset_map._map_batch is not None else "Python (no extension)"
    print(f"pylogctl compaction benchmark -- {size / 2**20:,.0f} MiB partition, "
          f"{info['segments']} segments, {info['records']:,} records, {left:,} left after "
          f"compaction ({100 * left / info['records']:.1f}%), {compact['count'] / 2**20:,.0f} "
          f"MiB written; cleaner loops in {loops}; Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; best of {repeat}, "
          f"warm page cache; "
          f"{'Kafka ' + KAFKA_VERSION if missing is None else 'no Kafka: ' + missing}")
    print()
    kafka = min(kafka_runs, key=lambda r: r["secs"]) if kafka_runs else None
    w = 72
    print(f"{'':<{w}} {'seconds':>8} {'MB/s':>6} {'x floor':>7} {'CPU s':>7} {'x floor':>7}"
          f"{'  Kafka/this' if kafka else ''}")
    span = {"best": compact["span"], "cpu": None}
    rows = [("floor: decode every record once (FileRecords + RecordBatch.records)", decode),
            ("reference: read the files' bytes (8 MiB reads)", read),
            ("reference: Python batch-header loop + crc32c of every batch", crc),
            ("Compaction(...), executing  (compact --execute's library call)", compact),
            ("  its CleanerStats span (offset map + clean + swap, as Kafka's)", span),
            ("Compaction(...), planning  (dry run of the cleaning, nothing written)", plan),
            ("pylogctl compact --execute LOG_DIR  (CLI)", cli_run)]
    if kafka:
        rows.append((f"Kafka {KAFKA_VERSION} LogCleaner (its stats: offset map + clean + swap)",
                     {"best": kafka["secs"], "cpu": None}))
    for name, r in rows:
        s, c = r["best"], r["cpu"]
        cpu_cols = f"{c:>7.3f} {c / fl_cpu:>7.2f}" if c is not None else f"{'':>7} {'':>7}"
        vs = f"  {kafka['secs'] / s:>9.2f}x" if kafka else ""
        print(f"{name:<{w}} {s:>8.3f} {mb / s:>6,.0f} {s / fl:>7.2f} {cpu_cols}{vs}")
    print()
    print("Checked after timing: the compacted log holds exactly each key's latest record, and "
          "rebuild-index --verify passes. Each library row runs in its own process on a fresh "
          "copy; the CLI row includes start-up. CPU s is the process's CPU time (user + system): "
          "on a busy machine it shows what wall time hides."
          + (" Kafka/this = Kafka's seconds over the row's: the row's MB/s as a multiple of "
             "Kafka's." if kafka else ""))
    if kafka:
        print()
        passes = kafka["passes"]
        runs = ", ".join(f"{r['secs']:.3f}" for r in kafka_runs)
        sections = ", ".join(f"[{p['first']}, {p['end']}]" for p in passes)
        print(f"Kafka's cleaner: {len(kafka_runs)} run{'s' if len(kafka_runs) > 1 else ''}, "
              f"each a fresh broker (one cleaner thread, default dedupe buffer) on a fresh "
              f"copy, seconds {runs}; best run: {len(passes)} "
              f"pass{'es' if len(passes) > 1 else ''}, dirty sections {sections}; read "
              f"{sum(p['bytes_read'] for p in passes) / 2**20:,.1f} MiB "
              f"({sum(p['records_read'] for p in passes):,} records), wrote "
              f"{sum(p['bytes_written'] for p in passes) / 2**20:,.1f} MiB "
              f"({sum(p['records_written'] for p in passes):,} records); offset map "
              f"{kafka['index_secs']:.3f} s of it (pylogctl's: {compact['index']:.3f} s)")
        print(f"Same result: Kafka's and pylogctl's cleaned partitions hold "
              f"{'the same' if agree['same_records'] else 'DIFFERENT'} (offset, key) records "
              f"({agree['kafka_records']:,} and {agree['records']:,}); segment files "
              f"byte-identical: {len(agree['same_files'])} of "
              f"{len(agree['same_files']) + len(agree['differ'])}"
              + (f"; differing: {', '.join(agree['differ'])}" if agree["differ"] else ""))
        if agree["first"]:
            print(f"  first difference: {agree['first']}")
        for suffix, (k, p) in agree["entries"].items():
            print(f"  differing .{suffix} files: {k:,} entries (Kafka) vs {p:,} (pylogctl)")
        print(f"Kafka serves pylogctl's compacted dir: offsets [{served['low']}, "
              f"{served['high']}) (log end {info['records']:,}), {served['count']:,} records "
              f"consumed, {'each' if served['same'] else 'NOT each'} pylogctl's survivor at its "
              f"offset; partition loaded "
              f"{'without recovery' if served['clean_load'] else 'WITH RECOVERY'}")
        checks = [agree["same_records"], served["same"], served["high"] == info["records"]]
        if not all(checks):
            raise SystemExit("bench: Kafka's and pylogctl's results disagree (see above)")
    print()
    lib_mbps = mb / compact["best"]
    if kafka:
        k_mbps = mb / kafka["secs"]
        print(f"{verdict(cli_run['best'] <= kafka['secs'] / TARGET_KAFKA)}: pylogctl compact "
              f"--execute (CLI) = {mb / cli_run['best']:,.0f} MB/s = "
              f"{kafka['secs'] / cli_run['best']:.2f}x Kafka's cleaner ({k_mbps:,.0f} MB/s; "
              f"target >= {TARGET_KAFKA:g}x)")
        print(f"{verdict(compact['best'] <= kafka['secs'] / TARGET_KAFKA)}: compaction library "
              f"call = {lib_mbps:,.0f} MB/s = {kafka['secs'] / compact['best']:.2f}x Kafka's "
              f"(target >= {TARGET_KAFKA:g}x); the same span as Kafka's statistics: "
              f"{kafka['secs'] / compact['span']:.2f}x")
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
