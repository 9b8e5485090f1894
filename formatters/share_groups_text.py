"""Text of ``share-groups``: kafka-share-groups.sh's tables, byte for byte.

The formats are ``ShareGroupCommand``'s: each table line starts with a newline and the table
ends with one; GROUP, TOPIC, CONSUMER-ID, HOST and CLIENT-ID are as wide as their longest value,
at least 15, the coordinator at least 25; ``-`` stands for a missing value. A group without
members gets Kafka's notice on stderr; one that does not exist, Kafka's error there.
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, TextIO

from . import Section
from .consumer_groups_text import _by_group, _s, _table, _width


def render_list(rows: list[dict[str, Any]], include_state: bool, out: TextIO) -> None:
    if not include_state:
        for row in rows:
            out.write(row["group"] + "\n")
        return
    width = _width(15, (r["group"] for r in rows))
    out.write(f"{'GROUP':<{width}} STATE\n")
    for row in rows:
        out.write(f"{row['group']:<{width}} {row['state']}\n")


def _notice(report: dict[str, Any], err: TextIO, out: TextIO) -> bool:
    """Kafka's ``maybePrintEmptyGroupState``: False for a group that does not exist."""
    out.flush()
    if report["state"] is None:
        err.write(f"\nError: Share group '{report['group']}' does not exist.\n")
        return False
    if report["state"] == "Empty":
        err.write(f"\nShare group '{report['group']}' has no active members.\n")
    err.flush()
    return True


def render_offsets(report: dict[str, Any], verbose: bool, out: TextIO, err: TextIO) -> None:
    rows = report["rows"]
    if report["state"] is None:
        _notice(report, err, out)
        return
    if not rows:
        out.write(f"\nShare group '{report['group']}' has no offset information.\n")
        return
    keys = ["group", "topic", "partition", *(["leaderEpoch"] if verbose else []),
            "startOffset", "lag"]
    header = ["GROUP", "TOPIC", "PARTITION", *(["LEADER-EPOCH"] if verbose else []),
              "START-OFFSET", "LAG"]
    lines = [[_s(r[k]) for k in keys] for r in rows]
    widths: list[int | None] = [_width(15, [report["group"]]),
                                _width(15, (ln[1] for ln in lines)), 10,
                                *([13] if verbose else []), 13, None]
    _table(out, widths, [header] + lines)


def render_members(report: dict[str, Any], verbose: bool, out: TextIO, err: TextIO) -> None:
    rows = report["rows"]
    if not _notice(report, err, out) or not rows:
        return
    keys = ["group", "consumerId", "host", "clientId", "numPartitions",
            *(["memberEpoch"] if verbose else []), "assignment"]
    header = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
              *(["MEMBER-EPOCH"] if verbose else []), "ASSIGNMENT"]
    lines = [[_s(r[k]) for k in keys] for r in rows]
    widths: list[int | None] = [_width(15, [report["group"]]),
                                *(_width(15, (ln[i] for ln in lines)) for i in (1, 2, 3)), 12,
                                *([13] if verbose else []), None]
    _table(out, widths, [header] + [ln[:-1] + [r["assignment"] or ""]
                                    for ln, r in zip(lines, rows)])


def render_state(report: dict[str, Any], verbose: bool, out: TextIO, err: TextIO) -> None:
    if not _notice(report, err, out):
        return
    [row] = report["rows"]
    keys = ["group", "coordinator", "state", *(["groupEpoch", "assignmentEpoch"] if verbose
                                               else []), "numMembers"]
    header = ["GROUP", "COORDINATOR (ID)", "STATE", *(["GROUP-EPOCH", "ASSIGNMENT-EPOCH"]
                                                      if verbose else []), "#MEMBERS"]
    widths: list[int | None] = [_width(15, [row["group"]]), _width(25, [row["coordinator"]]),
                                15, *([12, 17] if verbose else []), None]
    _table(out, widths, [header, [_s(row[k]) for k in keys]])


_VIEWS = {"offsets": render_offsets, "members": render_members, "state": render_state}


def render_describe(view: str, reports: Iterable[dict[str, Any]], verbose: bool, out: TextIO,
                    err: TextIO) -> None:
    for report in reports:
        _VIEWS[view](report, verbose, out, err)


def text_list(section: Section, out: TextIO) -> None:
    """A ``GROUP [STATE]`` listing section (streams groups list the same way)."""
    render_list(list(section.items), section.text["includeState"], out)  # type: ignore


def _text_describe(section: Section, out: TextIO) -> None:
    t = section.text  # type: ignore[attr-defined]
    rows = _by_group(section.items)
    render_describe(t["view"], ({**g, "rows": rows.get(g["group"], [])} for g in t["groups"]),
                    t["verbose"], out, sys.stderr)


SECTION_RENDERERS = {"share-group-list": text_list, "share-group-describe": _text_describe}
