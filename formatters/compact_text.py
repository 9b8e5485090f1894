"""Text for a ``compact`` section: one partition, the decision, a line per cleaning round.

::

    __consumer_offsets-7 (/data/__consumer_offsets-7): log start 0, log end 5000, high
      watermark 5000, last stable offset 5000, active segment 4200
      dirty section [1200, 4200): 3000000 of 4100000 bytes, dirty ratio 0.7317 (min 0.5)
      clean: dirty ratio 0.7317 > min.cleanable.dirty.ratio 0.5
      round 1: [1200, 4200) 2 groups; 4100000 -> 612000 bytes (3488000 saved, 85.1%); 40000
        -> 5800 records (34200 removed); 0 invalid; offset map 3.1% full; 41.5 MB/s
      checkpoint cleaner-offset-checkpoint: 1200 -> 4200
      would clean (nothing changed)

Plain lines, one fact each, so ``grep`` finds a partition or a checkpoint.
"""

from __future__ import annotations

from typing import Any, TextIO

from . import Section
from .recover_text import write_checkpoints_and_notes


def render_compact(section: Section, out: TextIO) -> None:
    w = out.write
    h = section.header
    rounds = list(section.items)
    f = section.footer
    w(f"{h['partition']} ({h['partitionDir']}):")
    if f["error"] is not None:
        w(f" error: {f['error']['message']}\n")
        return
    if "logEndOffset" in f:
        w(f" log start {f['logStartOffset']}, log end {f['logEndOffset']}, high watermark "
          f"{f['highWatermark']}, last stable offset {f['lastStableOffset']}, active segment "
          f"{f['activeSegment']}")
    w("\n")
    if f["firstDirtyOffset"] is not None:
        w(f"  dirty section [{f['firstDirtyOffset']}, {f['firstUncleanableOffset']}): "
          f"{f['cleanableBytes']} of {f['cleanBytes'] + f['cleanableBytes']} bytes, dirty ratio "
          f"{f['dirtyRatio']:.4f} (min {f['minCleanableDirtyRatio']})\n")
    w(f"  {'clean' if f['clean'] else 'skip'}: {f['reason']}"
      + (" (forced)" if f["forced"] and f["clean"] and "forced" not in f["reason"] else "")
      + "\n")
    for r in rounds:
        w(f"  round {r['round']}: {_round(r)}\n")
    write_checkpoints_and_notes(f, out)
    w(f"  {_outcome(f)}\n")


def _round(r: dict[str, Any]) -> str:
    s = r["stats"]
    before, after = s["bytesRead"], s["bytesWritten"]
    share = f", {100.0 * (before - after) / before:.1f}%" if before else ""
    groups = len(r["groups"])
    text = (f"[{r['firstDirtyOffset']}, {r['endOffset']}) {groups} group"
            f"{'' if groups == 1 else 's'}; {before} -> {after} bytes ({s['spaceSaved']} saved"
            f"{share}); {s['messagesRead']} -> {s['messagesWritten']} records "
            f"({s['recordsRemoved']} removed); {s['invalidMessages']} invalid; offset map "
            f"{100 * s['bufferUtilization']:.1f}% full")
    if s["mbPerSec"] is not None:
        text += f"; {s['mbPerSec']} MB/s"
    if not r["complete"]:
        text += f"; the offset map filled before {r['firstUncleanableOffset']}"
    return text


def _outcome(f: dict[str, Any]) -> str:
    if not f["clean"] and not f["checkpointUpdates"]:
        return "nothing to change"
    if f["executed"]:
        backups = len(f["backups"])
        return "cleaned" + (f" ({backups} files backed up)" if backups else "")
    return "would clean (nothing changed)" if f["clean"] else "would reset the checkpoint"
