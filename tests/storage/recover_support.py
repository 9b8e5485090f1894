"""Running ``LogSegment.recover`` with and without its C batch loop, and everything it leaves
behind, for tests/storage/test_recover_speedups.py and tests/fuzz/fuzz_recover.py."""

from __future__ import annotations

import contextlib
import logging
import shutil
from pathlib import Path

from pylogctl.format.producer_snapshot import write_producer_snapshot
from pylogctl.storage import segment as segment_module
from pylogctl.storage.leader_epoch_cache import LeaderEpochFileCache
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.naming import LOG_SUFFIX, segment_file
from pylogctl.storage.producer_state import ProducerStateManager
from pylogctl.storage.segment import LogSegment
from pylogctl.storage.loader.recovery_dry_run import TransactionReplay

HOOKS = ("none", "full", "txn")  # no hooks; ProducerStateManager + epoch cache; rebuild-index's


@contextlib.contextmanager
def python_loop_only():
    """recover() without the C loop (as with PYLOGCTL_NO_SPEEDUPS=1)."""
    saved = segment_module._scan_recovery
    segment_module._scan_recovery = None
    try:
        yield
    finally:
        segment_module._scan_recovery = saved


class RecordingEpochCache:
    def __init__(self, directory: Path, calls: list) -> None:
        self.cache = LeaderEpochFileCache(directory / "leader-epoch-checkpoint", persist=False)
        self.calls = calls

    def latest_epoch(self):
        return self.cache.latest_epoch()

    def assign(self, epoch: int, start_offset: int) -> None:
        self.calls.append(("assign", epoch, start_offset))
        self.cache.assign(epoch, start_offset)


class RecordingProducerState:
    """A producer-state hook that logs the calls recovery makes on it."""

    def __init__(self, inner, calls: list) -> None:
        self.inner = inner
        self.calls = calls
        if hasattr(inner, "open_txn_producers"):
            self.open_txn_producers = inner.open_txn_producers

    def update(self, batch):
        open_txn = getattr(self, "open_txn_producers", None)
        if open_txn is None or batch.is_transactional or batch.producer_id in open_txn:
            self.calls.append(("update", batch.position, batch.base_offset))
        completed = self.inner.update(batch)
        if completed is not None:
            self.calls.append(("completed", completed.producer_id, completed.first_offset,
                               completed.last_offset, completed.is_aborted))
        return completed

    def last_stable_offset(self, completed):
        return self.inner.last_stable_offset(completed)

    def complete_txn(self, completed) -> None:
        self.calls.append(("complete_txn", completed.producer_id))
        self.inner.complete_txn(completed)

    def update_map_end_offset(self, offset: int) -> None:
        if self.calls and self.calls[-1][0] == "map_end":
            self.calls.pop()  # only the last of consecutive moves counts
        self.calls.append(("map_end", offset))
        self.inner.update_map_end_offset(offset)


class WarningLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def recover_outcome(directory: Path, log: bytes, base: int, hooks: str,
                    config: LogConfig) -> dict:
    """Everything observable after ``recover()`` of ``log`` as segment ``base`` of an empty
    ``directory`` (left empty again)."""
    directory.mkdir(parents=True, exist_ok=True)
    Path(segment_file(directory, base, LOG_SUFFIX)).write_bytes(log)
    calls: list = []
    manager = ProducerStateManager(directory)
    producer_state = epoch_cache = None
    if hooks == "full":
        producer_state = RecordingProducerState(manager, calls)
        epoch_cache = RecordingEpochCache(directory, calls)
    elif hooks == "txn":
        producer_state = RecordingProducerState(TransactionReplay(manager), calls)
    warnings = WarningLog()
    segment_module.logger.addHandler(warnings)
    segment = LogSegment.open(directory, base, config, roll_jitter_ms=0)
    try:
        try:
            result = ("truncated", segment.recover(producer_state, epoch_cache))
        except Exception as exc:  # noqa: BLE001 - the error is part of the outcome
            result = ("error", type(exc).__name__, str(exc))
        max_so_far = segment._max_timestamp_and_offset
        index_entries = (segment.offset_index.entries, segment.time_index.entries)
        try:
            segment.close()
            closed = None
        except Exception as exc:  # noqa: BLE001 - e.g. the final time entry refused
            closed = (type(exc).__name__, str(exc))
    finally:
        segment.close_handlers()
        segment_module.logger.removeHandler(warnings)
    files = {p.name: p.read_bytes() for p in sorted(directory.iterdir())}
    shutil.rmtree(directory)
    return {"result": result, "closed": closed, "warnings": warnings.lines, "max_so_far": max_so_far,
            "index_entries": index_entries, "files": files, "calls": calls,
            "producers": write_producer_snapshot(e.to_snapshot()
                                                 for e in manager.active_producers.values()),
            "map_end": manager.map_end_offset, "unstable": manager.first_unstable_offset(),
            "epochs": None if epoch_cache is None else epoch_cache.cache.epoch_entries()}
