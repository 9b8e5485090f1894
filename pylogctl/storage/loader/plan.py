"""What loading a partition dir would do, as data: the plan
:func:`~pylogctl.storage.loader.log_loader. plan_load` computes and
:func:`~pylogctl.storage.loader.log_loader.apply_load` carries out.

Each step is a frozen dataclass naming what changes on disk and, in ``reason``, the rule of
Kafka's ``LogLoader`` (or pylogctl's, where it is stricter) that calls for it. Steps are listed
in the order they are applied. Paths are absolute. ``describe()`` renders one line per step for
people; ``to_dict()`` gives plain data for JSON.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from ..checkpoint import EpochEntry
from ..log_config import LogConfig
from ..naming import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX
from .recovery_dry_run import InvalidTail
from ..transaction_index import AbortedTxn

# a segment's files, in the order Kafka renames them (the .log first)
SEGMENT_FILE_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)


def _name(path: str) -> str:
    return os.path.basename(path)


@dataclass(frozen=True)
class DeleteFile:
    """Delete one file (a leftover of an interrupted operation, or an orphaned index)."""

    kind: ClassVar[str] = "delete-file"
    path: str
    size: int
    reason: str

    def describe(self) -> str:
        return f"delete {_name(self.path)}: {self.reason}"


@dataclass(frozen=True)
class RenameFile:
    """Rename a completed ``.swap`` file to its final name (replacing any file there)."""

    kind: ClassVar[str] = "rename-file"
    source: str
    target: str
    size: int
    reason: str

    def describe(self) -> str:
        return f"rename {_name(self.source)} -> {_name(self.target)}: {self.reason}"


@dataclass(frozen=True)
class RecoverSegment:
    """Run ``LogSegment.recover`` on one segment: rebuild its indexes from the batches and cut
    the file where the valid data ends (or empty it, for an invalid offset)."""

    kind: ClassVar[str] = "recover-segment"
    base_offset: int
    path: str  # the .log
    size: int
    valid_bytes: int
    next_offset: int  # the offset after the last valid batch
    triggers: tuple[str, ...]  # why Kafka recovers this segment
    invalid_tail: InvalidTail | None  # where and why the valid data ends early
    invalid_offset: str | None = None  # Kafka's InvalidOffsetException: the segment is emptied
    changes: tuple[str, ...] = ()  # what differs from the files now (empty: a verification)
    replay_producers: bool = False  # transaction markers: the .txnindex needs producer state
    aborted_txns: tuple[AbortedTxn, ...] = ()  # the .txnindex entries recovery writes
    reason: str = ""

    @property
    def truncated_bytes(self) -> int:
        return self.size if self.invalid_offset else self.size - self.valid_bytes

    def describe(self) -> str:
        if self.invalid_offset:
            what = f"empty segment {self.base_offset} (all {self.size} bytes)"
        elif self.truncated_bytes:
            what = (f"recover segment {self.base_offset}: cut {self.truncated_bytes} bytes at "
                    f"byte {self.valid_bytes} (next offset {self.next_offset})")
        elif self.changes:
            what = f"recover segment {self.base_offset}: rewrite {', '.join(self.changes)}"
        else:
            what = f"verify segment {self.base_offset}: nothing to change"
        return f"{what}; {self.reason}"


@dataclass(frozen=True)
class SplitPart:
    """One segment a split writes: the source's bytes ``[position, position + size)``."""

    base_offset: int  # the base offset of its first batch
    position: int
    size: int


@dataclass(frozen=True)
class SplitSegment:
    """Split a segment whose offsets overflow its base offset + 2^31-1 (KAFKA-6264, written by
    brokers before 0.11) into segments that each fit, as ``LocalLog.splitOverflowedSegment``
    does: new segments written as ``.cleaned`` files, renamed ``.swap`` (newest first), the
    old segment deleted, the ``.swap`` files renamed to their final names."""

    kind: ClassVar[str] = "split-segment"
    base_offset: int
    path: str  # the .log split
    size: int
    overflow_offset: int  # the first offset found beyond the segment's range
    overflow_position: int  # the byte position of its batch
    segments: tuple[SplitPart, ...]
    reason: str

    def describe(self) -> str:
        bases = ", ".join(str(p.base_offset) for p in self.segments)
        return (f"split segment {self.base_offset} ({self.size} bytes) into "
                f"{len(self.segments)} segments at {bases}; {self.reason}")


@dataclass(frozen=True)
class DeleteSegment:
    """Delete a whole segment: its files are renamed ``.deleted`` and then removed (Kafka
    deletes asynchronously after ``file.delete.delay.ms``; an offline tool at once)."""

    kind: ClassVar[str] = "delete-segment"
    base_offset: int
    files: tuple[str, ...]  # the segment's files and the producer snapshot at its base
    reason: str

    def describe(self) -> str:
        return f"delete segment {self.base_offset} ({len(self.files)} files): {self.reason}"


@dataclass(frozen=True)
class CreateSegment:
    """Create an empty segment (``.log``, ``.index``, ``.timeindex``) so the log has one."""

    kind: ClassVar[str] = "create-segment"
    base_offset: int
    path: str
    reason: str

    def describe(self) -> str:
        return f"create empty segment {self.base_offset}: {self.reason}"


@dataclass(frozen=True)
class WriteLeaderEpochs:
    """Rewrite ``leader-epoch-checkpoint`` with the entries the loader ends with."""

    kind: ClassVar[str] = "write-leader-epochs"
    path: str
    before: tuple[EpochEntry, ...]
    after: tuple[EpochEntry, ...]
    assigned: tuple[EpochEntry, ...]  # by recovery, from the batches' leader epochs
    removed_from_end: tuple[EpochEntry, ...]  # at or above the log end (or all: cleared)
    removed_from_start: tuple[EpochEntry, ...]  # folded into the entry at the log start
    reason: str

    def describe(self) -> str:
        def fmt(entries: tuple[EpochEntry, ...]) -> str:
            return "[" + ", ".join(f"{e.epoch}@{e.start_offset}" for e in entries) + "]"
        return f"write {_name(self.path)} {fmt(self.before)} -> {fmt(self.after)}: {self.reason}"


@dataclass(frozen=True)
class DeleteSnapshot:
    """Delete a producer-state snapshot."""

    kind: ClassVar[str] = "delete-snapshot"
    offset: int
    path: str
    reason: str
    stray: bool = False  # removeStraySnapshots: at no segment base and not the newest

    def describe(self) -> str:
        return f"delete {_name(self.path)}: {self.reason}"


@dataclass(frozen=True)
class RebuildProducerState:
    """Kafka's ``rebuildProducerState`` to the log end: load the latest usable snapshot, replay
    the batches after it, write snapshots (at the bases of the last two segments when the
    replay passes them, and at the log end)."""

    kind: ClassVar[str] = "rebuild-producer-state"
    end_offset: int
    loaded_snapshot: int | None
    replay_from: int | None  # None: nothing is replayed
    deleted: tuple[tuple[int, str], ...]  # (offset, why): out of range or corrupt
    written: tuple[int, ...]
    reason: str

    def describe(self) -> str:
        parts = [f"{o} ({why})" for o, why in self.deleted]
        text = f"rebuild producer state to offset {self.end_offset}"
        if self.replay_from is not None:
            text += f", replaying from offset {self.replay_from}"
        if parts:
            text += f"; delete snapshots {', '.join(parts)}"
        if self.written:
            text += f"; write snapshots at {', '.join(str(o) for o in self.written)}"
        return f"{text}: {self.reason}"


Step = Union[DeleteFile, RenameFile, RecoverSegment, SplitSegment, DeleteSegment,
             CreateSegment, WriteLeaderEpochs, DeleteSnapshot, RebuildProducerState]


@dataclass(frozen=True)
class FileState:
    """A file as planning saw it; apply refuses to run if any differs."""

    name: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class LoadInputs:
    """What the loader is told besides the files (from the log dir's checkpoints)."""

    log_start_offset_checkpoint: int = 0
    recovery_point_checkpoint: int = 0
    high_watermark_checkpoint: int | None = None
    had_clean_shutdown: bool = False


@dataclass(frozen=True)
class LoadPlan:
    """Every change loading ``partition_dir`` makes, and the offsets it ends with."""

    partition_dir: str
    config: LogConfig
    inputs: LoadInputs
    now_ms: int
    files: tuple[FileState, ...]
    steps: tuple[Step, ...]
    verified: tuple[RecoverSegment, ...]  # recoveries Kafka runs that would change nothing
    segments: tuple[int, ...]  # base offsets once loaded
    log_start_offset: int
    log_end_offset: int
    recovery_point: int
    high_watermark: int
    leader_epochs: tuple[EpochEntry, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        """Nothing on disk would change (a second plan after :func:`apply_load` is empty)."""
        return not self.steps

    @property
    def is_routine(self) -> bool:
        """Only indexes rebuilt and stray producer snapshots deleted, nothing cut: what every
        load of a log recovered at each start (the KRaft metadata log) does anyway."""
        return all((isinstance(s, RecoverSegment) and not s.truncated_bytes)
                   or (isinstance(s, DeleteSnapshot) and s.stray)
                   for s in self.steps)

    @property
    def truncated_bytes(self) -> int:
        return sum(s.truncated_bytes for s in self.steps if isinstance(s, RecoverSegment))

    @property
    def deleted_segments(self) -> tuple[int, ...]:
        return tuple(s.base_offset for s in self.steps if isinstance(s, DeleteSegment))

    def describe(self) -> list[str]:
        """Human-readable lines: the outcome, then one numbered line per step."""
        lines = [f"{self.partition_dir}: log start {self.log_start_offset}, log end "
                 f"{self.log_end_offset}, recovery point {self.recovery_point}, high watermark "
                 f"{self.high_watermark}, {len(self.segments)} segments"]
        if not self.steps:
            lines.append("  nothing to change")
        lines += [f"  {i}. {step.describe()}" for i, step in enumerate(self.steps, 1)]
        lines += [f"  - {step.describe()}" for step in self.verified]
        lines += [f"  note: {note}" for note in self.notes]
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {"partitionDir": self.partition_dir,
                "inputs": plain_data(self.inputs),
                "logStartOffset": self.log_start_offset, "logEndOffset": self.log_end_offset,
                "recoveryPoint": self.recovery_point, "highWatermark": self.high_watermark,
                "segments": list(self.segments),
                "leaderEpochs": [[e.epoch, e.start_offset] for e in self.leader_epochs],
                "steps": [step_to_dict(s) for s in self.steps],
                "verified": [step_to_dict(s) for s in self.verified],
                "notes": list(self.notes)}


def step_to_dict(step: Step) -> dict[str, Any]:
    """A step as JSON-ready data (camelCase keys, lists), with its line for people."""
    return {"kind": step.kind, **plain_data(step), "description": step.describe()}


def plain_data(value: Any) -> Any:
    """Dataclasses, tuples and named tuples as dicts with camelCase keys and lists: what the
    JSON and YAML formatters (YAML's safe dumper refuses tuples) take."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_camel(f.name): plain_data(getattr(value, f.name))
                for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {_camel(k): plain_data(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v) for v in value]
    if isinstance(value, dict):
        return {k: plain_data(v) for k, v in value.items()}
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class LoadResult:
    """What :func:`apply_load` did: the plan's steps, the backups it made first, and anything
    that turned out differently from the plan (``notes``)."""

    plan: LoadPlan
    applied: tuple[Step, ...]
    backups: tuple[str, ...]
    notes: tuple[str, ...] = ()
