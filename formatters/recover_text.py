"""Text for a ``recover`` section: one partition, its outcome, a numbered line per change.

::

    invoice-0 (/data/invoice-0): log start 0, log end 100294, recovery point 90867,
      high watermark 100294, 4 segments
      1. recover segment 90867: rewrite the .index (missing), ...
      2. rebuild producer state to offset 100294, ...
      - verify segment 60611: nothing to change; ...
      checkpoint recovery-point-offset-checkpoint: 90867 -> 100294
      would apply 2 steps and 1 checkpoint entry

Plain lines, one fact each, so ``grep`` finds a segment or a checkpoint.
"""

from __future__ import annotations

from typing import Any, TextIO

from . import Section


def render_recover(section: Section, out: TextIO) -> None:
    w = out.write
    h = section.header
    steps = list(section.items)
    f = section.footer
    if f["error"] is not None:
        w(f"{h['partition']} ({h['partitionDir']}): error: {f['error']['message']}\n")
        return
    w(f"{h['partition']} ({h['partitionDir']}): log start {f['logStartOffset']}, log end "
      f"{f['logEndOffset']}, recovery point {f['recoveryPoint']}, high watermark "
      f"{f['highWatermark']}, {f['segments']} segment{'' if f['segments'] == 1 else 's'}\n")
    for i, step in enumerate(steps, 1):
        w(f"  {i}. {step['description']}\n")
    for line in f["verified"]:
        w(f"  - {line}\n")
    write_checkpoints_and_notes(f, out)
    w(f"  {_outcome(len(steps), len(f['checkpointUpdates']), f)}\n")


def write_checkpoints_and_notes(footer: dict[str, Any], out: TextIO) -> None:
    """The checkpoint entries that change and the notes, a line each (shared by the commands
    that load a log)."""
    for u in footer["checkpointUpdates"]:
        old = "absent" if u["old"] is None else u["old"]
        new = "removed" if u["new"] is None else u["new"]
        out.write(f"  checkpoint {u['checkpoint']}: {old} -> {new}\n")
    for note in footer["notes"]:
        out.write(f"  note: {note}\n")


def _outcome(steps: int, updates: int, f: dict[str, Any]) -> str:
    if not f["changes"]:
        return "nothing to change"
    what = (f"{steps} step{'' if steps == 1 else 's'} and {updates} checkpoint "
            f"entr{'y' if updates == 1 else 'ies'}")
    if not f["executed"]:
        return f"would apply {what}"
    backups = len(f["backups"])
    return f"applied {what}" + (f" ({backups} files backed up)" if backups else "")
