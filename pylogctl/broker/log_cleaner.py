"""The broker's log cleaner (Kafka's ``LogCleaner`` with its ``LogCleanerManager``): compacts
the logs whose ``cleanup.policy`` contains ``compact`` (``__consumer_offsets``,
``__transaction_state``, compacted topics) while the broker serves them.

Each step is Kafka's ``cleanFilthiestLog``: of the compacted logs not marked uncleanable, the
dirtiest one whose dirty ratio exceeds ``min.cleanable.dirty.ratio`` (or that is overdue by
``max.compaction.lag.ms``) is cleaned once, from its ``cleaner-offset-checkpoint`` entry up to
the first uncleanable offset (never the active segment, never at or above the last stable
offset, which is at most the high watermark), and the checkpoint records how far it got; then
retention runs on every compacted log (the whole of it where ``cleanup.policy`` also has
``delete``, else only the log-start-offset pass). A step that cleaned something is followed by
another at once; otherwise the cleaner waits ``log.cleaner.backoff.ms``.

The code is the offline ``pylogctl compact``'s (:func:`~pylogctl.storage.cleaner.cleaner_manager.
clean_log` over a :class:`~pylogctl.storage.cleaner.cleaner_log.CleanerLog`), given the live
:class:`~pylogctl.storage.log.Log`: cleaned segments are written as ``.cleaned`` files and
swapped into the log's own segment map (``.cleaned`` -> ``.swap`` -> final name, as Kafka's
``replaceSegments``), the replaced files removed ``file.delete.delay.ms`` later.

Kafka runs this in cleaner threads. Here a step runs on the event loop, between requests: a
:class:`~pylogctl.storage.log.Log` is not thread-safe, and a fetch takes a segment's path and
opens it in one go, which a swap from another thread could split. The loop yields between
steps, and a step is one cleaning round of one log, bounded by the offset map
(``log.cleaner.dedupe.buffer.size``); a round copies the log from its start to the end of the
cleaned range, so requests wait for about that much I/O (the C fast path copies hundreds of
MB/s). A log whose cleaning fails is logged and marked uncleanable until the broker restarts,
as in Kafka.
"""

from __future__ import annotations

import asyncio
import logging

from ..storage.cleaner.cleaner import Cleaner
from ..storage.cleaner.cleaner_config import CleanerConfig
from ..storage.cleaner.cleaner_log import CleanerLog
from ..storage.cleaner.cleaner_manager import clean_log, cleaned_up_to, decide
from ..storage.cleaner.log_to_clean import LogToClean, log_to_clean
from ..storage.clock import wall_clock_ms
from .log_manager import LoadedLog, LogManager

logger = logging.getLogger(__name__)


class LogCleaner:
    """One cleaner over a :class:`LogManager`'s logs; :meth:`run` is its task."""

    def __init__(self, log_manager: LogManager, config: CleanerConfig) -> None:
        self.log_manager = log_manager
        self.config = config
        self.uncleanable: set[tuple[str, int]] = set()
        self._cleaner: Cleaner | None = None

    @property
    def cleaner(self) -> Cleaner:
        """Made at the first cleaning: its offset map takes ``dedupe.buffer.size`` bytes."""
        if self._cleaner is None:
            self._cleaner = Cleaner(self.config)
        return self._cleaner

    async def run(self) -> None:
        while True:
            try:
                cleaned = self.clean_filthiest_log(wall_clock_ms())
            except Exception:  # noqa: BLE001 - keep the task alive; the next step retries
                logger.exception("Log cleaner step failed")
                cleaned = False
            await asyncio.sleep(0 if cleaned else self.config.backoff_ms / 1000)

    def clean_filthiest_log(self, now_ms: int) -> bool:
        """One step (``cleanFilthiestLog``); True when a cleaning moved a log's checkpoint
        (then the next step follows at once)."""
        filthiest = self.grab_filthiest_compacted_log(now_ms)
        progressed = filthiest is not None and self._clean(*filthiest, now_ms)
        for key, loaded in list(self.log_manager.logs.items()):
            if loaded.log.config.compact and key not in self.uncleanable:
                self.log_manager.delete_old_segments(loaded, now_ms)
        return progressed

    def grab_filthiest_compacted_log(self, now_ms: int) -> tuple[LoadedLog, LogToClean] | None:
        """The compacted log to clean now, the dirtiest first; resets checkpoint entries found
        out of the log's range on the way, as Kafka does."""
        best: tuple[LoadedLog, LogToClean] | None = None
        resets: dict[tuple[str, int], int | None] = {}
        for key, loaded in self.log_manager.logs.items():
            config = loaded.log.config
            if not config.compact or key in self.uncleanable:
                continue
            to_clean = log_to_clean(CleanerLog.for_live_log(loaded.log),
                                    self.log_manager.cleaner_checkpoints.get(key), now_ms)
            if to_clean.force_update_checkpoint:
                resets[key] = to_clean.first_dirty_offset
            if (decide(to_clean, config.min_cleanable_dirty_ratio, False).clean
                    and (best is None or to_clean.cleanable_ratio > best[1].cleanable_ratio)):
                best = loaded, to_clean
        if resets:
            self.log_manager.update_cleaner_checkpoint(resets)
        return best

    def _clean(self, loaded: LoadedLog, to_clean: LogToClean, now_ms: int) -> bool:
        """One round (``cleanLog``), then ``doneCleaning``'s checkpoint; True if it moved."""
        key = (loaded.topic, loaded.partition)
        try:
            first, rounds = clean_log(self.cleaner, CleanerLog.for_live_log(loaded.log),
                                      self.log_manager.cleaner_checkpoints.get(key), now_ms,
                                      forced=False, max_rounds=1)
        except Exception:  # noqa: BLE001 - Kafka's markPartitionUncleanable
            logger.exception("Cleaning %s-%d failed (dirty ratio %.4f): marked uncleanable",
                             loaded.topic, loaded.partition, to_clean.cleanable_ratio)
            self.uncleanable.add(key)
            return False
        end = cleaned_up_to(first, rounds)
        if end is not None:
            self.log_manager.update_cleaner_checkpoint({key: end})
        return end is not None and end > first.first_dirty_offset
