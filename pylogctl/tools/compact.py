"""``pylogctl compact``: Kafka's log cleaner, offline.

For each partition of the given paths (log dirs, dirs of log dirs, partition dirs):

- Only compacted topics (``cleanup.policy`` contains ``compact``) are considered, unless the
  partition is named with ``--partition`` (forced: cleaned whatever its policy and ratio).
  ``__cluster_metadata`` is never cleaned (KRaft compacts it with snapshots).
- Planning reads only (:meth:`CleanerLog.read_only`): the cleanable range and dirty ratio as
  Kafka's cleaner manager computes them, and, for a log it would clean, a dry run of the first
  cleaning (the same code, output measured instead of written): bytes and records before and
  after, so the space it saves. A dry run cannot see the segments an earlier round writes, so a
  dirty section that overflows the offset map is estimated for its first round only.
- Executing takes the log dir's ``.lock`` (exit 4 if a broker holds it), loads the partition as
  a broker would (recovering it first if needed), cleans it round after round
  (:func:`~pylogctl.storage.cleaner.cleaner_manager.clean_log`), swapping each cleaned segment in
  with Kafka's ``.cleaned`` -> ``.swap`` protocol, and then writes ``cleaner-offset-checkpoint``. A
  kill at any point leaves a state ``pylogctl recover`` repairs; a second run starts from the
  checkpoint (or, killed before it was written, cleans the same range again).

Topic configs come from the sources ``pylogctl config`` shows (:class:`~.config.TopicConfigs`:
``--config``, a properties file, the KRaft metadata log, Kafka's internal-topic configs and
defaults); the broker's ``log.cleaner.*`` settings from a :class:`CleanerConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from ..errors import ExitCode, LogDirLockedError, PylogctlError, UsageError
from ..storage.checkpoint import CheckpointUpdate
from ..storage.cleaner.cleaner import Cleaner, CleaningResult
from ..storage.cleaner.cleaner_config import CleanerConfig
from ..storage.cleaner.cleaner_log import CleanerLog
from ..storage.cleaner.cleaner_manager import (CleaningDecision, checkpoint_after, clean_log,
                                               decide,
                                       write_checkpoint)
from ..storage.clock import wall_clock_ms
from ..storage.loader.plan import (DeleteSnapshot, RebuildProducerState, WriteLeaderEpochs,
                                  plain_data)
from ..storage.lock import LogDirLock
from ..storage.log import Log
from ..storage.log_config import LogConfig
from ..storage.checkpoint import CLEANER_OFFSET_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT
from ..storage.log_dir import LogDir, PartitionEntry
from ..storage.cleaner.log_to_clean import LogToClean, log_to_clean
from .config import ConfigOptions, TopicConfigs
from .log_dir_run import LogDirRun, Target

_HARMLESS_LOAD_STEPS = (RebuildProducerState, DeleteSnapshot, WriteLeaderEpochs)


@dataclass(frozen=True)
class CompactOptions:
    partitions: tuple[str, ...] = ()  # "topic-partition": forced
    now_ms: int | None = None
    execute: bool = False
    backup_dir: str | None = None
    cleaner: CleanerConfig = CleanerConfig()
    config: ConfigOptions = ConfigOptions()
    high_watermark: str = "checkpoint"  # HIGH_WATERMARKS


# --high-watermark: where the cleanable range ends (with the last stable offset below it)
HIGH_WATERMARKS = ("checkpoint", "log-end")


@dataclass
class PartitionCompaction:
    """A formatter section: one partition, its cleaning rounds as items, the outcome as footer."""

    entry: PartitionEntry
    log_dir: str
    config: LogConfig
    forced: bool
    decision: CleaningDecision | None = None
    to_clean: LogToClean | None = None
    offsets: dict[str, int] = field(default_factory=dict)
    rounds: list[CleaningResult] = field(default_factory=list)
    checkpoint_update: CheckpointUpdate | None = None
    executed: bool = False
    backups: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    error: PylogctlError | None = None
    no_high_watermark: bool = False  # nothing cleanable for want of a checkpointed HW
    kind: str = "compact"
    items_key: str = "rounds"

    @property
    def nothing_to_do(self) -> bool:
        """Nothing to clean or checkpoint, no error, nothing noted but a missing high watermark
        (counted once for the run): what a long plan leaves out."""
        return (self.error is None and not (self.decision and self.decision.clean)
                and self.checkpoint_update is None
                and len(self.notes) <= int(self.no_high_watermark))

    @property
    def header(self) -> dict[str, Any]:
        return {"partition": str(self.entry), "partitionDir": self.entry.path,
                "logDir": self.log_dir}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        for n, r in enumerate(self.rounds, 1):
            yield {"round": n, "firstDirtyOffset": r.first_dirty_offset,
                   "endOffset": r.end_offset, "firstUncleanableOffset": r.first_uncleanable_offset,
                   "complete": r.end_offset >= r.first_uncleanable_offset,
                   "groups": [{"baseOffsets": list(g.base_offsets), "bytesBefore": g.bytes_before,
                               "bytesAfter": g.bytes_after} for g in r.groups],
                   "stats": r.stats.to_dict()}

    @property
    def bytes_before(self) -> int:
        return sum(r.stats.bytes_read for r in self.rounds)

    @property
    def bytes_after(self) -> int:
        return sum(r.stats.bytes_written for r in self.rounds)

    @property
    def footer(self) -> dict[str, Any]:
        t = self.to_clean
        error = None if self.error is None else {"message": str(self.error),
                                                 "path": self.error.path,
                                                 "position": self.error.position}
        u = self.checkpoint_update
        return {
            "cleanupPolicy": list(self.config.cleanup_policy), "forced": self.forced,
            **self.offsets,
            "firstDirtyOffset": t.first_dirty_offset if t else None,
            "firstUncleanableOffset": t.first_uncleanable_offset if t else None,
            "cleanBytes": t.clean_bytes if t else None,
            "cleanableBytes": t.cleanable_bytes if t else None,
            "dirtyRatio": round(t.cleanable_ratio, 6) if t else None,
            "minCleanableDirtyRatio": self.config.min_cleanable_dirty_ratio,
            "needCompactionNow": t.need_compaction_now if t else None,
            "clean": self.decision.clean if self.decision else False,
            "reason": self.decision.reason if self.decision else None,
            "bytesBefore": self.bytes_before, "bytesAfter": self.bytes_after,
            "spaceSaved": self.bytes_before - self.bytes_after,
            "recordsRemoved": sum(r.stats.records_removed for r in self.rounds),
            "checkpointUpdates": [] if u is None else [plain_data(u)],
            "executed": self.executed, "backups": list(self.backups),
            "notes": self.notes, "error": error,
        }


@dataclass
class Compaction(LogDirRun[PartitionCompaction]):
    """A compact run over ``paths``; iterate :meth:`partitions` to plan (and clean)."""

    paths: list[str]
    options: CompactOptions = CompactOptions()
    notes: list[str] = field(default_factory=list)
    command = "compact"

    def __post_init__(self) -> None:
        self.resolve(self.paths, self.options.execute)
        self.now_ms = (wall_clock_ms() if self.options.now_ms is None
                       else self.options.now_ms)
        self._check_partitions()
        self.configs = TopicConfigs([t.log_dir for t in self.targets], self.options.config)
        for target in self.targets:  # a bad config file or metadata log fails here, up front
            self.configs.sources(LogDir(target.log_dir))

    def entries(self, log_dir: LogDir, target: Target) -> list[PartitionEntry]:
        wanted = set(self.options.partitions)
        return [e for e in target.entries(log_dir) if not wanted or str(e) in wanted]

    def _check_partitions(self) -> None:
        """``--partition`` names only partitions the paths hold."""
        found = {str(e) for t in self.targets for e in self.entries(LogDir(t.log_dir), t)}
        missing = sorted(set(self.options.partitions) - found)
        if missing:
            raise UsageError(f"No partition {', '.join(missing)} in {', '.join(self.paths)}")

    def open_log_dir(self, log_dir: LogDir, target: Target) -> None:
        super().open_log_dir(log_dir, target)
        self.notes += [f"{log_dir.path}: {n}" for n in self.configs.sources(log_dir).notes]

    def partition(self, log_dir: LogDir, entry: PartitionEntry,
                  lock: LogDirLock | None) -> PartitionCompaction:
        o = self.options
        section = PartitionCompaction(entry, log_dir.path, LogConfig(), str(entry) in o.partitions)
        if entry.is_metadata_log:
            section.decision = CleaningDecision(False, "the KRaft metadata log is never cleaned "
                                                "(KRaft compacts it into snapshots)")
            return section
        try:
            section.config = config = self.configs.sources(log_dir).topic(entry.topic).log_config
            if not config.compact and not section.forced:
                section.decision = CleaningDecision(
                    False, f"not a compacted topic (cleanup.policy="
                    f"{','.join(config.cleanup_policy)})")
                return section
            self._plan(log_dir, entry, section)
            wants_write = section.decision.clean or section.checkpoint_update is not None
            if o.execute and wants_write:
                assert lock is not None
                self._execute(log_dir, entry, section, lock)
        except LogDirLockedError:
            raise
        except PylogctlError as exc:
            section.error = exc
        return section

    def _plan(self, log_dir: LogDir, entry: PartitionEntry, section: PartitionCompaction) -> None:
        """The decision (and, when only planning, a dry run of the first round)."""
        load = log_dir.plan(entry, section.config, now_ms=self.now_ms)
        changing = [s for s in load.steps if not isinstance(s, _HARMLESS_LOAD_STEPS)]
        if changing:
            section.notes.append(f"loading recovers the partition first ({len(changing)} "
                                 f"step{'' if len(changing) == 1 else 's'}: see `pylogctl "
                                 f"recover`); the plan reads the files as they are")
        log_end = self.options.high_watermark == "log-end"
        log = CleanerLog.read_only(entry.path, section.config, list(load.segments),
                                   load.log_start_offset, load.log_end_offset,
                                   load.log_end_offset if log_end else load.high_watermark,
                                   self.now_ms)
        if not log.segments:  # no .log at all: the load creates an empty segment
            section.decision = CleaningDecision(False, "nothing to clean: the partition has no "
                                                "segment file")
            return
        try:
            section.offsets = _offsets(log)
            checkpointed = log_dir.checkpointed(CLEANER_OFFSET_CHECKPOINT, entry)
            if self.options.execute:
                to_clean = log_to_clean(log, checkpointed, self.now_ms)
                rounds: list[CleaningResult] = []
            else:
                to_clean, rounds = clean_log(Cleaner(self.options.cleaner), log, checkpointed,
                                             self.now_ms, forced=section.forced)
        finally:
            log.close()
        self._record(log_dir, entry, section, to_clean, rounds)
        if log_end:
            section.notes.append(f"high watermark taken as the log end {load.log_end_offset} "
                                 f"(--high-watermark log-end); {HIGH_WATERMARK_CHECKPOINT} "
                                 f"is left as it is")
        elif not section.decision.clean:
            note = _no_high_watermark(log_dir, entry, load.high_watermark, load.log_end_offset)
            section.no_high_watermark = bool(note)
            section.notes += note
        if rounds and rounds[-1].end_offset < rounds[-1].first_uncleanable_offset:
            section.notes.append(f"the offset map fills at offset {rounds[-1].end_offset}: "
                                 f"cleaning takes more than one round; the estimate covers the "
                                 f"first")

    def _execute(self, log_dir: LogDir, entry: PartitionEntry, section: PartitionCompaction,
                 lock: LogDirLock) -> None:
        checkpointed = log_dir.checkpointed(CLEANER_OFFSET_CHECKPOINT, entry)

        def run(log: Log, _checkpoint) -> tuple[LogToClean, list[CleaningResult]]:
            clog = CleanerLog.for_log(log, self.now_ms, log.log_end_offset
                                      if self.options.high_watermark == "log-end" else None)
            section.offsets = _offsets(clog)
            return clean_log(Cleaner(self.options.cleaner), clog, checkpointed, self.now_ms,
                             forced=section.forced)

        # the loader-and-checkpoints wrapper truncate and retention use: load as a
        # broker would, run, close, write the checkpoint entries the load changed
        _, (to_clean, rounds), _, backups, notes = log_dir.with_loaded_log(
            entry, section.config, self.options.backup_dir, lock, run)
        self._record(log_dir, entry, section, to_clean, rounds)
        notes = list(notes)
        if section.checkpoint_update is not None:
            notes += write_checkpoint(log_dir, section.checkpoint_update, self.options.backup_dir)
        section.executed = True
        section.backups = tuple(backups)
        section.notes += notes

    def _record(self, log_dir: LogDir, entry: PartitionEntry, section: PartitionCompaction,
                to_clean: LogToClean, rounds: list[CleaningResult]) -> None:
        section.to_clean = to_clean
        section.rounds = rounds
        section.decision = decide(to_clean, section.config.min_cleanable_dirty_ratio,
                                  section.forced)
        section.checkpoint_update = checkpoint_after(log_dir, entry, to_clean, rounds)


def _no_high_watermark(log_dir: LogDir, entry: PartitionEntry, high_watermark: int,
                       log_end: int) -> list[str]:
    """Why the cleanable range stops short: no high watermark is checkpointed, and offline no
    follower's fetch raises it as a leader's would (``Partition.maybeIncrementLeaderHW``)."""
    if entry.is_metadata_log or high_watermark >= log_end:
        return []
    if log_dir.checkpointed(HIGH_WATERMARK_CHECKPOINT, entry) is not None:
        return []
    missing = (f"{HIGH_WATERMARK_CHECKPOINT} is missing"
               if log_dir.checkpoints[HIGH_WATERMARK_CHECKPOINT].entries is None
               else f"{HIGH_WATERMARK_CHECKPOINT} has no entry for {entry}")
    return [f"{missing}: the high watermark is {high_watermark}, so nothing above it is "
            f"cleanable; if every record up to the log end {log_end} is known to be committed, "
            f"rerun with --high-watermark log-end"]


def _offsets(log: CleanerLog) -> dict[str, int]:
    return {"logStartOffset": log.log_start_offset, "logEndOffset": log.log_end_offset,
            "highWatermark": log.high_watermark, "lastStableOffset": log.last_stable_offset(),
            "activeSegment": log.active_segment.base_offset}


def exit_code(sections: list[PartitionCompaction]) -> int:
    """The worst error among the partitions (0 if none)."""
    return max((int(s.error.exit_code) for s in sections if s.error is not None),
               default=int(ExitCode.OK))
