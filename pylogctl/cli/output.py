"""Shared option types and output plumbing for the subcommands."""

from __future__ import annotations

import enum
import errno
import os
import sys
from typing import Callable

import typer

from ..errors import ExitCode


class OutputFormat(str, enum.Enum):
    text = "text"
    json = "json"
    ndjson = "ndjson"
    yaml = "yaml"


def err(message: str) -> None:
    """A diagnostic line on stderr (never on stdout, which carries data)."""
    print(message, file=sys.stderr)


def guarded_output(write: Callable[[], int]) -> None:
    """Run ``write`` (which streams to stdout) and exit with its code.

    A reader that goes away (``| head``) ends us with 141 and no noise, as shells expect.
    """
    try:
        code = write()
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        raise typer.Exit(ExitCode.BROKEN_PIPE)
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            silence_stdout()
            raise typer.Exit(ExitCode.BROKEN_PIPE)
        raise
    raise typer.Exit(code)


def silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
