"""``consumer-groups`` results as sections: the rows for every format, and for ``text``
kafka-consumer-groups.sh's own layout from those same rows (the renderers of these kinds are in
:mod:`.consumer_groups_text`).

Each is a :class:`~.table.TableSection` whose columns are the engine's row keys, so a table
with no rows still prints its header; what Kafka's text needs beyond the rows (the view,
groups without rows, their errors) rides in ``text``.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from pylogctl.tools.group_columns import (DELETION_COLUMNS, LIST_COLUMNS,
                                          OFFSET_DELETION_COLUMNS, RESET_COLUMNS,
                                          consumer_describe_columns, share_describe_columns,
                                          streams_describe_columns)
from .table import TableSection


def list_section(rows: list[dict[str, Any]], include_type: bool, include_state: bool
                 ) -> TableSection:
    return TableSection(rows, LIST_COLUMNS, block=max(1, len(rows)), kind="group-list",
                        items_key="groups", text={"includeType": include_type,
                                                  "includeState": include_state})


def describe_section(reports: Sequence[Any], view: str, verbose: bool) -> TableSection:
    """``reports`` are the engine's ``GroupReport`` objects, in order."""
    rows = [row for r in reports for row in r.rows]
    return TableSection(rows, consumer_describe_columns(view, verbose), block=max(1, len(rows)),
                        kind="group-describe", text={"view": view, "verbose": verbose, "groups": [
                            {"group": r.group, "state": r.state, "error": r.error,
                             "exists": r.state is not None, "notice": r.notice}
                            for r in reports]})


def reset_section(rows: list[dict[str, Any]], groups: Iterable[str], messages: list[str]
                  ) -> TableSection:
    """``groups``: every group planned, reset or not (Kafka's table widens for each)."""
    return TableSection(rows, RESET_COLUMNS, block=max(1, len(rows)), kind="group-reset",
                        text={"groups": list(groups), "messages": messages})


def delete_section(rows: list[dict[str, Any]]) -> TableSection:
    return TableSection(rows, DELETION_COLUMNS, block=max(1, len(rows)), kind="group-delete")


def delete_offsets_section(rows: list[dict[str, Any]], group: str,
                           error: dict[str, str] | None) -> TableSection:
    """``error``: the request's top-level error as ``{name, message}``, or None."""
    return TableSection(rows, OFFSET_DELETION_COLUMNS, block=max(1, len(rows)),
                        kind="group-delete-offsets", text={"group": group, "error": error})


def state_list_section(rows: list[dict[str, Any]], include_state: bool, kind: str
                       ) -> TableSection:
    """A ``GROUP [STATE]`` listing (share and streams groups)."""
    return TableSection(rows, ("group", "state"), block=max(1, len(rows)), kind=kind,
                        items_key="groups", text={"includeState": include_state})


def share_describe_section(reports: Sequence[Any], view: str, verbose: bool) -> TableSection:
    """``reports`` are :class:`~pylogctl.tools.share_groups.ShareGroupReport` objects."""
    rows = [row for r in reports for row in r.rows]
    return TableSection(rows, share_describe_columns(view, verbose), block=max(1, len(rows)),
                        kind="share-group-describe", text={"view": view, "verbose": verbose,
                                                           "groups": [{"group": r.group,
                                                                       "state": r.state}
                                                                      for r in reports]})


def streams_describe_section(reports: Sequence[Any], view: str, verbose: bool) -> TableSection:
    """``reports`` are :class:`~pylogctl.tools.streams_groups.StreamsGroupReport` objects."""
    rows = [row for r in reports for row in r.rows]
    return TableSection(rows, streams_describe_columns(view, verbose), block=max(1, len(rows)),
                        kind="streams-group-describe", text={
                            "view": view, "verbose": verbose,
                            "groups": [{"group": r.group, "state": r.state,
                                        "numMembers": r.num_members} for r in reports]})
