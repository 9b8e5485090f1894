"""Every subcommand with ``-o`` takes every format, on ``pylogctl sample``'s log dir.

Piped output is parseable (json, ndjson, yaml) and never holds an ANSI escape; ``--no-color``
turns a terminal's rich table into the plain one.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pylogctl.cli.app import main
from pylogctl.formatters import FORMATS
from pylogctl.tools.sample import write_sample_log_dir

SEGMENT = "orders-0/00000000000000000000.log"

# (name, arguments after the command; "{dir}" is the sample log dir)
COMMANDS = [
    ("dump-segment", ["dump-segment", "--deep-iteration", "--print-data-log",
                      f"{{dir}}/{SEGMENT}"]),
    ("dump-segment-partition", ["dump-segment", "{dir}/orders-0"]),
    ("dump-segment-log-dir", ["dump-segment", "{dir}"]),
    ("scan", ["scan", "{dir}"]),
    ("scan-count", ["scan", "{dir}", "--count"]),
    ("stats", ["stats", "{dir}"]),
    ("consumer-groups-list", ["consumer-groups", "{dir}", "--list"]),
    ("consumer-groups-describe", ["consumer-groups", "{dir}", "--describe", "--all-groups"]),
    ("config", ["config", "{dir}"]),
    ("compact", ["compact", "{dir}"]),
    ("rebuild-index", ["rebuild-index", "{dir}"]),
    ("recover", ["recover", "{dir}"]),
    ("retention", ["retention", "{dir}"]),
    ("truncate", ["truncate", "{dir}/orders-0", "--to-offset", "5"]),
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sample")
    write_sample_log_dir(str(root))
    return root


@pytest.fixture(autouse=True)
def no_colour_env(monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "")  # unset in effect; restored after --no-color sets it


def _args(args: list[str], sample: Path) -> list[str]:
    return [a.replace("{dir}", str(sample)) for a in args]


def _parse(fmt: str, out: str) -> object:
    if fmt == "json":
        return json.loads(out)
    if fmt == "ndjson":
        return [json.loads(line) for line in out.splitlines()]
    return yaml.safe_load(out)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name, args", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_takes_every_format(cli, sample, name, args, fmt):
    r = cli(*_args(args, sample), "-o", fmt)
    assert r.code == 0, r.err
    assert "\x1b" not in r.out and "\x1b" not in r.err
    if fmt in ("json", "ndjson", "yaml"):
        _parse(fmt, r.out)
    elif not name.startswith("consumer-groups"):  # the sample has no groups
        assert r.out.strip()


def test_table_shows_a_dump_as_header_rows_and_footer(cli, sample):
    r = cli("dump-segment", sample / SEGMENT, "-o", "table")
    assert r.code == 0, r.err
    lines = r.lines
    assert lines[:3] == [f"file: {sample / SEGMENT}", "type: log", "logStartOffset: 0"]
    assert lines[3].split()[:3] == ["baseOffset", "lastOffset", "count"]
    batches = json.loads(cli("dump-segment", sample / SEGMENT, "-o", "json").out)[0]["batches"]
    assert [line.split()[0] for line in lines[4:4 + len(batches)]] == [
        str(b["baseOffset"]) for b in batches]
    assert lines[4 + len(batches)] == "validBytes: 1459"


def test_scan_text_is_the_plain_table_and_counts_in_every_format(cli, sample):
    table = cli("scan", sample, "-o", "table")
    assert cli("scan", sample, "-o", "text").out == table.out
    assert table.lines[0].split() == ["TOPIC", "PARTITION", "OFFSET", "TIMESTAMP", "KEY", "VALUE"]
    rows = _parse("yaml", cli("scan", sample, "-o", "yaml").out)
    assert rows == json.loads(cli("scan", sample, "-o", "json").out)
    assert len(table.lines) == len(rows) + 1
    n = len(rows)
    assert cli("scan", sample, "--count", "-o", "text").out == f"{n}\n"
    assert _parse("yaml", cli("scan", sample, "--count", "-o", "yaml").out) == {"count": n}


def test_stats_yaml_is_the_json_document_and_ndjson_tags_rows(cli, sample):
    document = json.loads(cli("stats", sample, "-o", "json").out)
    assert _parse("yaml", cli("stats", sample, "-o", "yaml").out) == document
    lines = _parse("ndjson", cli("stats", sample, "-o", "ndjson").out)
    assert lines == [{"type": "partition", **p} for p in document["partitions"]] + [
        {"type": "group", **g} for g in document["groups"]]
    assert cli("stats", sample, "-o", "text").out == cli("stats", sample, "-o", "table").out


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _on_terminal(*args: str) -> str:
    """Run in-process with stdout a terminal (to formatters that ask ``isatty()``)."""
    out, real = Tty(), sys.stdout
    sys.stdout = out
    try:
        with pytest.raises(SystemExit) as exit_:
            main(list(args))
    finally:
        sys.stdout = real
    assert exit_.value.code == 0
    return out.getvalue()


def test_no_color_makes_a_terminal_table_plain(cli, sample, monkeypatch):
    args = ("stats", str(sample), "-o", "table")
    plain = cli(*args).out
    monkeypatch.setenv("NO_COLOR", "")
    monkeypatch.setenv("TERM", "xterm")
    rich = _on_terminal(*args)
    assert "\x1b[" in rich and rich != plain
    assert _on_terminal("--no-color", *args) == plain
    assert os.environ["NO_COLOR"] == "1"


def test_piped_output_has_no_escapes_even_with_force_color(sample):
    """Real pipes, a fresh process: FORCE_COLOR makes rich style what it writes, so nothing
    rich may write to stdout when stdout is not a terminal."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env.update(FORCE_COLOR="1", TERM="xterm-256color")
    for args in (["stats", str(sample)], ["dump-segment", str(sample), "-o", "table"],
                 ["config", str(sample)], ["--no-color", "scan", str(sample)]):
        proc = subprocess.run([sys.executable, "-m", "pylogctl", *args], capture_output=True,
                              text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout and "\x1b" not in proc.stdout, args
