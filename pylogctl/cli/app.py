"""The ``pylogctl`` command: the console script's entry point and the error boundary.

Every failure ends as one line on stderr and a documented exit code; ``--debug`` shows the
traceback instead.

Start-up time is most of what a quick command costs, so this module imports almost nothing:
the Typer app (``app``, in :mod:`.root`) is built on first use, a subcommand's module is
imported only when that subcommand runs (``COMMANDS``), and ``pylogctl --version`` answers
without loading typer at all.
"""

from __future__ import annotations

import errno
import os
import sys

from .. import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    import typer

EXIT_CODES_HELP = (
    "Exit codes: 0 success; 1 data problem found (invalid bytes, CRC mismatch, corrupt "
    "data); 2 usage error; 3 a path missing or unreadable (said first); 4 log dir locked "
    "(a running broker holds its .lock); 5 change refused by Kafka's rules (a consumer group "
    "that is not empty); 70 internal error (a bug: rerun with --debug); 130 interrupted; "
    "141 output pipe closed."
)

URLS_HELP = (
    "Reading commands also take log dirs in object storage and remote file systems: "
    "s3://, gs://, abfs://, hdfs:// URLs (and file://), with the credentials and endpoint of "
    "each store's standard environment and config files (AWS_ENDPOINT_URL, AWS_PROFILE, "
    "~/.aws/config, ...); commands that change log dirs refuse them (exit 2)."
)

# Every subcommand and the module of this package that registers it on ``app``, in the order
# of ``pylogctl --help`` (tests/cli/test_cli_startup.py checks this against the modules).
COMMANDS = {
    "config": "config",
    "compact": "compact",
    "consumer-groups": "consumer_groups",
    "delete-records": "delete_records",
    "dump-segment": "dump_segment",
    "get-offsets": "get_offsets",
    "metadata": "metadata",
    "move": "move",
    "rebuild-index": "rebuild_index",
    "recover": "recover",
    "replicas": "replicas",
    "retention": "retention",
    "sample": "sample",
    "scan": "scan",
    "share-groups": "share_groups",
    "stats": "stats",
    "streams-groups": "streams_groups",
    "transactions": "transactions",
    "truncate": "truncate",
    "broker": "broker",
}

_debug = False  # set by the root callback (--debug, PYLOGCTL_DEBUG)

# Options whose value may be left out, as Kafka's tools declare some with joptsimple's
# ``withOptionalArg()``: given bare -- last, or followed by another option -- they take the
# default here. Click has no such options, so the command line is completed before it parses
# it, before any subcommand's module is loaded: hence declared here, not by the subcommands.
_OPTIONAL_VALUES: dict[str, str] = {
    # kafka-dump-log's decoder classes (dump-segment): StringDecoder when bare
    # (tools.decoders.DEFAULT_DECODER_CLASS; tests/cli/test_cli_startup.py checks they agree)
    "--key-decoder-class": "org.apache.kafka.tools.api.StringDecoder",
    "--value-decoder-class": "org.apache.kafka.tools.api.StringDecoder",
}


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


def __getattr__(name: str) -> typer.Typer:
    # ``app``: the Typer app, built when first asked for (the subcommand modules' ``from .app
    # import app``, tests, the docs generator), not when the console script imports main
    if name == "app":
        from .root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _version_only() -> None:
    """``pylogctl --version`` as typer runs it -- the eager option's ``echo`` then exit 0, a
    closed pipe exit 1 and nothing on stderr, other write errors left to :func:`main` -- but
    without importing typer and click, most of the CLI's start-up time."""
    out = sys.stdout
    if out is not None:  # no stdout at all (``>&-``): click's echo writes nothing
        try:
            out.write(f"pylogctl {__version__}\n")
            out.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            from .output import silence_stdout

            silence_stdout()
            sys.exit(1)
        except KeyboardInterrupt:  # typer's main: 130, without a message
            sys.exit(130)
    sys.exit(0)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map every failure to an exit code."""
    args = _fill_optional_values(list(sys.argv[1:] if argv is None else argv))
    restore = None
    try:
        # typer answers shell-completion requests first (add_completion=False notwithstanding)
        if args == ["--version"] and not os.environ.get("_PYLOGCTL_COMPLETE"):
            _version_only()
        if "://" in " ".join(args):  # log dirs in object storage (a URL argument)
            from .remote_paths import prepare

            args, restore = prepare(args)
        from .root import app

        app(args=args, prog_name="pylogctl", standalone_mode=True)
    except SystemExit:
        raise
    except BaseException as exc:
        _exit_for(exc)
        raise  # --debug (or not ours to handle): the traceback
    finally:
        if restore is not None:
            restore()


def _exit_for(exc: BaseException) -> None:
    """Exit with ``exc``'s line on stderr and its exit code; return if it is to propagate."""
    from ..errors import ExitCode, PylogctlError

    if isinstance(exc, PylogctlError):
        if _debug:
            return
        print(f"pylogctl: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    if isinstance(exc, BrokenPipeError):
        from .output import silence_stdout

        silence_stdout()
        sys.exit(ExitCode.BROKEN_PIPE)
    if isinstance(exc, KeyboardInterrupt):
        print("pylogctl: interrupted", file=sys.stderr)
        sys.exit(ExitCode.INTERRUPTED)
    if isinstance(exc, Exception) and not _debug:  # the last line of defence
        print(f"pylogctl: internal error: {type(exc).__name__}: {exc} "
              f"(rerun with --debug for the traceback)", file=sys.stderr)
        sys.exit(ExitCode.INTERNAL)
