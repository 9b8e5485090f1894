"""Text for a ``move`` section: the replica, the numbered steps, the outcome.

::

    orders-0: move from /data/a to /data/b
      1. copy 5 files (1048576 bytes) into /data/b/orders-0.<uuid>-future, fsynced
      ...
      would apply (nothing changed)
"""

from __future__ import annotations

from typing import TextIO

from . import Section

_ACTIONS = {"move": "move", "finish-future": "finish the future replica",
            "cancel-future": "cancel the future replica", "retire-source": "retire the copy"}


def render_move(section: Section, out: TextIO) -> None:
    w = out.write
    h = section.header
    w(f"{h['partition']}: {_ACTIONS[h['action']]} from {h['from']} to {h['to']}\n")
    for step in section.items:
        w(f"  {step['step']}. {step['description']}\n")
    f = section.footer
    if f["sourceLogEnd"] is not None or f["futureLogEnd"] is not None:
        w(f"  log end: current replica {f['sourceLogEnd']}, future replica "
          f"{f['futureLogEnd']}\n")
    for note in f["notes"]:
        w(f"  note: {note}\n")
    if f["executed"]:
        backups = len(f["backups"])
        w("  applied" + (f" ({backups} files backed up)" if backups else "") + "\n")
    else:
        w("  would apply (nothing changed)\n")
