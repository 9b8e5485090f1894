"""``pylogctl consumer-groups``: kafka-consumer-groups.sh's --list and --describe, from disk.

Where Kafka's tool takes ``--bootstrap-server``, this takes log dirs (or a server.properties
naming them). Kafka's ``--state`` and ``--type`` take an optional value, which the option
parser cannot express; so ``--state`` and ``--type`` are flags, and a state or type list
written after them (``--list --state stable,empty``) arrives among the log dirs, where it is
recognised as the argument that is no existing path and names only states (or types).
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, List, Optional

import typer

from ..errors import ExitCode, UsageError
from .app import EXIT_CODES_HELP, app
from .output import (OutputFormat, backup_dir_option, bars_allowed, err, guarded_output,
                     progress_bar, require_paths, warn_stranded, write_listing)

if TYPE_CHECKING:
    from ..tools.consumer_groups import ConsumerGroups

HELP = (
    "List and describe consumer groups from the broker's files, like kafka-consumer-groups.sh."
    "\n\nGroups, members and committed offsets are rebuilt from __consumer_offsets as the group "
    "coordinator loads them (last record wins, tombstones delete, transactional commits count "
    "once committed); end offsets come from the data partitions: the high watermark of "
    "replication-offset-checkpoint (at most the log end), or the log end with --lag-from leo. "
    "States and members are as last persisted, not live. With the log dirs of several "
    "brokers, each partition is read from the replica with the highest leader epoch, then log "
    "end offset; stderr says which.\n\nText output is Kafka's, column for column; json, ndjson "
    "and yaml give the rows with camelCase keys (null for '-'), table the same rows as "
    "columns.\n\n"
    "--reset-offsets, --delete and --delete-offsets change a stopped cluster's groups as "
    "Kafka's coordinator would: with --execute they append offset commits (key v1, value v3) "
    "or tombstones, one batch per group, to the group's __consumer_offsets partition, on "
    "every replica given that is in step with the one read, under each log dir's .lock, with "
    "indexes, leader epoch, high watermark and checkpoints maintained; then the partition is "
    "loaded again and checked. Without --execute (or with --dry-run) they print the same "
    "output and write nothing. Groups that are not Empty (as last persisted) are refused, "
    "as Kafka refuses them (exit 5)."
)
_WORDS = re.compile(r"^[A-Za-z]+(,[A-Za-z]+)*$")


def _log_dirs_from_config(path: str) -> list[str]:
    """``log.dirs`` (else ``log.dir``, else Kafka's default) of a server.properties."""
    from ..storage.metadata_files import read_properties

    props = read_properties(path)
    value = props.get("log.dirs") or props.get("log.dir") or "/tmp/kafka-logs"
    return [d.strip() for d in value.split(",") if d.strip()]


def _split_words(args: list[str], state: bool, type_: bool
                 ) -> tuple[list[str], str | None, str | None]:
    """Separate the state/type list written after ``--state``/``--type`` from the log dirs."""
    from ..tools.consumer_groups import parse_types

    dirs, states, types = [], None, None
    for arg in args:
        if (state or type_) and not os.path.exists(arg) and _WORDS.match(arg):
            try:
                parse_types(arg)
                is_type = True
            except UsageError:
                is_type = False
            if is_type and type_:
                types = arg if types is None else f"{types},{arg}"
            elif state:
                states = arg if states is None else f"{states},{arg}"
            else:
                parse_types(arg)  # Kafka's error for the bad type list
            continue
        dirs.append(arg)
    require_paths(dirs)  # here, not as the argument's callback: words after --state are no paths
    return dirs, states, types


@app.command("consumer-groups", help=HELP, epilog=EXIT_CODES_HELP)
def consumer_groups(
    log_dir: Optional[List[str]] = typer.Argument(
        None, metavar="[LOG_DIR]...", show_default=False,
        help="Log dirs (one per broker, in any order), or a dir holding log dirs."),
    server_config: Optional[str] = typer.Option(
        None, "--server-config", metavar="FILE",
        help="A broker's server.properties: read its log.dirs."),
    list_: bool = typer.Option(False, "--list", help="List all consumer groups."),
    describe: bool = typer.Option(False, "--describe", help="Describe the groups given with "
                                  "--group, or all of them with --all-groups."),
    group: Optional[List[str]] = typer.Option(None, "--group", metavar="GROUP",
                                              help="A group to describe (repeatable)."),
    all_groups: bool = typer.Option(False, "--all-groups", help="Describe every group."),
    offsets: bool = typer.Option(False, "--offsets", help="With --describe: committed offsets "
                                 "and lag per partition (the default view)."),
    members: bool = typer.Option(False, "--members", help="With --describe: the members."),
    state: bool = typer.Option(False, "--state", help="With --describe: the group's state. "
                               "With --list: a STATE column; a comma-separated list of states "
                               "after it (--state stable,empty) keeps only those groups."),
    type_: bool = typer.Option(False, "--type", help="With --list: a TYPE column; a list of "
                               "types after it (--type classic,consumer) keeps only those."),
    verbose: bool = typer.Option(False, "--verbose", help="With --describe: more columns "
                                 "(LEADER-EPOCH; members' epochs and assignments; group "
                                 "epochs), and on stderr the replica read for each partition "
                                 "held by several log dirs (else one line counts them)."),
    offsets_partitions: Optional[int] = typer.Option(
        None, "--offsets-partitions", min=1, metavar="N",
        help="The partition count of __consumer_offsets (default: the count the KRaft "
        "metadata image registers, else the highest partition in the log dirs plus one), "
        "which decides where a group is stored."),
    lag_from: str = typer.Option("hw", "--lag-from", metavar="hw|leo",
                                 help="End offset for LOG-END-OFFSET and LAG: the high "
                                 "watermark (as Kafka's tool shows) or the log end offset."),
    output: OutputFormat = typer.Option(OutputFormat.text, "--output", "-o",
                                        help="text: kafka-consumer-groups.sh's output; table, "
                                        "json, ndjson, yaml: the rows (table: a rich table on "
                                        "a terminal, plain columns when piped)."),
    delete: bool = typer.Option(False, "--delete", help="Delete the groups given with "
                                "--group (or --all-groups): tombstones for their offsets and "
                                "registration. Only Empty groups."),
    reset_offsets: bool = typer.Option(False, "--reset-offsets", help="Reset the committed "
                                       "offsets of inactive groups to one scenario's offsets."),
    delete_offsets: bool = typer.Option(False, "--delete-offsets", help="Delete the committed "
                                        "offsets of one group for the --topic partitions."),
    topic: Optional[List[str]] = typer.Option(
        None, "--topic", metavar="TOPIC[:P,...]", help="With --reset-offsets or "
        "--delete-offsets: a topic (all its partitions) or topic:0,1,2 (repeatable)."),
    all_topics: bool = typer.Option(False, "--all-topics", help="With --reset-offsets: every "
                                    "partition the group has committed offsets for."),
    to_earliest: bool = typer.Option(False, "--to-earliest", help="Reset to the log start "
                                     "offset."),
    to_latest: bool = typer.Option(False, "--to-latest", help="Reset to the end offset "
                                   "(see --lag-from)."),
    to_current: bool = typer.Option(False, "--to-current", help="Reset to the committed "
                                    "offset (the end offset where there is none)."),
    to_offset: Optional[int] = typer.Option(None, "--to-offset", metavar="N",
                                            help="Reset to offset N (kept in range)."),
    shift_by: Optional[int] = typer.Option(None, "--shift-by", metavar="N", help="Move the "
                                           "committed offset by N, + or - (kept in range)."),
    to_datetime: Optional[str] = typer.Option(
        None, "--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss", help="Reset to the first "
        "record at or after this time (UTC unless a zone such as +02:00 follows)."),
    by_duration: Optional[str] = typer.Option(None, "--by-duration", metavar="PnDTnHnMnS",
                                              help="Reset to the first record at or after "
                                              "now minus this duration."),
    from_file: Optional[str] = typer.Option(None, "--from-file", metavar="CSV", help="Reset "
                                            "to the offsets of a CSV as --export writes it."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would change and write "
                                 "nothing (the default)."),
    execute: bool = typer.Option(False, "--execute", help="Append the records to "
                                 "__consumer_offsets (without it: print the plan only)."),
    export: bool = typer.Option(False, "--export", help="With --reset-offsets: print the plan "
                                "as CSV, for --from-file."),
    backup_dir: Optional[str] = backup_dir_option(),
) -> None:
    """List, describe or change consumer groups (the help text is ``HELP``)."""
    dirs, state_list, type_list = _split_words(list(log_dir or []), state, type_)
    if server_config is not None:
        dirs += _log_dirs_from_config(server_config)
    if not dirs:
        raise UsageError("Give the log dirs to read (or --server-config server.properties)")
    if list_ + describe + delete + reset_offsets + delete_offsets != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, "
                         "--delete, --reset-offsets, --delete-offsets")
    if lag_from not in ("hw", "leo"):
        raise UsageError(f"--lag-from is hw or leo, not {lag_from!r}")
    view = _check_describe(describe, group, all_groups, offsets, members, state, state_list,
                           verbose, type_)
    if list_ and (group or all_groups):
        raise UsageError(f'Option "[{"group" if group else "all-groups"}]" can\'t be used with '
                         f'option "[list]"')
    from ..tools.consumer_groups import ConsumerGroups, parse_states, parse_types

    changing = delete or reset_offsets or delete_offsets
    if not changing:
        for name, given in (("topic", topic), ("all-topics", all_topics), ("execute", execute),
                            ("dry-run", dry_run), ("export", export),
                            ("backup-dir", backup_dir)):
            if given:
                raise UsageError(f"Option(s) [{name}] are unavailable given other options on "
                                 f"the command line")
    else:
        for name, given in (("members", members), ("offsets", offsets), ("verbose", verbose),
                            ("state", state), ("type", type_)):
            if given:
                raise UsageError(f"Option(s) [{name}] are unavailable given other options on "
                                 f"the command line")
    scenarios = {"to-offset": to_offset is not None, "to-datetime": to_datetime is not None,
                 "by-duration": by_duration is not None, "to-earliest": to_earliest,
                 "to-latest": to_latest, "to-current": to_current,
                 "shift-by": shift_by is not None, "from-file": from_file is not None}
    if not reset_offsets:
        for name, given in [*scenarios.items(), ("all-topics", all_topics), ("export", export)]:
            if given:
                raise UsageError(f"Option(s) [{name}] are unavailable given other options on "
                                 f"the command line")
    groups = ConsumerGroups(dirs, lag_from, offsets_partitions)  # type: ignore[arg-type]
    if changing:
        from . import consumer_group_changes as changes

        if execute and dry_run:
            action = "reset-offsets" if reset_offsets else (
                "delete" if delete else "delete-offsets")
            raise UsageError(f"Option [{action}] only accepts one of [execute] and [dry-run]")
        args = changes.Args(groups, list(group or []), all_groups, list(topic or []),
                            all_topics, scenarios, to_offset, shift_by, to_datetime,
                            by_duration, from_file, execute, export, backup_dir, output.value)
        run = (changes.reset if reset_offsets else changes.delete if delete
               else changes.delete_offsets)
        guarded_output(lambda: run(args))
        return
    states = parse_states(state_list) if state_list else None
    types = parse_types(type_list) if type_list else None
    if list_:
        with replay_progress(groups, None):
            rows = groups.list(states, types)
        guarded_output(lambda: _list(groups, rows, type_, state, output.value))
    else:
        ids = None if all_groups else list(group or [])
        with replay_progress(groups, ids):
            reports = groups.describe(ids, view, verbose)
        guarded_output(lambda: _describe(groups, reports, view, verbose, output.value))


def _check_describe(describe: bool, group: Optional[List[str]], all_groups: bool,
                    offsets: bool, members: bool, state: bool, state_list: str | None,
                    verbose: bool, type_: bool) -> str:
    """Kafka's option rules for --describe; the view it asks for."""
    if not describe:
        for flag, given in (("members", members), ("offsets", offsets), ("verbose", verbose)):
            if given:
                raise UsageError(f"Option(s) [{flag}] are unavailable given other options on "
                                 f"the command line")
        return "offsets"
    if type_:
        raise UsageError("Option(s) [type] are unavailable given other options on the command "
                         "line")
    if not group and not all_groups:
        raise UsageError("Option [describe] takes one of these options: [all-groups], [group]")
    if group and all_groups:
        raise UsageError('Option "[group]" can\'t be used with option "[all-groups]"')
    if members + offsets + state > 1:
        raise UsageError("Option [describe] takes at most one of these options: [members], "
                         "[offsets], [state]")
    if state_list is not None:
        raise UsageError("Option [describe] does not take a value for [state]")
    return "members" if members else "state" if state else "offsets"


@contextmanager
def replay_progress(groups: ConsumerGroups, group_ids: Optional[List[str]]) -> Iterator[None]:
    """A bar on stderr (a terminal) while the groups load: replaying __consumer_offsets is
    the slow part. It is gone before anything is printed."""
    advance, stop = progress_bar("reading __consumer_offsets",
                                 groups.read_size(group_ids) if bars_allowed() else 0)
    groups.progress = advance
    try:
        yield
    finally:
        groups.progress = None
        if stop is not None:
            stop()


def print_provenance(groups, view: str, verbose: bool = False) -> int:
    """The notes on where the answers came from, on stderr (``verbose``: the replica read for
    each partition, else one line for them all); exit code 1 if reading met invalid data."""
    provenance = groups.provenance(view, verbose)
    sys.stdout.flush()
    for line in provenance.lines:
        err(f"pylogctl: {line}")
    return int(ExitCode.DATA_ERROR if provenance.problem else ExitCode.OK)


def _list(groups, rows: list[dict], include_type: bool, include_state: bool,
          output: str) -> int:
    from ..formatters.group_sections import list_section

    code = print_provenance(groups, "list-states" if include_state else "list")
    write_listing(output, list_section(rows, include_type, include_state))
    return code


def _describe(groups, reports: list, view: str, verbose: bool, output: str) -> int:
    from ..formatters.group_sections import describe_section

    code = print_provenance(groups, view, verbose)
    if output != "text":  # Kafka's text prints them in place
        for r in reports:
            if r.error is not None:
                err(f"pylogctl: {r.error}")
    write_listing(output, describe_section(reports, view, verbose))
    sys.stdout.flush()
    warn_stranded(groups.stranded, "the log dirs hold")
    return code
