"""``pylogctl rebuild-index``: rebuild segment indexes as Kafka's log recovery would.

Plans by default; ``--verify`` judges the indexes on disk; ``--execute`` writes. Data goes to
stdout through the formatters, the summary and problems to stderr, a progress bar to stderr
when it is a terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

import typer

from ..errors import ExitCode, UsageError
from .app import EXIT_CODES_HELP, app
from .config import config_options, make_config_options
from .output import (OutputFormat, backup_dir_option, err, execute_option, existing_paths,
                     guarded_output, output_option, verbose_option, write_sections)

if TYPE_CHECKING:  # the storage engine loads when the command runs (start-up time)
    from ..tools.rebuild_index import IndexRebuild, SegmentRebuild

DEFAULT_INTERVAL = 4096  # Kafka's index.interval.bytes (LogConfig's default, checked in tests)

HELP = (
    "Rebuild the offset, time and transaction indexes of Kafka log segments.\n\n"
    "The indexes are built as Kafka's log recovery builds them (LogSegment.recover) from the "
    ".log, read-only, and compared with the files on disk: identical, missing, or different, "
    "and then benign (every entry still leads lookups to the right batch, as when a broker "
    "restarted inside the segment, a follower or the log cleaner wrote the index, or "
    "index.interval.bytes differs) or corrupt.\n\n"
    "Without --execute this prints the plan and changes nothing. --execute replaces every "
    "index that differs, each atomically, with every log dir's .lock held; an interrupted run "
    "is finished by running it again. A .log is never changed: invalid bytes at its end are "
    "reported (a broker's recovery truncates them).\n\n"
    "Exit codes here: 1 when --verify finds an index missing or corrupt, or when a .log has "
    "invalid bytes or a corrupt batch; 4 when a broker holds a log dir's .lock, in every mode."
)


_config, _config_file = config_options()


@app.command("rebuild-index", help=HELP, epilog=EXIT_CODES_HELP)
def rebuild_index(
    paths: List[str] = typer.Argument(..., callback=existing_paths,
                                      help="Segments (.log), partition dirs, log dirs, "
                                      "or a dir holding log dirs.", show_default=False),
    verify: bool = typer.Option(False, "--verify", help="Judge the indexes on disk against "
                                "the rebuilt ones; write nothing; exit 1 if one is missing or "
                                "differs in a way that is not benign."),
    execute: bool = execute_option("Write the rebuilt indexes"),
    backup_dir: Optional[str] = backup_dir_option(),
    index_interval_bytes: Optional[int] = typer.Option(
        None, "--index-interval-bytes", min=0, metavar="N",
        help="Bytes between index entries (default: each topic's index.interval.bytes, as "
        "`pylogctl config` shows it: the KRaft metadata log, --config, --config-file, else "
        f"{DEFAULT_INTERVAL})."),
    config: Optional[List[str]] = _config,
    config_file: Optional[str] = _config_file,
    verbose: bool = verbose_option("segment"),
    output: OutputFormat = output_option("text; json (one object per segment); ndjson (one "
                                         "index per line); yaml."),
) -> None:
    """Plan, verify or execute an index rebuild (the help text is ``HELP``)."""
    if verify and (execute or backup_dir is not None):
        raise UsageError("--verify writes nothing: give it without --execute and --backup-dir")
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    from ..tools.rebuild_index import IndexRebuild, RebuildOptions

    options = RebuildOptions(index_interval_bytes=index_interval_bytes, execute=execute,
                             backup_dir=backup_dir,
                             config=make_config_options(config, config_file))
    run = IndexRebuild(list(paths), options)
    guarded_output(lambda: _run(run, output.value, verify, verbose))


def _run(run: IndexRebuild, output: str, verify: bool, verbose: bool) -> int:
    with run:
        done = write_sections(output, run.segments, "rebuilding indexes", run.total_bytes,
                              idle=None if verbose else (lambda s: s.nothing_to_do),
                              what="segment")
    return _summary(done, verify, run.options.execute)


def _summary(done: list[SegmentRebuild], verify: bool, execute: bool) -> int:
    """Problems and a one-line summary on stderr; the exit code."""
    code = ExitCode.OK
    indexes = [r for s in done for r in s.indexes]
    for s in done:
        if s.error is not None:
            err(f"pylogctl: {s.error}")
            code = max(code, s.error.exit_code)
        elif s.invalid_bytes:
            err(f"pylogctl: {s.invalid_bytes} invalid bytes at the end of {s.path} "
                f"(byte position {s.valid_bytes})")
            code = max(code, ExitCode.DATA_ERROR)
    problems = [r for r in indexes if r.comparison.problem]
    benign = sum(r.comparison.verdict == "benign" for r in indexes)
    changes = [r for r in indexes if r.action != "keep"]
    counts = (f"{len(indexes)} index files of {len(done)} segment"
              f"{'' if len(done) == 1 else 's'}: {len(problems)} missing or "
              f"corrupt, {benign} benign differences")
    if not done:
        err("pylogctl: no segments found")
    elif verify:
        for r in problems:
            c = r.comparison
            err(f"pylogctl: missing: {r.path}" if c.status == "missing" else
                f"pylogctl: corrupt: {r.path} ({c.explanation})")
        err(f"verify: {counts}")
        if problems:
            code = max(code, ExitCode.DATA_ERROR)
    elif execute:
        written = sum(r.done for r in changes)
        backups = sum(r.backup is not None for r in changes)
        err(f"executed: wrote {written} index files ({backups} old ones backed up); {counts}")
    else:
        err(f"plan: {len(changes)} index files to write; {counts}; nothing changed"
            + (" (run with --execute to write them)" if changes else ""))
    return int(code)

