"""The row keys of the groups commands (``consumer-groups``, ``share-groups``,
``streams-groups`` and the group changes), in the order Kafka's tools print their columns.

Plain data, importing nothing from pylogctl: the tools build their rows with these keys and
:mod:`pylogctl.formatters` takes a table's header from them (a table with no rows still has
one) without loading the groups engine.
"""

from __future__ import annotations

VIEWS = ("offsets", "members", "state")  # --offsets (the default), --members, --state

LIST_COLUMNS = ("group", "type", "state")  # consumer-groups --list
DELETION_COLUMNS = ("group", "deleted", "error")
OFFSET_DELETION_COLUMNS = ("group", "topic", "partition", "status")
RESET_COLUMNS = ("group", "topic", "partition", "newOffset")


def check_view(view: str) -> None:
    """Refuse a view that is not one of :data:`VIEWS` (a caller's bug, not bad input)."""
    if view not in VIEWS:
        raise ValueError(f"view is one of {VIEWS}, not {view!r}")


def consumer_describe_columns(view: str, verbose: bool) -> tuple[str, ...]:
    """kafka-consumer-groups.sh ``--describe``: the keys of a view's rows."""
    check_view(view)
    if view == "offsets":
        return ("group", "topic", "partition", *(("leaderEpoch",) if verbose else ()),
                "currentOffset", "logEndOffset", "lag", "consumerId", "host", "clientId")
    if view == "members":
        return ("group", "consumerId", "groupInstanceId", "host", "clientId", "numPartitions",
                *(("currentEpoch", "currentAssignment", "targetEpoch", "targetAssignment",
                   "upgraded") if verbose else ()))
    return ("group", "coordinator", "assignmentStrategy", "state",
            *(("groupEpoch", "targetAssignmentEpoch") if verbose else ()), "numMembers")


def share_describe_columns(view: str, verbose: bool) -> tuple[str, ...]:
    """kafka-share-groups.sh ``--describe`` (KIP-932): the keys of a view's rows."""
    check_view(view)
    if view == "offsets":
        return ("group", "topic", "partition", *(("leaderEpoch",) if verbose else ()),
                "startOffset", "lag")
    if view == "members":
        return ("group", "consumerId", "host", "clientId", "numPartitions",
                *(("memberEpoch",) if verbose else ()), "assignment")
    return ("group", "coordinator", "state", *(("groupEpoch", "assignmentEpoch")
                                               if verbose else ()), "numMembers")


def streams_describe_columns(view: str, verbose: bool) -> tuple[str, ...]:
    """kafka-streams-groups.sh ``--describe`` (KIP-1071): the keys of a view's rows."""
    check_view(view)
    if view == "offsets":
        return ("group", "topic", "partition",
                *(("currentOffset", "leaderEpoch", "logEndOffset") if verbose else ()), "lag")
    if view == "members":
        return ("group", *(("targetAssignmentEpoch", "topologyEpoch") if verbose else ()),
                "memberId", *(("memberProtocol", "memberEpoch") if verbose else ()),
                "processId", "clientId", "assignments")
    return ("group", "coordinator", "assignor", "state",
            *(("groupEpoch", "targetAssignmentEpoch") if verbose else ()), "numMembers")
