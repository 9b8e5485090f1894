"""The ``pylogctl`` command: the Typer app, global options and the error boundary.

Every failure ends as one line on stderr and a documented exit code; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from .. import __version__
from ..errors import ExitCode, PylogctlError
from .output import silence_stdout

EXIT_CODES_HELP = (
    "Exit codes: 0 success; 1 data problem found (invalid bytes, CRC mismatch, corrupt "
    "data); 2 usage error; 3 file unreadable; 4 log dir locked (a running broker holds its "
    ".lock); 5 change refused by Kafka's rules (a consumer group that is not empty); "
    "70 internal error (a bug: rerun with --debug); 130 interrupted; 141 output pipe closed."
)

app = typer.Typer(
    name="pylogctl",
    help="Inspect and repair Apache Kafka log directories offline.\n\n" + EXIT_CODES_HELP,
    rich_markup_mode="rich",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_debug = False

# Options whose value may be left out, as Kafka's tools declare some with joptsimple's
# ``withOptionalArg()`` (kafka-dump-log's --key-decoder-class): given bare -- last, or followed
# by another option -- they take the default registered here. Click has no such options, so the
# command line is completed before it parses it.
_OPTIONAL_VALUES: dict[str, str] = {}


def optional_value(flag: str, default: str) -> None:
    """Let ``flag`` be given without its value, meaning ``default``."""
    _OPTIONAL_VALUES[flag] = default


def _fill_optional_values(args: list[str]) -> list[str]:
    out = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if arg in _OPTIONAL_VALUES and (nxt is None or (nxt.startswith("-") and nxt != "-")):
            arg = f"{arg}={_OPTIONAL_VALUES[arg]}"
        out.append(arg)
    return out


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pylogctl {__version__}")
        raise typer.Exit()


def _no_color(value: bool) -> None:
    # eager, so that help given after it (``pylogctl --no-color scan --help``) is plain too
    if value:
        from ..formatters.color import disable_color

        disable_color()


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True,
                                           help="Show the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    no_color: bool = typer.Option(False, "--no-color", callback=_no_color, is_eager=True,
                                  help="Plain output: no colour, no rich tables, even on a "
                                  "terminal (as NO_COLOR=1 or TERM=dumb)."),
) -> None:
    global _debug
    _debug = debug or bool(os.environ.get("PYLOGCTL_DEBUG"))


def _register() -> None:
    # each module adds its command to ``app``
    from . import (broker, compact, config, consumer_groups, dump_segment,  # noqa: F401
                   rebuild_index, recover, retention, sample, scan, share_groups, stats,
                   streams_groups, truncate)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map every failure to an exit code."""
    args = _fill_optional_values(list(sys.argv[1:] if argv is None else argv))
    try:
        app(args=args, prog_name="pylogctl", standalone_mode=True)
    except SystemExit:
        raise
    except PylogctlError as exc:
        if _debug:
            raise
        print(f"pylogctl: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        silence_stdout()
        sys.exit(ExitCode.BROKEN_PIPE)
    except KeyboardInterrupt:
        print("pylogctl: interrupted", file=sys.stderr)
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as exc:  # the last line of defence: never a bare traceback
        if _debug:
            raise
        print(f"pylogctl: internal error: {type(exc).__name__}: {exc} "
              f"(rerun with --debug for the traceback)", file=sys.stderr)
        sys.exit(ExitCode.INTERNAL)
