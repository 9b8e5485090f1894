"""What planning a load carries from phase to phase (the state Kafka's ``LogLoader`` keeps in its
fields), and the few moves every phase makes on it.

Each move appends its step and plays it on the :class:`~pylogctl.storage.loader.view.DirView` at
once, so a later phase plans against the dir the earlier ones leave. Recovering a segment runs
``LogSegment.recover`` read-only, once (:mod:`pylogctl.storage.loader.recovery_dry_run`): what it
found is kept for the recovery step planned at the end (:mod:`pylogctl.storage.loader.recovery`),
and the leader epochs it finds are assigned as Kafka's ``recoverSegment`` assigns them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

from ...errors import LogSegmentOffsetOverflowError, PylogctlError
from ..checkpoint import EpochEntry
from ..leader_epoch_cache import LeaderEpochFileCache
from .plan import (SEGMENT_FILE_SUFFIXES, DeleteFile, DeleteSegment, FileState, LoadInputs,
                        Step, WriteLeaderEpochs)
from .view import DirView, list_files
from ..log_config import LogConfig
from ..naming import LOG_SUFFIX, PRODUCER_SNAPSHOT_SUFFIX, offset_from_name, segment_name
from .recovery_dry_run import RecoveryScan, ScratchDir, recover_read_only
from .segment_split import SplitScratch


class LoadError(PylogctlError):
    """The partition dir cannot be loaded the way Kafka would (Kafka would fail too)."""


@dataclass
class SegmentRecovery:
    """A segment Kafka recovers: why, and what the read-only scan found."""

    scan: RecoveryScan
    triggers: list[str] = field(default_factory=list)
    index_problem: bool = False


class OffsetOverflow(Exception):
    """A recovery met an offset beyond the segment's range: split it, then load again
    (Kafka's ``retryOnOffsetOverflow``)."""

    def __init__(self, error: LogSegmentOffsetOverflowError, trigger: str) -> None:
        super().__init__(error.message)
        self.error = error
        self.trigger = trigger


class LoadPlanner:
    def __init__(self, directory: str, inputs: LoadInputs, config: LogConfig,
                 now_ms: int) -> None:
        self.dir = directory
        self.inputs = inputs
        self.config = config
        self.now_ms = now_ms
        self.files: dict[str, FileState] = list_files(directory)
        self.view = DirView(directory, self.files)
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self.segments: dict[int, int] = {}  # base offset -> .log size, once loaded
        self.recoveries: dict[int, SegmentRecovery] = {}
        self.epochs = LeaderEpochFileCache.for_partition_dir(directory, persist=False)
        self.epochs_before = tuple(self.epochs.epoch_entries())
        self.epochs_assigned: list[EpochEntry] = []  # by the recoveries, in Kafka's order
        self.scratch = SplitScratch(config)
        self.recovery_scratch = ScratchDir()

    def close(self) -> None:
        self.scratch.close()
        self.recovery_scratch.close()

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def delete_file(self, name: str, reason: str) -> None:
        self.steps.append(DeleteFile(self.path(name), self.view.size(name), reason))
        self.view.delete(name)

    def log_path(self, base: int) -> str:
        path = self.view.path(segment_name(base, LOG_SUFFIX))
        assert path is not None
        return path

    def locate(self, base: int):
        return lambda suffix: self.view.path(segment_name(base, suffix))

    def note(self, text: str) -> None:
        if text not in self.notes:  # (loading starts over after a split)
            self.notes.append(text)

    def recover(self, base: int, trigger: str, index_problem: bool = False) -> SegmentRecovery:
        """Kafka's ``recoverSegment``: the epochs the segment's batches start are assigned.
        Raises :class:`OffsetOverflow` for a segment to split."""
        recovery = self.recoveries.get(base)
        if recovery is None:
            try:
                scan = recover_read_only(self.log_path(base), base,
                                         self.config.index_interval_bytes,
                                         self.config.segment_index_bytes,
                                         self.recovery_scratch)
            except LogSegmentOffsetOverflowError as exc:
                raise OffsetOverflow(exc, trigger) from None
            recovery = self.recoveries[base] = SegmentRecovery(scan)
        if trigger not in recovery.triggers:  # (loading starts over after a split)
            recovery.triggers.append(trigger)
        recovery.index_problem |= index_problem
        for epoch, start in recovery.scan.epoch_starts:
            latest = self.epochs.latest_epoch()
            if latest is None or epoch > latest:
                self.epochs.assign(epoch, start)
                self.epochs_assigned.append(EpochEntry(epoch, start))
        return recovery

    def delete_segment(self, base: int, reason: str) -> None:
        suffixes = (*SEGMENT_FILE_SUFFIXES, PRODUCER_SNAPSHOT_SUFFIX)
        names = [segment_name(base, s) for s in suffixes]
        files = tuple(self.path(n) for n in names if n in self.view)
        for name in names:
            self.view.delete(name)
        self.segments.pop(base, None)
        self.recoveries.pop(base, None)
        self.steps.append(DeleteSegment(base, files, reason))

    def snapshots(self) -> dict[int, str]:
        out = {}
        for name in self.view.names():
            offset = offset_from_name(name)
            if name.endswith(PRODUCER_SNAPSHOT_SUFFIX) and offset is not None:
                out[offset] = self.view.path(name)
        return out

    def write_epochs(self, reason: str, assigned: Sequence[EpochEntry] = (),
                     removed_from_end: Sequence[EpochEntry] = (),
                     removed_from_start: Sequence[EpochEntry] = ()) -> None:
        before = self.epochs_before
        after = tuple(self.epochs.epoch_entries())
        self.steps.append(WriteLeaderEpochs(self.epochs.path, before, after, tuple(assigned),
                                            tuple(removed_from_end), tuple(removed_from_start),
                                            reason))
        self.epochs_before = after
