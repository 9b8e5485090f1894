"""Listings: what scan, stats and consumer-groups give scripts, through the same formatters
as every section. Each format must parse back to exactly the rows (property-tested), keep
its documented shape when empty, and stream."""

from __future__ import annotations

import io
import json
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pylogctl.formatters import FORMATS, Listing, get_formatter
from pylogctl.formatters.table import TableSection

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
                    st.text(max_size=12))
rows_strategy = st.lists(st.dictionaries(st.text(min_size=1, max_size=6), scalars,
                                         max_size=4), max_size=5)


def lines(text: str) -> list[Any]:
    """NDJSON lines split on newline alone (str.splitlines would also split on U+0085)."""
    return [json.loads(x) for x in text.split("\n")[:-1]]


def render(fmt: str, listing: Listing) -> str:
    out = io.StringIO()
    get_formatter(fmt).write(listing, out)
    return out.getvalue()


def section(rows: list[dict[str, Any]], kind: str = "row", key: str = "rows") -> TableSection:
    return TableSection(iter(rows), kind=kind, items_key=key)


@settings(max_examples=150, deadline=None)
@given(rows_strategy, rows_strategy)
def test_every_script_format_parses_back_to_the_rows(first, second):
    flat = Listing([section(first), section(second)])
    assert json.loads(render("json", flat)) == first + second
    flat = Listing([section(first), section(second)])
    assert (yaml.safe_load(render("yaml", flat)) or []) == first + second
    flat = Listing([section(first), section(second)])
    assert lines(render("ndjson", flat)) == first + second

    def keyed() -> Listing:
        return Listing([section(first, "partition", "partitions"),
                        section(second, "group", "groups")], keyed=True)
    both = {"partitions": first, "groups": second}
    assert json.loads(render("json", keyed())) == both
    assert yaml.safe_load(render("yaml", keyed())) == both
    tagged = lines(render("ndjson", keyed()))
    assert tagged == ([{"type": "partition", **r} for r in first]
                      + [{"type": "group", **r} for r in second])


def test_the_shapes_scripts_see_are_stable():
    rows = [{"group": "g", "lag": 3}, {"group": "h", "lag": None}]
    assert render("json", Listing([section(rows)])) == (
        '[\n  {"group":"g","lag":3},\n  {"group":"h","lag":null}\n]\n')
    assert render("json", Listing([section([])])) == "[]\n"
    assert render("yaml", Listing([section([])])) == "[]\n"
    assert render("ndjson", Listing([section([])])) == ""
    keyed = Listing([section(rows[:1], "partition", "partitions"),
                     section([], "group", "groups")], keyed=True)
    assert render("json", keyed) == '{"partitions":[\n  {"group":"g","lag":3}\n],"groups":[]}\n'
    keyed = Listing([section(rows[:1], "partition", "partitions"),
                     section([], "group", "groups")], keyed=True)
    assert render("yaml", keyed) == "partitions:\n- group: g\n  lag: 3\ngroups: []\n"


def test_tables_of_a_listing_print_their_columns_even_without_rows():
    for fmt in ("table", "text"):
        empty = Listing([TableSection([], ("group", "type", "state"))])
        assert render(fmt, empty) == "group  type  state\n"


def test_rows_stream_before_the_listing_ends():
    """A scan of a whole cluster must print its first row before reading the last."""
    seen: list[int] = []

    def rows():
        for i in range(3):
            seen.append(i)
            yield {"n": i}

    class Probe(io.StringIO):
        def write(self, s: str) -> int:
            if '"n":0' in s or "n: 0" in s:
                assert seen == [0], "the first row was held back"
            return super().write(s)

    for fmt in FORMATS:
        seen.clear()
        get_formatter(fmt).write(Listing([TableSection(rows(), block=1)]), Probe())
        assert seen == [0, 1, 2]
