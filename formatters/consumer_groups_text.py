"""Text of ``consumer-groups``: kafka-consumer-groups.sh's tables, byte for byte.

The formats are ``ConsumerGroupCommand``'s (newest trunk): every table line is printed with a
format that *starts* with a newline, so a table opens with a blank line and ends with one
newline; a column is as wide as its longest value, at least 15 (17 for GROUP-INSTANCE-ID, 20
for the assignments, 25 for the coordinator), and values are padded, never cut. ``-`` stands
for a missing value. Kafka's stderr lines (an empty or rebalancing group) go to ``err``, its
errors to ``out``, as Kafka prints them. One quirk is kept: the members view prints its header
even for a group that does not exist.

A describe report is a dict: ``group``, ``state``, ``rows`` (the view's rows, camelCase keys,
None for ``-``), ``error`` (Kafka's error line, or None), ``exists`` and ``notice`` (the
stderr line, or None).
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, TextIO

from . import Section

MISSING = "-"


def _s(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _width(minimum: int, values: Iterable[str]) -> int:
    return max([minimum, *map(len, values)])


def _pad(value: str, width: int) -> str:
    return value.ljust(width)


def render_list(rows: list[dict[str, Any]], include_type: bool, include_state: bool,
                out: TextIO) -> None:
    """``--list``: ids, or a GROUP column (longest id + 10) then ``%-20s`` TYPE/STATE."""
    if not (include_type or include_state):
        for row in rows:
            out.write(row["group"] + "\n")
        return
    width = _width(15, (r["group"] for r in rows)) + 10
    columns = [("GROUP", "group", width)]
    if include_type:
        columns.append(("TYPE", "type", 20))
    if include_state:
        columns.append(("STATE", "state", 20))

    def line(values: list[str]) -> str:
        return " ".join(_pad(v, w) for v, (_, _, w) in zip(values, columns)) + "\n"

    out.write(line([c[0] for c in columns]))
    for row in rows:
        out.write(line([_s(row[key]) for _, key, _ in columns]))


def _table(out: TextIO, widths: list[int | None], lines: Iterable[list[str]]) -> None:
    """Kafka's ``"\n%-Ws %-Ws ... %s"`` for every line (None: the last, unpadded column)."""
    fmt = "\n" + " ".join("{}" if w is None else f"{{:<{w}}}" for w in widths)
    write = out.write
    for values in lines:
        write(fmt.format(*values))
    write("\n")


def _prologue(report: dict[str, Any], out: TextIO, err: TextIO) -> bool:
    """Kafka's ``shouldPrintMemberState``: the error or notice; True to print the table."""
    if report["error"] is not None:
        out.write(f"\nError: {report['error']}\n")
        return False
    if report["notice"] is not None:
        out.flush()
        err.write(f"\n{report['notice']}\n")
        err.flush()
    return bool(report["rows"])


OFFSETS_HEADER = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                  "CONSUMER-ID", "HOST", "CLIENT-ID"]
OFFSETS_KEYS = ["group", "topic", "partition", "currentOffset", "logEndOffset", "lag",
                "consumerId", "host", "clientId"]


def render_offsets(report: dict[str, Any], verbose: bool, out: TextIO, err: TextIO) -> None:
    if not _prologue(report, out, err):
        return
    header, keys = list(OFFSETS_HEADER), list(OFFSETS_KEYS)
    if verbose:
        header.insert(3, "LEADER-EPOCH")
        keys.insert(3, "leaderEpoch")
    lines = [[_s(r[k]) for k in keys] for r in report["rows"]]
    widths: list[int | None] = [15] * len(keys)
    for i in (0, 1, -3, -2):  # GROUP, TOPIC, CONSUMER-ID and HOST grow with their values
        widths[i] = _width(15, (line[i] for line in lines))
    widths[2] = 10  # PARTITION
    widths[-1] = None  # CLIENT-ID: unpadded
    _table(out, widths, [header] + lines)


def assignment_text(assignment: list[dict[str, Any]]) -> str:
    """``topicA:0,1;topicB:2``: Kafka sorts the per-topic strings, partitions numerically."""
    if not assignment:
        return MISSING
    return ";".join(sorted(f"{a['topic']}:{','.join(map(str, sorted(a['partitions'])))}"
                           for a in assignment))


def render_members(report: dict[str, Any], verbose: bool, out: TextIO, err: TextIO) -> None:
    if report["error"] is not None and report["exists"]:
        out.write(f"\nError: {report['error']}\n")  # not a consumer group: nothing else
        return
    _prologue(report, out, err)  # a group that does not exist still gets the header
    rows = report["rows"]
    cur = [assignment_text(r.get("currentAssignment") or []) for r in rows] if verbose else []
    tgt = [assignment_text(r.get("targetAssignment") or []) for r in rows] if verbose else []
    with_instance = any(r["groupInstanceId"] for r in rows)
    widths = [_width(15, (r["group"] for r in rows)), _width(15, (r["consumerId"] for r in rows)),
              _width(17, (r["groupInstanceId"] or "" for r in rows)),
              _width(15, (r["host"] for r in rows)), _width(15, (r["clientId"] for r in rows)),
              15]
    header = ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    if not with_instance:
        del widths[2], header[2]
    upgraded = {r.get("upgraded") for r in rows}
    migration = True in upgraded and False in upgraded
    v_widths = [15, _width(20, cur), 15, _width(20, tgt)]

    def line(values: list[str], verbose_values: list[str]) -> str:
        text = "".join(_pad(v, w) + " " for v, w in zip(values, widths))
        if verbose:
            text += " ".join(_pad(v, w) for v, w in zip(verbose_values, v_widths))
            if migration:
                text += " " + verbose_values[4]
        return text + "\n"

    out.write("\n" + line(header, ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH",
                                   "TARGET-ASSIGNMENT", "UPGRADED"]))
    for i, r in enumerate(rows):
        values = [r["group"], r["consumerId"], r["groupInstanceId"] or "", r["host"],
                  r["clientId"], str(r["numPartitions"])]
        if not with_instance:
            del values[2]
        out.write(line(values, [_s(r.get("currentEpoch")), cur[i] if cur else MISSING,
                                _s(r.get("targetEpoch")), tgt[i] if tgt else MISSING,
                                _s(r.get("upgraded"))] if verbose else []))


def render_state(report: dict[str, Any], verbose: bool, out: TextIO, err: TextIO) -> None:
    if not _prologue(report, out, err):
        return
    row = report["rows"][0]
    header = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"]
    values = [row["group"], row["coordinator"], _s(row["assignmentStrategy"]), row["state"]]
    widths: list[int | None] = [max(15, len(row["group"])), max(25, len(row["coordinator"])),
                                20, 20]
    if verbose:
        header += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
        values += [_s(row["groupEpoch"]), _s(row["targetAssignmentEpoch"])]
        widths += [15, 25]
    _table(out, widths + [None], [header + ["#MEMBERS"], values + [str(row["numMembers"])]])


RENDERERS = {"offsets": render_offsets, "members": render_members, "state": render_state}


def render_describe(view: str, reports: Iterable[dict[str, Any]], verbose: bool, out: TextIO,
                    err: TextIO) -> None:
    """Every group's report in the ``view``'s format."""
    render = RENDERERS[view]
    for report in reports:
        render(report, verbose, out, err)


# -- the group-changing actions ---------------------------------------------------------------
def render_reset(resets: list[dict[str, Any]], messages: list[str], out: TextIO) -> None:
    """``--reset-offsets``: the lines printed while planning, then ``OffsetsUtils``'s table
    (``{group, rows: [{topic, partition, newOffset}]}`` per group; a group not reset has no
    rows but still widens the GROUP column and makes the header print, as in Kafka)."""
    for message in messages:
        out.write(f"\n{message}\n")
    if not resets:
        out.write("\n")
        return
    group_width = _width(15, (r["group"] for r in resets))
    topic_width = _width(15, (row["topic"] for r in resets for row in r["rows"]))
    _table(out, [group_width, topic_width, 10, None],
           [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]]
           + [[r["group"], row["topic"], str(row["partition"]), str(row["newOffset"])]
              for r in resets for row in r["rows"]])


def render_delete(deletions: list[dict[str, Any]], out: TextIO) -> None:
    """``--delete``: Kafka's verdict (``{group, deleted, error}`` per group, in its order)."""
    done = [d["group"] for d in deletions if d["deleted"]]
    failed = [d for d in deletions if not d["deleted"]]
    if not failed:
        out.write(f"Deletion of requested consumer groups ('{_quoted(done)}') was successful.\n")
        return
    out.write("\nError: Deletion of some consumer groups failed:\n")
    for d in failed:
        out.write(f"* Group '{d['group']}' could not be deleted due to: {d['error']}\n")
    if done:
        out.write(f"\nThese consumer groups were deleted successfully: '{_quoted(done)}'\n")


def _quoted(groups: list[str]) -> str:
    return "', '".join(groups)


_PARTITION_LEVEL = ("GROUP_SUBSCRIBED_TO_TOPIC", "TOPIC_AUTHORIZATION_FAILED",
                    "UNKNOWN_TOPIC_OR_PARTITION")


def render_delete_offsets(group: str, error: dict[str, str] | None, rows: list[dict[str, Any]],
                          out: TextIO) -> None:
    """``--delete-offsets``: the verdict for the top-level ``error`` (``{name, message}``),
    then a TOPIC / PARTITION / STATUS row per partition."""
    if error is None:
        out.write(f"Request succeeded for deleting offsets from group {group}.\n")
    elif error["name"] in _PARTITION_LEVEL:
        out.write("\nError: Encountered some partition-level error, see the follow-up details.\n")
    else:
        out.write(f"\nError: {error['message']}\n")
    topic_width = _width(15, (r["topic"] for r in rows))
    _table(out, [topic_width, 15, 15], [["TOPIC", "PARTITION", "STATUS"]]
           + [[r["topic"], _s(r["partition"]), r["status"]] for r in rows])


# -- the sections of formatters.group_sections ------------------------------------------------
def _by_group(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["group"], []).append(row)
    return grouped


def _text_list(section: Section, out: TextIO) -> None:
    t = section.text  # type: ignore[attr-defined]
    render_list(list(section.items), t["includeType"], t["includeState"], out)


def _text_describe(section: Section, out: TextIO) -> None:
    """Kafka prints its notices (an empty or rebalancing group) on stderr, between tables."""
    t = section.text  # type: ignore[attr-defined]
    rows = _by_group(section.items)
    render_describe(t["view"], ({**g, "rows": rows.get(g["group"], [])} for g in t["groups"]),
                    t["verbose"], out, sys.stderr)


def _text_reset(section: Section, out: TextIO) -> None:
    t = section.text  # type: ignore[attr-defined]
    rows = _by_group(section.items)
    render_reset([{"group": g, "rows": rows.get(g, [])} for g in t["groups"]], t["messages"],
                 out)


def _text_delete(section: Section, out: TextIO) -> None:
    render_delete(list(section.items), out)


def _text_delete_offsets(section: Section, out: TextIO) -> None:
    t = section.text  # type: ignore[attr-defined]
    render_delete_offsets(t["group"], t["error"], list(section.items), out)


SECTION_RENDERERS = {"group-list": _text_list, "group-describe": _text_describe,
                  "group-reset": _text_reset, "group-delete": _text_delete,
                  "group-delete-offsets": _text_delete_offsets}
