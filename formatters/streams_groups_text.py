"""Text of ``streams-groups``: kafka-streams-groups.sh's tables, byte for byte.

The formats are Kafka 4.4's ``StreamsGroupCommand``'s: plain ``%-Ns`` lines, GROUP, MEMBER,
PROCESS, CLIENT-ID and TOPIC as wide as their longest value and at least 15, the coordinator at
least 25; ``-`` for a missing value. Kafka prints its notices on stdout: an empty group's
``Error: Streams group 'g' has no active members.`` before its state (its offsets and members
views print nothing), and, for a group that does not exist, ``Error: Executing streams group
command failed due to ...`` after which it describes no further group.
"""

from __future__ import annotations

from typing import Any, Iterable, TextIO

from . import Section
from .consumer_groups_text import _by_group, _s, _width
from .share_groups_text import text_list  # the streams tool lists as the share tool does

NOT_FOUND = ("\nError: Executing streams group command failed due to "
             "org.apache.kafka.common.errors.GroupIdNotFoundException: Group {} not found.\n")


def _lines(out: TextIO, fmt: str, lines: Iterable[list[str]]) -> None:
    for values in lines:
        out.write(fmt.format(*values))


def render_offsets(report: dict[str, Any], verbose: bool, out: TextIO) -> None:
    rows = report["rows"]
    if not report["numMembers"] or not rows:
        return  # Kafka's isGroupStateValid: nothing for a group without members
    group = _width(15, [report["group"]])
    topic = _width(15, (r["topic"] for r in rows))
    if not verbose:
        fmt = f"{{:<{group}}} {{:<{topic}}} {{:<10}} {{}}\n"
        header = ["GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"]
        keys = ["group", "topic", "partition", "lag"]
    else:
        fmt = f"{{:<{group}}} {{:<{topic}}} {{:<10}} {{:<15}} {{:<15}} {{:<15}} {{:<15}}\n"
        header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH",
                  "LOG-END-OFFSET", "OFFSET-LAG"]
        keys = ["group", "topic", "partition", "currentOffset", "leaderEpoch", "logEndOffset",
                "lag"]
    _lines(out, fmt, [header] + [[_s(r[k]) for k in keys] for r in rows])


def render_members(report: dict[str, Any], verbose: bool, out: TextIO) -> None:
    rows = report["rows"]
    if not rows:
        return
    group = _width(15, [report["group"]])
    member = _width(15, (r["memberId"] for r in rows))
    process = _width(15, (r["processId"] for r in rows))
    client = _width(15, (r["clientId"] for r in rows))
    if not verbose:
        fmt = f"{{:<{group}}} {{:<{member}}} {{:<{process}}} {{:<{client}}} {{}}\n"
        header = ["GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"]
        keys = ["group", "memberId", "processId", "clientId", "assignments"]
    else:
        fmt = (f"{{:<{group}}} {{:<25}} {{:<15}}{{:<{member}}} {{:<15}} {{:<15}} "
               f"{{:<{process}}} {{:<{client}}} {{}}\n")
        header = ["GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER",
                  "MEMBER-PROTOCOL", "MEMBER-EPOCH", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"]
        keys = ["group", "targetAssignmentEpoch", "topologyEpoch", "memberId",
                "memberProtocol", "memberEpoch", "processId", "clientId", "assignments"]
    _lines(out, fmt, [header] + [[_s(r[k]) for k in keys] for r in rows])


def render_state(report: dict[str, Any], verbose: bool, out: TextIO) -> None:
    [row] = report["rows"]
    if report["state"] == "Empty":
        out.write(f"\nError: Streams group '{report['group']}' has no active members.\n")
    group = _width(15, [row["group"]])
    coordinator = _width(25, [row["coordinator"]])
    assignor = _width(15, [row["assignor"]])
    fmt = f"{{:<{group}}} {{:<{coordinator}}} {{:<{assignor}}} {{:<25}} "
    header = ["GROUP", "COORDINATOR (ID)", "ASSIGNOR", "STATE"]
    keys = ["group", "coordinator", "assignor", "state"]
    if verbose:
        fmt += "{:<15} {:<25} "
        header += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
        keys += ["groupEpoch", "targetAssignmentEpoch"]
    _lines(out, fmt + "{}\n", [header + ["#MEMBERS"], [_s(row[k]) for k in keys + ["numMembers"]]])


_VIEWS = {"offsets": render_offsets, "members": render_members, "state": render_state}


def render_describe(view: str, reports: Iterable[dict[str, Any]], verbose: bool,
                    out: TextIO) -> None:
    for report in reports:
        if report["state"] is None:
            out.write(NOT_FOUND.format(report["group"]))
            return  # Kafka's describe fails on the first group it cannot find
        _VIEWS[view](report, verbose, out)


def _text_describe(section: Section, out: TextIO) -> None:
    t = section.text  # type: ignore[attr-defined]
    rows = _by_group(section.items)
    render_describe(t["view"], ({**g, "rows": rows.get(g["group"], [])} for g in t["groups"]),
                    t["verbose"], out)


SECTION_RENDERERS = {"streams-group-list": text_list,
                     "streams-group-describe": _text_describe}
