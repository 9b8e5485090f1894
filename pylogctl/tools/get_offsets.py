"""``pylogctl get-offsets``: Kafka's ``kafka-get-offsets`` (GetOffsetShell) on log dirs.

The options mean what GetOffsetShell makes of them: ``--topic`` is a regular expression the
whole topic name must match (commas become ``|``, spaces and surrounding quotes are dropped,
as Kafka's ``TopicFilter`` does), ``--partitions`` a comma-separated list of ids,
``--topic-partitions`` a comma-separated list of ``TOPIC_REGEX[:PARTITION]`` rules where the
partition is a number, ``N-M`` (M excluded), ``N-`` or ``-M``. Internal topics are included
unless ``--exclude-internal-topics``. ``--time`` takes -1/latest, -2/earliest,
-3/max-timestamp, -4/earliest-local, -5/latest-tiered, -6/earliest-pending-upload or a
timestamp in ms. Partitions with no offset (-1) are left out, and the rest come sorted as
Kafka's ``TreeMap`` sorts them: by the text ``topic-partition`` (so ``t-10`` before ``t-2``).
The answers themselves are :mod:`pylogctl.groups.list_offsets`'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..errors import UsageError
from ..format.varint import INT32_MAX
from ..groups.list_offsets import ListedOffset, OffsetLister
from ..groups.replicas import LogDirs
from ..storage.list_offsets import SPEC_NAMES
from ..storage.topic_config import INTERNAL_TOPICS

# GetOffsetShell.TOPIC_PARTITION_PATTERN
TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
_BY_NAME = {name: value for value, name in SPEC_NAMES.items()}
TIME_HELP = " / ".join(f"{v} or {n}" for v, n in sorted(SPEC_NAMES.items(), reverse=True))

PartitionRule = Callable[[str, int], bool]


def parse_time(text: str) -> int:
    """``GetOffsetShell.parseOffsetSpec``: a spec name, a special value, or a timestamp."""
    if text in _BY_NAME:
        return _BY_NAME[text]
    try:
        value = int(text)
        if not -2**63 <= value < 2**63 or not re.fullmatch(r"[+-]?\d+", text):
            raise ValueError(text)
    except ValueError:
        raise UsageError(f"Malformed time argument {text}. Please use {TIME_HELP}, or a "
                         f"specified long format timestamp") from None
    return value


def topic_regex(raw: str) -> re.Pattern[str]:
    """Kafka's ``TopicFilter``: the option text made a regex."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", regex))
    try:
        return re.compile(regex)
    except re.error:
        raise UsageError(f"{regex} is an invalid regex.") from None


def _java_split(text: str) -> list[str]:
    """Java's ``String.split(",")``: trailing empty strings dropped (but not a lone one)."""
    parts = text.split(",")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _int(text: str) -> int:
    value = int(text)
    if value > INT32_MAX:
        raise UsageError(f'For input string: "{text}"')
    return value


def rule(spec: str) -> PartitionRule:
    """One ``--topic-partitions`` rule (``parseRuleSpec``)."""
    m = TOPIC_PARTITION_PATTERN.fullmatch(spec)
    if m is None:
        raise UsageError(f"Invalid rule specification: {spec}")
    group = [g if g else None for g in m.groups()]
    pattern = topic_regex(group[0] or ".*")
    if group[1] is not None:
        wanted = _int(group[1])
        return lambda topic, p: pattern.fullmatch(topic) is not None and p == wanted
    low = _int(group[2]) if group[2] is not None else 0
    high = _int(group[3]) if group[3] is not None else INT32_MAX
    return lambda topic, p: pattern.fullmatch(topic) is not None and low <= p < high


def partition_filter(topic: str | None, partitions: str | None,
                     topic_partitions: str | None) -> PartitionRule:
    """The filter GetOffsetShell builds from its three options."""
    if topic_partitions is not None and (topic is not None or partitions is not None):
        raise UsageError("--topic-partitions cannot be used with --topic or --partitions")
    if topic_partitions is not None:
        rules = [rule(s) for s in _java_split(topic_partitions)]
        return lambda t, p: any(r(t, p) for r in rules)
    pattern = topic_regex(topic if topic is not None else ".*")
    ids: set[int] = set()
    if partitions:
        try:
            ids = {int(x) for x in partitions.split(",")}
        except ValueError:
            raise UsageError(f"--partitions expects a comma separated list of numeric partition "
                             f"ids, but received: {partitions}") from None
    return lambda t, p: pattern.fullmatch(t) is not None and (not ids or p in ids)


@dataclass(frozen=True)
class GetOffsetsOptions:
    time: int = -1
    topic: str | None = None
    partitions: str | None = None
    topic_partitions: str | None = None
    exclude_internal_topics: bool = False


class GetOffsets:
    """The partitions the filters select and their ListOffsets answers."""

    def __init__(self, paths: list[str], options: GetOffsetsOptions) -> None:
        self.options = options
        allowed = partition_filter(options.topic, options.partitions, options.topic_partitions)
        self.log_dirs = LogDirs(paths)
        self.selected = [(t, p) for t in self.log_dirs.topics()
                         if not (options.exclude_internal_topics and t in INTERNAL_TOPICS)
                         for p in self.log_dirs.partitions(t) if allowed(t, p)]
        if not self.selected:
            raise UsageError("Could not match any topic-partitions with the specified filters")
        self.lister = OffsetLister(self.log_dirs)

    def offsets(self) -> list[ListedOffset]:
        """The answers with an offset, in Kafka's order."""
        found = [self.lister.list_offset(t, p, self.options.time) for t, p in self.selected]
        return sorted((f for f in found if f.offset is not None),
                      key=lambda f: f"{f.topic}-{f.partition}")

    @property
    def notes(self) -> list[str]:
        return list(dict.fromkeys(self.log_dirs.notes + self.lister.notes))

    def choices(self) -> list[str]:
        """Which replica was read, for the partitions with several."""
        return [f"{c.topic}-{c.partition}: read {c.chosen.describe()} ({c.reason})"
                for c in self.log_dirs.choices]


def offset_rows(found: list[ListedOffset]) -> Iterator[dict[str, Any]]:
    for f in found:
        yield {"topic": f.topic, "partition": f.partition, "offset": f.offset,
               "timestamp": f.timestamp, "leaderEpoch": f.leader_epoch}
