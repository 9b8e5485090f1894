"""Shared option types and output plumbing for the subcommands."""

from __future__ import annotations

import enum
import errno
import io
import os
import sys
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar

S = TypeVar("S")

import typer

from ..errors import ExitCode


class OutputFormat(str, enum.Enum):
    """``--output``: every subcommand takes all five (``pylogctl.formatters.FORMATS``)."""

    text = "text"
    table = "table"
    json = "json"
    ndjson = "ndjson"
    yaml = "yaml"


def existing_paths(ctx: typer.Context, value: Any) -> Any:
    """A path argument's callback: a path that does not exist or cannot be read is the first
    thing said (exit 3), before the command checks its options or what the path's name means.
    URLs are the stores' to check (:mod:`.remote_paths`)."""
    if not ctx.resilient_parsing:  # not while completing a command line
        require_paths([value] if isinstance(value, str) else value or ())
    return value


def require_paths(paths: Iterable[str]) -> None:
    """Exit 3 for the first local path that does not exist or cannot be read."""
    from ..storage.files import require_path

    for path in paths:
        if "://" not in path:
            require_path(path)


def execute_option(what: str) -> Any:
    """``--execute``: every command that writes plans unless given it."""
    return typer.Option(False, "--execute", help=f"{what} (without it: print the plan and "
                        f"change nothing).")


def backup_dir_option() -> Any:
    """``--backup-dir DIR``, for the commands that change or delete files."""
    return typer.Option(None, "--backup-dir", metavar="DIR",
                        help="With --execute: keep a copy of every file changed or deleted "
                        "under DIR, which mirrors the log dir (an existing copy is kept: it "
                        "is older).")


TABLE_HELP = " table: the items as rows (a rich table on a terminal, plain columns when piped)."


def output_option(help: str) -> Any:
    """``-o/--output``, text by default; ``help`` describes the command's other formats."""
    return typer.Option(OutputFormat.text, "--output", "-o", help=help + TABLE_HELP)


def err(message: str) -> None:
    """A diagnostic line on stderr (never on stdout, which carries data)."""
    print(message, file=sys.stderr)


def warn_stranded(commits: Sequence[Any], when: str) -> None:
    """Warn about committed offsets a change leaves outside their partition's log
    (:class:`~pylogctl.groups.stranded_commits.StrandedCommit`): the consumers of those groups
    will meet OFFSET_OUT_OF_RANGE and their auto.offset.reset decides."""
    if not commits:
        return
    err(f"pylogctl: warning: {when} {len(commits)} committed offset"
        f"{'s' if len(commits) > 1 else ''} outside the log (the consumers' auto.offset.reset "
        f"will decide where they resume):")
    for commit in commits:
        err(f"pylogctl:   {commit.describe()}")


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


def bars_allowed() -> bool:
    """Whether progress bars may be drawn on stderr (a terminal, not ``TERM=dumb``)."""
    from ..formatters.color import redraw_allowed

    return redraw_allowed(sys.stderr)


def progress_bar(label: str, total: int, *, in_bytes: bool = True
                 ) -> tuple[Optional[Callable[[int], None]], Optional[Callable[[], None]]]:
    """A rich bar on stderr when it is a terminal (rich honours NO_COLOR), as ``(advance,
    stop)``; ``(None, None)`` when stderr is not a terminal or there is nothing to do."""
    if not bars_allowed() or total <= 0:
        return None, None
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress,
                               TextColumn, TimeRemainingColumn, TransferSpeedColumn)

    columns = ([DownloadColumn(), TransferSpeedColumn()] if in_bytes
               else [MofNCompleteColumn()])
    # stderr lines written while the bar runs (err()) go above it instead of tearing it
    bar = Progress(TextColumn(label), BarColumn(), *columns, TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True, redirect_stdout=False,
                   redirect_stderr=True)
    task = bar.add_task(label, total=total)
    bar.start()
    return (lambda n: bar.advance(task, n)), bar.stop


class _HeldForTerminal(io.StringIO):
    """Output held back until a bar is gone, for the terminal it then goes to: formatters
    ask ``isatty()`` to choose rich tables and colour, and must get the terminal's answer."""

    def isatty(self) -> bool:
        return True


def verbose_option(what: str) -> Any:
    """``-v/--verbose`` for the plans that list only what has something to do."""
    return typer.Option(False, "--verbose", "-v", help=f"text and table: list every {what}, "
                        f"those with nothing to do too (json, ndjson and yaml always do).")


# formats for a person to read: a plan there lists only what has something to do
_READ_FORMATS = ("text", "table")


def write_sections(output: str, make_sections: Callable[[Optional[Callable[[int], None]]],
                                                        Iterable[S]],
                   label: str, total: int, *, in_bytes: bool = True,
                   idle: Optional[Callable[[S], bool]] = None, what: str = "partition"
                   ) -> list[S]:
    """Stream the sections ``make_sections(advance)`` yields to stdout in the ``output``
    format, with a progress bar on stderr when it is a terminal; returns the sections.

    With ``idle``, text and table leave out the sections it says have nothing to do and end
    with one line counting them (on stderr for a table, whose rows stay rows): a plan over
    thousands of partitions shows the few that matter. The other formats keep every section.

    When stdout is a terminal too, the bar and the results would overwrite each other, so the
    results are held back and follow the bar.
    """
    from ..formatters import get_formatter

    done: list[S] = []
    hidden = 0
    advance, stop = progress_bar(label, total, in_bytes=in_bytes)
    out: Any = _HeldForTerminal() if stop is not None and sys.stdout.isatty() else sys.stdout
    if output not in _READ_FORMATS:
        idle = None

    def sections() -> Iterator[S]:
        nonlocal hidden
        shown = False
        for section in make_sections(advance):
            done.append(section)
            if idle is not None and idle(section):
                hidden += 1
                continue
            shown = True
            yield section
        if not shown and hidden and output == "table":  # a table keeps its header line
            hidden -= 1
            yield done[0]

    try:
        get_formatter(output).write(sections(), out)
    finally:
        if stop is not None:
            stop()
    if hidden:
        line = (f"{hidden:,} of {len(done):,} {what}{'' if len(done) == 1 else 's'}: nothing "
                f"to do (-v lists them)\n")
        (sys.stderr if output == "table" else out).write(line)
    if out is not sys.stdout:
        sys.stdout.write(out.getvalue())
    sys.stdout.flush()
    return done


def write_listing(output: str, *sections: Any, keyed: bool = False) -> None:
    """Rows for the ``output`` format on stdout: ``sections`` as a
    :class:`~pylogctl.formatters.Listing`."""
    from ..formatters import Listing, get_formatter

    get_formatter(output).write(Listing(sections, keyed), sys.stdout)
