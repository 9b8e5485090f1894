"""``pylogctl get-offsets``: kafka-get-offsets (GetOffsetShell), from the files."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import EXIT_CODES_HELP, app
from .group_options import log_dirs_argument
from .output import OutputFormat, err, guarded_output, output_option, write_listing

HELP = (
    "Print partitions' offsets by time from the broker's files, like kafka-get-offsets.\n\n"
    "Each line is topic:partition:offset, sorted as Kafka's tool sorts them (by the text "
    "topic-partition); partitions with no offset are left out. --time is what a broker's "
    "ListOffsets answers for a read_uncommitted client: -1/latest the high watermark "
    "(replication-offset-checkpoint, at most the log end; a missing entry counts as 0, so the "
    "log start offset, with a note); -2/earliest the log start offset; -3/max-timestamp the "
    "first record with the largest timestamp; a timestamp in ms the first record at or after "
    "it (through the segment's time index, then a scan); no offset when what is found is at "
    "or past the high watermark. Offline there is no remote storage: -4/earliest-local is "
    "the log start offset, -5/latest-tiered and -6/earliest-pending-upload give no offset, "
    "as Kafka answers for a topic without tiered storage. Segments are read as loading the "
    "partition would leave them (a segment a broker would recover is scanned), without "
    "writing.\n\n"
    "With the log dirs of several brokers, each partition is read from the replica with the "
    "highest leader epoch, then log end offset; stderr says which. Nothing is written.\n\n"
    "Exit codes here: 2 for a malformed --time, an invalid pattern, or filters that match no "
    "partition."
)


@app.command("get-offsets", help=HELP, epilog=EXIT_CODES_HELP)
def get_offsets(
    log_dir: List[str] = log_dirs_argument(),
    topic: Optional[str] = typer.Option(
        None, "--topic", metavar="TOPIC", help="The topic to get the offsets for: a regular "
        "expression the whole name must match. If not present, all topics. Cannot be used "
        "with --topic-partitions."),
    partitions: Optional[str] = typer.Option(
        None, "--partitions", metavar="IDS", help="Comma-separated partition ids. If not "
        "present, all partitions. Cannot be used with --topic-partitions."),
    topic_partitions: Optional[str] = typer.Option(
        None, "--topic-partitions", metavar="PATTERNS", help="Comma-separated "
        "TOPIC_REGEX[:PARTITIONS] rules: PARTITIONS is a number, N-M (M excluded), N- or -M, "
        "or omitted for all (topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3)."),
    time: str = typer.Option("latest", "--time", metavar="TIME", help="A timestamp in ms, or "
                             "-1/latest, -2/earliest, -3/max-timestamp, -4/earliest-local, "
                             "-5/latest-tiered, -6/earliest-pending-upload."),
    exclude_internal_topics: bool = typer.Option(
        False, "--exclude-internal-topics", help="Leave out internal topics "
        "(__consumer_offsets, __transaction_state, __share_group_state)."),
    output: OutputFormat = output_option("text: kafka-get-offsets' lines; json, ndjson, yaml: "
                                         "rows of topic, partition, offset, timestamp (-1 "
                                         "unless found by time) and leaderEpoch."),
) -> None:
    """Print offsets (the help text is ``HELP``)."""
    from ..tools.get_offsets import GetOffsets, GetOffsetsOptions, parse_time

    options = GetOffsetsOptions(parse_time(time), topic, partitions, topic_partitions,
                                exclude_internal_topics)
    run = GetOffsets(list(log_dir), options)
    guarded_output(lambda: _write(run, output.value))


def _write(run, output: str) -> int:
    from ..formatters.table import TableSection
    from ..tools.get_offsets import offset_rows

    rows = list(offset_rows(run.offsets()))
    write_listing(output, TableSection(rows, ("topic", "partition", "offset", "timestamp",
                                              "leaderEpoch"), block=max(1, len(rows)),
                                       kind="get-offsets", items_key="offsets"))
    for line in run.choices():
        err(f"pylogctl: {line}")
    for note in run.notes:
        err(f"pylogctl: {note}")
    return 0
