"""Helpers for the retention and config tests: logs built with the engine from segments of
chosen timestamps and sizes, log-dir checkpoints, and KRaft metadata logs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kafka.record import MemoryRecords

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.metadata_records import encode_metadata_record
from pylogctl.storage.checkpoint import format_checkpoint
from pylogctl.storage.log import Log
from pylogctl.storage.log_config import LogConfig

DAY = 86_400_000
NOW = 1_700_000_000_000


@dataclass(frozen=True)
class Seg:
    """A segment to build: ``records`` records of ``value_size`` bytes, all stamped ``ts``
    (0 records: an empty segment)."""

    records: int
    ts: int = NOW
    value_size: int = 100


def data_batch(base: int, records: int, ts: int, value_size: int = 100, epoch: int = 0,
               **options) -> bytes:
    builder = RecordBatchBuilder(base_offset=base, partition_leader_epoch=epoch, **options)
    for i in range(records):
        builder.append(ts, b"k%d" % (base + i), b"v" * value_size)
    return builder.build()


def build_log(log_dir: Path, segments: list[Seg], *, topic: str = "t", partition: int = 0,
              high_watermark: int | None = None, log_start: int | None = None) -> Path:
    """A partition dir with one segment per :class:`Seg` (leader epoch = segment number), its
    log dir's checkpoints written as a broker leaves them: the high watermark (default: the log
    end), the recovery point at the log end, the log start if given."""
    part = log_dir / f"{topic}-{partition}"
    part.mkdir(parents=True)
    offset = 0
    with Log.load(part, LogConfig()) as log:
        for i, seg in enumerate(segments):
            if i:
                log.roll()
            if seg.records:
                log.append_as_follower(data_batch(offset, seg.records, seg.ts, seg.value_size,
                                                  epoch=i))
                offset += seg.records
        log.flush()
        end = log.log_end_offset
    hw = end if high_watermark is None else high_watermark
    write_checkpoint(log_dir, "replication-offset-checkpoint", topic, partition, hw)
    write_checkpoint(log_dir, "recovery-point-offset-checkpoint", topic, partition, end)
    if log_start is not None:
        write_checkpoint(log_dir, "log-start-offset-checkpoint", topic, partition, log_start)
    return part


def write_checkpoint(log_dir: Path, name: str, topic: str, partition: int, offset: int) -> None:
    path = log_dir / name
    lines = path.read_text().splitlines()[2:] if path.exists() else []
    lines = [line for line in lines if line.split()[:2] != [topic, str(partition)]]
    path.write_text(format_checkpoint(lines + [f"{topic} {partition} {offset}"]))


def checkpoint_entry(log_dir: Path, name: str, topic: str = "t", partition: int = 0):
    path = log_dir / name
    for line in (path.read_text().splitlines()[2:] if path.exists() else []):
        t, p, o = line.split()
        if (t, int(p)) == (topic, partition):
            return int(o)
    return None


def segment_bases(part: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in part.glob("*.log"))


def kafka_python_offsets(part: Path) -> list[int]:
    """Every record offset of the partition, read with kafka-python's record reader."""
    out = []
    for log in sorted(part.glob("*.log")):
        records = MemoryRecords(log.read_bytes())
        while records.has_next():
            out += [r.offset for r in records.next_batch()]
    return out


# -- KRaft metadata logs -------------------------------------------------------------------------
def config_record(resource_type: int, resource: str, name: str, value: str | None) -> bytes:
    return encode_metadata_record(4, 0, {"resourceType": resource_type, "resourceName": resource,
                                         "name": name, "value": value})


def topic_record(name: str, topic_id: bytes) -> bytes:
    from pylogctl.format.message import KafkaUuid
    return encode_metadata_record(2, 0, {"name": name, "topicId": KafkaUuid(topic_id)})


def remove_topic_record(topic_id: bytes) -> bytes:
    from pylogctl.format.message import KafkaUuid
    return encode_metadata_record(9, 0, {"topicId": KafkaUuid(topic_id)})


def metadata_batches(values: list[bytes], base: int = 0) -> bytes:
    """One metadata record per batch, offsets from ``base``."""
    out = b""
    for i, value in enumerate(values):
        builder = RecordBatchBuilder(base_offset=base + i, partition_leader_epoch=1)
        builder.append(NOW, None, value)
        out += builder.build()
    return out
