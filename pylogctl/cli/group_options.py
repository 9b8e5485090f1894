"""The options kafka-share-groups.sh and kafka-streams-groups.sh share, declared once for
``share-groups`` and ``streams-groups`` (``kind``: the group kind the help names)."""

from __future__ import annotations

from typing import Any

import typer


def log_dirs_argument() -> Any:
    return typer.Argument(..., help="Log dirs (one per broker, in any order), or a dir holding "
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
