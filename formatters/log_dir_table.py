"""Text for a ``log-dir-summary`` section: one row per partition.

On a terminal (where :func:`.color.color_allowed` allows it) a rich table, when it fits;
otherwise plain columns under a header line, one partition per line, every cell one word
(``-`` for unknown), so ``awk`` and ``sort`` work on it. Notes are only counted here; the
command prints them on stderr.
"""

from __future__ import annotations

from typing import Any, TextIO

from . import Section
from .color import color_allowed

COLUMNS = ("TOPIC", "PARTITION", "SEGMENTS", "BYTES", "LOG_START", "LOG_END", "HW", "RECOVERY",
           "EPOCH", "EPOCH_START", "EPOCHS", "INDEXES", "NOTES")


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def row(p: dict[str, Any]) -> list[str]:
    partition = f"{p['partition']}-{p['marker']}" if p.get("marker") else str(p["partition"])
    return [p["topic"], partition, _cell(p["segments"]), _cell(p["bytes"]),
            _cell(p["logStartOffset"]), _cell(p["logEndOffset"]), _cell(p["highWatermark"]),
            _cell(p["recoveryPoint"]), _cell(p["leaderEpoch"]),
            _cell(p["leaderEpochStartOffset"]), _cell(p["leaderEpochEntries"]), p["indexes"],
            str(len(p["notes"])) if p["notes"] else "-"]


def log_dir_line(h: dict[str, Any]) -> str:
    """The log dir's own facts, on one line."""
    meta = h.get("metaProperties")
    if meta is None:
        parts = ["meta.properties: absent"]
    else:
        ident = f" {meta['idKey']}={_cell(meta['nodeId'])}" if meta["idKey"] else ""
        cluster = f" cluster.id={meta['clusterId']}" if meta["clusterId"] else ""
        directory = f" directory.id={meta['directoryId']}" if meta["directoryId"] else ""
        parts = [f"meta.properties: version={_cell(meta['version'])}{ident}{cluster}{directory}"]
    parts.append(f".kafka_cleanshutdown: {'present' if h['cleanShutdown'] else 'absent'}")
    parts.append(f".lock: {'present' if h['lock'] else 'absent'}")
    if h.get("otherDirs"):
        parts.append(f"other dirs: {', '.join(h['otherDirs'])}")
    return "; ".join(parts)


def plain_table(rows: list[list[str]]) -> str:
    """The first column left-aligned, the others right-aligned, two spaces apart."""
    table = [list(COLUMNS), *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    return "".join("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i])
                             for i, c in enumerate(r)) + "\n" for r in table)


def _rich_table(title: str, rows: list[list[str]], out: TextIO) -> bool:
    """A rich table, if it fits the terminal with every number whole (the topic column may
    fold); False, having written nothing, if it does not."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, highlight=False)
    widths = [max([len(name), *(len(r[i]) for r in rows)]) for i, name in enumerate(COLUMNS)]
    if sum(widths[1:]) + min(widths[0], 20) + 2 * len(COLUMNS) > console.width:
        return False
    table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column(COLUMNS[0], overflow="fold")
    for name, width in zip(COLUMNS[1:], widths[1:]):
        table.add_column(name, justify="right", no_wrap=True, min_width=width)
    for r in rows:
        table.add_row(*(Text(c) for c in r))
    console.print(table)
    return True


def render_log_dir_summary(section: Section, out: TextIO) -> None:
    """``Dumping {dir}``, the log dir's facts, then the table."""
    h = section.header
    rows = [row(p) for p in section.items]
    out.write(f"Dumping {h['file']}\n")
    if not (color_allowed(out) and _rich_table(log_dir_line(h), rows, out)):
        out.write(log_dir_line(h) + "\n")
        out.write(plain_table(rows))
    if h.get("problemsOnly"):
        f = section.footer
        out.write(f"{f['attentionCount']:,} of {f['partitionCount']:,} partitions need attention "
                  f"(--problems)\n")
