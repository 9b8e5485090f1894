"""Helpers for the loader, log and log-dir tests: writable corpus copies, dir fingerprints,
damage, and logs built with the engine."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.loader.log_loader import apply_load, plan_load
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_dir import LogDir

TS = 1_700_000_000_000


def writable_copy(src: Path, dst: Path) -> Path:
    """Copy a corpus dir (its files are read-only) so the copy can be changed."""
    shutil.copytree(src, dst)
    for root, dirs, files in os.walk(dst):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    return dst


def copy_partition(corpus: Path, log_dir: str, partition: str, tmp_path: Path) -> tuple[Path, Path]:
    """A log dir in ``tmp_path`` holding a copy of one corpus partition and the log dir's
    checkpoints; returns ``(log dir, partition dir)``."""
    src = corpus / log_dir
    dst = tmp_path / log_dir
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and f.name != ".lock":
            shutil.copyfile(f, dst / f.name)
    writable_copy(src / partition, dst / partition)
    return dst, dst / partition


def fingerprint(directory: Path) -> dict[str, str]:
    """Every file below ``directory`` -> a hash of its bytes."""
    out = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = Path(root, name)
            out[str(path.relative_to(directory))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def plan_for(log_dir: Path, partition: Path, config: LogConfig = LogConfig(), **overrides):
    """``plan_load`` with the log dir's checkpoint entries, some overridden."""
    inputs = LogDir(log_dir).load_inputs(LogDir(log_dir).entry_for_dir(str(partition)))
    kwargs = dict(log_start_offset_checkpoint=inputs.log_start_offset_checkpoint,
                  recovery_point_checkpoint=inputs.recovery_point_checkpoint,
                  high_watermark_checkpoint=inputs.high_watermark_checkpoint,
                  had_clean_shutdown=inputs.had_clean_shutdown)
    kwargs.update(overrides)
    return plan_load(partition, config=config, **kwargs), kwargs


def load_twice(partition: Path, config: LogConfig = LogConfig(), **kwargs):
    """Plan, apply, plan again: returns ``(plan, result, second plan)``."""
    plan = plan_load(partition, config=config, **kwargs)
    result = apply_load(plan)
    again = plan_load(partition, config=config, **kwargs)
    return plan, result, again


def batch_positions(log: Path) -> list[tuple[int, int, int, int]]:
    """``(position, size, base offset, next offset)`` of every batch of a ``.log``."""
    with FileRecords(log) as records:
        return [(b.position, b.size_in_bytes, b.base_offset, b.next_offset)
                for b in records.batches()]


def flip_byte(path: Path, position: int) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0xFF]))


def segment_names(partition: Path, suffix: str = ".log") -> list[str]:
    return sorted(p.name for p in partition.iterdir() if p.name.endswith(suffix))


def batch(base_offset: int, count: int = 3, *, epoch: int = 0, value_size: int = 200,
          **options) -> bytes:
    builder = RecordBatchBuilder(base_offset=base_offset, partition_leader_epoch=epoch, **options)
    for i in range(count):
        builder.append(TS + base_offset + i, b"k%d" % (base_offset + i), b"v" * value_size)
    return builder.build()


def transactional_log() -> list[bytes]:
    """Two producers' transactions, one aborted while the other is open, then committed."""
    out = [batch(0, 2)]
    out.append(batch(2, 2, producer_id=7, producer_epoch=0, base_sequence=0,
                     is_transactional=True))
    out.append(batch(4, 2, producer_id=8, producer_epoch=0, base_sequence=0,
                     is_transactional=True))
    out.append(build_end_txn_marker(offset=6, producer_id=7, producer_epoch=0, commit=False,
                                    coordinator_epoch=1, timestamp=TS + 6,
                                    partition_leader_epoch=0))
    out.append(batch(7, 2, epoch=1))
    out.append(build_end_txn_marker(offset=9, producer_id=8, producer_epoch=0, commit=True,
                                    coordinator_epoch=1, timestamp=TS + 9,
                                    partition_leader_epoch=1))
    out.append(batch(10, 3, epoch=1))
    return out


def first_batch_at(log: Path, offset: int) -> tuple[int, int]:
    """``(position, size)`` of the batch holding ``offset``."""
    with FileRecords(log) as records:
        for b in records.batches():
            if b.last_offset >= offset:
                return b.position, b.size_in_bytes
    raise AssertionError(f"no batch holds {offset}")

