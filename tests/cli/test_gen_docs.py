"""Shell completions and man pages: checked in, fresh, complete, and working in real shells.

The generator is ``pylogctl.cli.docs``; when a command or option changes, the freshness test
fails and says to run ``python -m pylogctl.cli.gen_docs``.
"""

from __future__ import annotations

import enum
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List, Optional

import pytest
import typer
import typer.main
from typer._click.core import Context

from support import REPO
from pylogctl.cli.docs import completion_scripts, man_pages
from pylogctl.cli.docs import generate as gen_docs
from pylogctl.cli.app import app

BASH, ZSH, FISH = (REPO / gen_docs.BASH, REPO / gen_docs.ZSH, REPO / gen_docs.FISH)
REGENERATE = f"run `{gen_docs.REGENERATE}` from the repository root and commit the result"


def _live_tree(app: typer.Typer = app) -> Iterator[tuple[tuple[str, ...], Any, Context]]:
    """(path, command, context) for pylogctl and every visible subcommand, straight from
    click (independent of the generator's own reader)."""
    def walk(cmd: Any, ctx: Context, path: tuple[str, ...]):
        yield path, cmd, ctx
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    yield from walk(sub, Context(sub, info_name=name, parent=ctx,
                                                 **sub.context_settings), path + (name,))
    root = typer.main.get_command(app)
    yield from walk(root, Context(root, info_name="pylogctl", **root.context_settings), ())


def _options(cmd: Any, ctx: Context) -> list[str]:
    return [n for p in cmd.get_params(ctx) if p.param_type_name == "option"
            and not getattr(p, "hidden", False) for n in list(p.opts) + list(p.secondary_opts)]


LIVE = list(_live_tree())
SUBCOMMANDS = [path for path, _, _ in LIVE if path]


def _shell(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (apt-get install {name}); the {name} script is "
                    f"still checked for content above")
    return exe


def _run_bash(script: str, cwd: Path) -> str:
    proc = subprocess.run([_shell("bash"), "--norc", "--noprofile", "-c", script], cwd=cwd,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _bash_complete(lines: list[str], cwd: Path, script: Path = BASH) -> list[list[str]]:
    """What TAB offers at the end of each command line, via the real bash and the script's
    ``complete -F`` function (COMP_WORDS split as bash splits them, ``=`` included)."""
    calls = []
    for line in lines:
        words = line.replace("=", " = ").split(" ")
        calls.append(f"t {' '.join(shlex.quote(w) for w in words)}")
    out = _run_bash(f"""
source {shlex.quote(str(script))}
spec=$(complete -p pylogctl); fn=${{spec##*-F }}; fn=${{fn%% *}}
t() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=(); "$fn";
      printf '%s\\n' "${{COMPREPLY[*]}}"; }}
{chr(10).join(calls)}
""", cwd)
    return [ln.split() for ln in out.splitlines()]


# --- freshness ----------------------------------------------------------------------------

def test_checked_in_completions_and_man_pages_are_fresh(capsys) -> None:
    code = gen_docs.main(["--check", str(REPO)])
    assert code == 0, f"completions/man pages are stale: {REGENERATE}\n{capsys.readouterr().err}"


@pytest.mark.parametrize("seed", ["0", "1", "2"])
def test_generated_files_do_not_depend_on_the_hash_seed(seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    proc = subprocess.run([sys.executable, "-m", "pylogctl.cli.gen_docs", "--check", str(REPO)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{proc.stderr}\n({REGENERATE})"


def test_check_lists_stale_and_removed_files_and_regenerating_fixes_them(tmp_path: Path,
                                                                       capsys) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    assert gen_docs.main([str(tmp_path)]) == 0
    assert gen_docs.main(["--check", str(tmp_path)]) == 0
    (tmp_path / gen_docs.BASH).write_text("stale\n")
    (tmp_path / "man" / "pylogctl-gone.1").write_text("old\n")
    capsys.readouterr()
    assert gen_docs.main(["--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert gen_docs.BASH in err and "man/pylogctl-gone.1" in err
    assert gen_docs.REGENERATE in err
    assert (tmp_path / gen_docs.BASH).read_text() == "stale\n"  # --check writes nothing
    assert gen_docs.main([str(tmp_path)]) == 0
    assert not (tmp_path / "man" / "pylogctl-gone.1").exists()
    assert gen_docs.main(["--check", str(tmp_path)]) == 0


def test_generator_refuses_a_directory_that_is_not_the_project(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        gen_docs.main([str(tmp_path)])
    assert exc.value.code == 2
    assert not (tmp_path / "completions").exists()


# --- completeness against the live command tree -------------------------------------------

def _bash_block(path: tuple[str, ...]) -> str:
    """The bash script's ``_pylogctl_spec`` entry for one command path."""
    spec = BASH.read_text().split("_pylogctl_spec() {")[1]
    return spec.split(f"\n        {completion_scripts._sh(' '.join(path))})\n")[1].split(";;")[0]


@pytest.mark.parametrize("path", SUBCOMMANDS, ids=" ".join)
def test_every_subcommand_is_in_each_script_and_has_a_man_page(path: tuple[str, ...]) -> None:
    name = path[-1]
    assert name in _bash_block(path[:-1]).split("subs='")[1].split("'")[0].split()
    assert f"({name}) " in ZSH.read_text() and f"'{name}:" in ZSH.read_text()
    assert f" -a '{name}' -d " in FISH.read_text()
    page = REPO / "man" / f"pylogctl-{'-'.join(path)}.1"
    assert page.is_file(), f"no man page {page.name}: {REGENERATE}"
    parent = REPO / "man" / f"{'-'.join(('pylogctl',) + path[:-1])}.1"
    assert f".BR {man_pages.roff(page.stem)} (1)" in parent.read_text()


@pytest.mark.parametrize("path,cmd,ctx", LIVE, ids=[" ".join(p) or "pylogctl" for p, _, _ in LIVE])
def test_every_option_is_in_each_script_and_in_the_man_page(path, cmd, ctx) -> None:
    page = (REPO / "man" / f"{'-'.join(('pylogctl',) + path)}.1").read_text()
    bash_opts = _bash_block(path).split("opts='")[1].split("'")[0].split()
    zsh, fish = ZSH.read_text(), FISH.read_text()
    fish_cond = f"complete -c pylogctl -n '__pylogctl_at {' '.join(('pylogctl',) + path)}' "
    options = _options(cmd, ctx)
    assert "--help" in options
    for opt in options:
        assert opt in bash_opts, opt
        assert f"{opt}[" in zsh or f"{opt}=[" in zsh or f"{opt}+[" in zsh, opt
        fish_name = f"-l {opt[2:]}" if opt.startswith("--") else f"-s {opt[1:]}"
        assert any(ln.startswith(fish_cond) and f" {fish_name} " in ln
                   for ln in fish.splitlines()), opt
        assert f"\\fB{man_pages.roff(opt)}\\fR" in page, opt


def test_output_choices_and_decoder_options_take_values() -> None:
    """Choice options complete their values; valued options are told apart from flags."""
    vopts = _bash_block(("dump-segment",)).split("vopts='")[1].split("'")[0].split()
    assert {"--key-decoder", "--value-decoder", "--max-bytes", "--files", "-o"} <= set(vopts)
    assert "--deep-iteration" not in vopts
    assert "-s o -l output -r -f -a 'text table json ndjson yaml'" in FISH.read_text()
    assert "--key-decoder=[" in ZSH.read_text() and "--deep-iteration[" in ZSH.read_text()


# --- the scripts in real shells -----------------------------------------------------------

def test_bash_script_parses_and_registers_a_completion_function(tmp_path: Path) -> None:
    subprocess.run([_shell("bash"), "-n", str(BASH)], check=True, timeout=60)
    out = _run_bash(f"source {shlex.quote(str(BASH))}; complete -p pylogctl", tmp_path)
    assert out.strip() == "complete -F _pylogctl pylogctl"


def test_bash_completes_subcommands_options_values_and_paths(tmp_path: Path) -> None:
    (tmp_path / "logs" / "orders-0").mkdir(parents=True)
    (tmp_path / "logs" / "00000000000000000000.log").write_bytes(b"")
    got = _bash_complete([
        "pylogctl dump",
        "pylogctl dump-segment --out",
        "pylogctl dump-segment -o ",
        "pylogctl dump-segment --output=j",
        "pylogctl --debug dump-segment --deep-iteration --max-bytes 10 logs/0",
        "pylogctl dump-segment --max-bytes ",
        "pylogctl dump-segment --files logs/",
        "pylogctl sample logs/",
    ], tmp_path)
    assert got[0] == ["dump-segment"]
    assert got[1] == ["--output"]
    assert got[2] == ["text", "table", "json", "ndjson", "yaml"]
    assert got[3] == ["json"]
    assert got[4] == ["logs/00000000000000000000.log"]
    assert got[5] == []  # a number: nothing to offer, and no option names
    assert sorted(got[6]) == ["logs/00000000000000000000.log", "logs/orders-0"]
    assert got[7] == ["logs/orders-0"]  # sample takes a directory


def test_bash_completes_every_subcommand_and_option_of_the_live_tree(tmp_path: Path) -> None:
    lines, want = [], []
    for path, cmd, ctx in LIVE:
        prefix = " ".join(("pylogctl",) + path)
        if path:
            lines.append(" ".join(("pylogctl",) + path[:-1] + (path[-1][:-1],)))
            want.append(path[-1])
        for opt in _options(cmd, ctx):
            lines.append(f"{prefix} {opt}")
            want.append(opt)
    for line, offered, expected in zip(lines, _bash_complete(lines, tmp_path), want):
        assert expected in offered, f"{line!r}<TAB> offered {offered}"


def test_zsh_script_parses() -> None:
    subprocess.run([_shell("zsh"), "-n", str(ZSH)], check=True, timeout=60)


def test_fish_script_parses_and_completes(tmp_path: Path) -> None:
    fish = _shell("fish")
    subprocess.run([fish, "-n", str(FISH)], check=True, timeout=60)
    (tmp_path / "sub").mkdir()
    script = f"""
function pylogctl; end
source {shlex.quote(str(FISH))}
for l in 'pylogctl dump' 'pylogctl dump-segment --out' 'pylogctl dump-segment -o ' 'pylogctl sample s'
    complete -C "$l" | string replace -r '\\t.*' '' | string join ' '
end
true"""
    proc = subprocess.run([fish, "--no-config", "-c", script], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["dump-segment", "--output", "json ndjson table text yaml",
                                        "sub/"]


# --- man pages ----------------------------------------------------------------------------

MAN_PAGES = sorted((REPO / "man").glob("pylogctl*.1"))


@pytest.mark.parametrize("page", MAN_PAGES, ids=lambda p: p.name)
def test_man_page_has_the_standard_sections_and_no_date(page: Path) -> None:
    text = page.read_text()
    th = next(ln for ln in text.splitlines() if ln.startswith(".TH "))
    assert th.endswith(f' 1 "" "pylogctl {man_pages.__version__}" "pylogctl manual"')
    for section in ("NAME", "SYNOPSIS", "OPTIONS", "EXIT STATUS", "SEE ALSO"):
        assert f"\n.SH {section}\n" in text, section
    assert all(ord(ch) < 128 for ch in text)
    assert not [ln for ln in text.splitlines() if ln[:1] == "'" or
                (ln[:1] == "." and not ln[1:2].isupper() and not ln.startswith('.\\"'))]


@pytest.mark.parametrize("path", [p for p, _, _ in LIVE], ids=lambda p: " ".join(p) or "pylogctl")
def test_man_page_names_its_docs_page_under_see_also(path: tuple[str, ...]) -> None:
    """pylogctl(1) names the README and the docs index; every other page its command's page
    under docs/commands/ (metadata ls shares metadata's), which exists."""
    page = REPO / "man" / f"{'-'.join(('pylogctl',) + path)}.1"
    docs = [f"docs/commands/{path[0]}.md"] if path else ["README.md", "docs/README.md"]
    see_also = page.read_text().split("\n.SH SEE ALSO\n")[1].replace("\n", " ")
    for doc in docs:
        assert (REPO / doc).is_file(), doc
        assert man_pages.roff(doc) in see_also, f"{page.name} does not name {doc}"


@pytest.mark.parametrize("page", MAN_PAGES, ids=lambda p: p.name)
def test_man_page_renders_without_groff_warnings(page: Path) -> None:
    groff = shutil.which("groff")
    if groff is None:
        pytest.skip("groff is not installed (apt-get install groff-base)")
    proc = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(page)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.parametrize("page", MAN_PAGES, ids=lambda p: p.name)
def test_man_page_passes_mandoc_lint(page: Path) -> None:
    """Everything but the empty date, which is deliberate: a date would change the checked-in
    file on every regeneration."""
    mandoc = shutil.which("mandoc")
    if mandoc is None:
        pytest.skip("mandoc is not installed (apt-get install mandoc)")
    proc = subprocess.run([mandoc, "-T", "lint", "-W", "all", str(page)],
                          capture_output=True, text=True, timeout=60)
    problems = [ln for ln in (proc.stdout + proc.stderr).splitlines()
                if ln and "missing date" not in ln]
    assert problems == []


def test_roff_escapes_requests_backslashes_hyphens_and_non_ascii() -> None:
    assert man_pages.roff("--max-bytes") == "\\-\\-max\\-bytes"
    assert man_pages.roff("a\\b") == "a\\eb"
    assert man_pages.roff("\u00fc \u2014") == "\\[u00FC] \\[u2014]"
    assert man_pages._lines(".log files") == ["\\&.log files"]
    assert man_pages._lines("'quoted'") == ["\\&'quoted'"]
    assert all(len(ln) < 80 for ln in man_pages._lines("word " * 100))


def test_exit_status_comes_from_the_app_exit_code_text() -> None:
    text = (REPO / "man" / "pylogctl.1").read_text()
    status = text.split(".SH EXIT STATUS\n")[1].split(".SH ")[0]
    assert ".B 0\n" in status and ".B 2\n" in status
    assert man_pages.roff("usage error") in status
    description = text.split(".SH DESCRIPTION\n")[1].split(".SH ")[0]
    assert man_pages.roff("usage error") not in description  # said once, under EXIT STATUS


# --- commands yet to come: groups, path types, enums, repeatable and negatable options --------

class _Mode(str, enum.Enum):
    fast = "fast"
    safe = "safe"


def _future_app() -> typer.Typer:
    future = typer.Typer(name="pylogctl", add_completion=False, rich_markup_mode="rich",
                         help="Root.\n\nExit codes: 0 ok; 1 bad.",
                         context_settings={"help_option_names": ["-h", "--help"]})
    groups = typer.Typer(help="Consumer groups.")
    future.add_typer(groups, name="consumer-groups")

    @future.command("recover")
    def recover(log_dir: Path = typer.Argument(..., file_okay=False, help="The log dir."),
                mode: _Mode = typer.Option(_Mode.safe, "--mode", "-m",
                                           help="[bold]How[/bold]: it's fast\\slow ]."),
                dry_run: bool = typer.Option(True, "--dry-run/--no-dry-run", help="Say only."),
                topic: List[str] = typer.Option([], "--topic", "-t", help="Repeatable."),
                config: Optional[Path] = typer.Option(None, "--config", dir_okay=False),
                secret: str = typer.Option("", "--secret", hidden=True)) -> None:
        """Recover a log dir."""

    @groups.command("list")
    def list_groups(state: _Mode = typer.Argument(_Mode.fast)) -> None:
        """List groups."""

    return future


def test_generator_follows_groups_path_types_enums_and_hidden_options(tmp_path: Path) -> None:
    files = gen_docs.generate(_future_app(), "Exit codes: 0 ok; 1 bad.")
    assert "man/pylogctl-consumer-groups-list.1" in files
    assert "--secret" not in "".join(files.values())
    page = files["man/pylogctl-recover.1"]
    assert "How: it's fast\\eslow ]. [default: safe]" in page  # markup rendered, \ escaped
    assert "\\fB\\-\\-dry\\-run\\fR, \\fB\\-\\-no\\-dry\\-run\\fR" in page
    assert "Exit codes" not in page and ".B 1\nbad" in page
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "d").mkdir()
    (tmp_path / "f.txt").write_text("")
    got = _bash_complete(["pylogctl consumer-groups ", "pylogctl consumer-groups list ",
                          "pylogctl recover ", "pylogctl recover -m ", "pylogctl recover -t x ",
                          "pylogctl recover --config f", "pylogctl recover --no"],
                         tmp_path, tmp_path / gen_docs.BASH)
    assert [sorted(g) for g in got] == [["list"], ["fast", "safe"], ["completions", "d", "man"],
                                        ["fast", "safe"], ["completions", "d", "man"], ["f.txt"],
                                        ["--no-dry-run"]]
    if shutil.which("zsh"):
        subprocess.run(["zsh", "-n", str(tmp_path / gen_docs.ZSH)], check=True, timeout=60)
    if shutil.which("fish"):
        subprocess.run(["fish", "-n", str(tmp_path / gen_docs.FISH)], check=True, timeout=60)
