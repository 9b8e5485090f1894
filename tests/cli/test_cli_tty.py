"""The interactive experience, for real: the installed ``pylogctl`` in a pseudo-terminal
(120x40, TERM=xterm-256color, no NO_COLOR) shows colour, rich tables and progress bars; the
same commands with pipes show none of them.

The log dir is the sample plus a 40 MiB partition (enough for dump-segment's bar, which
starts at 32 MiB) and a few committed offsets in ``__consumer_offsets``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from groups_support import OffsetsLog  # noqa: E402
from pylogctl.format.builder import RecordBatchBuilder  # noqa: E402

BIG_BYTES = 40 << 20
BAR = "━"  # rich's bar
BOX = "─"  # the rule under a rich table's header (and help panels' borders)
ERASE_LINE = "\x1b[2K"
SGR = re.compile(r"\x1b\[([0-9;]*)m")
GROUPS = 5
PYLOGCTL = shutil.which("pylogctl", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(PYLOGCTL is None, reason="the pylogctl console script is not "
                                "installed next to this interpreter (pip install -e .)")


def colour_codes(text: str) -> list[str]:
    """The SGR sequences in ``text`` that set a colour (bold, dim and resets are not)."""
    found = []
    for match in SGR.finditer(text):
        params = [int(p) for p in match.group(1).split(";") if p]
        if any(p in (38, 48) or 30 <= p <= 37 or 40 <= p <= 47 or 90 <= p <= 97
               or 100 <= p <= 107 for p in params):
            found.append(match.group(0))
    return found


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
                        "COLUMNS", "LINES", "PYLOGCTL_DEBUG")}
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def in_pty(args: list[str], redirect: str = "", **env: str) -> str:
    """Everything the terminal receives from ``pylogctl args`` (``redirect``: shell
    redirections, e.g. of stdout to a file, leaving stderr on the terminal)."""
    command = shlex.join([PYLOGCTL, *args]) + (" " + redirect if redirect else "")
    child = pexpect.spawn("/bin/sh", ["-c", command], env=_env(**env), dimensions=(40, 120),
                          encoding="utf-8", codec_errors="replace", timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return child.before


def piped(args: list[str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([PYLOGCTL, *args], capture_output=True, text=True, env=_env(),
                            timeout=60)
    assert result.returncode == 0, result.stderr
    return result


@dataclass(frozen=True)
class Data:
    root: Path
    big_log: Path
    big_records: int


def _big_partition(part: Path) -> int:
    """A 40 MiB segment: 16 distinct batches repeated with consecutive base offsets (the base
    offset is outside the CRC, so patching it keeps every batch valid). Returns records."""
    part.mkdir()
    value = bytes(range(32, 127)) * 11
    batches = []
    for i in range(16):
        builder = RecordBatchBuilder(base_offset=0)
        for j in range(16):
            builder.append(1_700_000_000_000 + j, b"key-%05d" % (i * 16 + j), value)
        batches.append(builder.build())
    out = bytearray()
    offset = 0
    while len(out) < BIG_BYTES:
        batch = bytearray(batches[(offset // 16) % 16])
        struct.pack_into(">q", batch, 0, offset)
        out += batch
        offset += 16
    (part / "00000000000000000000.log").write_bytes(out)
    return offset


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Data:
    root = tmp_path_factory.mktemp("tty") / "logs"
    subprocess.run([PYLOGCTL, "sample", str(root)], check=True, capture_output=True)
    records = _big_partition(root / "big-0")
    offsets = OffsetsLog(root, 0)
    for g in range(GROUPS):
        offsets.commit(f"group-{g}", {("big", 0): 100 * g, ("orders", 0): 1})
    sample_records = 19  # orders-0 of `pylogctl sample`, control records included
    return Data(root, root / "big-0" / "00000000000000000000.log",
                records + sample_records + 2 * GROUPS)


def _tables(d: Data) -> dict[str, list[str]]:
    return {
        "config": ["config", str(d.root), "--topic", "orders"],
        "stats": ["stats", str(d.root / "orders-0")],
        "scan": ["scan", "-o", "table", str(d.root / "orders-0")],
        "consumer-groups": ["consumer-groups", "--describe", "--group", "group-1", "-o",
                            "table", str(d.root)],
    }


TABLES = ("config", "stats", "scan", "consumer-groups")


# -- colour and tables ---------------------------------------------------------------------

def test_help_is_coloured_on_a_terminal_only() -> None:
    assert colour_codes(in_pty(["--help"]))
    assert colour_codes(in_pty(["dump-segment", "--help"]))
    assert "\x1b" not in piped(["--help"]).stdout
    assert not colour_codes(in_pty(["--help"], NO_COLOR="1"))


@pytest.mark.parametrize("name", TABLES)
def test_tables_are_rich_on_a_terminal(data: Data, name: str) -> None:
    screen = in_pty(_tables(data)[name], redirect="2>/dev/null")
    assert "\x1b[" in screen and BOX in screen


@pytest.mark.parametrize("name", TABLES)
def test_tables_are_plain_in_pipes(data: Data, name: str) -> None:
    result = piped(_tables(data)[name])
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and BOX not in stream and BAR not in stream
    assert result.stdout.strip()


@pytest.mark.parametrize("name", ("config", "consumer-groups"))
def test_no_color_tables_have_no_colour(data: Data, name: str) -> None:
    assert not colour_codes(in_pty(_tables(data)[name], NO_COLOR="1"))


# -- progress bars -------------------------------------------------------------------------

def _long(d: Data) -> dict[str, tuple[list[str], str, str]]:
    """Operations that read much: ``(args, the bar's label, text of the results)``."""
    root = str(d.root)
    return {
        "scan-count": (["scan", "--count", root], "counting", f"{d.big_records}\r\n"),
        "stats": (["stats", root], "reading", "big"),
        "describe": (["consumer-groups", "--describe", "--all-groups", root],
                     "reading __consumer_offsets", "group-4"),
        "list": (["consumer-groups", "--list", root], "reading __consumer_offsets",
                 "group-0\r\ngroup-1"),
        "reset-offsets": (["consumer-groups", "--reset-offsets", "--group", "group-1",
                           "--topic", "orders", "--to-earliest", root],
                          "reading __consumer_offsets", "NEW-OFFSET"),
        "recover": (["recover", root], "planning partitions", "big-0"),
    }


LONG = ("scan-count", "stats", "describe", "list", "reset-offsets", "recover")


def _after_bar(screen: str, label: str) -> str:
    """What the terminal got after the bar's last frame, checking the bar was erased."""
    assert label in screen and BAR in screen
    last = screen.rindex(BAR)
    rest = screen[last:]
    assert ERASE_LINE in rest, "the bar was left on the screen"
    return rest[rest.index(ERASE_LINE):]


@pytest.mark.parametrize("name", LONG)
def test_long_operations_show_a_bar_that_goes_before_the_results(data: Data,
                                                                 name: str) -> None:
    args, label, results = _long(data)[name]
    assert results in _after_bar(in_pty(args), label)


@pytest.mark.parametrize("name", ("scan-count", "stats", "describe"))  # one bar for all
def test_no_bar_in_pipes(data: Data, name: str) -> None:
    args, label, _ = _long(data)[name]
    result = piped(args)
    assert BAR not in result.stderr and "\x1b" not in result.stderr + result.stdout
    assert label not in result.stderr


def test_no_color_bar_has_no_colour(data: Data) -> None:
    args = ["scan", "--count", str(data.root)]
    assert colour_codes(in_pty(args))
    screen = in_pty(args, NO_COLOR="1")
    assert BAR in screen and not colour_codes(screen)


@pytest.mark.parametrize("name", ("scan-count", "describe"))
def test_a_dumb_terminal_gets_no_bar_and_no_escapes(data: Data, name: str) -> None:
    """TERM=dumb (an Emacs shell, a serial console) cannot redraw a line."""
    args, label, results = _long(data)[name]
    screen = in_pty(args, TERM="dumb")
    assert BAR not in screen and label not in screen and "\x1b" not in screen
    assert results in screen


def test_dump_segment_bar_on_stderr_while_stdout_goes_to_a_file(data: Data,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "dump.txt"
    unknown = tmp_path / "notes.txt"
    unknown.write_text("not a Kafka file\n")
    screen = in_pty(["dump-segment", str(data.big_log), str(unknown), str(data.big_log)],
                    redirect=f"> {shlex.quote(str(out))}")
    _after_bar(screen, "dumping")
    # a diagnostic written while the bar runs is printed above it, on a line of its own
    line = next(l for l in screen.split("\n") if "Ignoring unknown file" in l)
    assert BAR not in line.rsplit(ERASE_LINE, 1)[-1]
    text = out.read_text()
    assert "\x1b" not in text and BAR not in text
    assert text.count("baseOffset: 0 lastOffset: 15 ") == 2


def test_dump_segment_to_the_terminal_streams_without_a_bar(data: Data) -> None:
    screen = in_pty(["dump-segment", str(data.big_log)])
    assert BAR not in screen and "baseOffset: 0 lastOffset: 15 " in screen


def test_results_held_behind_a_bar_keep_their_terminal_layout(data: Data) -> None:
    """With a bar on the terminal, recover holds its output until the bar is gone; it is
    laid out for the terminal all the same (a rich table, as without the bar)."""
    args = ["recover", "-o", "table", str(data.root / "orders-0")]
    without_bar = in_pty(args, redirect="2>/dev/null")
    assert "\x1b[" in without_bar
    assert without_bar in _after_bar(in_pty(args), "planning partitions")
