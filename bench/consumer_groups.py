"""Benchmark: ``pylogctl consumer-groups`` on a 1 GiB ``__consumer_offsets`` of 10,000 groups.

Usage::

    python bench/consumer_groups.py [--size-mib 1024] [--groups 10000] [--repeat 3] [--keep]
                                    [--dir /tmp/pylogctl-bench-groups]

What it does, in one run and over the same bytes:

1. Builds a log dir with pylogctl's writer (``RecordBatchBuilder``, the coordinator record
   encoders): ``__consumer_offsets-0`` .. ``-49`` (each group in the partition Kafka's
   ``partitionFor`` gives it) and 40 data topics of 12 partitions. Each group is a classic
   consumer group reading 1-3 of the topics with 1-4 members (range-style assignment). Round
   after round, as consumers with ``auto.commit.interval.ms`` do, every member commits its
   partitions in one batch (key v1, value v3, the offsets moving on); every 10th round the group
   rebalances (a ``GroupMetadataValue`` v3 with the members' subscriptions and assignments).
   2% of the groups commit transactionally (every 5th transaction aborted), 10% end ``Empty``
   and 2% are deleted (offset and group tombstones). Rounds continue until the offsets topic
   reaches ``--size-mib``. Data partitions hold one batch at their end offset, and
   ``replication-offset-checkpoint`` a high watermark a few offsets below it.
2. Checks, outside the timings, that ``--describe --all-groups -o json`` shows exactly the
   committed offsets the generator wrote (transactions honoured, deleted groups gone).
3. Measures on a warm page cache (best of ``--repeat``), each library run in its own process:

   a) floors: reading every offsets segment (``readinto``, no parsing), and a Python batch
      header loop computing every batch's CRC-32C (what any validating reader pays);
   b) reference: a replay with kafka-python's record parser (every record of every batch, a
      dict keyed by record key: the last record wins), the simplest correct replay, against
      pylogctl's in-process load of the same partitions (the first ``--sample``; kafka-python
      needs minutes for the whole topic);
   c) pylogctl's library load of every partition (``OffsetsTopic(...).load()``, in worker
      processes, one per CPU);
   d) the CLI: ``--describe --all-groups`` (text and ``-o json``), ``--list``, and
      ``--describe --group G`` for five groups (the slowest is reported), start-up included.

Prints seconds, MB/s (offsets-topic bytes / time) and ratios to the floors, and ``TARGET MET``
/ ``TARGET MISSED`` for the targets (``--describe --all-groups`` under 5 s, ``--describe
--group G`` under 0.5 s). It never fails on a timing. The data is deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import struct
import subprocess
import sys
import time
from pathlib import Path

from workload import BASE_TIMESTAMP, crc_floor, pylogctl_command, run_in_new_dir, verdict

OFFSETS_PARTITIONS = 50
TOPICS = [f"topic-{i:02d}" for i in range(40)]
TOPIC_PARTITIONS = 12
REBALANCE_EVERY = 10
TXN_SHARE, EMPTY_SHARE, DELETED_SHARE = 0.02, 0.10, 0.02
ALL_GROUPS_TARGET, ONE_GROUP_TARGET = 5.0, 0.5
ROUND_MS = 5000
_VALUE_V3 = struct.Struct(">hqihq")  # version, offset, leader epoch, "" metadata, timestamp


# -- the workload ----------------------------------------------------------------------------

class BenchGroup:
    """One consumer group of the workload and what it committed last."""

    def __init__(self, rng: random.Random, index: int) -> None:
        from pylogctl.groups.partitioner import partition_for

        self.id = f"group-{index:05d}"
        self.partition = partition_for(self.id, OFFSETS_PARTITIONS)
        self.topics = sorted(rng.sample(TOPICS, rng.randint(1, 3)))
        self.members = [f"consumer-{self.id}-{m}-{rng.getrandbits(64):016x}"
                        for m in range(rng.randint(1, 4))]
        self.assignment = {m: [] for m in self.members}
        for topic in self.topics:
            for p in range(TOPIC_PARTITIONS):
                self.assignment[self.members[p * len(self.members) // TOPIC_PARTITIONS]].append(
                    (topic, p))
        self.position = {tp: rng.randint(0, 1000) for ms in self.assignment.values() for tp in ms}
        self.rate = rng.randint(50, 500)
        self.producer_id = 10_000 + index if rng.random() < TXN_SHARE else None
        self.txns = 0
        self.generation = 0
        self.committed: dict[tuple[str, int], int] = {}
        self.keys: dict[tuple[str, int], bytes] = {}


def _metadata_value(group: BenchGroup, empty: bool, ts: int) -> bytes:
    from pylogctl.format.group_coordinator_records import (CONSUMER_PROTOCOL_ASSIGNMENT,
                                                           CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                           encode_consumer_protocol,
                                                           encode_group_record)

    members = [] if empty else [{
        "memberId": m, "groupInstanceId": None, "clientId": m.rsplit("-", 1)[0],
        "clientHost": f"/10.0.{group.partition}.{i + 1}", "rebalanceTimeout": 300000,
        "sessionTimeout": 45000,
        "subscription": encode_consumer_protocol(1, {"topics": group.topics, "userData": None,
                                                     "ownedPartitions": []},
                                                 CONSUMER_PROTOCOL_SUBSCRIPTION),
        "assignment": encode_consumer_protocol(1, {"assignedPartitions": [
            {"topic": t, "partitions": [p for tt, p in group.assignment[m] if tt == t]}
            for t in group.topics if any(tt == t for tt, _ in group.assignment[m])],
            "userData": None}, CONSUMER_PROTOCOL_ASSIGNMENT)}
        for i, m in enumerate(group.members)]
    return encode_group_record(2, {"group": group.id}, 3, {
        "protocolType": "consumer", "generation": group.generation,
        "protocol": None if empty else "range", "leader": None if empty else group.members[0],
        "currentStateTimestamp": ts, "members": members})[1]


class PartitionWriter:
    """Appends batches to one ``__consumer_offsets`` partition's only segment."""

    def __init__(self, log_dir: Path, partition: int) -> None:
        path = log_dir / f"__consumer_offsets-{partition}"
        path.mkdir()
        (path / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
        self.file = open(path / "00000000000000000000.log", "wb", buffering=1 << 20)
        self.offset = 0
        self.bytes = 0
        self.batches = 0

    def write(self, records: list[tuple[bytes, bytes | None]], ts: int,
              producer_id: int | None = None) -> None:
        from pylogctl.format.builder import RecordBatchBuilder

        builder = RecordBatchBuilder(base_offset=self.offset, partition_leader_epoch=0,
                                     producer_id=-1 if producer_id is None else producer_id,
                                     producer_epoch=-1 if producer_id is None else 0,
                                     is_transactional=producer_id is not None)
        for key, value in records:
            builder.append(ts, key, value)
        self._append(builder.build(), builder.next_offset())

    def marker(self, producer_id: int, commit: bool, ts: int) -> None:
        from pylogctl.format.builder import build_end_txn_marker

        self._append(build_end_txn_marker(offset=self.offset, producer_id=producer_id,
                                          producer_epoch=0, commit=commit, coordinator_epoch=0,
                                          timestamp=ts, partition_leader_epoch=0),
                     self.offset + 1)

    def _append(self, data: bytes, next_offset: int) -> None:
        self.file.write(data)
        self.bytes += len(data)
        self.batches += 1
        self.offset = next_offset


def _commit(writer: PartitionWriter, group: BenchGroup, member: str, ts: int,
            rng: random.Random) -> None:
    from pylogctl.format.group_coordinator_records import encode_group_record

    records = []
    staged = {}
    for tp in group.assignment[member]:
        key = group.keys.get(tp)
        if key is None:
            key = group.keys[tp] = encode_group_record(
                1, {"group": group.id, "topic": tp[0], "partition": tp[1]})[0]
        group.position[tp] += rng.randint(group.rate // 2, group.rate)
        staged[tp] = group.position[tp]
        records.append((key, _VALUE_V3.pack(3, staged[tp], 0, 0, ts)))
    if group.producer_id is None:
        writer.write(records, ts)
        group.committed.update(staged)
        return
    writer.write(records, ts, group.producer_id)
    group.txns += 1
    commit = group.txns % 5 != 0
    writer.marker(group.producer_id, commit, ts)
    if commit:
        group.committed.update(staged)


def build(log_dir: Path, size_bytes: int, n_groups: int, seed: int = 20240601) -> dict:
    """Write the log dir; return what the groups should show (``expected``) and the sizes."""
    from pylogctl.format.group_coordinator_records import encode_group_record

    rng = random.Random(seed)
    log_dir.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    groups = [BenchGroup(rng, i) for i in range(n_groups)]
    writers = [PartitionWriter(log_dir, p) for p in range(OFFSETS_PARTITIONS)]
    ts = BASE_TIMESTAMP
    rounds = 0
    while sum(w.bytes for w in writers) < size_bytes:
        for group in groups:
            writer = writers[group.partition]
            if rounds % REBALANCE_EVERY == 0:
                group.generation += 1
                writer.write([(encode_group_record(2, {"group": group.id})[0],
                               _metadata_value(group, False, ts))], ts)
            for member in group.members:
                _commit(writer, group, member, ts, rng)
        rounds += 1
        ts += ROUND_MS
    expected = {}
    for group in groups:
        writer = writers[group.partition]
        fate = rng.random()
        if fate < DELETED_SHARE:
            writer.write([(k, None) for k in group.keys.values()], ts)
            writer.write([(encode_group_record(2, {"group": group.id})[0], None)], ts)
            continue
        if fate < DELETED_SHARE + EMPTY_SHARE:
            group.generation += 1
            writer.write([(encode_group_record(2, {"group": group.id})[0],
                           _metadata_value(group, True, ts))], ts)
        expected[group.id] = {f"{t}:{p}": o for (t, p), o in group.committed.items()}
    for w in writers:
        w.file.close()
    ends = _data_partitions(log_dir, groups, rng)
    hw = {("__consumer_offsets", p): w.offset for p, w in enumerate(writers)}
    hw.update({tp: end - rng.randint(0, 5) for tp, end in ends.items()})
    entries = [f"{t} {p} {o}" for (t, p), o in sorted(hw.items())]
    (log_dir / "replication-offset-checkpoint").write_text(
        f"0\n{len(entries)}\n" + "".join(e + "\n" for e in entries))
    (log_dir / "recovery-point-offset-checkpoint").write_text(
        f"0\n{len(entries)}\n" + "".join(e + "\n" for e in entries))
    (log_dir / "log-start-offset-checkpoint").write_text("0\n0\n")
    return {"bytes": sum(w.bytes for w in writers), "batches": sum(w.batches for w in writers),
            "records": sum(w.offset for w in writers), "rounds": rounds, "expected": expected,
            "groups": sorted(expected)}


def _data_partitions(log_dir: Path, groups: list[BenchGroup], rng: random.Random
                     ) -> dict[tuple[str, int], int]:
    """One batch per data partition, at an end offset past every group's position."""
    from pylogctl.format.builder import RecordBatchBuilder

    ends: dict[tuple[str, int], int] = {}
    for group in groups:
        for tp, pos in group.position.items():
            ends[tp] = max(ends.get(tp, 0), pos)
    for (topic, p), end in list(ends.items()):
        end += rng.randint(10, 1000)
        ends[(topic, p)] = end
        path = log_dir / f"{topic}-{p}"
        path.mkdir()
        (path / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
        builder = RecordBatchBuilder(base_offset=end - 1, partition_leader_epoch=0)
        builder.append(BASE_TIMESTAMP, b"k", b"v")
        (path / "00000000000000000000.log").write_bytes(builder.build())
    return ends


def check(cli: list[str], log_dir: Path, info: dict) -> None:
    """The CLI's committed offsets are exactly the ones the generator left."""
    proc = subprocess.run(cli + ["consumer-groups", str(log_dir), "--describe", "--all-groups",
                                 "-o", "json"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench: consumer-groups failed:\n{proc.stderr}")
    seen: dict[str, dict[str, int]] = {}
    for row in json.loads(proc.stdout):
        if row["currentOffset"] is not None:
            seen.setdefault(row["group"], {})[f"{row['topic']}:{row['partition']}"] = \
                row["currentOffset"]
        if row["logEndOffset"] is None or (row["lag"] or 0) < 0:
            raise SystemExit(f"bench: unexpected end offset in {row}")
    expected = {g: o for g, o in info["expected"].items() if o}
    if seen != expected:
        wrong = sorted(set(seen) ^ set(expected) | {g for g in seen if seen[g] != expected.get(g)})
        raise SystemExit(f"bench: committed offsets differ from the generator's for "
                         f"{len(wrong)} groups, e.g. {wrong[:3]}")


# -- what the child processes time -----------------------------------------------------------

def _logs(log_dir: str, sample: int | None = None) -> list[str]:
    """The offsets segments, or those of partitions 0 .. sample-1."""
    parts = range(OFFSETS_PARTITIONS if sample is None else sample)
    return [str(p) for n in parts
            for p in sorted(Path(log_dir).glob(f"__consumer_offsets-{n}/*.log"))]


def _read(log_dir: str) -> int:
    buf = bytearray(8 << 20)
    n = 0
    for path in _logs(log_dir):
        with open(path, "rb", buffering=0) as f:
            while (k := f.readinto(buf)):
                n += k
    return n


def _kafka_python(log_dir: str, sample: int) -> int:
    from kafka.record import MemoryRecords

    n = 0
    for path in _logs(log_dir, sample):
        latest = {}
        records = MemoryRecords(Path(path).read_bytes())
        while (batch := records.next_batch()) is not None:
            for record in batch:
                latest[record.key] = record.value
                n += 1
    return n


def _library(log_dir: str, sample: int) -> int:
    from pylogctl.groups.offsets_topic import OffsetsTopic
    from pylogctl.groups.replicas import LogDirs

    return len(OffsetsTopic(LogDirs([log_dir])).load().groups)


def _library_sample(log_dir: str, sample: int) -> int:
    """The same partitions as the kafka-python reference, in-process."""
    from pylogctl.groups.group_loader import load_offsets_partition

    return sum(load_offsets_partition(Path(p).parent, int(Path(p).parent.name.rsplit("-")[-1]))
               .records for p in _logs(log_dir, sample))


def _cpu() -> float:
    """CPU seconds of this process and of the children it waited for (a load's workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def worker(kind: str, log_dir: str, repeat: int, sample: int) -> None:
    fn = {"read": _read, "crc": lambda d: crc_floor(_logs(d)), "kafka-python": _kafka_python,
          "library": _library, "library-sample": _library_sample}[kind]
    runs, count = [], 0
    for _ in range(repeat):
        gc.collect()
        t, c = time.perf_counter(), _cpu()
        count = fn(log_dir, sample) if kind not in ("read", "crc") else fn(log_dir)
        runs.append((time.perf_counter() - t, _cpu() - c))
    best, cpu = min(runs)
    print(json.dumps({"kind": kind, "best": best, "cpu": cpu, "count": count}))


def run_worker(kind: str, log_dir: Path, repeat: int, sample: int = 0) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", kind, "--dir", str(log_dir),
                           "--repeat", str(repeat), "--sample", str(sample)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench: {kind} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def time_cli(argv: list[str], repeat: int) -> tuple[float, float]:
    """Best ``(wall, CPU)`` seconds of ``argv`` (stdout to /dev/null), worker processes'
    CPU included; it must exit 0."""
    runs = []
    for _ in range(repeat):
        t, c = time.perf_counter(), _children_cpu()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        runs.append((time.perf_counter() - t, _children_cpu() - c))
        if proc.returncode != 0:
            raise SystemExit(f"bench: {' '.join(argv)} exited {proc.returncode}:\n"
                             f"{proc.stderr.decode(errors='replace')}")
    return min(runs)


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


# -- the parent --------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=1024, help="offsets topic size (1024)")
    ap.add_argument("--groups", type=int, default=10_000, help="number of groups (10000)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N timings (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the log dir afterwards")
    ap.add_argument("--dir", default="/tmp/pylogctl-bench-groups",
                    help="the log dir to build (created; must not exist yet)")
    ap.add_argument("--sample", type=int, default=5,
                    help="partitions the kafka-python reference replays (default 5)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.dir, args.repeat, args.sample)
        return 0
    if args.size_mib < 1 or args.groups < 1 or args.repeat < 1:
        ap.error("--size-mib, --groups and --repeat must be at least 1")
    log_dir = Path(args.dir)
    return run_in_new_dir(ap.error, log_dir, args.keep, lambda: _run(log_dir, args))


def _run(log_dir: Path, args) -> int:
    repeat = args.repeat
    print(f"Building {log_dir}: {OFFSETS_PARTITIONS} __consumer_offsets partitions, "
          f"{args.size_mib} MiB, {args.groups:,} groups ...", flush=True)
    t = time.perf_counter()
    info = build(log_dir, args.size_mib << 20, args.groups)
    size = info["bytes"]
    print(f"  {size / 2**20:,.0f} MiB, {info['batches']:,} batches, {info['records']:,} records "
          f"({info['rounds']} commit rounds); built in {time.perf_counter() - t:.1f} s",
          flush=True)
    cli = pylogctl_command()
    check(cli, log_dir, info)
    print("  checked: --describe --all-groups -o json shows exactly the offsets written",
          flush=True)
    _read(str(log_dir))  # warm the page cache

    print(f"Measuring (best of {repeat}) ...", flush=True)
    read = run_worker("read", log_dir, repeat)
    crc = run_worker("crc", log_dir, repeat)
    if crc["count"] != info["batches"]:
        raise SystemExit(f"bench: the CRC floor saw {crc['count']} batches, not "
                         f"{info['batches']}")
    sample = min(args.sample, OFFSETS_PARTITIONS)
    kp = run_worker("kafka-python", log_dir, 1, sample)
    kp_ours = run_worker("library-sample", log_dir, repeat, sample)
    sample_mb = sum(os.path.getsize(p) for p in _logs(str(log_dir), sample)) / 1e6
    lib = run_worker("library", log_dir, repeat)
    base = cli + ["consumer-groups", str(log_dir)]
    startup = time_cli(cli + ["--version"], repeat)
    all_text = time_cli(base + ["--describe", "--all-groups"], repeat)
    all_json = time_cli(base + ["--describe", "--all-groups", "-o", "json"], repeat)
    listing = time_cli(base + ["--list"], repeat)
    picks = random.Random(7).sample(info["groups"], 5)
    one = {g: time_cli(base + ["--describe", "--group", g], repeat) for g in picks}
    slowest = max(one, key=lambda g: one[g][0])

    from pylogctl.groups.replay import LastRecords

    replay = ("C (pylogctl.groups._offsets_scan)" if LastRecords is not None
              else "pure Python (C accelerator not built, or PYLOGCTL_NO_SPEEDUPS set)")
    mb = size / 1e6
    floor = crc["best"]
    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print()
    print(f"pylogctl consumer-groups benchmark -- {size / 2**20:,.0f} MiB __consumer_offsets "
          f"({OFFSETS_PARTITIONS} partitions, {info['batches']:,} batches, "
          f"{info['records']:,} records), {args.groups:,} groups; Python "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {load_avg:.1f}; "
          f"best of {repeat}, warm page cache; offsets replay: {replay}")
    print()
    w = 66
    print(f"{'':<{w}} {'seconds':>8} {'CPU s':>7} {'MB/s':>7} {'x CRC floor':>11}")
    rows = [("floor: read every offsets segment (no parsing)", (read["best"], read["cpu"])),
            ("floor: Python batch-header loop + crc32c of every batch", (floor, crc["cpu"])),
            ("pylogctl library: OffsetsTopic(...).load(), all partitions",
             (lib["best"], lib["cpu"])),
            ("consumer-groups --describe --all-groups  (CLI)", all_text),
            ("consumer-groups --describe --all-groups -o json  (CLI)", all_json),
            ("consumer-groups --list  (CLI)", listing),
            (f"consumer-groups --describe --group {slowest}  (CLI, slowest of 5)",
             one[slowest]),
            ("pylogctl --version  (CLI start-up alone)", startup)]
    for name, (s, cpu) in rows:
        rate = "-" if "--version" in name else f"{mb / s:,.0f}"
        print(f"{name:<{w}} {s:>8.3f} {cpu:>7.2f} {rate:>7} {s / floor:>11.2f}")
    print()
    print(f"Reference on partitions 0-{sample - 1} ({sample_mb:,.0f} MB, one process): "
          f"kafka-python replay {kp['best']:.2f} s ({kp['count'] / kp['best'] / 1e6:.2f} M "
          f"records/s), pylogctl's load {kp_ours['best']:.2f} s "
          f"({kp_ours['count'] / kp_ours['best'] / 1e6:.2f} M records/s): "
          f"{kp['best'] / kp_ours['best']:.1f}x kafka-python.")
    print("--describe --group times: " + ", ".join(f"{s:.3f}" for s, _ in one.values())
          + " s. CPU s: user + system of the process and its workers; with other work on the "
          "machine (load average above the CPU count) the wall times grow, the CPU times "
          "much less.")
    print()
    print(f"{verdict(all_text[0] < ALL_GROUPS_TARGET)}: --describe --all-groups "
          f"{all_text[0]:.2f} s"
          f" (target < {ALL_GROUPS_TARGET:g} s; {mb / all_text[0]:,.0f} MB/s; "
          f"{all_text[1]:.1f} CPU s)")
    print(f"{verdict(one[slowest][0] < ONE_GROUP_TARGET)}: --describe --group G "
          f"{one[slowest][0]:.3f} s at worst (target < {ONE_GROUP_TARGET:g} s; "
          f"{one[slowest][1]:.2f} CPU s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
