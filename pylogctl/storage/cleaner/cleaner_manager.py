"""Which logs of a log dir get cleaned, how often, and where the cleaner records its progress
(the offline part of Kafka's ``LogCleanerManager``).

Kafka's cleaner threads repeatedly take the dirtiest eligible log
(``grabFilthiestCompactedLog``: a compacted topic, not empty, dirtier than
``min.cleanable.dirty.ratio`` or overdue by ``max.compaction.lag.ms``), clean it once, and
record the end of the cleaned range in the log dir's ``cleaner-offset-checkpoint``
(``doneCleaning``); a checkpoint found out of range is reset to the log start at once. Offline,
every eligible log is cleaned as the broker would eventually clean it: round after round while
it stays eligible (a dirty section larger than the offset map takes several rounds). A log
named explicitly is *forced*: cleaned whatever its ratio or policy, until its cleanable range is
used up. A partition that fails is reported and left as it is (Kafka marks it uncleanable).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from ..backup import Backup
from .cleaner import Cleaner, CleaningResult
from .cleaner_log import CleanerLog
from ..checkpoint import CLEANER_OFFSET_CHECKPOINT, CheckpointUpdate
from ..log_dir import LogDir, PartitionEntry
from .log_to_clean import LogToClean, log_to_clean

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CleaningDecision:
    """Whether (and why) a log is cleaned now."""

    clean: bool
    reason: str


def decide(to_clean: LogToClean, min_cleanable_ratio: float, forced: bool) -> CleaningDecision:
    """``grabFilthiestCompactedLog``'s filter for one log (``forced``: only something must be
    cleanable)."""
    ratio = f"dirty ratio {to_clean.cleanable_ratio:.4f}"
    if to_clean.cleanable_bytes <= 0:
        return CleaningDecision(False, f"nothing to clean: no complete segment between the first "
                                f"dirty offset {to_clean.first_dirty_offset} and the first "
                                f"uncleanable offset {to_clean.first_uncleanable_offset}")
    if forced:
        return CleaningDecision(True, f"forced ({ratio})")
    if to_clean.need_compaction_now:
        return CleaningDecision(True, f"a dirty segment is older than max.compaction.lag.ms "
                                f"({ratio})")
    if to_clean.eligible(min_cleanable_ratio):
        return CleaningDecision(True, f"{ratio} > min.cleanable.dirty.ratio "
                                f"{min_cleanable_ratio}")
    return CleaningDecision(False, f"{ratio} <= min.cleanable.dirty.ratio {min_cleanable_ratio}")


def clean_log(cleaner: Cleaner, log: CleanerLog, checkpointed: int | None, now_ms: int, *,
              forced: bool, max_rounds: int | None = None) -> tuple[LogToClean,
                                                                     list[CleaningResult]]:
    """Clean ``log`` round after round while :func:`decide` says so (a dry run: one round).
    Returns the log's state before the first round and every round's result."""
    first = to_clean = log_to_clean(log, checkpointed, now_ms)
    rounds: list[CleaningResult] = []
    ratio = log.config.min_cleanable_dirty_ratio
    while decide(to_clean, ratio, forced).clean:
        result = cleaner.clean(log, to_clean, now_ms)
        rounds.append(result)
        if not log.dry_run:
            logger.info("\n\t".join(["", *result.stats.kafka_lines(
                log.name, result.first_dirty_offset, result.end_offset)]))
            if result.stats.invalid_messages_read:
                logger.warning("\tFound %d invalid messages during compaction.",
                               result.stats.invalid_messages_read)
        if (log.dry_run or result.end_offset <= to_clean.first_dirty_offset
                or (max_rounds is not None and len(rounds) >= max_rounds)):
            break
        to_clean = log_to_clean(log, result.end_offset, now_ms)
    return first, rounds


def cleaned_up_to(first: LogToClean, rounds: list[CleaningResult]) -> int | None:
    """The offset ``cleaner-offset-checkpoint`` records after these rounds (``doneCleaning``):
    the end of the last round, or the first dirty offset a reset moved; None: no change."""
    if rounds:
        return rounds[-1].end_offset
    return first.first_dirty_offset if first.force_update_checkpoint else None


def checkpoint_after(log_dir: LogDir, entry: PartitionEntry, first: LogToClean,
                     rounds: list[CleaningResult]) -> CheckpointUpdate | None:
    """The ``cleaner-offset-checkpoint`` entry a cleaning (or a reset) writes, if it changes."""
    old = log_dir.checkpointed(CLEANER_OFFSET_CHECKPOINT, entry)
    new = cleaned_up_to(first, rounds)
    if new is None or old == new:
        return None
    return CheckpointUpdate(CLEANER_OFFSET_CHECKPOINT, entry.topic, entry.partition, old, new)


def write_checkpoint(log_dir: LogDir, update: CheckpointUpdate,
                     backup_dir: str | os.PathLike[str] | None) -> list[str]:
    """Write one cleaner checkpoint entry (the caller holds the log dir's lock); returns notes.
    Goes through :class:`LogDir`'s checkpoint writer, which rewrites only that entry."""
    backup = None if backup_dir is None else Backup(backup_dir, log_dir.path)
    return log_dir.write_checkpoint_updates([update], backup)
