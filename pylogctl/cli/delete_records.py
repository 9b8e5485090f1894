"""``pylogctl delete-records``: kafka-delete-records (DeleteRecordsCommand), offline."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import ExitCode, UsageError
from .app import EXIT_CODES_HELP, app
from .config import config_options, make_config_options
from .group_options import log_dirs_argument
from .output import (OutputFormat, backup_dir_option, err, execute_option, guarded_output,
                     output_option, write_listing)

HELP = (
    "Delete records below an offset offline, as a DeleteRecords request does "
    "(kafka-delete-records).\n\n"
    "Each partition's log start offset rises to the offset given (-1: the high watermark; it "
    "never moves down), with the recovery point, the leader-epoch cache and producer state "
    "(UnifiedLog.maybeIncrementLogStartOffset, reason ClientRecordDeletion), and the segments "
    "wholly below it are deleted as the broker's retention then deletes them. Kafka's rules "
    "refuse an offset above the high watermark or below -1 (OFFSET_OUT_OF_RANGE) and a topic "
    "whose cleanup.policy is compact only (POLICY_VIOLATION); a partition no log dir holds is "
    "UNKNOWN_TOPIC_OR_PARTITION. Every partition is checked first: one refused, nothing is "
    "written.\n\n"
    "Without --execute this prints the plan and changes nothing. --execute changes every "
    "replica given that is in step with the one read (same leader epoch and log end offset), "
    "under each log dir's .lock: the log-start-offset-checkpoint is written before any "
    "segment goes, so a kill at any point leaves a log `pylogctl recover` loads and a rerun "
    "finishes. Text output is Kafka's (partition: t-0<TAB>low_watermark: N); details go to "
    "stderr.\n\n"
    "Exit codes here: 2 for a malformed JSON file (named with the position) or options, or "
    "an unknown partition; 4 when a broker holds a log dir's .lock, in every mode; 5 when "
    "Kafka's rules refuse an offset or a topic; 70 when a deletion differs from its plan."
)

_config, _config_file = config_options()


@app.command("delete-records", help=HELP, epilog=EXIT_CODES_HELP)
def delete_records(
    log_dir: List[str] = log_dirs_argument(),
    offset_json_file: Optional[str] = typer.Option(
        None, "--offset-json-file", metavar="FILE", help='The JSON file with offset per '
        'partition, in Kafka\'s format: {"partitions": [{"topic": "foo", "partition": 1, '
        '"offset": 1}], "version": 1}.'),
    topic: Optional[str] = typer.Option(None, "--topic", metavar="TOPIC",
                                        help="One partition's topic (with --partition and "
                                        "--offset), instead of --offset-json-file."),
    partition: Optional[int] = typer.Option(None, "--partition", metavar="N",
                                            help="The partition of --topic."),
    offset: Optional[int] = typer.Option(None, "--offset", metavar="N", help="Delete the "
                                         "records below offset N (-1: the high watermark)."),
    config: List[str] = _config,
    config_file: Optional[str] = _config_file,
    execute: bool = execute_option("Delete the records"),
    backup_dir: Optional[str] = backup_dir_option(),
    output: OutputFormat = output_option("text: kafka-delete-records' lines; json, ndjson, "
                                         "yaml: a row per partition (low watermark before "
                                         "and after, high watermark, segments deleted, "
                                         "replicas)."),
) -> None:
    """Plan or delete records (the help text is ``HELP``)."""
    from ..tools.delete_records import (DeleteRecords, DeleteRecordsOptions,
                                        read_offset_json)

    single = (topic, partition, offset)
    if offset_json_file is not None and any(v is not None for v in single):
        raise UsageError("--offset-json-file cannot be used with --topic, --partition or "
                         "--offset")
    if offset_json_file is not None:
        requests = read_offset_json(offset_json_file)
    elif None in single:
        raise UsageError("Missing required argument: --offset-json-file, or --topic, "
                         "--partition and --offset")
    else:
        requests = [(topic, partition, offset)]
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    run = DeleteRecords(list(log_dir), DeleteRecordsOptions(
        tuple(requests), execute, backup_dir, make_config_options(config, config_file)))
    guarded_output(lambda: _write(run, output.value))


def _write(run, output: str) -> int:
    from ..formatters.table import TableSection
    from ..tools.delete_records import deletion_rows, details, mismatches

    executed = run.options.execute
    deletions = run.run()
    rows = deletion_rows(deletions, executed)
    write_listing(output, TableSection(rows, tuple(rows[0]) if rows else (),
                                       block=max(1, len(rows)), kind="delete-records",
                                       items_key="partitions", text={"executed": executed}))
    for d in deletions:
        for line in details(d, executed):
            err(f"pylogctl: {line}")
    if not executed and any(d.plan.changed for d in deletions):
        err("pylogctl: plan: nothing changed (run with --execute to delete)")
    problems = mismatches(deletions)
    for line in problems:
        err(f"pylogctl: {line} (a bug: please report it)")
    return int(ExitCode.INTERNAL) if problems else 0
