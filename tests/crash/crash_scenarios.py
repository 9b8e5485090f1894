"""The crash scenarios: a corpus partition, the damage it starts from, and the command killed.

Each damage function changes a writable copy the way a broken broker or an interrupted tool
leaves it and returns the *valid end*: the offset from which the partition's data was already
invalid before the command ran (None when all of it is valid). Records there were never
readable, so no crash test can require them back.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from crash_support import read_batches, segment_logs, topic_partition, write_checkpoint_entry

HW_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"

Damage = Callable[[Path, Path], "int | None"]


def _set_entry(log_dir: Path, part: Path, checkpoint: str, offset: int) -> None:
    write_checkpoint_entry(log_dir / checkpoint, *topic_partition(part), offset)


def cut_mid_batch(which: float) -> Damage:
    """The active segment ends inside a batch (a write the broker did not finish): the batch
    at ``which`` (0 first, 1 last) of the segment is cut in half, with everything after it."""
    def damage(log_dir: Path, part: Path) -> int:
        _, log = segment_logs(part)[-1]
        batches, sizes = read_batches(log, strict=True), _sizes(log)
        victim = round(which * (len(batches) - 1))
        os.truncate(log, sum(sizes[:victim]) + sizes[victim] // 2)
        return batches[victim].base
    return damage


def _sizes(log: Path) -> list[int]:
    data, out, pos = log.read_bytes(), [], 0
    while pos + 12 <= len(data):
        size = 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        if pos + size > len(data):
            break
        out.append(size)
        pos += size
    return out


def append_garbage(log_dir: Path, part: Path) -> None:
    """1000 bytes that are no batch at the end of the active segment (a torn page)."""
    _, log = segment_logs(part)[-1]
    garbage = b"".join(hashlib.sha256(b"%d" % i).digest() for i in range(32))[:1000]
    with open(log, "ab") as f:
        f.write(garbage)
    return None


def flip_crc_mid_log(log_dir: Path, part: Path) -> int:
    """A byte flipped inside the middle batch of the second segment, whose CRC then fails,
    and the recovery point checkpoint lost (0), so recovery reads every segment: the log is
    cut there and every later segment deleted, as Kafka's recovery does."""
    _, log = segment_logs(part)[1]
    batches, sizes = read_batches(log, strict=True), _sizes(log)
    middle = len(batches) // 2
    position = sum(sizes[:middle]) + sizes[middle] - 1  # the last byte of its last record
    with open(log, "r+b") as f:
        f.seek(position)
        byte = f.read(1)[0]
        f.seek(position)
        f.write(bytes([byte ^ 0xFF]))
    _set_entry(log_dir, part, RECOVERY_POINT_CHECKPOINT, 0)
    return batches[middle].base


def delete_indexes(log_dir: Path, part: Path) -> None:
    """Every ``.index`` and ``.timeindex`` gone."""
    for p in part.iterdir():
        if p.suffix in (".index", ".timeindex"):
            p.unlink()
    return None


def zero_indexes(log_dir: Path, part: Path) -> None:
    """Every ``.index`` and ``.timeindex`` filled with zeros, keeping its length (a crashed
    broker's preallocated tail, or a disk that lost the pages)."""
    for p in part.iterdir():
        if p.suffix in (".index", ".timeindex"):
            p.write_bytes(bytes(p.stat().st_size))
    return None


def interrupted_swap(log_dir: Path, part: Path) -> None:
    """The log cleaner's swap of the first two segments interrupted after the ``.swap`` was
    committed (the old segments still there), plus a later, unfinished cleaning's ``.cleaned``
    output and a ``.deleted`` file not yet removed. The swap holds the same batches as the two
    segments it replaces (a merge), so completing it keeps every record."""
    (first, log0), (second, log1) = segment_logs(part)[:2]
    (part / f"{first:020d}.log.swap").write_bytes(log0.read_bytes() + log1.read_bytes())
    third, log2 = segment_logs(part)[2]
    shutil.copyfile(log2, part / f"{third:020d}.log.cleaned")
    shutil.copyfile(part / f"{second:020d}.timeindex", part / f"{second:020d}.timeindex.deleted")
    return None


def log_start_above_end(log_dir: Path, part: Path) -> None:
    """The log start offset checkpoint above the log end (the log was deleted to there while
    this replica was away): Kafka deletes every segment and starts the log at it."""
    _set_entry(log_dir, part, LOG_START_CHECKPOINT, 200_000)
    return None


def epoch_cache_ahead(log_dir: Path, part: Path) -> None:
    """A leader epoch starting past the log end (the log lost its tail, the cache did not)."""
    (part / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n7 150000\n")
    return None


def first_segment_deleted(log_dir: Path, part: Path) -> None:
    """Retention deleted the first segment: the log starts at the second one (and, as Kafka
    checkpoints a log start offset only above the first segment's base, with no entry)."""
    first, _ = segment_logs(part)[0]
    for p in part.glob(f"{first:020d}.*"):
        p.unlink()
    return None


@dataclass(frozen=True)
class Scenario:
    name: str
    corpus_dir: str
    partition: str
    command: str  # recover, truncate or rebuild-index
    options: tuple[str, ...] = ()
    damage: Damage | None = None
    backup: bool = False

    def args(self, log_dir: Path, part: Path, backup: Path) -> list[str]:
        """The command line run (and killed)."""
        target = {"recover": [log_dir], "truncate": [part], "rebuild-index": [log_dir]}
        args = [self.command, *target[self.command], *self.options, "--execute"]
        return args + (["--backup-dir", backup] if self.backup else [])


INVOICE, KSQL = "invoice-multiseg", "ksql-kraft-2023"
COMMAND_TOPIC = "_confluent-ksql-default__command_topic-0"
SCENARIOS = [
    Scenario("recover-tail-cut", INVOICE, "invoice-0", "recover", damage=cut_mid_batch(0.5)),
    Scenario("recover-garbage", INVOICE, "invoice-1", "recover", damage=append_garbage,
             backup=True),
    Scenario("recover-crc-mid-log", INVOICE, "invoice-2", "recover", damage=flip_crc_mid_log),
    Scenario("recover-no-indexes", INVOICE, "invoice-3", "recover", damage=delete_indexes,
             backup=True),
    Scenario("recover-interrupted-swap", INVOICE, "invoice-4", "recover",
             damage=interrupted_swap),
    Scenario("recover-log-start-above-end", INVOICE, "invoice-0", "recover",
             damage=log_start_above_end, backup=True),
    Scenario("recover-epoch-cache-ahead", INVOICE, "invoice-1", "recover",
             damage=epoch_cache_ahead),
    Scenario("recover-transactional-tail-cut", KSQL, COMMAND_TOPIC, "recover",
             damage=cut_mid_batch(1.0), backup=True),
    Scenario("truncate-mid-segment", INVOICE, "invoice-2", "truncate",
             ("--to-offset", "45000")),
    Scenario("truncate-segment-boundary", INVOICE, "invoice-3", "truncate",
             ("--to-offset", "60678"), backup=True),
    Scenario("truncate-below-first-segment", INVOICE, "invoice-4", "truncate",
             ("--to-offset", "1000"), damage=first_segment_deleted),
    Scenario("truncate-start-at", INVOICE, "invoice-0", "truncate", ("--start-at", "150000"),
             backup=True),
    Scenario("truncate-transactional", KSQL, COMMAND_TOPIC, "truncate", ("--to-offset", "5")),
    Scenario("rebuild-index-missing", INVOICE, "invoice-1", "rebuild-index",
             damage=delete_indexes),
    Scenario("rebuild-index-zeroed", INVOICE, "invoice-2", "rebuild-index",
             damage=zero_indexes, backup=True),
]
