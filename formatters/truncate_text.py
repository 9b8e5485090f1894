"""Text for a ``truncate`` section: the partition, the recovery it needs first, the changes.

::

    invoice-0 (/data/invoice-0): truncate to offset 45000
      recover first: 1. recover segment 90867: rewrite the .index (missing), ...
      delete 2 segments: 60611, 90867
      cut segment 30626: drop its last 523680 bytes
      log end 100294 -> 44739; log start 0, recovery point 44739, high watermark 44739
      checkpoint replication-offset-checkpoint: 100294 -> 44739
      would apply (nothing changed)
"""

from __future__ import annotations

from typing import TextIO

from . import Section
from .recover_text import write_checkpoints_and_notes

_MODES = {"to-offset": "truncate to offset", "start-at": "truncate fully and start at offset"}


def render_truncate(section: Section, out: TextIO) -> None:
    w = out.write
    h = section.header
    w(f"{h['partition']} ({h['partitionDir']}): {_MODES[h['mode']]} {h['offset']}\n")
    for i, step in enumerate(section.items, 1):
        w(f"  recover first: {i}. {step['description']}\n")
    f = section.footer
    t = f["truncation"]
    if not t["changed"]:
        w(f"  nothing to truncate: the log ends at {t['logEndOffsetBefore']}\n")
    for line in f["changes"]:
        w(f"  {line}\n")
    write_checkpoints_and_notes(f, out)
    if not f["changed"]:
        w("  nothing to change\n")
    elif f["executed"]:
        backups = len(f["backups"])
        w("  applied" + (f" ({backups} files backed up)" if backups else "") + "\n")
    else:
        w("  would apply (nothing changed)\n")
