"""Text for a ``rebuild-index`` section: one segment, a line per index, then its notes.

::

    /data/orders-0/00000000000000000000.log: base offset 0, 10485 bytes
      .index      identical  12 entries
      .timeindex  different  13 entries, rebuilt 12; first at entry 5: timestamp 17 offset 40, ...
                  benign: 1 of 13 entries name the record holding a batch's max timestamp, ...
                  would replace
      .txnindex   missing    rebuilt 1 entry
                  would write

Plain lines, one fact each, so ``grep`` finds a status or a file.
"""

from __future__ import annotations

from typing import Any, TextIO

from . import Section

SUFFIXES = {"offset-index": ".index", "time-index": ".timeindex", "txn-index": ".txnindex"}
_DONE = {"write": "written", "replace": "replaced"}


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def _entry(e: dict[str, Any] | None) -> str:
    return "none" if e is None else " ".join(f"{k} {v}" for k, v in e.items())


def _detail(i: dict[str, Any]) -> str:
    status = i["status"]
    if status == "missing":
        return f"rebuilt {_entries(i['rebuiltEntries'])}"
    if status == "identical":
        return "no file, none needed" if i["existingEntries"] is None else \
            _entries(i["existingEntries"])
    text = f"{_entries(i['existingEntries'])}, rebuilt {i['rebuiltEntries']}"
    diff = i["firstDifference"]
    if diff is not None:
        text += (f"; first at entry {diff['entry']}: {_entry(diff['existing'])}, rebuilt "
                 f"{_entry(diff['rebuilt'])}")
    return text


def render_rebuild_index(section: Section, out: TextIO) -> None:
    w = out.write
    h, foot = section.header, section.footer
    w(f"{h['file']}: base offset {h['baseOffset']}, {h['size']} bytes\n")
    pad = " " * 14
    for i in section.items:
        w(f"  {SUFFIXES[i['kind']]:<10}  {i['status']:<9}  {_detail(i)}\n")
        if i["verdict"] is not None:
            w(f"{pad}{i['verdict']}: {i['explanation']}\n")
        if i["action"] != "keep":
            done = _DONE[i["action"]] if i["done"] else f"would {i['action']}"
            backup = f" (old file kept as {i['backup']})" if i["backup"] else ""
            w(f"{pad}{done}{backup}\n")
    for note in foot.get("notes") or ():
        w(f"  note: {note}\n")
    if foot.get("error"):
        w(f"  error: {foot['error']['message']}\n")
