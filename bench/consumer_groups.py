"""Benchmark: ``pylogctl consumer-groups`` on a 1 GiB ``__consumer_offsets`` of 10,000 groups,
against the real Kafka 4.4 group coordinator loading the same bytes at start-up.

Usage::

    python bench/consumer_groups.py [--size-mib 1024] [--groups 10000] [--repeat 3] [--keep]
                                    [--no-kafka] [--kafka-sample 20]
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
3. Prepares Kafka's copy, ``<--dir>-kafka`` (unless ``--no-kafka``, or Java, Kafka's jars or
   confluent-kafka are missing: then it says why and leaves Kafka out). Kafka must know
   ``__consumer_offsets`` in its KRaft metadata, so Kafka makes it: ``kafka-storage format``,
   a start (``bench/deployed_kafka.py``: ``kafka-server-start.sh``'s JVM, the broker's default
   threads; ``offsets.topic.num.partitions=50``, replication factor 1), the 40 data topics
   created (the coordinator serves offsets of unknown topics, but ``kafka-consumer-groups
   --describe`` fails on them), a FindCoordinator (``kafka-consumer-groups --describe``) that
   makes the broker create ``__consumer_offsets`` as for a first group, a clean stop. Each
   ``__consumer_offsets-N`` then gets the bench's segment and leader-epoch checkpoint (Kafka's
   ``partition.metadata`` kept, its empty producer snapshot dropped), indexes built by
   ``pylogctl rebuild-index`` (Kafka's own bytes; Kafka checks them as it opens the segments
   and would log a rebuild) and recovery point and high watermark at the log end: a broker
   restarting after a clean shutdown, which neither recovers nor truncates anything.
4. Measures pylogctl on a warm page cache (best of ``--repeat``), each library run in its own
   process:

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

5. The anchor: Kafka starts on its copy (page cache warm) and its group coordinator loads the
   50 partitions, as on any broker restart. The times are Kafka's own, from server.log:
   ``CoordinatorRuntime`` logs "Scheduling loading of metadata from __consumer_offsets-N" and
   "Finished loading of metadata from __consumer_offsets-N with epoch E in X ms where Y ms was
   spent in the scheduler. Loaded Z records which total to W bytes." (INFO, through
   ``org.apache.kafka``'s logger of ``tests/apache_kafka/log4j2.properties``). Kafka 4.4 loads
   on one thread (``CoordinatorLoaderImpl``'s scheduler; ``group.coordinator.threads``, 4,
   only complete the loads), which both reads the log and replays every record, so a
   partition's X counts its wait behind the others: the load is reported as the wall time
   from the first partition scheduled to the last loaded (what a restart waits for), beside
   the sum of X - Y, the broker's start to "Kafka Server started", and its start to the last
   partition loaded. Every record must be loaded (Z against the log's offsets), and any line
   saying a record could not be read or replayed, a load failed or a segment was recovered is
   printed as a finding.
6. Checks, outside the timings, that the running broker serves what pylogctl shows:
   ``kafka-consumer-groups --list`` the same groups, and ``--describe`` of ``--kafka-sample``
   groups (transactional and ``Empty`` ones among them; 0: ``--all-groups``) the same
   committed offset for every group, topic and partition.

Prints seconds, MB/s (offsets-topic bytes / time) and ratios to the floors, and ``TARGET MET``
/ ``TARGET MISSED`` for the targets (``--describe --all-groups`` under 5 s, ``--describe
--group G`` under 0.5 s, and Kafka's coordinator load / ``--describe --all-groups`` at least
1.0). It is fair to both: the same bytes on the same disk with a warm page cache, both
starting cold (a new process each; Kafka's JIT is as cold as at any restart), each doing all
it needs to serve every group (Kafka: read and replay all 50 partitions; pylogctl: the same,
and print every group). It never fails on a timing; it exits 1 if Kafka does not load or serve
the offsets as pylogctl does. The data is deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import re
import shutil
import struct
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from workload import (BASE_TIMESTAMP, crc_floor, pylogctl_command, run_in_new_dir, verdict,
                      warm_page_cache)

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
    kinds: dict[str, list[str]] = {"transactional": [], "empty": [], "deleted": []}
    for group in groups:
        writer = writers[group.partition]
        fate = rng.random()
        if fate < DELETED_SHARE:
            writer.write([(k, None) for k in group.keys.values()], ts)
            writer.write([(encode_group_record(2, {"group": group.id})[0], None)], ts)
            kinds["deleted"].append(group.id)
            continue
        if fate < DELETED_SHARE + EMPTY_SHARE:
            group.generation += 1
            writer.write([(encode_group_record(2, {"group": group.id})[0],
                           _metadata_value(group, True, ts))], ts)
            kinds["empty"].append(group.id)
        if group.producer_id is not None:
            kinds["transactional"].append(group.id)
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
            "groups": sorted(expected), "kinds": kinds,
            "ends": {p: w.offset for p, w in enumerate(writers)}}


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


def check(cli: list[str], log_dir: Path, info: dict) -> dict[str, dict[str, int]]:
    """The CLI's committed offsets are exactly the ones the generator left; returns them
    (group -> ``topic:partition`` -> offset), as ``--describe --all-groups -o json`` shows."""
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
    return seen


# -- the anchor: Kafka 4.4's group coordinator loading the same bytes -----------------------

# 50 partitions as the bench writes them (Kafka's default too); one broker, so one replica.
KAFKA_OVERRIDES = {"offsets.topic.num.partitions": OFFSETS_PARTITIONS,
                   "offsets.topic.replication.factor": 1}
_TS = r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] "
# CoordinatorRuntime's lines (kafka-coordinator-common), INFO through org.apache.kafka's logger
SCHEDULED = re.compile(_TS + r".*Scheduling loading of metadata from __consumer_offsets-(\d+) "
                       r"with epoch (\d+)", re.M)
FINISHED = re.compile(_TS + r".*Finished loading of metadata from __consumer_offsets-(\d+) with "
                      r"epoch (\d+) in (\d+)ms where (\d+)ms was spent in the scheduler\. "
                      r"Loaded (\d+) records which total to (\d+) bytes\.", re.M)
FAILED = re.compile(r"^.*Failed to load metadata from __consumer_offsets-(\d+) .*$", re.M)
SERVING = re.compile(_TS + r".*Kafka Server started", re.M)
LOGS_LOADED = re.compile(r"Loaded (\d+) logs in (\d+)ms")
# what would mean Kafka did not take the bytes as they are: a record it could not read or
# replay (CoordinatorLoaderImpl), a load that failed, a segment it recovered or re-indexed
PROBLEMS = re.compile(r"^.*(?:Deserializing record|Replaying record|Unknown record type|"
                      r"Failed to load metadata|Could not find offset index|[Cc]orrupt|"
                      r"Recovering unflushed segment|Truncating).*__consumer_offsets.*$", re.M)


def _stamp(text: str) -> float:
    """A log4j ``%d`` time (local, millisecond) as seconds since the epoch."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").timestamp()


class ServerLog:
    """The broker's server.log, read as it grows (only what the current start wrote)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size if path.exists() else 0
        self.text = ""

    def read(self) -> str:
        if self.path.exists():
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
            self.offset += len(data)
            self.text += data.decode(errors="replace")
        return self.text


def wait_loads(broker, log: ServerLog, timeout: float) -> None:
    """Until the coordinator finished (or failed) loading every ``__consumer_offsets``
    partition. Polled twice a second reading only the new lines, to take little CPU from
    the broker; the times come from the log's own stamps, not from this loop."""
    deadline = time.monotonic() + timeout
    quiet = time.monotonic() + 300
    while time.monotonic() < deadline:
        text = log.read()
        done = {m[2] for m in FINISHED.finditer(text)} | {m[1] for m in FAILED.finditer(text)}
        if len(done) >= OFFSETS_PARTITIONS:
            return
        if broker.proc.poll() is not None:
            raise SystemExit(f"bench: Kafka exited {broker.proc.returncode}:\n"
                             f"{broker.log_tail()}")
        if time.monotonic() > quiet and not SCHEDULED.search(text):
            # the leaders are elected seconds after the start: the lines are not logged
            raise SystemExit(f"bench: no CoordinatorRuntime load line in {log.path} 5 min "
                             f"after Kafka started: does org.apache.kafka's INFO reach it?")
        time.sleep(0.5)
    raise SystemExit(f"bench: Kafka's coordinator did not load __consumer_offsets in "
                     f"{timeout:.0f} s:\n{broker.log_tail()}")


def _checkpoint(path: Path) -> dict[tuple[str, int], int]:
    lines = path.read_text().split("\n")[2:] if path.exists() else []
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines if line)}


def _write_checkpoint(path: Path, entries: dict[tuple[str, int], int]) -> None:
    body = "".join(f"{t} {p} {o}\n" for (t, p), o in sorted(entries.items()))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"0\n{len(entries)}\n{body}")
    os.replace(tmp, path)


def _create_topics(bootstrap: str) -> None:
    """The bench's data topics, in one CreateTopics request (librdkafka's admin client, gone
    when this returns: before the broker stops)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(t, TOPIC_PARTITIONS, 1)
                                       for t in TOPICS]).values():
        future.result(300)


def kafka_prepare(kafka_dir: Path, log_dir: Path, info: dict, cli: list[str]
                  ) -> Path:
    """A log dir of Kafka's own whose ``__consumer_offsets-0`` .. ``-49`` hold the bench's
    segments; returns it.

    Kafka formats it and starts on it; a FindCoordinator (``kafka-consumer-groups
    --describe``) makes the broker create ``__consumer_offsets`` as it does for a first
    group (50 partitions, its topic id in the KRaft metadata and each ``partition.metadata``);
    Kafka stops cleanly (``.kafka_cleanshutdown``). Each partition's files are then replaced
    by the bench's segment and leader-epoch checkpoint (``partition.metadata`` kept), the
    indexes are built (``pylogctl rebuild-index``: byte for byte Kafka's, and Kafka checks
    them when it opens the segments) and the recovery point and high watermark set to the log
    ends: a broker restarted after a clean shutdown, which neither recovers nor truncates.
    The data topics are created too (empty): Kafka's coordinator loads and serves offsets
    of any topic name, but ``kafka-consumer-groups --describe`` fails on a topic the cluster
    does not know."""
    from deployed_kafka import DeployedKafka, tool_command

    logs = kafka_dir / "logs"
    broker = DeployedKafka(logs, kafka_dir / "prepare", KAFKA_OVERRIDES)
    broker.format()
    log = ServerLog(broker.log_file)
    broker.start(timeout=600)
    try:
        _create_topics(broker.bootstrap)
        subprocess.run(tool_command("kafka-consumer-groups", "--bootstrap-server",
                                    broker.bootstrap, "--describe", "--group",
                                    "pylogctl-bench-probe"),
                       capture_output=True, timeout=600)
        wait_loads(broker, log, 600)
    finally:
        broker.stop()
    if not (logs / ".kafka_cleanshutdown").exists():
        raise SystemExit("bench: Kafka left no .kafka_cleanshutdown on its first stop")
    ends = {("__consumer_offsets", p): end for p, end in info["ends"].items()}
    for p in range(OFFSETS_PARTITIONS):
        ours, theirs = log_dir / f"__consumer_offsets-{p}", logs / f"__consumer_offsets-{p}"
        if not (theirs / "partition.metadata").exists():
            raise SystemExit(f"bench: Kafka did not create {theirs}")
        for f in theirs.iterdir():
            if f.name != "partition.metadata":
                f.unlink()
        for f in ours.iterdir():
            shutil.copyfile(f, theirs / f.name)
    proc = subprocess.run(cli + ["rebuild-index", "--execute",
                                 *[str(logs / f"__consumer_offsets-{p}")
                                   for p in range(OFFSETS_PARTITIONS)]],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench: pylogctl rebuild-index failed:\n{proc.stderr[-2000:]}")
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        _write_checkpoint(logs / name, {**_checkpoint(logs / name), **ends})
    starts = _checkpoint(logs / "log-start-offset-checkpoint")
    _write_checkpoint(logs / "log-start-offset-checkpoint",
                      {tp: o for tp, o in starts.items() if tp[0] != "__consumer_offsets"})
    os.sync()  # the copy written back now, not while pylogctl or Kafka is timed
    return logs


def _describe_rows(text: str, groups: set[str]) -> dict[str, dict[str, int]]:
    """``kafka-consumer-groups --describe``'s table: group -> ``topic:partition`` -> the
    CURRENT-OFFSET column (a ``-``, no committed offset, left out as pylogctl's JSON does)."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 4 and cols[0] in groups and cols[2].isdigit() and cols[3].isdigit():
            out.setdefault(cols[0], {})[f"{cols[1]}:{cols[2]}"] = int(cols[3])
    return out


def kafka_load(logs: Path, kafka_dir: Path, info: dict, seen: dict, sample: list[str]
               ) -> dict:
    """Start Kafka on ``logs`` (page cache warm) and read its coordinator's load from its log;
    then, outside the timings, compare what it serves with pylogctl's ``seen``."""
    from deployed_kafka import DeployedKafka, run_tool

    os.sync()
    warm_page_cache(sorted(logs.glob("__consumer_offsets-*/*")))
    broker = DeployedKafka(logs, kafka_dir / "broker", KAFKA_OVERRIDES)
    log = ServerLog(broker.log_file)
    began = time.perf_counter()
    broker.start(timeout=1800)
    serving = time.perf_counter() - began
    try:
        wait_loads(broker, log, 3600)
        text = log.read()
        # compared at once: Kafka's first retention check, offsets.retention.check.interval.ms
        # (10 min) after the load, would expire the offsets of the groups left Empty in 2023
        listed = set(run_tool("kafka-consumer-groups", "--bootstrap-server", broker.bootstrap,
                              "--list").split())
        which = [a for g in sample for a in ("--group", g)] or ["--all-groups"]
        sample = sample or sorted(seen)
        described = _describe_rows(run_tool(
            "kafka-consumer-groups", "--bootstrap-server", broker.bootstrap, "--describe",
            *which), set(sample))
    finally:
        broker.stop()
    scheduled: dict[int, float] = {}
    for m in SCHEDULED.finditer(text):
        scheduled.setdefault(int(m[2]), _stamp(m[1]))
    loads = {int(m[2]): {"at": _stamp(m[1]), "epoch": int(m[3]), "ms": int(m[4]),
                         "queue_ms": int(m[5]), "records": int(m[6]), "bytes": int(m[7])}
             for m in FINISHED.finditer(text)}
    problems = PROBLEMS.findall(text)
    problems += [m[0] for m in FAILED.finditer(text) if m[0] not in problems]
    wrong_counts = [f"__consumer_offsets-{p}: Kafka loaded {ld['records']:,} records "
                    f"({ld['bytes']:,} bytes), the log holds {info['ends'][p]:,} records"
                    for p, ld in sorted(loads.items()) if ld["records"] != info["ends"][p]]
    # a load starts when scheduled (its X counts from there: CoordinatorLoaderImpl.load)
    first = min([*scheduled.values(), *(ld["at"] - ld["ms"] / 1000 for ld in loads.values())],
                default=0.0)
    last = max((ld["at"] for ld in loads.values()), default=first)
    up = SERVING.findall(text)
    logs_loaded = LOGS_LOADED.search(text)
    want = {g: seen.get(g, {}) for g in sample}
    differ = sorted(g for g in sample if described.get(g, {}) != want[g])
    return {
        "wall": last - first, "serving": serving,
        "all_loaded": serving + (last - _stamp(up[-1])) if up else float("nan"),
        "sum_ms": sum(ld["ms"] - ld["queue_ms"] for ld in loads.values()),
        "max_ms": max((ld["ms"] - ld["queue_ms"] for ld in loads.values()), default=0),
        "loaded": len(loads), "records": sum(ld["records"] for ld in loads.values()),
        "bytes": sum(ld["bytes"] for ld in loads.values()),
        "epochs": sorted({ld["epoch"] for ld in loads.values()}),
        "log_load_ms": int(logs_loaded[2]) if logs_loaded else None,
        "problems": problems + wrong_counts,
        "listed_same": listed == set(seen), "listed": len(listed),
        "listed_diff": sorted(listed ^ set(seen))[:5],
        "sample": len(sample), "sample_partitions": sum(len(v) for v in want.values()),
        "differ": differ, "differ_detail": [(g, described.get(g), want[g]) for g in differ[:2]],
    }


def kafka_sample(info: dict, n: int) -> list[str]:
    """``n`` groups to describe through Kafka: some transactional and some ``Empty`` ones
    among them (the rarer cases of the replay), the rest at random; none for 0 (then Kafka
    describes ``--all-groups``)."""
    rng = random.Random(11)
    picks: list[str] = []
    for kind in ("transactional", "empty"):
        picks += rng.sample(info["kinds"][kind], min(3, len(info["kinds"][kind]), n // 4))
    picks = list(dict.fromkeys(picks))  # a transactional group may be Empty too
    rest = [g for g in info["groups"] if g not in picks]
    return picks + rng.sample(rest, min(len(rest), max(0, n - len(picks))))


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
    ap.add_argument("--no-kafka", action="store_true",
                    help="leave out the real Kafka broker's coordinator load (the anchor)")
    ap.add_argument("--kafka-sample", type=int, default=20,
                    help="groups whose offsets Kafka's kafka-consumer-groups --describe must "
                         "show as pylogctl does (default 20; 0: --all-groups)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.dir, args.repeat, args.sample)
        return 0
    if args.size_mib < 1 or args.groups < 1 or args.repeat < 1:
        ap.error("--size-mib, --groups and --repeat must be at least 1")
    log_dir = Path(args.dir)
    kafka_dir = Path(f"{log_dir}-kafka")  # Kafka's own copy, beside the bench's log dir
    if kafka_dir.exists() and not args.no_kafka:
        ap.error(f"{kafka_dir} exists: give a --dir whose <dir>-kafka this run may create")

    def run() -> int:
        existed = kafka_dir.exists()
        try:
            return _run(log_dir, kafka_dir, args)
        finally:
            if kafka_dir.exists() and not existed:
                if args.keep:
                    print(f"kept {kafka_dir}")
                else:
                    shutil.rmtree(kafka_dir, ignore_errors=True)

    return run_in_new_dir(ap.error, log_dir, args.keep, run)


def _kafka_missing(args) -> str | None:
    """Why the real Kafka is left out of this run, or None."""
    if args.no_kafka:
        return "--no-kafka"
    import importlib.util

    if importlib.util.find_spec("confluent_kafka") is None:
        return "confluent-kafka is not installed (the bench extra): it creates the topics"
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from kafka_jvm import missing_reason

    return missing_reason()


def _run(log_dir: Path, kafka_dir: Path, args) -> int:
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
    seen = check(cli, log_dir, info)
    print("  checked: --describe --all-groups -o json shows exactly the offsets written",
          flush=True)
    no_kafka = _kafka_missing(args)
    if no_kafka is None:
        print(f"Preparing Kafka's copy in {kafka_dir}: format, a first start that creates "
              f"__consumer_offsets, a clean stop, the bench's segments put in ...", flush=True)
        t = time.perf_counter()
        kafka_logs = kafka_prepare(kafka_dir, log_dir, info, cli)
        print(f"  done in {time.perf_counter() - t:.1f} s", flush=True)
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
    kafka = None
    if no_kafka is None:
        print("Starting Kafka on its copy (page cache warm) ...", flush=True)
        kafka = kafka_load(kafka_logs, kafka_dir, info, seen,
                           kafka_sample(info, args.kafka_sample))

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
    print()
    if kafka is None:
        print(f"Kafka's group coordinator (the anchor) left out: {no_kafka}")
        return 0
    return report_kafka(kafka, info, mb, all_text, (lib["best"], lib["cpu"]))


def report_kafka(kafka: dict, info: dict, mb: float, cli: tuple[float, float],
                 lib: tuple[float, float]) -> int:
    """Kafka's figures, the ratios to pylogctl's, and whether both serve the same offsets;
    1 when Kafka did not load the bytes as pylogctl did (a finding, not a timing)."""
    from kafka_jvm import KAFKA_VERSION

    wall = kafka["wall"]
    print(f"Kafka {KAFKA_VERSION} (kafka-server-start.sh's JVM, default threads) restarting on a "
          f"copy of the same {OFFSETS_PARTITIONS} partitions after a clean shutdown; its group "
          f"coordinator's load, from its server.log (CoordinatorRuntime's lines; one loader "
          f"thread, CoordinatorLoaderImpl; epochs {kafka['epochs']}):")
    w = 66
    print(f"{'':<{w}} {'seconds':>8} {'MB/s':>7}")
    for name, s in [
            ("coordinator load: first partition scheduled to last loaded", wall),
            (f"  sum of the {kafka['loaded']} partitions' loads (scheduler queue left out)",
             kafka["sum_ms"] / 1000)]:
        print(f"{name:<{w}} {s:>8.3f} {mb / s if s else 0:>7,.0f}")
    print(f"{'  the slowest partition (scheduler queue left out)':<{w}} "
          f"{kafka['max_ms'] / 1000:>8.3f}")
    log_load = kafka["log_load_ms"]
    print(f"{'broker start to Kafka Server started (wall)':<{w}} {kafka['serving']:>8.3f}")
    print(f"{'broker start to the last partition loaded (wall)':<{w}} "
          f"{kafka['all_loaded']:>8.3f}")
    if log_load is not None:
        print(f"{'  LogManager: Loaded N logs in X ms':<{w}} {log_load / 1000:>8.3f}")
    print(f"Kafka loaded {kafka['records']:,} records, {kafka['bytes'] / 2**20:,.0f} MiB "
          f"(the log: {info['records']:,} records, {info['bytes'] / 2**20:,.0f} MiB).")
    ok = True
    if kafka["listed_same"]:
        print(f"Checked: kafka-consumer-groups --list shows the same {kafka['listed']:,} groups "
              f"as pylogctl (deleted groups gone).")
    else:
        ok = False
        print(f"DISAGREE: kafka-consumer-groups --list shows {kafka['listed']:,} groups, "
              f"pylogctl {len(info['groups']):,}; e.g. {kafka['listed_diff']}")
    if not kafka["differ"]:
        print(f"Checked: kafka-consumer-groups --describe of {kafka['sample']:,} groups "
              f"(transactional and Empty ones among them) shows the committed offsets "
              f"pylogctl shows, for all {kafka['sample_partitions']:,} partitions.")
    else:
        ok = False
        print(f"DISAGREE: kafka-consumer-groups --describe differs from pylogctl for "
              f"{len(kafka['differ'])} of {kafka['sample']} groups: {kafka['differ'][:5]}")
        for g, theirs, ours in kafka["differ_detail"]:
            print(f"  {g}: Kafka {theirs}\n  {' ' * len(g)}  pylogctl {ours}")
    if kafka["problems"]:
        ok = False
        print(f"Kafka's log reports {len(kafka['problems'])} problems with the offsets topic:")
        for line in kafka["problems"][:10]:
            print(f"  {line}")
    print()
    print(f"Ratios: Kafka's coordinator load {wall:.2f} s / pylogctl --describe --all-groups "
          f"{cli[0]:.2f} s (CLI, start-up included) = {wall / cli[0]:.2f}x; / pylogctl's "
          f"in-process load {lib[0]:.2f} s = {wall / lib[0]:.2f}x; the sum of Kafka's "
          f"per-partition loads / the CLI = {kafka['sum_ms'] / 1000 / cli[0]:.2f}x. Kafka loads "
          f"on one thread, pylogctl in a process per CPU: Kafka's load / the CLI's CPU "
          f"seconds ({cli[1]:.2f}) = {wall / cli[1]:.2f}x.")
    print(f"{verdict(wall >= cli[0])}: Kafka's coordinator load / pylogctl consumer-groups "
          f"--describe --all-groups = {wall / cli[0]:.2f}x (target >= 1.0)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
