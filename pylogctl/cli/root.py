"""The Typer app behind ``pylogctl``: its global options and a command group that imports a
subcommand's module only when that subcommand is looked up.

:mod:`.app` (the console script's module) loads this on first use of ``app``, so
``pylogctl --version`` never imports typer. Each subcommand module still registers itself on
``app`` with ``@app.command``/``app.add_typer`` when imported; the group turns that registration
into the click command as ``typer.main.get_command`` would have, so help, errors and completion
are the same as with every module imported up front (``pylogctl dump-segment`` used to build
all fourteen commands' parameters before parsing its own).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, MutableMapping
from typing import Any, Optional

import typer
import typer.main
from typer.core import TyperGroup

from .. import __version__
from . import app as _cli
from .app import COMMANDS, EXIT_CODES_HELP, URLS_HELP


class _Commands(MutableMapping):
    """A group's commands by name, in ``COMMANDS`` order: iterating gives the names without
    importing anything; a command's module is imported when its command is first read.

    Commands typer built up front (their modules were already imported) are taken as they are;
    one registered but missing from ``COMMANDS`` still shows up, after the listed ones."""

    def __init__(self, built: dict[str, Any]) -> None:
        self._built = dict(built)
        self._names = list(COMMANDS) + [n for n in built if n not in COMMANDS]

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = _load(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._names:
            self._names.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._names.remove(name)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names


class _LazyGroup(TyperGroup):
    def __init__(self, *, commands: Optional[dict[str, Any]] = None, **attrs: Any) -> None:
        super().__init__(commands=_Commands(commands or {}), **attrs)

    def list_commands(self, ctx: Any) -> list[str]:
        # TyperGroup's reads items(): it would import every subcommand
        return list(self.commands)


def _load(name: str) -> Any:
    """The click command ``name``, from the Typer registration its module makes on import."""
    importlib.import_module(f"{__package__}.{COMMANDS[name]}")
    for info in app.registered_commands:
        assert info.callback is not None
        if (info.name or typer.main.get_command_name(info.callback.__name__)) == name:
            return typer.main.get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode)
    for group in app.registered_groups:
        if group.name == name:
            return typer.main.get_group_from_info(
                group, pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode, suggest_commands=app.suggest_commands)
    raise LookupError(f"pylogctl.cli.{COMMANDS[name]} registered no command {name!r}")


app = typer.Typer(
    name="pylogctl",
    help="Inspect and repair Apache Kafka log directories offline.\n\n" + URLS_HELP + "\n\n"
    + EXIT_CODES_HELP,
    rich_markup_mode="rich",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    cls=_LazyGroup,
)


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
    _cli._debug = debug or bool(os.environ.get("PYLOGCTL_DEBUG"))
