"""``pylogctl transactions``: kafka-transactions.sh's subcommands, from the files of a stopped
cluster (option checks and messages as Kafka's ``TransactionsCommand`` makes them)."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..errors import UsageError
from ..storage.clock import wall_clock_ms
from .app import EXIT_CODES_HELP, app
from .group_options import log_dirs_argument
from .output import (OutputFormat, backup_dir_option, err, execute_option, guarded_output,
                     output_option, write_listing)

HELP = (
    "Transactions from the broker's files, like kafka-transactions.sh: the transaction "
    "coordinator's state (__transaction_state, loaded as the coordinator loads it), the "
    "producer state of partitions (the latest producer snapshot plus the batches after it), "
    "hanging transactions (KIP-664), and aborting them offline.\n\n"
    "Text output is Kafka's table, column for column (Kafka 4.4's TransactionsCommand); json, "
    "ndjson and yaml give the rows with camelCase keys and extra fields."
)

transactions_app = typer.Typer(name="transactions", help=HELP, no_args_is_help=True,
                               rich_markup_mode="rich")
app.add_typer(transactions_app, name="transactions")

_OUTPUT_HELP = "text: kafka-transactions.sh's table; table; json; ndjson; yaml."


def _write(table, output: str, notes: list[str]) -> int:
    from ..formatters.transactions_text import transactions_section

    write_listing(output, transactions_section(table.kind, table.headers, table.rows,
                                               table.cells))
    sys.stdout.flush()
    for note in notes:
        err(f"pylogctl: {note}")
    return 0


def _transactions(log_dir: List[str]):
    from ..tools.transactions import Transactions

    return Transactions(list(log_dir))


@transactions_app.command("list", help="List the transactional ids in __transaction_state "
                          "(kafka-transactions.sh list).", epilog=EXIT_CODES_HELP)
def list_(
    log_dir: List[str] = log_dirs_argument(),
    duration_filter: Optional[int] = typer.Option(
        None, "--duration-filter", metavar="MS", help="Duration (in millis) to filter by: if "
        "< 0, all transactions will be returned; otherwise, only transactions running longer "
        "than this duration will be returned."),
    transactional_id_pattern: Optional[str] = typer.Option(
        None, "--transactional-id-pattern", metavar="REGEX", help="Transactional id regular "
        "expression pattern to filter by."),
    output: OutputFormat = output_option(_OUTPUT_HELP),
) -> None:
    txns = _transactions(log_dir)
    table = txns.list(wall_clock_ms(), duration_filter, transactional_id_pattern)
    guarded_output(lambda: _write(table, output.value, txns.notes))


@transactions_app.command("describe", help="Describe the state of a transactional id "
                          "(kafka-transactions.sh describe).", epilog=EXIT_CODES_HELP)
def describe(
    log_dir: List[str] = log_dirs_argument(),
    transactional_id: str = typer.Option(..., "--transactional-id", metavar="ID",
                                         help="transactional id", show_default=False),
    output: OutputFormat = output_option(_OUTPUT_HELP),
) -> None:
    txns = _transactions(log_dir)
    table = txns.describe(transactional_id, wall_clock_ms())
    guarded_output(lambda: _write(table, output.value, txns.notes))


def _topic_option(required: bool) -> typer.models.OptionInfo:
    return typer.Option(... if required else None, "--topic", metavar="TOPIC",
                        help="topic name", show_default=False)


def _partition_option(required: bool) -> typer.models.OptionInfo:
    return typer.Option(... if required else None, "--partition", metavar="N",
                        help="partition number", show_default=False)


@transactions_app.command("describe-producers", help="The active producers of a partition, "
                          "from its producer state at the log end "
                          "(kafka-transactions.sh describe-producers).", epilog=EXIT_CODES_HELP)
def describe_producers(
    log_dir: List[str] = log_dirs_argument(),
    topic: str = _topic_option(True),
    partition: int = _partition_option(True),
    broker_id: Optional[int] = typer.Option(None, "--broker-id", metavar="N", help="the "
                                            "replica of this broker (default: the one a "
                                            "leader election would pick)."),
    output: OutputFormat = output_option(_OUTPUT_HELP),
) -> None:
    txns = _transactions(log_dir)
    table, state = txns.producers(topic, partition, broker_id, wall_clock_ms())
    notes = txns.log_dirs.notes + state.replica.notes
    guarded_output(lambda: _write(table, output.value, notes))


@transactions_app.command("find-hanging", help="Find hanging transactions: open in a "
                          "partition's producer state longer than the maximum transaction "
                          "timeout, and not ongoing at the coordinator (kafka-transactions.sh "
                          "find-hanging), plus transactional batches no marker closes that "
                          "the producer state no longer tracks (json: a note says so).",
                          epilog=EXIT_CODES_HELP)
def find_hanging(
    log_dir: List[str] = log_dirs_argument(),
    topic: Optional[str] = typer.Option(None, "--topic", metavar="TOPIC", help="topic name to "
                                        "limit search to (required if --partition is "
                                        "specified)"),
    partition: Optional[int] = _partition_option(False),
    broker_id: Optional[int] = typer.Option(None, "--broker-id", metavar="N", help="broker id "
                                            "to search for hanging transactions"),
    max_transaction_timeout: int = typer.Option(
        15, "--max-transaction-timeout", metavar="MIN", help="maximum transaction timeout in "
        "minutes to limit the scope of the search"),
    output: OutputFormat = output_option(_OUTPUT_HELP),
) -> None:
    txns = _transactions(log_dir)
    table, found = txns.hanging(topic, partition, broker_id, max_transaction_timeout,
                                wall_clock_ms())
    notes = txns.notes + [f"{h.topic}-{h.partition} producer {h.producer_id} at offset "
                          f"{h.start_offset}: {h.note}" for h in found if h.note]
    guarded_output(lambda: _write(table, output.value, notes))


@transactions_app.command("abort", help="Abort an open transaction by appending its ABORT "
                          "marker, as kafka-transactions.sh abort has the partition leader do "
                          "it: named by --start-offset, or by --producer-id, --producer-epoch "
                          "and --coordinator-epoch, or every hanging transaction with "
                          "--all-hanging (scoped by --topic/--partition/--broker-id if given). "
                          "Prints the plan; --execute appends the marker to every in-step "
                          "replica (locked, fsynced, .txnindex, producer snapshot, indexes "
                          "and checkpoints updated, the high watermark moved to the new end) "
                          "and shows the new last stable offset. A producer epoch or "
                          "coordinator epoch that has moved on is refused (exit 5).",
                          epilog=EXIT_CODES_HELP)
def abort(
    log_dir: List[str] = log_dirs_argument(),
    topic: Optional[str] = _topic_option(False),
    partition: Optional[int] = _partition_option(False),
    start_offset: Optional[int] = typer.Option(None, "--start-offset", metavar="OFFSET",
                                               help="start offset of the transaction to abort"),
    producer_id: Optional[int] = typer.Option(None, "--producer-id", metavar="ID",
                                              help="producer id"),
    producer_epoch: Optional[int] = typer.Option(None, "--producer-epoch", metavar="EPOCH",
                                                 help="producer epoch"),
    coordinator_epoch: Optional[int] = typer.Option(None, "--coordinator-epoch",
                                                    metavar="EPOCH", help="coordinator epoch"),
    all_hanging: bool = typer.Option(False, "--all-hanging", help="Abort every hanging "
                                     "transaction find-hanging reports (those the producer "
                                     "state no longer tracks pin nothing and are skipped)."),
    broker_id: Optional[int] = typer.Option(None, "--broker-id", metavar="N", help="With "
                                            "--all-hanging: only partitions with a replica on "
                                            "this broker."),
    max_transaction_timeout: int = typer.Option(
        15, "--max-transaction-timeout", metavar="MIN", help="With --all-hanging: maximum "
        "transaction timeout in minutes, as find-hanging."),
    execute: bool = execute_option("Append the ABORT markers"),
    backup_dir: Optional[str] = backup_dir_option(),
    output: OutputFormat = output_option(_OUTPUT_HELP),
) -> None:
    from ..tools.transactions import abort_table, last_stable_offsets

    producer = None
    if all_hanging and (start_offset is not None or producer_id is not None):
        raise UsageError("--all-hanging takes no --start-offset or --producer-id")
    if not all_hanging:
        if topic is None or partition is None:
            raise UsageError("abort needs --topic and --partition (or --all-hanging)")
        if start_offset is None and producer_id is not None:
            if producer_epoch is None:
                raise UsageError("Missing required argument --producer-epoch")
            if coordinator_epoch is None:
                raise UsageError("Missing required argument --coordinator-epoch")
            producer = (producer_id, producer_epoch, coordinator_epoch)
    txns = _transactions(log_dir)
    now = wall_clock_ms()
    plans, notes = txns.abort_plans(topic, partition, start_offset=start_offset,
                                    producer=producer, all_hanging=all_hanging,
                                    broker_id=broker_id,
                                    max_timeout_min=max_transaction_timeout, now_ms=now)
    after = None
    if not execute:
        markers = sum(len(p.specs) for p in plans)
        if markers:
            notes.append(f"dry run: nothing written; --execute appends {markers} ABORT "
                         f"marker(s) to " + ", ".join(f"{p.topic}-{p.partition}"
                                                       for p in plans))
        notes.extend(note for p in plans for note in p.skipped)
    else:
        for outcome in txns.execute(plans, now, backup_dir):
            for w in outcome.written:
                broker = "" if w.broker_id is None else f" (broker {w.broker_id})"
                notes.append(f"appended {outcome.batches} ABORT marker(s) to {outcome.topic}-"
                             f"{outcome.partition} at offsets {outcome.first_offset}-"
                             f"{outcome.next_offset - 1} in {w.log_dir}{broker}")
                notes.extend(w.notes)
                if w.backups:
                    notes.append(f"kept a copy of {len(w.backups)} file(s) changed under "
                                 f"{backup_dir}")
            notes.extend(outcome.skipped)
        after = last_stable_offsets(list(log_dir), plans, now)
    table = abort_table(plans, after)
    guarded_output(lambda: _write(table, output.value, txns.notes + notes))
