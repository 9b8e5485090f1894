"""``pylogctl streams-groups``: kafka-streams-groups.sh's --list and --describe, from the files."""

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
    "List and describe Kafka Streams groups (KIP-1071) from the broker's files, like "
    "kafka-streams-groups.sh.\n\n"
    "Groups, members, their tasks and the topology come from __consumer_offsets as the group "
    "coordinator loads them; committed offsets too; log start and end offsets (the high "
    "watermark) from the data partitions. The offsets view shows the partitions the members' "
    "active tasks read (source and repartition topics), with the lag from the committed "
    "offset, or from the log start offset where nothing is committed, as Kafka computes it. "
    "States and members are as last persisted, not live.\n\n"
    "Text output is Kafka's, column for column (Kafka 4.4's StreamsGroupCommand), including "
    "its notices on stdout; json, ndjson and yaml give the rows with camelCase keys (null for "
    "'-')."
)


@app.command("streams-groups", help=HELP, epilog=EXIT_CODES_HELP)
def streams_groups(
    log_dir: List[str] = log_dirs_argument(check=False),
    list_: bool = list_option("streams"),
    describe: bool = describe_option(),
    group: Optional[List[str]] = group_option(),
    all_groups: bool = all_groups_option("streams"),
    offsets: bool = typer.Option(False, "--offsets", help="With --describe: lag per input "
                                 "partition (the default view)."),
    members: bool = typer.Option(False, "--members", help="With --describe: the members and "
                                 "their tasks."),
    state: bool = typer.Option(False, "--state", help="With --describe: the group's state. "
                               "With --list: a STATE column; a state list after it "
                               "(--state stable,notready) keeps only those groups."),
    verbose: bool = typer.Option(False, "--verbose", help="With --describe: epochs, committed "
                                 "offsets and target assignments too."),
    output: OutputFormat = output_option("text: kafka-streams-groups.sh's lines; table; json; "
                                         "ndjson; yaml."),
) -> None:
    """List or describe streams groups (the help text is ``HELP``)."""
    from ..tools.streams_groups import StreamsGroups, parse_states
    from .consumer_groups import _split_words

    dirs, state_list, _ = _split_words(list(log_dir), state and list_, False)
    if not dirs:
        raise UsageError("Give at least one log dir")
    if list_ + describe != 1:
        raise UsageError("Command must include exactly one action: --list, --describe")
    if list_ and (group or all_groups or offsets or members or verbose):
        raise UsageError("--list takes only --state")
    if describe and not group and not all_groups:
        raise UsageError("Option [describe] takes one of these options: [all-groups], [group]")
    if group and all_groups:
        raise UsageError('Option "[group]" can\'t be used with option "[all-groups]"')
    if offsets + members + state > 1:
        raise UsageError("Give at most one of --offsets, --members and --state")
    states = parse_states(state_list) if state_list else None
    groups = StreamsGroups(dirs)
    if list_:
        rows = [r for r in groups.list() if not states or r["state"] in states]
        guarded_output(lambda: write_group_list(rows, state, "streams", output.value,
                                                 lambda: _notes(groups)))
        return
    view = "members" if members else "state" if state else "offsets"
    reports = groups.describe(None if all_groups else list(group or []), view, verbose)
    guarded_output(lambda: _describe(groups, reports, view, verbose, output.value))


def _notes(groups) -> int:
    from .consumer_groups import print_provenance

    return print_provenance(groups.groups, "list")


def _describe(groups, reports: list, view: str, verbose: bool, output: str) -> int:
    from ..formatters.group_sections import streams_describe_section

    write_listing(output, streams_describe_section(reports, view, verbose))
    sys.stdout.flush()
    code = _notes(groups)
    if output != "text":  # Kafka's text says it on stdout
        for r in reports:
            if r.state is None:
                err(f"pylogctl: streams group '{r.group}' not found")
    return max(code, 1 if any(r.state is None for r in reports) else 0)
