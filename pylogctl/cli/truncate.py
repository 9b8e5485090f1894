"""``pylogctl truncate``: Kafka's log truncation of one partition, offline.

Plans by default; ``--execute`` truncates. The plan goes to stdout through the formatters, the
summary to stderr.
"""

from __future__ import annotations

from typing import Optional

import typer

from ..errors import ExitCode, UsageError
from .app import EXIT_CODES_HELP, app
from .output import (OutputFormat, backup_dir_option, err, execute_option, existing_paths,
                     guarded_output, output_option, warn_stranded, write_sections)

HELP = (
    "Truncate one partition offline, as Kafka does when a replica diverges from its leader.\n\n"
    "--to-offset N is Kafka's truncateTo: every batch ending at or after N goes (a batch "
    "holding N goes whole, so the log may end a little below N), with the segments above it, "
    "their index entries, the leader epochs starting at or after the new end and the producer "
    "snapshots above it; the recovery point and high watermark are clamped to the new end. "
    "--start-at N is truncateFullyAndStartAt: every segment goes and the log starts over, empty, "
    "at N (log start, log end and high watermark N).\n\n"
    "The partition is first loaded as a broker would load it, so a damaged log is recovered "
    "before it is truncated, and that recovery is part of the plan. Without --execute this "
    "prints the plan and changes nothing. --execute holds the log dir's .lock, keeps a copy of "
    "every file changed or deleted under --backup-dir, and is crash-safe: an interrupted run "
    "leaves a state that `pylogctl recover` repairs.\n\n"
    "Exit codes here: 1 when the data cannot be loaded; 4 when a broker holds the log dir's "
    ".lock, in every mode."
)


@app.command("truncate", help=HELP, epilog=EXIT_CODES_HELP)
def truncate(
    partition_dir: str = typer.Argument(..., callback=existing_paths,
                                        metavar="PARTITION_DIR", help="The partition dir "
                                        "({log dir}/{topic}-{partition}).", show_default=False),
    to_offset: Optional[int] = typer.Option(None, "--to-offset", metavar="N", min=0,
                                            help="Drop every record at and above offset N, "
                                            "and the rest of the batch holding N: a batch "
                                            "goes whole, so the log may end below N."),
    start_at: Optional[int] = typer.Option(None, "--start-at", metavar="N", min=0,
                                           help="Drop every record and start the log, empty, "
                                           "at offset N."),
    log_start_offset: Optional[int] = typer.Option(None, "--log-start-offset", metavar="N",
                                                   min=0, help="With --start-at: the new log "
                                                   "start offset (default: N)."),
    execute: bool = execute_option("Truncate"),
    backup_dir: Optional[str] = backup_dir_option(),
    output: OutputFormat = output_option("text; json; ndjson (one recovery step per line); "
                                         "yaml."),
) -> None:
    """Plan or execute a truncation (the help text is ``HELP``)."""
    if (to_offset is None) == (start_at is None):
        raise UsageError("give exactly one of --to-offset N and --start-at N")
    if log_start_offset is not None and start_at is None:
        raise UsageError("--log-start-offset goes with --start-at")
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    from ..tools.truncate import TruncateRequest, truncate as run

    request = TruncateRequest(
        partition_dir, "to-offset" if start_at is None else "start-at",
        to_offset if start_at is None else start_at,  # type: ignore[arg-type]
        log_start_offset=log_start_offset, execute=execute, backup_dir=backup_dir)
    section = run(request)
    guarded_output(lambda: _write(section, output.value))


def _write(section, output: str) -> int:
    write_sections(output, lambda _: [section], "", 0)
    t = section.plan.truncation
    what = (f"log end {t.log_end_offset_before} -> {t.log_end_offset}" if t.changed
            else "nothing to truncate")
    warn_stranded(section.stranded, "the truncation left" if section.outcome else
                  "the truncation would leave")
    if section.outcome is not None:
        err(f"executed: {what}")
        for field in section.mismatches:
            err(f"pylogctl: {section.entry}: {field} differs from the plan (a bug: please "
                f"report it)")
        return int(ExitCode.INTERNAL) if section.mismatches else 0
    err(f"plan: {what}; nothing changed"
        + (" (run with --execute to apply)" if not section.plan.is_empty else ""))
    return 0
