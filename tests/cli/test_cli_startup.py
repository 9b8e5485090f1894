"""Start-up: what the CLI imports, checked through ``sys.modules`` in a fresh process (never by
timing). ``pylogctl --version`` loads no typer, a subcommand loads its own module and not the
others', and the tables that make this possible agree with what they stand for.
"""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from pylogctl.cli import app as cli_app
from pylogctl.format.builder import RecordBatchBuilder

# loaded by some subcommands, never by the CLI's start-up or a dump
HEAVY = ("typer", "rich", "yaml", "kio", "pyspark", "pyarrow", "pylogctl.broker",
         "pylogctl.pipeline", "pylogctl.groups")
SUBCOMMAND_MODULES = {f"pylogctl.cli.{m}" for m in cli_app.COMMANDS.values()}


def _modules_after(code: str, *args: str) -> dict:
    """Run ``code`` (which may exit) in a fresh interpreter; its stdout, exit code and the
    modules then loaded."""
    script = ("import atexit, json, sys\n"
              "atexit.register(lambda: sys.__stderr__.write('\\nMODULES ' + "
              "json.dumps(sorted(sys.modules)) + '\\n'))\n" + code)
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    err, _, modules = proc.stderr.rpartition("\nMODULES ")
    assert modules, proc.stderr
    return {"code": proc.returncode, "out": proc.stdout, "err": err,
            "modules": set(json.loads(modules))}


def _loaded(modules: set[str], prefixes) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_importing_the_entry_point_loads_nothing_else():
    run = _modules_after("import pylogctl.cli.app")
    assert run["code"] == 0, run["err"]
    assert _loaded(run["modules"], HEAVY + ("click", "pylogctl.tools", "pylogctl.format",
                                            "pylogctl.storage", "pylogctl.formatters")) == []
    assert sorted(m for m in run["modules"] if m.startswith("pylogctl.")) == [
        "pylogctl.cli", "pylogctl.cli.app"]


def test_version_does_not_load_typer():
    run = _modules_after("from pylogctl.cli.app import main; main(['--version'])")
    assert (run["code"], run["out"], run["err"]) == (0, f"pylogctl {cli_app.__version__}\n", "")
    assert _loaded(run["modules"], HEAVY + ("click", "pylogctl.errors")) == []


@pytest.mark.parametrize("how", ["fast path", "typer"])
def test_version_answers_as_typer_does(how):
    """The fast path prints what the eager --version option prints, with its exit codes, also
    when stdout is a closed pipe (1, nothing on stderr)."""
    call = ("from pylogctl.cli.app import main; main(['--version'])" if how == "fast path" else
            "from pylogctl.cli.root import app; "
            "app(args=['--version'], prog_name='pylogctl', standalone_mode=True)")
    proc = subprocess.run([sys.executable, "-c", call], capture_output=True, text=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"pylogctl {cli_app.__version__}\n",
                                                           "")
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-c", call], stdout=w, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(w)
    assert (proc.returncode, proc.stderr) == (1, "")


def _segment(tmp_path: Path) -> Path:
    b = RecordBatchBuilder(base_offset=0)
    for i in range(3):
        b.append(1_700_000_000_000 + i, b"k%d" % i, b"v%d" % i)
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(b.build())
    return path


def test_dump_segment_loads_only_its_own_command(tmp_path):
    run = _modules_after("import sys; from pylogctl.cli.app import main; main(sys.argv[1:])",
                         "dump-segment", "--deep-iteration", str(_segment(tmp_path)))
    assert run["code"] == 0, run["err"]
    assert "baseOffset: 0 lastOffset: 2 count: 3" in run["out"]
    assert "pylogctl.cli.dump_segment" in run["modules"]
    others = SUBCOMMAND_MODULES - {"pylogctl.cli.dump_segment"}
    assert _loaded(run["modules"], others) == []
    assert _loaded(run["modules"], tuple(h for h in HEAVY if h != "typer")) == []
    # the text formatter loads the other commands' renderers only for their sections
    assert _loaded(run["modules"], ("pylogctl.formatters.consumer_groups_text",
                                    "pylogctl.formatters.recover_text",
                                    "pylogctl.formatters.table")) == []


def test_commands_table_matches_the_modules():
    """``COMMANDS`` lists every command the modules register, each with the module that
    registers it, in the order of ``pylogctl --help``."""
    import pylogctl.cli
    from pylogctl.cli.root import app

    for info in pkgutil.iter_modules(pylogctl.cli.__path__):
        __import__(f"pylogctl.cli.{info.name}")
    registered = {}
    for command in app.registered_commands:
        registered[command.name] = command.callback.__module__
    for group in app.registered_groups:
        modules = {c.callback.__module__ for c in group.typer_instance.registered_commands}
        assert len(modules) == 1
        registered[group.name] = modules.pop()
    assert registered == {name: f"pylogctl.cli.{module}"
                          for name, module in cli_app.COMMANDS.items()}


def test_help_lists_commands_in_table_order(cli):
    res = cli("--no-color", "--help")
    assert res.code == 0
    # a command's row starts "│ name", its wrapped help lines are indented
    names = [line.split()[1] for line in res.lines
             if line.startswith("│ ") and line[2] != " " and line.split()[1] in cli_app.COMMANDS]
    assert names == list(cli_app.COMMANDS)


def test_optional_values_are_dump_segments():
    """The options completed before parsing are dump-segment's, with Kafka's default."""
    import typer.main

    from pylogctl.cli.root import app
    from pylogctl.tools.decoders import DEFAULT_DECODER_CLASS

    group = typer.main.get_command(app)
    command = group.get_command(None, "dump-segment")  # type: ignore[attr-defined]
    flags = {o for p in command.params for o in p.opts}
    assert set(cli_app._OPTIONAL_VALUES) <= flags
    assert set(cli_app._OPTIONAL_VALUES.values()) == {DEFAULT_DECODER_CLASS}


def test_text_formatter_knows_every_kind_it_loads_lazily():
    from pylogctl.formatters import consumer_groups_text, share_groups_text, streams_groups_text
    from pylogctl.formatters import text

    for module in (consumer_groups_text, share_groups_text, streams_groups_text):
        for kind, render in module.SECTION_RENDERERS.items():
            assert text.renderer(kind) is render, kind
    for kind in text._ELSEWHERE:
        assert callable(text.renderer(kind)), kind
    assert text.renderer("no-such-kind") is None
