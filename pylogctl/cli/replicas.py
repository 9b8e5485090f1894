"""``pylogctl replicas``: every broker's copy of each partition compared, offline; ``--elect``
plans (and with ``--execute`` runs) the truncations an election would cause."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import ExitCode, UsageError
from .app import EXIT_CODES_HELP, app
from .group_options import log_dirs_argument
from .output import (OutputFormat, backup_dir_option, err, execute_option, guarded_output,
                     output_option, write_sections)

HELP = (
    "Compare every broker's copy of each partition, from several brokers' log dirs.\n\n"
    "For each partition with more than one replica: each replica's log start and end, high "
    "watermark and leader-epoch chain, and where it diverges from the leader's. The leader is "
    "the best replica (the highest latest leader epoch, then the highest log end offset, then "
    "the first log dir given) or, with --elect, the broker named. Each other replica is "
    "truncated as Kafka's follower would truncate it when it starts fetching from that "
    "leader (OffsetsForLeaderEpoch, KIP-101 and KIP-279, round by round; a replica without "
    "epochs falls back to its high watermark): the divergence point is where its log then "
    "ends, and the records above it are lost (offsets, record count, time range). The point "
    "is checked against the batches: below it a replica must hold the leader's batches "
    "(offsets, epoch and CRC); one that does not is reported. Records no other replica "
    "holds, and topic ids (partition.metadata) that differ between replicas, are flagged (a "
    "replica with another topic id than the leader's is not compared).\n\n"
    "Partitions whose replicas agree are counted in the summary on stderr; -v lists them "
    "too.\n\n"
    "--elect BROKER shows what each other replica would lose if BROKER became the leader "
    "(an unclean election) and the truncate plan each would follow; --execute runs those "
    "plans (as `pylogctl truncate` does: under each log dir's .lock, with --backup-dir, "
    "crash-safe, `pylogctl recover` repairs an interrupted run and a rerun finishes it).\n\n"
    "Exit codes here: 1 when a replica holds a batch unlike the leader's below its "
    "divergence point; 2 for an unknown broker id, log dirs of different clusters "
    "(meta.properties cluster.id) or a broker given twice; 4 when a broker holds a log dir's "
    ".lock (--elect); 70 when a truncation differs from its plan."
)


@app.command("replicas", help=HELP, epilog=EXIT_CODES_HELP)
def replicas(
    log_dir: List[str] = log_dirs_argument(),
    topic: Optional[List[str]] = typer.Option(None, "--topic", metavar="TOPIC",
                                              help="Only this topic (repeatable)."),
    partition: Optional[List[int]] = typer.Option(None, "--partition", metavar="N", min=0,
                                                  help="Only partition N (repeatable)."),
    elect: Optional[int] = typer.Option(None, "--elect", metavar="BROKER",
                                        help="Compare against broker BROKER's replicas as "
                                        "the new leader's, and plan the truncations."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="List the partitions whose replicas agree too."),
    execute: bool = execute_option("With --elect: truncate the other replicas"),
    backup_dir: Optional[str] = backup_dir_option(),
    output: OutputFormat = output_option("text: a block per partition; json, yaml: a list "
                                         "of partitions with their replicas; ndjson: a "
                                         "replica per line."),
) -> None:
    """Compare replicas (the help text is ``HELP``)."""
    if execute and elect is None:
        raise UsageError("--execute goes with --elect BROKER")
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    from ..tools.replicas import ReplicasRequest, ReplicasRun

    run = ReplicasRun(ReplicasRequest(tuple(log_dir), tuple(topic or ()),
                                      tuple(partition or ()), elect, execute, backup_dir,
                                      verbose))
    guarded_output(lambda: _write(run, output.value))


def _write(run, output: str) -> int:
    write_sections(output, run.sections_for, "comparing replicas", run.total, in_bytes=False)
    for s in run.sections:
        for t in s.truncations:
            for line in _stranded(t):
                err(f"pylogctl: warning: {line}")
    err(f"pylogctl: {run.summary()}")
    if run.request.elect is not None and not run.request.execute and any(
            s.truncations for s in run.sections):
        err("pylogctl: plan: nothing changed (run with --execute to truncate)")
    bugs = [m for s in run.sections for m in s.plan_mismatches]
    for line in bugs:
        err(f"pylogctl: {line} (a bug: please report it)")
    if bugs:
        return int(ExitCode.INTERNAL)
    mismatches = [m for s in run.sections for m in s.footer["mismatches"]]
    return int(ExitCode.DATA_ERROR) if mismatches else 0


def _stranded(t) -> list[str]:
    return [f"{c.describe()} (outside the log once truncated)" for c in t.stranded]
