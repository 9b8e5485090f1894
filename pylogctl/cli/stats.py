"""``pylogctl stats``: per topic-partition statistics and consumer-group lag of log dirs."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..errors import ExitCode
from .app import EXIT_CODES_HELP, app
from .output import OutputFormat, err, guarded_output, write_listing
from .scan import (Engine, conf_option, engine_option, engine_progress, make_engine,
                   master_option, paths_argument, remote_option, split_bytes_option)

HELP = (
    "Statistics of log dirs (a log dir, several, a dir holding log dirs, or partition dirs), "
    "computed from every record, by either engine (--engine local or spark: identical "
    "results), on a local session, a cluster (--master) or a Spark Connect server (--remote "
    "or SPARK_REMOTE).\n\n"
    "Per topic-partition: records (control records included), key and value bytes, the "
    ".log files' bytes, first and last offsets, the time range, distinct keys, tombstones "
    "(keyed records with a null value), the duplicate-key ratio (the share of keyed records "
    "whose key comes again later) and what a compaction would save (the key and value bytes "
    "of every keyed record but the last of its key). One replica per partition is read "
    "(highest leader epoch, then log end offset).\n\n"
    "Per consumer group, from __consumer_offsets as `pylogctl consumer-groups` loads it: the "
    "committed partitions and the lag summed over them (high watermark minus committed "
    "offset).\n\n"
    "json: {\"partitions\": [...], \"groups\": [...]} with camelCase keys, timestamps in ms."
)


@app.command("stats", help=HELP, epilog=EXIT_CODES_HELP)
def stats(
    paths: List[str] = paths_argument(),
    engine: Engine = engine_option(),
    master: Optional[str] = master_option(),
    remote: Optional[str] = remote_option(),
    conf: List[str] = conf_option(),
    split_bytes: int = split_bytes_option(),
    output: OutputFormat = typer.Option(OutputFormat.table, "--output", "-o",
                                        help="table (partitions, then groups; a rich table on "
                                        "a terminal, plain columns when piped); text (those "
                                        "plain columns, always); json; ndjson (a partition or "
                                        "group per line, its \"type\" first); yaml (the json "
                                        "document)."),
) -> None:
    """Statistics (the help text is ``HELP``)."""
    runner = make_engine(engine, list(paths), master, split_bytes, "one", remote, conf)
    try:
        with engine_progress(runner, "reading", lambda: runner.stats_read_size()):
            result = runner.stats()
    finally:
        close = getattr(runner, "close", None)
        if close is not None:
            close()
    guarded_output(lambda: _write(result, output.value, runner))


def _write(result, output: str, runner) -> int:
    from ..formatters.scan_records import stats_json_sections, stats_table_sections

    if output not in ("table", "text"):
        write_listing(output, *stats_json_sections(result.partitions, result.groups),
                      keyed=True)
    else:
        shown = [p for p in result.partitions if p["records"] or p["segmentBytes"]]
        write_listing(output, *stats_table_sections(shown, result.groups), keyed=True)
        if len(shown) < len(result.partitions):
            result.notes.insert(0, f"{len(result.partitions) - len(shown)} partitions without "
                                f"data not shown (-o json lists every partition)")
    sys.stdout.flush()
    for note in result.notes:
        err(f"pylogctl: {note}")
    if runner.last_plan is not None:
        err(f"pylogctl: {runner.last_plan.summary()} ({runner.name} engine)")
    return int(ExitCode.DATA_ERROR if result.problem else ExitCode.OK)
