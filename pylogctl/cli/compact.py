"""``pylogctl compact``: Kafka's log cleaner, offline.

Plans by default; ``--execute`` cleans. The plan goes to stdout through the formatters, the
summary and problems to stderr, a progress bar to stderr when it is a terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

import typer

from ..errors import UsageError
from .app import EXIT_CODES_HELP, app
from .config import config_options, make_config_options
from .output import (OutputFormat, backup_dir_option, err, execute_option, existing_paths,
                     guarded_output, output_option, verbose_option, write_sections)

if TYPE_CHECKING:  # the storage engine loads when the command runs (start-up time)
    from ..tools.compact import Compaction

HELP = (
    "Compact Kafka logs offline, as the broker's log cleaner does.\n\n"
    "Compacted topics (cleanup.policy=compact; __consumer_offsets and __transaction_state) "
    "whose dirty ratio exceeds min.cleanable.dirty.ratio, or whose oldest dirty segment is "
    "older than max.compaction.lag.ms, are cleaned from cleaner-offset-checkpoint up to the "
    "first uncleanable offset (the active segment, the last stable offset, "
    "min.compaction.lag.ms): for every key only the latest record stays, at its offset, with "
    "its timestamp; tombstones and transaction markers go once their delete horizon has "
    "passed (the first cleaning sets it to now + delete.retention.ms); aborted transactional "
    "data goes; each producer's last batch stays. --partition T-P cleans that partition "
    "whatever its policy and ratio. Topic configs come from the same sources as `pylogctl "
    "config`.\n\n"
    "Without --execute this prints the plan, with the space a dry run of the cleaning saves, "
    "and changes nothing. --execute holds the log dir's .lock, loads each partition as a "
    "broker would, swaps cleaned segments in with Kafka's .cleaned -> .swap protocol (a kill "
    "at any point is repaired by `pylogctl recover`), updates cleaner-offset-checkpoint and "
    "reports the cleaner's statistics.\n\n"
    "Exit codes here: 1 when a partition cannot be cleaned because of bad data; 4 when a "
    "broker holds a log dir's .lock, in every mode."
)

_config, _config_file = config_options()


@app.command("compact", help=HELP, epilog=EXIT_CODES_HELP)
def compact(
    paths: List[str] = typer.Argument(..., callback=existing_paths,
                                      metavar="PATH...", help="Log dirs, a dir holding "
                                      "log dirs, or partition dirs.", show_default=False),
    partition: List[str] = typer.Option([], "--partition", metavar="T-P", help="Clean this "
                                        "partition (repeatable), whatever its cleanup.policy "
                                        "and dirty ratio; only these are considered."),
    now_ms: Optional[int] = typer.Option(None, "--now-ms", metavar="N", min=0, help="The "
                                         "time the cleaner runs at, in ms since the epoch "
                                         "(delete horizons, compaction lags, producer "
                                         "expiry); default: now."),
    config: List[str] = _config,
    config_file: Optional[str] = _config_file,
    high_watermark: str = typer.Option(
        "checkpoint", "--high-watermark", metavar="checkpoint|log-end",
        help="Where the cleanable range ends (below it, the last stable offset). checkpoint: "
        "the partition's replication-offset-checkpoint entry, as a broker loads it (none: the "
        "log start, so nothing is cleanable); log-end: the log end offset, when the checkpoint "
        "is missing and every record is known to be committed. Risk: uncommitted records (a "
        "follower's tail its leader never had) are then compacted as if committed, and a "
        "transaction still open at the log end bounds the range."),
    execute: bool = execute_option("Clean"),
    backup_dir: Optional[str] = backup_dir_option(),
    verbose: bool = verbose_option("partition"),
    output: OutputFormat = output_option("text; json (one object per partition); ndjson (one "
                                         "cleaning round per line); yaml."),
) -> None:
    """Plan or execute a compaction (the help text is ``HELP``)."""
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    for name in partition:
        topic, _, number = name.rpartition("-")
        if not topic or not number.isdigit():
            raise UsageError(f"--partition takes TOPIC-PARTITION (e.g. __consumer_offsets-7), "
                             f"not {name!r}")
    from ..tools.compact import HIGH_WATERMARKS, CompactOptions, Compaction

    if high_watermark not in HIGH_WATERMARKS:
        raise UsageError(f"--high-watermark is {' or '.join(HIGH_WATERMARKS)}, not "
                         f"{high_watermark!r}")
    options = CompactOptions(partitions=tuple(partition), now_ms=now_ms, execute=execute,
                             backup_dir=backup_dir, high_watermark=high_watermark,
                             config=make_config_options(config, config_file))
    run = Compaction(list(paths), options)
    guarded_output(lambda: _run(run, output.value, verbose))


def _run(run: Compaction, output: str, verbose: bool) -> int:
    from ..tools.compact import exit_code

    label = "compacting partitions" if run.options.execute else "planning partitions"
    done = write_sections(output, run.partitions, label, run.count(), in_bytes=False,
                          idle=None if verbose else (lambda s: s.nothing_to_do))
    for note in run.notes:
        err(f"pylogctl: {note}")
    for s in done:
        if s.error is not None:
            err(f"pylogctl: {s.entry}: {s.error}")
    cleaning = [s for s in done if s.error is None and s.decision is not None
                and s.decision.clean]
    before = sum(s.bytes_before for s in cleaning)
    saved = before - sum(s.bytes_after for s in cleaning)
    counts = (f"{len(cleaning)} of {len(done)} partition{'' if len(done) == 1 else 's'}, "
              f"{before} bytes read, {saved} bytes saved")
    blind = sum(s.no_high_watermark for s in done)
    if blind:
        err(f"pylogctl: {blind} partition{' has' if blind == 1 else 's have'} no high watermark "
            f"in replication-offset-checkpoint: nothing above the log start is cleanable; "
            f"--high-watermark log-end cleans up to the log end if the data is known to be "
            f"committed")
    if not done:
        err("pylogctl: no partitions found")
    elif run.options.execute:
        err(f"executed: compacted {counts}")
    else:
        err(f"plan: would compact {counts}; nothing changed"
            + (" (run with --execute to clean)" if cleaning else ""))
    return exit_code(done)
