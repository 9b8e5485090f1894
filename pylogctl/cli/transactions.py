"""``pylogctl transactions``: kafka-transactions.sh's subcommands, from the files of a stopped
cluster (option checks and messages as Kafka's ``TransactionsCommand`` makes them)."""

from __future__ import annotations

import sys
import time
from typing import List, Optional

import typer

from .app import EXIT_CODES_HELP, app
from .group_options import log_dirs_argument
from .output import OutputFormat, err, guarded_output, output_option, write_listing

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


def _now() -> int:
    return time.time_ns() // 1_000_000


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
    table = txns.list(_now(), duration_filter, transactional_id_pattern)
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
    table = txns.describe(transactional_id, _now())
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
    table, state = txns.producers(topic, partition, broker_id, _now())
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
    table, found = txns.hanging(topic, partition, broker_id, max_transaction_timeout, _now())
    notes = txns.notes + [f"{h.topic}-{h.partition} producer {h.producer_id} at offset "
                          f"{h.start_offset}: {h.note}" for h in found if h.note]
    guarded_output(lambda: _write(table, output.value, notes))
