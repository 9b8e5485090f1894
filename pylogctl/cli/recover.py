"""``pylogctl recover``: a broker's start-up log recovery, offline.

Plans by default; ``--execute`` applies. The plan goes to stdout through the formatters, the
summary and problems to stderr, a progress bar to stderr when it is a terminal.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional

import typer

from ..errors import ExitCode
from .app import EXIT_CODES_HELP, app
from .config import config_options, make_config_options
from .output import (OutputFormat, backup_dir_option, err, execute_option, existing_paths,
                     guarded_output, output_option, verbose_option, write_sections)

if TYPE_CHECKING:  # the storage engine loads when the command runs (start-up time)
    from ..tools.recover import PartitionRecovery, Recovery

HELP = (
    "Recover Kafka log dirs offline, as a broker does when it starts (LogLoader).\n\n"
    "For every partition: leftovers of interrupted operations (.cleaned, .swap, .deleted "
    "files) are resolved, orphaned indexes deleted, segments recovered from the recovery point "
    "(all of them without .kafka_cleanshutdown): invalid bytes at the end cut, and every "
    "later segment deleted, missing or corrupt indexes rebuilt; the log start offset and high "
    "watermark clamped, the leader-epoch cache truncated, producer state rebuilt, and the "
    "changed entries of the log dir's checkpoint files rewritten.\n\n"
    "Without --execute this prints the plan (what would change, and why, by Kafka's rules) "
    "and changes nothing. --execute applies it with the log dir's .lock held; every step is "
    "crash-safe, and an interrupted run is finished by running it again. A second run finds "
    "nothing to do.\n\n"
    "--mark-clean (with --execute) then leaves each log dir whose partitions were all "
    "recovered as a clean shutdown would: files flushed, recovery points at the log ends, "
    ".kafka_cleanshutdown written last, so the broker starts without scanning anything.\n\n"
    "Each partition is recovered with its topic's configs (index.interval.bytes spaces the "
    "rebuilt index entries), from the sources `pylogctl config` shows: the KRaft metadata "
    "log, --config and --config-file.\n\n"
    "--threads N partitions of a log dir are recovered at once (default: the CPU count); "
    "the output keeps the partitions' order, and the changed checkpoint entries are written "
    "once per log dir, after its last partition.\n\n"
    "Moves between two log dirs of a broker that a kill interrupted (`pylogctl move`) are "
    "settled first when both dirs are given: a future replica that is a whole copy is "
    "finished, a partial one deleted, and of a partition live in both dirs with identical "
    "files the source copy is retired.\n\n"
    "Exit codes here: 1 when --check finds something to change (but not for rebuilt indexes "
    "or stray producer snapshots of a KRaft metadata log: Kafka's raft layer recovers that "
    "log at every start), or a partition cannot be planned because of bad data; 3 when a "
    "file cannot be read; 4 when a broker holds a log dir's .lock, in every mode."
)


_config, _config_file = config_options()


@app.command("recover", help=HELP, epilog=EXIT_CODES_HELP)
def recover(
    paths: List[str] = typer.Argument(..., callback=existing_paths,
                                      help="Partition dirs, log dirs, or a dir holding "
                                      "log dirs.", show_default=False),
    execute: bool = execute_option("Apply the plan"),
    backup_dir: Optional[str] = backup_dir_option(),
    check: bool = typer.Option(False, "--check", help="Exit 1 if the plan would change "
                               "anything (for scripts: is recovery needed?)."),
    mark_clean: bool = typer.Option(False, "--mark-clean", help="After a full recovery of a "
                                    "log dir, leave it as Kafka's clean shutdown does (the "
                                    "broker then skips recovery)."),
    threads: Optional[int] = typer.Option(None, "--threads", metavar="N", min=1,
                                          help="Partitions recovered at once per log dir "
                                          "(Kafka's num.recovery.threads.per.data.dir) "
                                          "[default: the CPU count]", show_default=False),
    config: Optional[List[str]] = _config,
    config_file: Optional[str] = _config_file,
    verbose: bool = verbose_option("partition"),
    output: OutputFormat = output_option("text; json (one object per partition); ndjson (one "
                                         "step per line); yaml."),
) -> None:
    """Plan or execute a recovery (the help text is ``HELP``)."""
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    from ..tools.recover import RecoverOptions, Recovery

    run = Recovery(list(paths), RecoverOptions(execute=execute, backup_dir=backup_dir,
                                               mark_clean=mark_clean,
                                               threads=threads or os.cpu_count() or 1,
                                               config=make_config_options(config, config_file)))
    guarded_output(lambda: _run(run, output.value, check, verbose))


def _run(run: Recovery, output: str, check: bool, verbose: bool) -> int:
    from ..tools.recover import exit_code

    label = "recovering partitions" if run.options.execute else "planning partitions"
    done: list[PartitionRecovery] = write_sections(
        output, run.partitions, label, run.count(), in_bytes=False,
        idle=None if verbose else (lambda s: s.nothing_to_do))
    for note in run.notes:
        err(f"pylogctl: {note}")
    for s in done:
        if s.error is not None:
            err(f"pylogctl: {s.entry}: {s.error}")
    changing = [s for s in done if s.changes]
    steps = sum(len(s.plan.steps) for s in changing if s.plan)
    updates = sum(len(s.checkpoint_updates) for s in changing)
    counts = (f"{len(changing)} of {len(done)} partition{'' if len(done) == 1 else 's'} "
              f"({steps} steps, {updates} checkpoint entries)")
    code = exit_code(done)
    if not done:
        err("pylogctl: no partitions found")
    elif run.options.execute:
        backups = sum(len(s.result.backups) for s in done if s.result) + len(run.backups)
        err(f"executed: recovered {counts}" + (f"; {backups} files backed up" if backups else ""))
    else:
        err(f"plan: {counts} to change; nothing changed"
            + (" (run with --execute to apply)" if changing else ""))
        if check and (run.moves_pending or any(s.needs_recovery for s in changing)):
            code = max(code, int(ExitCode.DATA_ERROR))
    return code
