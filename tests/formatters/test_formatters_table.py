"""``formatters/table.py``: the generic ``table`` output, exact in plain mode."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

import pytest

from pylogctl.formatters import FORMATS, get_formatter
from pylogctl.formatters.table import TableFormatter, TableSection, cell


@dataclass
class Sec:
    """A section as the dump and plan commands build them (footer filled as items go)."""

    kind: str
    header: dict[str, Any]
    rows: list[dict[str, Any]]
    footer: dict[str, Any] = field(default_factory=dict)
    items_key: str = "items"

    @property
    def items(self):
        yield from self.rows


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def plain_env(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def plain(*sections: Any, formatter: Any = None) -> str:
    out = io.StringIO()
    (formatter or TableFormatter()).write(list(sections), out)
    return out.getvalue()


def test_table_is_registered_with_the_other_formats():
    assert FORMATS == ("text", "table", "json", "ndjson", "yaml")
    assert isinstance(get_formatter("table"), TableFormatter)


def test_a_dump_section_is_its_header_then_rows_then_footer():
    log = Sec("log", {"file": "/d/0.log", "type": "log", "logStartOffset": 0}, [
        {"baseOffset": 0, "lastOffset": 2, "isControl": False, "codec": "none",
         "records": [{"offset": 0, "key": "k"}]},
        {"baseOffset": 3, "lastOffset": 12, "isControl": True, "codec": "zstd", "records": []},
    ], {"validBytes": 1459, "error": None})
    assert plain(log) == (
        "file: /d/0.log\n"
        "type: log\n"
        "logStartOffset: 0\n"
        "baseOffset  lastOffset  isControl  codec  records\n"
        "         0           2  false      none   [{\"offset\":0,\"key\":\"k\"}]\n"
        "         3          12  true       zstd   []\n"
        "validBytes: 1459\n"
        "error: -\n")


def test_sections_are_separated_by_a_blank_line_and_nested_header_values_are_json():
    plan = Sec("retention", {"partition": "t-0", "config": {"retention.ms": {"value": "1"}}},
               [{"baseOffset": 0, "size": 10, "reason": "old\nline"}], {"deleted": [0]})
    empty = Sec("unknown", {"file": "x"}, [])
    assert plain(plan, empty) == (
        'partition: t-0\n'
        'config: {"retention.ms":{"value":"1"}}\n'
        'baseOffset  size  reason\n'
        '         0    10  old\\nline\n'
        'deleted: [0]\n'
        '\n'
        'file: x\n')


def test_columns_are_the_union_of_keys_and_a_block_with_new_keys_repeats_the_header():
    rows = [{"a": 1, "b": "x"}, {"a": 22, "b": "yy"}, {"a": 3, "c": None}, {"b": "zzz", "c": 4.5}]
    out = plain(TableSection(rows, block=2))
    assert out == (" a  b\n"
                   " 1  x\n"
                   "22  yy\n"
                   " a  b      c\n"
                   " 3  -      -\n"
                   " -  zzz  4.5\n")


def test_declared_columns_give_an_empty_table_its_header_and_align_text_numbers():
    assert plain(TableSection([], ("NAME", "SIZE"), ("SIZE",))) == "NAME  SIZE\n"
    out = plain(TableSection([{"NAME": "a", "SIZE": "0.5000"}, {"NAME": "bbbbbb", "SIZE": "10"}],
                             ("NAME", "SIZE"), ("SIZE",)))
    assert out == "NAME      SIZE\na       0.5000\nbbbbbb      10\n"


def test_streamed_blocks_only_ever_widen():
    rows = [{"T": "a", "N": 1}, {"T": "b", "N": 2}, {"T": "cccc", "N": 12345}]
    ours = plain(TableSection(rows, ("T", "N"), block=2))
    assert ours == "T  N\na  1\nb  2\ncccc  12345\n"


def test_cells():
    assert [cell(v) for v in (None, True, False, 7, 0.25, "a\tb\x00", "", "é", [1, "x"],
                              {"k": None})] == [
        "-", "true", "false", "7", "0.25", "a\\tb\\x00", "", "é", '[1,"x"]', '{"k":null}']


def test_text_renders_table_sections_as_the_plain_table_even_on_a_terminal():
    sections = [TableSection([{"A": 1}], ("A",)), TableSection([{"B": "x"}], ("B",))]
    out = Tty()
    get_formatter("text").write(sections, out)
    assert out.getvalue() == "A\n1\n\nB\nx\n"


def test_rich_on_a_terminal_plain_without_one_or_when_colour_is_off(monkeypatch):
    section = Sec("log", {"file": "f"}, [{"offset": 1, "value": "v"}])
    tty = Tty()
    TableFormatter().write([section], tty)
    assert "─" in tty.getvalue() and "file: f" in tty.getvalue()
    expected = "file: f\noffset  value\n     1  v\n"
    for name, value in (("NO_COLOR", "1"), ("TERM", "dumb")):
        with monkeypatch.context() as m:
            m.setenv(name, value)
            tty = Tty()
            TableFormatter().write([section], tty)
            assert tty.getvalue() == expected
    assert plain(section) == expected
    assert plain(section, formatter=TableFormatter(rich=False)) == expected


def test_empty_no_color_does_not_count(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "")
    tty = Tty()
    TableFormatter().write([Sec("t", {}, [{"A": 1}])], tty)
    assert "─" in tty.getvalue()


def test_rich_mode_streams_a_table_per_block():
    rows = [{"n": i} for i in range(5)]
    tty = Tty()
    TableFormatter(rich=True).write([TableSection(rows, block=2)], tty)
    text = tty.getvalue()
    assert text.count(" ─── \n") == 3 and all(f"  {i}  " in text for i in range(5))
