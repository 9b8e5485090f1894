"""Text for a ``replicas`` section: a partition's replicas, leader first, and what each would
truncate and lose.

::

    t-0: leader broker 2 (broker 2 elected); followers compared at leader epoch 2
      broker 2 (leader): log start 0, log end 17, high watermark 17, epochs 0@0 1@10, ...
        only copy of offsets 10..16: 7 records in 2 batches, 2023-11-14T22:13:20.010Z .. ...
      broker 1: log start 0, log end 15, high watermark 10, epochs 0@0, ...
        truncates to 10: the leader's epoch 0 ends at 10; in this log it ends at 15
        loses offsets 10..14: 5 records in 2 batches, 2023-11-14T22:13:20.010Z .. ...
      plan: /data/b1/t-0: truncate to offset 10: cut segment 0: ...; log end 15 -> 10; ...

Offset ranges are inclusive; epochs are ``epoch@start offset``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, TextIO

from . import Section


def _time(ms: Any) -> str:
    if ms is None:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(
            timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _range(r: dict) -> str:
    return (f"offsets {r['firstOffset']}..{r['endOffset'] - 1}: {r['records']} record"
            f"{'' if r['records'] == 1 else 's'} in {r['batches']} batch"
            f"{'' if r['batches'] == 1 else 'es'}, {_time(r['firstTimestamp'])} .. "
            f"{_time(r['lastTimestamp'])}")


def render_replicas(section: Section, out: TextIO) -> None:
    w = out.write
    h = section.header
    w(f"{h['partition']}: leader broker {h['leaderBrokerId']} ({h['leaderReason']}); "
      f"followers compared at leader epoch {h['leaderEpoch']}\n")
    for r in section.items:
        epochs = " ".join(f"{e}@{s}" for e, s in r["leaderEpochs"]) or "none"
        role = " (leader)" if r["leader"] else ""
        w(f"  broker {r['brokerId']}{role}: log start {r['logStartOffset']}, log end "
          f"{r['logEndOffset']}, high watermark {r['highWatermark']}, epochs {epochs}, topic id "
          f"{r['topicId'] or '-'} ({r['partitionDir']})\n")
        t = r["truncation"]
        if t:
            for s in t["steps"]:
                w(f"    truncates to {s['offset']}"
                  f"{' (fully, starting over)' if s['mode'] == 'start-at' else ''}: "
                  f"{s['reason']}\n")
        if r["lost"]:
            w(f"    loses {_range(r['lost'])}\n")
        if r["unique"]:
            w(f"    only copy of {_range(r['unique'])}\n")
        if r["mismatch"]:
            w(f"    MISMATCH: {r['mismatch']}\n")
        for note in r["notes"]:
            w(f"    note: {note}\n")
    f = section.footer
    if f["topicIdMismatch"]:
        w("  topic ids differ between replicas (a topic deleted and created again?)\n")
    for note in h.get("notes", ()):
        w(f"  note: {note}\n")
    for t in f["truncate"]:
        what = "; ".join(t["changes"]) or "nothing to truncate"
        verb = "executed" if t["executed"] else "plan"
        mode = "truncate fully and start at" if t["mode"] == "start-at" else "truncate to"
        w(f"  {verb}: {t['partitionDir']}: {mode} offset {t['offset']}: {what}\n")
    if f["agree"] and not f["truncate"]:
        w("  replicas agree" + (" (a follower lags)" if f["singleCopies"] else "") + "\n")
