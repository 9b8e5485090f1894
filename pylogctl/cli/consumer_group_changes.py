"""The group-changing actions of ``pylogctl consumer-groups``: ``--reset-offsets``,
``--delete`` and ``--delete-offsets`` (option checks as Kafka's tool makes them, the plan,
``--execute``, the output). Called by :mod:`pylogctl.cli.consumer_groups`."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ExitCode, FileUnreadableError, UsageError
from ..format.group_coordinator_records import TOPIC
from .consumer_groups import print_provenance, replay_progress
from .output import err, write_listing

if TYPE_CHECKING:
    from ..tools.consumer_groups import ConsumerGroups
    from ..tools.consumer_group_changes import GroupChanges


@dataclass
class Args:
    groups: "ConsumerGroups"
    group: list[str]
    all_groups: bool
    topic: list[str]
    all_topics: bool
    scenarios: dict[str, bool]
    to_offset: int | None
    shift_by: int | None
    to_datetime: str | None
    by_duration: str | None
    from_file: str | None
    execute: bool
    export: bool
    backup_dir: str | None
    output: str


def _need_groups(action: str, a: Args) -> list[str] | None:
    if not a.group and not a.all_groups:
        raise UsageError(f"Option [{action}] takes one of these options: [all-groups], [group]")
    if a.group and a.all_groups:
        raise UsageError('Option "[group]" can\'t be used with option "[all-groups]"')
    return None if a.all_groups else a.group


def _spec(a: Args):
    from ..groups.offset_reset import (SCENARIOS, ResetSpec, parse_datetime, parse_duration,
                                       parse_reset_csv)

    chosen = [name for name in SCENARIOS if a.scenarios[name]]
    if len(chosen) > 1:
        raise UsageError(f'Option "[{chosen[0]}]" can\'t be used with option "[{chosen[1]}]"')
    if not chosen:
        raise UsageError("Option '[reset-offsets]' requires one of the following scenarios: "
                         + ", ".join(f"[{s}]" for s in SCENARIOS))
    scenario = chosen[0]
    if scenario != "from-file" and not a.topic and not a.all_topics:
        raise UsageError("One of the reset scopes should be defined: --all-topics, --topic.")
    if a.topic and a.all_topics:
        raise UsageError('Option "[topic]" can\'t be used with option "[all-topics]"')
    if scenario == "from-file":
        assert a.from_file is not None
        try:
            with open(a.from_file, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise FileUnreadableError(f"Cannot read {a.from_file}: {exc.strerror}",
                                      path=a.from_file) from None
        single = a.group[0] if len(a.group) == 1 else None
        return ResetSpec(scenario, plan=parse_reset_csv(text, single))
    value = {"to-offset": a.to_offset, "shift-by": a.shift_by}.get(scenario)
    if scenario == "to-datetime":
        value = parse_datetime(a.to_datetime or "")
    elif scenario == "by-duration":
        value = parse_duration(a.by_duration or "")
    return ResetSpec(scenario, value)


def _finish(changes: "GroupChanges", a: Args, refused: bool) -> int:
    """Print where the groups came from, execute the plan (or say it was a dry run); the exit
    code: 5 if a change was refused, else 1 if reading met invalid data."""
    code = print_provenance(a.groups, "list")
    code = int(ExitCode.REFUSED) if refused else code
    count = changes.record_count
    partitions = ", ".join(f"{TOPIC}-{p}" for p in sorted(changes.writes))
    if not a.execute:
        if count:
            err(f"pylogctl: dry run: nothing written; --execute appends {count} record(s) to "
                f"{partitions}")
        return code
    for outcome in changes.execute(a.backup_dir):
        for w in outcome.written:
            broker = "" if w.broker_id is None else f" (broker {w.broker_id})"
            err(f"pylogctl: appended {outcome.records} record(s) in {outcome.batches} batch(es) "
                f"to {TOPIC}-{outcome.partition} at offsets {outcome.first_offset}-"
                f"{outcome.next_offset - 1} in {w.log_dir}{broker}")
            for note in w.notes:
                err(f"pylogctl: {note}")
        for note in outcome.skipped:
            err(f"pylogctl: {note}")
    return code


def reset(a: Args) -> int:
    from ..tools.consumer_group_changes import GroupChanges, reset_rows

    group_ids = _need_groups("reset-offsets", a)
    spec = _spec(a)
    if not a.execute:
        err("pylogctl: no --execute: nothing will be written (a dry run)")
    changes = GroupChanges(a.groups)
    with replay_progress(a.groups, group_ids):
        plan = changes.plan_reset(group_ids, a.topic, a.all_topics, spec)
    for note in plan.notes:
        err(f"pylogctl: WARN {note}")
    refused = bool(plan.refused)
    code = _finish(changes, a, refused)
    if a.export:
        from ..groups.offset_reset import export_csv

        sys.stdout.write(export_csv(plan.resets, len(a.group) == 1) + "\n")
    else:
        from ..formatters.group_sections import reset_section

        if a.output != "text":  # Kafka's text prints them on stdout
            for message in plan.messages:
                err(f"pylogctl: {message}")
        write_listing(a.output, reset_section(reset_rows(plan), (r.group for r in plan.resets),
                                              plan.messages))
    return code


def delete(a: Args) -> int:
    from ..formatters.group_sections import delete_section
    from ..tools.consumer_group_changes import GroupChanges, deletion_rows

    group_ids = _need_groups("delete", a)
    if a.topic:
        raise UsageError("The consumer does not support topic-specific offset deletion from a "
                         "consumer group.")
    changes = GroupChanges(a.groups)
    with replay_progress(a.groups, group_ids):
        deletions = changes.plan_delete(group_ids)
    code = _finish(changes, a, any(d.error is not None for d in deletions))
    write_listing(a.output, delete_section(deletion_rows(deletions)))
    return code


def delete_offsets(a: Args) -> int:
    from ..formatters.group_sections import delete_offsets_section
    from ..tools.consumer_group_changes import GroupChanges, offset_deletion_rows

    if len(a.group) != 1 or not a.topic or a.all_groups:
        raise UsageError("Option [delete-offsets] takes the following options: [group], "
                         "[topic] (one group)")
    changes = GroupChanges(a.groups)
    with replay_progress(a.groups, a.group[:1]):
        result = changes.plan_delete_offsets(a.group[0], a.topic)
    code = _finish(changes, a, result.error is not None
                   or any(e is not None for e in result.partitions.values()))
    error = None if result.error is None else {"name": result.error.name,
                                               "message": result.error.message}
    write_listing(a.output, delete_offsets_section(offset_deletion_rows(result), result.group,
                                                   error))
    return code
