"""``pylogctl share-groups``: kafka-share-groups.sh's --list and --describe, from the files."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..errors import UsageError
from .app import EXIT_CODES_HELP, app
from .group_options import (all_groups_option, describe_option, group_option, list_option,
                            log_dirs_argument, write_group_list)
from .output import OutputFormat, err, guarded_output, output_option, write_listing

HELP = (
    "List and describe share groups (KIP-932) from the broker's files, like "
    "kafka-share-groups.sh.\n\n"
    "Groups and members come from __consumer_offsets as the group coordinator loads them; each "
    "share partition's start offset (below it every record is delivered), leader epoch and "
    "completed records from __share_group_state as the share coordinator replays it; end "
    "offsets from the data partitions' high watermarks. LAG is the end offset minus the start "
    "offset minus the records already completed above it, as Kafka computes it. States and "
    "members are as last persisted, not live.\n\n"
    "Text output is Kafka's, column for column (Kafka 4.4's ShareGroupCommand); json, ndjson and "
    "yaml give the rows with camelCase keys (null for '-')."
)


@app.command("share-groups", help=HELP, epilog=EXIT_CODES_HELP)
def share_groups(
    log_dir: List[str] = log_dirs_argument(),
    list_: bool = list_option("share"),
    describe: bool = describe_option(),
    group: Optional[List[str]] = group_option(),
    all_groups: bool = all_groups_option("share"),
    offsets: bool = typer.Option(False, "--offsets", help="With --describe: start offset and "
                                 "lag per share partition (the default view)."),
    members: bool = typer.Option(False, "--members", help="With --describe: the members."),
    state: bool = typer.Option(False, "--state", help="With --describe: the group's state. "
                               "With --list: a STATE column."),
    verbose: bool = typer.Option(False, "--verbose", help="With --describe: epochs too."),
    output: OutputFormat = output_option("text: kafka-share-groups.sh's lines; table; json; "
                                         "ndjson; yaml."),
) -> None:
    """List or describe share groups (the help text is ``HELP``)."""
    if list_ + describe != 1:
        raise UsageError("Command must include exactly one action: --list, --describe")
    if list_ and (group or all_groups or offsets or members or verbose):
        raise UsageError("--list takes only --state")
    if describe and bool(group) == all_groups:
        raise UsageError("--describe needs --group GROUP or --all-groups")
    if offsets + members + state > 1:
        raise UsageError("Give at most one of --offsets, --members and --state")
    from ..tools.share_groups import ShareGroups

    groups = ShareGroups(list(log_dir))
    if list_:
        rows = groups.list()
        guarded_output(lambda: write_group_list(rows, state, "share", output.value,
                                                 lambda: _notes(groups)))
        return
    view = "members" if members else "state" if state else "offsets"
    reports = groups.describe(None if all_groups else list(group or []), view, verbose)
    guarded_output(lambda: _describe(groups, reports, view, verbose, output.value))


def _notes(groups) -> int:
    from .consumer_groups import print_provenance

    code = print_provenance(groups.groups, "list")
    for note in groups.notes:
        err(f"pylogctl: {note}")
    return code


def _describe(groups, reports: list, view: str, verbose: bool, output: str) -> int:
    from ..formatters.group_sections import share_describe_section

    write_listing(output, share_describe_section(reports, view, verbose))
    sys.stdout.flush()
    code = _notes(groups)
    return max(code, 1 if any(r.state is None for r in reports) else 0)
