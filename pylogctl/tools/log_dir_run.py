"""What the commands that change log dirs share (``recover``, ``retention``, ``compact``):
which log dirs and partitions their paths name, and the walk over them.

- Paths are partition dirs, log dirs or dirs of log dirs; a partition dir stands for its log
  dir (whose checkpoints and ``.lock`` it needs) restricted to that partition.
- A log dir whose ``.lock`` a running broker holds is refused before any output, in every mode
  (its files are in flux, and a plan of them would mislead).
- Executing takes each log dir's lock for the whole walk of its partitions, so planning and
  changing see the same files; each partition is crash-safe on its own.
- A run whose ``partition`` is thread-safe may set ``threads`` above 1: that many partitions
  of a log dir are then handled at once (a broker's ``num.recovery.threads.per.data.dir``),
  the sections still come back in order, at most a few per thread ahead, and every worker has
  finished before the lock is released or an error leaves the walk. The file I/O, fsyncs and
  the C batch scan run without the GIL.
"""

from __future__ import annotations

import collections
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Generic, Iterator, TypeVar

from ..errors import UsageError
from ..storage.lock import LogDirLock, ensure_unlocked
from ..storage.log_dir_layout import live_partition_name, not_a_kafka_dir
from ..storage.log_dir import LogDir, PartitionEntry
from ..storage.partition_paths import PathKind, resolve_path, select_partitions

Progress = Callable[[int], None]
S = TypeVar("S")


@dataclass(frozen=True)
class Target:
    log_dir: str
    partition_dirs: tuple[str, ...] | None  # None: every partition of the log dir

    def entries(self, log_dir: LogDir) -> list[PartitionEntry]:
        if self.partition_dirs is None:
            return list(log_dir.partitions)
        return [log_dir.entry_for_dir(p) for p in self.partition_dirs]


def resolve_targets(paths: list[str], command: str) -> list[Target]:
    """Log dirs and the partitions wanted in each, in argument order, merged."""
    arguments = []
    for path in paths:
        arg = resolve_path(path)
        if arg.kind is PathKind.FILE:
            raise UsageError(f"{path} is not a directory: {command} takes partition dirs, log "
                             f"dirs or a dir holding log dirs", path=path)
        if arg.kind is PathKind.OTHER_DIR:
            raise not_a_kafka_dir(path)
        if arg.kind is PathKind.PARTITION_DIR:
            live_partition_name(path)  # its log dir lists it only under its live name
        arguments.append(arg)
    return [Target(s.log_dir, None if s.partitions is None else tuple(sorted(s.partitions)))
            for s in select_partitions(arguments)]


class LogDirRun(Generic[S]):
    """A walk over the partitions of some log dirs that yields one section per partition.

    Subclasses set ``command``, call :meth:`resolve` with their paths, and implement
    :meth:`partition`; they may narrow :meth:`entries` and add notes per log dir in
    :meth:`open_log_dir` and :meth:`close_log_dir`.
    """

    command = ""
    threads = 1
    targets: list[Target]
    notes: list[str]
    execute: bool

    def resolve(self, paths: list[str], execute: bool) -> None:
        self.targets = resolve_targets(paths, self.command)
        self.execute = execute
        for target in self.targets:  # refuse before any output, not halfway through
            ensure_unlocked(target.log_dir)

    def entries(self, log_dir: LogDir, target: Target) -> list[PartitionEntry]:
        return target.entries(log_dir)

    def count(self) -> int:
        """How many partitions the run covers (for a progress bar)."""
        return sum(len(self.entries(LogDir(t.log_dir), t)) for t in self.targets)

    def open_log_dir(self, log_dir: LogDir, target: Target) -> None:
        self.notes += [f"{log_dir.path}: {n}" for n in log_dir.notes]

    def close_log_dir(self, log_dir: LogDir, lock: LogDirLock | None) -> None:
        """After the last partition of a log dir (its lock still held when executing)."""

    def partition(self, log_dir: LogDir, entry: PartitionEntry, lock: LogDirLock | None) -> S:
        """One partition's section (from a worker thread when ``threads`` > 1)."""
        raise NotImplementedError

    def done(self, log_dir: LogDir, section: S) -> None:
        """After each partition, in the walking thread and in order."""

    def partitions(self, progress: Progress | None = None) -> Iterator[S]:
        for target in self.targets:
            lock = LogDirLock(target.log_dir).acquire() if self.execute else None
            try:
                log_dir = LogDir(target.log_dir)
                self.open_log_dir(log_dir, target)
                for section in self._sections(log_dir, self.entries(log_dir, target), lock):
                    self.done(log_dir, section)
                    yield section
                    if progress is not None:
                        progress(1)
                self.close_log_dir(log_dir, lock)
            finally:
                if lock is not None:
                    lock.release()

    def _sections(self, log_dir: LogDir, entries: list[PartitionEntry],
                  lock: LogDirLock | None) -> Iterator[S]:
        if self.threads <= 1 or len(entries) <= 1:
            for entry in entries:
                yield self.partition(log_dir, entry, lock)
            return
        ahead = 2 * self.threads  # bounds the sections held in memory
        with ThreadPoolExecutor(min(self.threads, len(entries)),
                                thread_name_prefix=f"pylogctl-{self.command}") as pool:
            pending: collections.deque[Future[S]] = collections.deque()
            try:
                for entry in entries:
                    pending.append(pool.submit(self.partition, log_dir, entry, lock))
                    if len(pending) >= ahead:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
            finally:  # an error or an abandoned walk: start nothing new, wait for the rest
                for future in pending:
                    future.cancel()
