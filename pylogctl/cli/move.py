"""``pylogctl move``: a replica moved between two log dirs of one broker, offline."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import UsageError
from .app import EXIT_CODES_HELP, app
from .output import (OutputFormat, backup_dir_option, err, execute_option, guarded_output,
                     output_option, write_sections)

HELP = (
    "Move replicas from one log dir of a broker to another (JBOD), offline, as Kafka's "
    "intra-broker move (AlterReplicaLogDirs) does: the partition dir is copied into a future "
    "replica in --to, every file fsynced, its entries of the four checkpoint files are written "
    "there, the future replica is renamed live, the source renamed -delete, its entries "
    "dropped from --from's checkpoints, and it is deleted (LogManager.replaceCurrentWithFuture"
    "Log's order). Name partitions as topic-partition, or a topic for all of its partitions.\n\n"
    "--finish-future and --cancel-future settle the future replicas in --to that a crashed "
    "reassignment (kafka-reassign-partitions with log_dirs) left beside their current replica "
    "in --from: finishing swaps them as Kafka does once the future replica has caught up (its "
    "log end offset has reached the current one's; refused otherwise), cancelling deletes the "
    "future replica. Without partitions, every future replica in --to.\n\n"
    "Both dirs must belong to one broker (same cluster.id and node.id in meta.properties). "
    "Without --execute this prints the plan and changes nothing. --execute holds both dirs' "
    ".lock and is crash-safe: a kill at any point leaves a state Kafka starts from with every "
    "record kept, and that `pylogctl recover FROM TO --execute` settles.\n\n"
    "Exit codes here: 2 for dirs of different clusters or brokers, a target on the same file "
    "system without --same-disk, a partition unknown or already in --to; 4 when a broker holds "
    "either .lock, in every mode; 5 when --to lacks the room or a future replica has not "
    "caught up."
)


@app.command("move", help=HELP, epilog=EXIT_CODES_HELP)
def move(
    partitions: Optional[List[str]] = typer.Argument(
        None, metavar="[TOPIC-PARTITION|TOPIC]...", help="The partitions to move (a topic: "
        "all of its partitions in --from).", show_default=False),
    source: str = typer.Option(..., "--from", metavar="DIR", help="The log dir holding the "
                               "replicas (with --finish/--cancel-future: their current "
                               "replicas)."),
    target: str = typer.Option(..., "--to", metavar="DIR", help="The log dir to move them to "
                               "(with --finish/--cancel-future: holding the future replicas)."),
    finish_future: bool = typer.Option(False, "--finish-future", help="Swap future replicas "
                                       "that have caught up with their current replicas."),
    cancel_future: bool = typer.Option(False, "--cancel-future", help="Delete future "
                                       "replicas, keeping their current replicas."),
    same_disk: bool = typer.Option(False, "--same-disk", help="Allow a --to on the same file "
                                   "system as --from: such a move frees no space, so it is "
                                   "refused unless asked for (tests, or a dir to be remounted)."),
    execute: bool = execute_option("Move the replicas"),
    backup_dir: Optional[str] = backup_dir_option(),
    output: OutputFormat = output_option("text: the steps of each move; json, ndjson (one "
                                         "step per line), yaml: the same as data."),
) -> None:
    """Plan or carry out moves (the help text is ``HELP``)."""
    if finish_future and cancel_future:
        raise UsageError("give at most one of --finish-future and --cancel-future")
    if backup_dir is not None and not execute:
        err("pylogctl: --backup-dir has no effect without --execute (this is a plan)")
    from ..tools.move import MoveRequest, move as plan

    future = "finish" if finish_future else "cancel" if cancel_future else None
    sections, run = plan(MoveRequest(tuple(partitions or ()), source, target, future, execute,
                                     backup_dir, same_disk))
    guarded_output(lambda: _write(sections, run, output.value, execute))


def _write(sections, run, output: str, execute: bool) -> int:
    total = sum(s.plan.size for s in sections)
    write_sections(output, run, "copying", total if execute else 0)
    moved = sum(s.result is not None for s in sections)
    if execute:
        err(f"executed: {moved} of {len(sections)} replica(s)")
    elif sections:
        err(f"plan: {len(sections)} replica(s), {total} bytes to copy; nothing changed (run "
            f"with --execute to apply)")
    else:
        err("plan: nothing to do")
    return 0
