"""``pylogctl retention``: Kafka's log retention (deleteOldSegments), offline.

Plans by default; ``--execute`` deletes. The plan goes to stdout through the formatters, the
summary and problems to stderr, a progress bar to stderr when it is a terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

import typer

from .app import EXIT_CODES_HELP, app
from .config import config_options, make_config_options, topic_option
from .output import (OutputFormat, backup_dir_option, err, execute_option, existing_paths,
                     guarded_output, output_option, verbose_option, warn_stranded, write_sections)

if TYPE_CHECKING:
    from ..tools.retention import RetentionRun

HELP = (
    "Delete old segments offline as a broker's retention does (UnifiedLog.deleteOldSegments).\n\n"
    "Per partition, in Kafka's order: segments wholly below the log start offset; then, by "
    "retention.bytes, the oldest segments while the log stays at or above the limit; then, by "
    "retention.ms, the oldest segments whose largest timestamp is older than that (a "
    "timestamp in the future keeps its segment and every later one, as in Kafka). Each pass "
    "stops at the first segment that does not qualify, never deletes offsets at or above the "
    "high watermark nor an empty active segment, and rolls a new empty segment when all go. "
    "The log start offset moves to the first segment kept. Only topics whose cleanup.policy "
    "contains delete; configs come from the same sources as `pylogctl config`.\n\n"
    "Without --execute this prints the plan (each segment to delete and the rule, bytes freed, "
    "the new log start) and changes nothing. --execute holds the log dir's .lock, writes the "
    "log start offset checkpoint first, then renames each segment's files to .deleted and "
    "removes them with their producer snapshots, and checks the result against the plan; a "
    "kill at any point leaves a log `pylogctl recover` loads, and a rerun finishes the job.\n\n"
    "Exit codes here: 1 when a partition cannot be loaded; 2 for an invalid config; 4 when a "
    "broker holds a log dir's .lock, in every mode; 70 when a deletion differs from its plan."
)

_config, _config_file = config_options()


@app.command("retention", help=HELP, epilog=EXIT_CODES_HELP)
def retention(
    paths: List[str] = typer.Argument(..., callback=existing_paths,
                                      help="Partition dirs, log dirs, or a dir holding "
                                      "log dirs.", show_default=False),
    topic: List[str] = topic_option(),
    partition: List[int] = typer.Option([], "--partition", metavar="N", min=0,
                                        help="Only partition N of the topics (repeatable)."),
    config: List[str] = _config,
    config_file: Optional[str] = _config_file,
    now_ms: Optional[int] = typer.Option(None, "--now-ms", metavar="MS",
                                         help="Judge ages against this time (ms since the "
                                         "epoch) instead of the clock."),
    execute: bool = execute_option("Delete the segments"),
    backup_dir: Optional[str] = backup_dir_option(),
    verbose: bool = verbose_option("partition"),
    output: OutputFormat = output_option("text; json (one object per partition); ndjson (one "
                                         "deleted segment per line); yaml."),
) -> None:
    """Plan or execute retention (the help text is ``HELP``)."""
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    from ..tools.retention import RetentionOptions, RetentionRun

    options = RetentionOptions(execute=execute, backup_dir=backup_dir, now_ms=now_ms,
                               topics=tuple(topic), partitions=tuple(partition),
                               config=make_config_options(config, config_file))
    run = RetentionRun(list(paths), options)
    guarded_output(lambda: _run(run, output.value, verbose))


def _run(run: RetentionRun, output: str, verbose: bool) -> int:
    from ..tools.retention import exit_code, stranded

    label = "deleting old segments" if run.options.execute else "planning retention"
    done = write_sections(output, run.partitions, label, run.count(), in_bytes=False,
                          idle=None if verbose else (lambda s: s.nothing_to_do))
    for note in dict.fromkeys(run.notes):
        err(f"pylogctl: {note}")
    for s in done:
        if s.error is not None:
            err(f"pylogctl: {s.entry}: {s.error}")
        for field in s.mismatches:
            err(f"pylogctl: {s.entry}: {field} differs from the plan (a bug: please report it)")
    changing = [s for s in done if s.changes]
    warn_stranded(stranded(changing), "retention left" if run.options.execute
                  else "retention would leave")
    segments = sum(len(s.plan.retention.deleted) for s in changing if s.plan)
    freed = sum(s.plan.retention.bytes_freed for s in changing if s.plan)
    counts = (f"{segments} segment{'' if segments == 1 else 's'} ({freed} bytes) in "
              f"{len(changing)} of {len(done)} partition{'' if len(done) == 1 else 's'}")
    if not done:
        err("pylogctl: no partitions found")
    elif run.options.execute:
        err(f"executed: deleted {counts}")
    else:
        err(f"plan: {counts} to delete; nothing changed"
            + (" (run with --execute to delete)" if changing else ""))
    return exit_code(done)
