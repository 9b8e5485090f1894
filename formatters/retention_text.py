"""Text for a ``retention`` section: a partition, its passes, a numbered line per deletion.

::

    orders-0 (/data/orders-0): cleanup.policy=delete (default), retention.ms=604800000
      (kraft-topic), retention.bytes=-1 (default)
      log start 0, log end 55, high watermark 55, 6 segments, 6966 bytes
      1. delete segment 0 (1161 bytes) by retention.ms: its largest timestamp ... is 10d old, ...
      pass log-start-offset (log start offset 0): nothing to delete; segment 0 is kept: ...
      pass retention.bytes (retention.bytes=-1): skipped: no size limit
      pass retention.ms (retention.ms=604800000): 3 deleted; segment 30 is kept: ...
      delete producer snapshots at 0, 10, 20, 30
      leader epochs [0@0, 1@10, 2@20, 3@30] -> [3@30]
      log start 0 -> 30; 3483 bytes freed; 3 segments left
      checkpoint log-start-offset-checkpoint: absent -> 30
      would delete 3 segments (nothing changed)

Plain lines, one fact each, so ``grep`` finds a segment, a rule or a checkpoint.
"""

from __future__ import annotations

from typing import Any, TextIO

from . import Section
from .recover_text import write_checkpoints_and_notes


def render_retention(section: Section, out: TextIO) -> None:
    w = out.write
    h = section.header
    f = section.footer
    configs = ", ".join(f"{name}={c['value']} ({c['source']})"
                        for name, c in h["config"].items())
    w(f"{h['partition']} ({h['partitionDir']})" + (f": {configs}" if configs else "") + "\n")
    if f["error"] is not None:
        w(f"  error: {f['error']['message']}\n")
        return
    if f["skipped"] is not None:
        w(f"  skipped: {f['skipped']}\n")
        return
    for i, step in enumerate(f["recoverFirst"], 1):
        w(f"  recover first: {i}. {step['description']}\n")
    w(f"  log start {f['logStartOffsetBefore']}, log end {f['logEndOffset']}, high watermark "
      f"{f['highWatermark']}, {_n(f['segmentsBefore'], 'segment')}, {f['sizeBefore']} bytes\n")
    for i, d in enumerate(section.items, 1):
        w(f"  {i}. delete segment {d['baseOffset']} ({d['size']} bytes) by {d['rule']}: "
          f"{d['reason']}\n")
    for p in f["passes"]:
        w(f"  pass {p['rule']} ({p['limit']}): {_pass(p)}\n")
    if f["createdSegment"] is not None:
        w(f"  roll first: create empty segment {f['createdSegment']} (one segment must "
          f"remain)\n")
    if f["snapshotsDeleted"]:
        w("  delete producer snapshots at "
          + ", ".join(str(o) for o in f["snapshotsDeleted"]) + "\n")
    if f["leaderEpochs"] != f["leaderEpochsBefore"]:
        w(f"  leader epochs {_epochs(f['leaderEpochsBefore'])} -> {_epochs(f['leaderEpochs'])}\n")
    if f["changes"]:
        w(f"  log start {f['logStartOffsetBefore']} -> {f['logStartOffset']}; "
          f"{f['bytesFreed']} bytes freed; {_n(f['segmentsAfter'], 'segment')} left\n")
    write_checkpoints_and_notes(f, out)
    w(f"  {_outcome(f)}\n")


def _pass(p: dict[str, Any]) -> str:
    if p["skippedBecause"] is not None:
        return f"skipped: {p['skippedBecause']}"
    text = f"{p['deleted']} deleted" if p["deleted"] else "nothing to delete"
    if p["stoppedAt"] is not None:
        text += f"; segment {p['stoppedAt']} {p['stopReason']}"
    return text


def _epochs(entries: list[list[int]]) -> str:
    return "[" + ", ".join(f"{e}@{o}" for e, o in entries) + "]"


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _outcome(f: dict[str, Any]) -> str:
    if not f["changes"]:
        return "nothing to delete"
    deleted = _n(sum(p["deleted"] for p in f["passes"]), "segment")
    if not f["executed"]:
        return f"would delete {deleted} (nothing changed)"
    backups = len(f["backups"])
    return f"deleted {deleted}" + (f" ({backups} files backed up)" if backups else "")
