"""What ``share-groups`` and ``streams-groups`` share, as kafka-share-groups.sh and
kafka-streams-groups.sh do: their common options (``kind``: the group kind the help names) and
their ``--list`` output."""

from __future__ import annotations

import sys
from typing import Any, Callable

import typer

from .output import existing_paths, write_listing


def log_dirs_argument(check: bool = True) -> Any:
    """The log dirs; ``check=False`` where words may follow ``--state`` among them (the
    command then checks the paths it keeps)."""
    return typer.Argument(..., callback=existing_paths if check else None,
                          help="Log dirs (one per broker, in any order), or a dir holding "
                          "log dirs.", show_default=False)


def list_option(kind: str) -> Any:
    return typer.Option(False, "--list", help=f"List all {kind} groups.")


def describe_option() -> Any:
    return typer.Option(False, "--describe", help="Describe the groups given with --group, or "
                        "all of them with --all-groups.")


def group_option() -> Any:
    return typer.Option(None, "--group", metavar="GROUP", help="A group to describe "
                        "(repeatable).")


def all_groups_option(kind: str) -> Any:
    return typer.Option(False, "--all-groups", help=f"Describe every {kind} group.")


def write_group_list(rows: list, include_state: bool, kind: str, output: str,
                     notes: Callable[[], int]) -> int:
    """``--list [--state]``: the ``GROUP [STATE]`` rows, then the notes on stderr (``notes``
    prints them and returns the exit code)."""
    from ..formatters.group_sections import state_list_section

    write_listing(output, state_list_section(rows, include_state, f"{kind}-group-list"))
    sys.stdout.flush()
    return notes()
