"""Text for a ``topic-config`` section: a topic's effective configuration, a line per name.

::

    orders (/data/kafka-logs, partitions 0,1,2)
      NAME            VALUE       SOURCE              ORIGIN
      cleanup.policy  compact     kraft-topic         __cluster_metadata-0/...log offset 131
      retention.ms    3600000     config-file-broker  /etc/server.properties line 12 (...)
      segment.bytes   1073741824  default             -

Plain aligned columns when piped: NAME, VALUE and SOURCE are one word each (``awk '$3 !=
"default"'``), ORIGIN is the rest of the line. A rich table on a terminal.
"""

from __future__ import annotations

from typing import Any, TextIO

from . import Section
from .color import color_allowed

COLUMNS = ("NAME", "VALUE", "SOURCE", "ORIGIN")


def _row(item: dict[str, Any]) -> list[str]:
    origin = item["origin"] or "-"
    if item["synonym"]:
        origin += f" ({item['synonym']})"
    return [item["name"], item["value"] or '""', item["source"], origin]


def render_topic_config(section: Section, out: TextIO) -> None:
    h = section.header
    rows = [_row(i) for i in section.items]
    f = section.footer
    title = (f"{h['topic']} ({h['logDir']}, partition{'' if len(h['partitions']) == 1 else 's'} "
             f"{','.join(str(p) for p in h['partitions'])})")
    if f["error"] is not None:
        out.write(f"{title}: error: {f['error']}\n")
        return
    if color_allowed(out):
        _rich(title, rows, out)
        return
    out.write(title + "\n")
    table = [list(COLUMNS), *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS) - 1)]
    for r in table:
        out.write("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] + "\n")


def _rich(title: str, rows: list[list[str]], out: TextIO) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD)
    for name in COLUMNS:
        table.add_column(name, overflow="fold")
    for r in rows:
        table.add_row(*(Text(c) for c in r))
    Console(file=out, highlight=False).print(table)
