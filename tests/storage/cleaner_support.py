"""Logs for the cleaner tests: random keyed workloads (tombstones, keyless records, idempotent
and transactional producers, committed and aborted transactions, several segments, codecs)
written with the engine, the model of what compaction must leave, and readers of the result
(pylogctl's and kafka-python's)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from kafka.record import MemoryRecords

from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.format.compression import Codec
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.log import Log
from pylogctl.storage.cleaner.cleaner_config import CleanerConfig
from pylogctl.storage.log_config import LogConfig
from pylogctl.tools.compact import CompactOptions, Compaction
from pylogctl.tools.config import ConfigOptions
from retention_support import checkpoint_entry, write_checkpoint

TOPIC = "t"
BASE_TS = 1_700_000_000_000
HOUR = 3_600_000
DAY = 24 * HOUR
COMPACT = LogConfig(cleanup_policy=("compact",))


@dataclass(frozen=True)
class Rec:
    """A data record as produced (the model's unit)."""

    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple = ()
    producer_id: int = -1
    txn: str | None = None  # None: not transactional; "open", "commit" or "abort" when decided

    def view(self) -> tuple:
        return (self.offset, self.key, self.value, self.timestamp, tuple(self.headers))


@dataclass
class Workload:
    batches: list[bytes] = field(default_factory=list)
    records: list[Rec] = field(default_factory=list)
    rolls: list[int] = field(default_factory=list)  # batch indexes that start a new segment
    next_offset: int = 0


def random_workload(seed: int, *, batches: int = 120, keys: int = 40, max_records: int = 6,
                    tombstone_rate: float = 0.1, keyless_rate: float = 0.0,
                    txn_rate: float = 0.15, abort_rate: float = 0.5, segment_batches: int = 25,
                    codecs: tuple[Codec, ...] = (Codec.NONE,), leave_open: bool = False,
                    value_size: int = 40) -> Workload:
    """A partition's batches: plain and idempotent producers' keyed records (some tombstones,
    some keyless), transactions of four producers interleaved with them and decided by COMMIT or
    ABORT markers, a segment roll every ``segment_batches`` batches."""
    rng = random.Random(seed)
    w = Workload()
    ts = BASE_TS
    seq = {100: 0}
    txn_pids = [200, 201, 202, 203]
    open_txns: dict[int, list[Rec]] = {}
    epoch = {pid: 0 for pid in txn_pids}

    def records(n: int, pid: int, txn: str | None) -> list[Rec]:
        nonlocal ts
        out = []
        for i in range(n):
            key = None if rng.random() < keyless_rate else b"key-%03d" % rng.randrange(keys)
            value = (None if key is not None and rng.random() < tombstone_rate
                     else b"%d:" % (w.next_offset + i) + bytes(rng.randrange(97, 123)
                                                                for _ in range(value_size)))
            headers = (("h", b"%d" % i),) if rng.random() < 0.2 else ()
            ts += rng.randrange(0, 50)
            out.append(Rec(w.next_offset + i, key, value, ts, headers, pid, txn))
        return out

    def add(builder: RecordBatchBuilder, recs: list[Rec]) -> None:
        for r in recs:
            builder.append_with_offset(r.offset, r.timestamp, r.key, r.value, r.headers)
        w.batches.append(builder.build())
        w.records.extend(recs)
        w.next_offset = recs[-1].offset + 1

    for i in range(batches):
        if i and i % segment_batches == 0:
            w.rolls.append(len(w.batches))
        n = rng.randint(1, max_records)
        codec = rng.choice(codecs)
        roll = rng.random()
        if roll < txn_rate:
            pid = rng.choice(txn_pids)
            recs = records(n, pid, "open")
            first = pid not in open_txns
            open_txns.setdefault(pid, []).extend(recs)
            add(RecordBatchBuilder(base_offset=w.next_offset, codec=codec, producer_id=pid,
                                   producer_epoch=epoch[pid],
                                   base_sequence=0 if first else len(open_txns[pid]) - n,
                                   is_transactional=True, partition_leader_epoch=0), recs)
        elif roll < txn_rate * 2 and open_txns:
            pid = rng.choice(sorted(open_txns))
            commit = rng.random() >= abort_rate
            decided = "commit" if commit else "abort"
            for r in open_txns.pop(pid):
                w.records[w.records.index(r)] = Rec(*r.view()[:4], r.headers, pid, decided)
            ts += 1
            w.batches.append(build_end_txn_marker(offset=w.next_offset, producer_id=pid,
                                                  producer_epoch=epoch[pid], commit=commit,
                                                  coordinator_epoch=0, timestamp=ts,
                                                  partition_leader_epoch=0))
            w.next_offset += 1
            epoch[pid] += 1
        elif roll < 0.6:
            recs = records(n, 100, None)
            add(RecordBatchBuilder(base_offset=w.next_offset, codec=codec, producer_id=100,
                                   producer_epoch=0, base_sequence=seq[100],
                                   partition_leader_epoch=0), recs)
            seq[100] += n
        else:
            add(RecordBatchBuilder(base_offset=w.next_offset, codec=codec,
                                   partition_leader_epoch=0), records(n, -1, None))
    if not leave_open:
        for pid in sorted(open_txns):
            for r in open_txns.pop(pid):
                w.records[w.records.index(r)] = Rec(*r.view()[:4], r.headers, pid, "commit")
            ts += 1
            w.batches.append(build_end_txn_marker(offset=w.next_offset, producer_id=pid,
                                                  producer_epoch=epoch[pid], commit=True,
                                                  coordinator_epoch=0, timestamp=ts,
                                                  partition_leader_epoch=0))
            w.next_offset += 1
    w.rolls.append(len(w.batches))  # the active segment starts empty: everything is cleanable
    return w


def write_log(log_dir: Path, w: Workload, *, partition: int = 0,
              high_watermark: int | None = None, config: LogConfig = COMPACT) -> Path:
    """The workload as a partition dir (written through :class:`Log`, so its indexes and
    producer snapshots are a broker's), with its high watermark and recovery point
    checkpointed."""
    part = log_dir / f"{TOPIC}-{partition}"
    part.mkdir(parents=True)
    with Log.load(part, config) as log:
        for i, data in enumerate(w.batches):
            if i in w.rolls:
                log.roll()
            log.append_as_follower(data)
        if len(w.batches) in w.rolls:
            log.roll()
        log.flush()
        end = log.log_end_offset
    write_checkpoint(log_dir, "replication-offset-checkpoint", TOPIC, partition,
                     end if high_watermark is None else high_watermark)
    write_checkpoint(log_dir, "recovery-point-offset-checkpoint", TOPIC, partition, end)
    return part


def append_segment(log_dir: Path, part: Path, batches: list[bytes],
                   config: LogConfig = COMPACT) -> int:
    """Append ``batches`` to the partition in a new segment, roll again (so they are
    cleanable) and move the high watermark and recovery point to the new log end."""
    entry = lambda name: checkpoint_entry(log_dir, name, TOPIC, 0)  # noqa: E731
    with Log.load(part, config,
                  high_watermark_checkpoint=entry("replication-offset-checkpoint"),
                  recovery_point_checkpoint=entry("recovery-point-offset-checkpoint")) as log:
        log.roll()
        for data in batches:
            log.append_as_follower(data)
        log.roll()
        log.flush()
        end = log.log_end_offset
    write_checkpoint(log_dir, "replication-offset-checkpoint", TOPIC, 0, end)
    write_checkpoint(log_dir, "recovery-point-offset-checkpoint", TOPIC, 0, end)
    return end


def keyed_batch(offset: int, items: list[tuple[bytes | None, bytes | None]], ts: int = BASE_TS,
                **options) -> bytes:
    builder = RecordBatchBuilder(base_offset=offset, **options)
    for i, (key, value) in enumerate(items):
        builder.append_with_offset(offset + i, ts + i, key, value)
    return builder.build()


def cleaner_checkpoint(log_dir: Path, partition: int = 0) -> int | None:
    return checkpoint_entry(log_dir, "cleaner-offset-checkpoint", TOPIC, partition)


# -- reading the result ------------------------------------------------------------------------
def segment_logs(part: Path) -> list[Path]:
    return sorted(p for p in part.glob("*.log"))


def batches_of(part: Path) -> list:
    """``(base, last, control, horizon, bytes)`` of every batch, in offset order."""
    out = []
    for log in segment_logs(part):
        with FileRecords(log) as records:
            for b in records.batches():
                out.append((b.base_offset, b.last_offset, b.is_control, b.delete_horizon_ms,
                            b.raw_bytes()))
    return out


def data_records(part: Path) -> list[tuple]:
    """``(offset, key, value, timestamp, headers)`` of every data record, pylogctl's reading."""
    out = []
    for log in segment_logs(part):
        with FileRecords(log) as records:
            for b in records.batches():
                if not b.is_control:
                    out += [(r.offset, r.key, r.value, r.timestamp,
                             tuple((h.key, h.value) for h in r.headers)) for r in b.records()]
    return out


def kafka_python_records(part: Path) -> list[tuple]:
    """The same, read by kafka-python's record reader (an independent decoder)."""
    out = []
    for log in segment_logs(part):
        records = MemoryRecords(log.read_bytes())
        while records.has_next():
            batch = records.next_batch()
            if getattr(batch, "is_control_batch", False):
                continue
            for r in batch:
                out.append((r.offset, r.key, r.value, r.timestamp,
                            tuple((k, v) for k, v in r.headers)))
    return out


def expected_after_first_clean(w: Workload, end: int) -> list[tuple]:
    """What one full cleaning of ``[0, end)`` leaves of the data records: per key the latest
    record that is not aborted data (a tombstone too: its horizon starts now), nothing of
    aborted transactions, no keyless record; every record from ``end`` on as it was."""
    latest: dict[bytes, int] = {}
    for r in w.records:
        if r.offset < end and r.key is not None and r.txn != "abort":
            latest[r.key] = r.offset
    keep = set(latest.values())
    return [r.view() for r in w.records if r.offset >= end or r.offset in keep]


def expected_after_horizon(w: Workload, end: int) -> list[tuple]:
    """A later cleaning past the delete horizon: the tombstones below ``end`` go too."""
    return [v for v in expected_after_first_clean(w, end) if v[0] >= end or v[2] is not None]


def set_cleaner_checkpoint(log_dir: Path, offset: int, partition: int = 0) -> None:
    write_checkpoint(log_dir, "cleaner-offset-checkpoint", TOPIC, partition, offset)


def compact(log_dir: Path, now_ms: int, *, execute: bool = True, partitions: tuple = (),
            cleaner: CleanerConfig = CleanerConfig(), backup_dir: Path | None = None,
            **configs: str) -> list:
    """Run the compact tool's library API on ``log_dir`` (topic configs: ``cleanup.policy``
    compact plus ``configs``, dotted names with ``_``); returns the partition sections."""
    overrides = {"cleanup.policy": "compact",
                 **{k.replace("_", "."): str(v) for k, v in configs.items()}}
    options = CompactOptions(partitions=partitions, now_ms=now_ms, execute=execute,
                             backup_dir=None if backup_dir is None else str(backup_dir),
                             cleaner=cleaner, config=ConfigOptions(overrides))
    sections = list(Compaction([str(log_dir)], options).partitions())
    for section in sections:
        if section.error is not None:
            raise section.error
    return sections


__all__ = ["COMPACT", "DAY", "HOUR", "BASE_TS", "Rec", "Workload", "random_workload",
           "write_log", "cleaner_checkpoint", "batches_of", "data_records",
           "kafka_python_records", "expected_after_first_clean", "expected_after_horizon",
           "set_cleaner_checkpoint", "segment_logs", "compact", "append_segment",
           "keyed_batch"]
