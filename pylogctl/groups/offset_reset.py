"""``--reset-offsets``: the new committed offsets Kafka's tool would compute, from disk.

``ConsumerGroupCommand.resetOffsets`` (and ``OffsetsUtils``) asks the brokers' ListOffsets for
the numbers each scenario needs; offline they come from the replica of each data partition
that :class:`~pylogctl.groups.replicas.LogDirs` chooses (:class:`LogOffsets`):

- earliest: the log start offset (the first segment's base, or the checkpointed log start
  when higher);
- latest: what a read-uncommitted consumer can read up to, the high watermark (``--lag-from
  leo``: the log end offset), as :class:`~pylogctl.groups.end_offsets.EndOffsets` gives it;
- by timestamp: the first record, in offset order, whose timestamp is at or after the target,
  if it lies below "latest" (the broker answers no offset otherwise, and the tool then warns
  and falls back to latest). Found by scanning batch headers, decoding only the batch found.

The scenarios follow the tool: ``--to-offset``, ``--shift-by`` and ``--from-file`` clamp into
[earliest, latest] (a WARN in Kafka's log, a note here); ``--shift-by`` needs a committed
offset; ``--to-current`` keeps committed offsets and takes latest where there is none. Only
groups that are ``Empty`` or ``Dead`` (unknown) are reset: running consumers would overwrite
the new offsets with their next commit. The plan keeps the order of Kafka's ``HashMap``s.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable, Mapping, Sequence

from ..errors import PylogctlError, UsageError
from ..storage.file_records import FileRecords
from ..storage.log_dir_layout import log_segments
from .end_offsets import EndOffsets
from .group_metadata import Group, GroupState
from .java_hash_map import group_order, partition_order
from .offset_commits import TopicPartition
from .replicas import LogDirs

SCENARIOS = ("to-offset", "to-datetime", "by-duration", "to-earliest", "to-latest",
             "to-current", "shift-by", "from-file")
RESETTABLE_STATES = (GroupState.EMPTY, GroupState.DEAD)


@dataclass(frozen=True)
class ResetSpec:
    """One scenario and its argument (an offset, a shift, a timestamp in ms, or the plan of a
    ``--from-file`` CSV: group -> partition -> offset)."""

    scenario: str
    value: int | None = None
    plan: Mapping[str, Mapping[TopicPartition, int]] | None = None

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise ValueError(f"scenario is one of {SCENARIOS}, not {self.scenario!r}")


# -- parsing the tool's arguments -----------------------------------------------------------
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ZONE = re.compile(r"(Z|[+-]\d{2}(?::?\d{2})?)$")


def parse_datetime(text: str) -> int:
    """``--to-datetime``: Kafka's ``Utils.getDateTime`` (``YYYY-MM-DDTHH:mm:SS.sss`` with an
    optional zone ``Z``, ``±HH``, ``±HHMM`` or ``±HH:MM``; no zone means UTC) in epoch ms."""
    date, sep, time = text.partition("T")
    if not sep:
        raise UsageError(f"Error parsing timestamp '{text}'. It does not contain a 'T' "
                         f"according to ISO8601 format")
    zone = _ZONE.search(time)
    clock = time[:zone.start()] if zone else time
    offset = timedelta(0)
    if zone and zone.group(1) != "Z":
        z = zone.group(1).replace(":", "")
        sign = -1 if z[0] == "-" else 1
        offset = sign * timedelta(hours=int(z[1:3]), minutes=int(z[3:5] or 0))
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) or \
                not re.fullmatch(r"\d{2}:\d{2}:\d{2}\.\d{3}", clock):
            raise ValueError
        local = datetime.strptime(f"{date}T{clock}", "%Y-%m-%dT%H:%M:%S.%f")
    except ValueError:
        raise UsageError(f"Unparseable date: \"{text}\" (expected YYYY-MM-DDTHH:mm:SS.sss, "
                         f"optionally with a zone such as Z or +02:00)") from None
    delta = local.replace(tzinfo=timezone(offset)) - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


_DURATION = re.compile(r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?=[-+]?\d)(?:([-+]?\d+)H)?"
                       r"(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?", re.IGNORECASE)


def parse_duration(text: str) -> int:
    """``--by-duration``: Java's ``Duration.parse`` (``PnDTnHnMn.nS``) in ms."""
    m = _DURATION.fullmatch(text)
    if m is None or not any(m.group(i) for i in (2, 3, 4, 5)):
        raise UsageError(f"Text cannot be parsed to a Duration: {text}")
    days, hours, minutes, seconds = (int(m.group(i) or 0) for i in (2, 3, 4, 5))
    fraction = m.group(6) or ""
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    if m.group(5) and m.group(5).startswith("-"):
        nanos = -nanos
    ms = ((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000 + nanos // 1_000_000
    return -ms if m.group(1) == "-" else ms


def parse_topic_args(args: Sequence[str]) -> list[tuple[str, list[int] | None]]:
    """``--topic t`` (every partition) and ``--topic t:0,1,2``, with Kafka's errors."""
    out: list[tuple[str, list[int] | None]] = []
    for arg in args:
        if ":" not in arg:
            out.append((arg, None))
            continue
        parts = arg.split(":")
        if len(parts) != 2 or not parts[1]:
            raise UsageError(f"Invalid topic arg '{arg}', expected topic name and partitions")
        partitions = []
        for p in parts[1].split(","):
            if not _is_int(p) or p != p.strip():
                raise UsageError(f"Invalid partition '{p}' specified in topic arg '{arg}''")
            partitions.append(int(p))
        out.append((parts[0], partitions))
    return out


def parse_reset_csv(text: str, single_group: str | None) -> dict[str, dict[TopicPartition, int]]:
    """A ``--from-file`` plan: ``topic,partition,offset`` lines for the one ``--group`` given,
    else ``group,topic,partition,offset`` (the forms ``--export`` writes)."""
    lines = [line for line in text.split("\n") if line.strip()]
    rows = list(csv.reader(lines))
    plan: dict[str, dict[TopicPartition, int]] = {}
    three = bool(rows) and len(rows[0]) == 3 and _is_int(rows[0][1]) and _is_int(rows[0][2])
    for n, row in enumerate(rows, 1):
        if single_group is not None and three:
            if len(row) != 3:
                raise UsageError(f"line {n} of the reset plan is not topic,partition,offset")
            group, (topic, partition, offset) = single_group, row
        else:
            if len(row) != 4:
                raise UsageError(f"line {n} of the reset plan is not group,topic,partition,offset")
            group, topic, partition, offset = row
        if not (_is_int(partition) and _is_int(offset)):
            raise UsageError(f"line {n} of the reset plan: partition and offset must be integers")
        plan.setdefault(group, {})[TopicPartition(topic, int(partition))] = int(offset)
    return plan


def _is_int(text: str) -> bool:
    return re.fullmatch(r"[-+]?\d+", text.strip()) is not None


def export_csv(resets: Sequence["GroupReset"], single_group: bool) -> str:
    """``--export``: what Kafka's CSV writer prints (no header), for ``--from-file``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for r in resets:
        for tp, offset in r.offsets.items():
            writer.writerow([tp.topic, tp.partition, offset] if single_group
                            else [r.group, tp.topic, tp.partition, offset])
    return out.getvalue()


# -- what ListOffsets would answer ---------------------------------------------------------
class LogOffsets:
    """Earliest, latest and by-timestamp offsets of data partitions, from their files."""

    def __init__(self, log_dirs: LogDirs, end_offsets: EndOffsets) -> None:
        self.log_dirs = log_dirs
        self.end_offsets = end_offsets

    def exists(self, tp: TopicPartition) -> bool:
        return self.log_dirs.choose(tp.topic, tp.partition) is not None

    def earliest(self, tp: TopicPartition) -> int | None:
        choice = self.log_dirs.choose(tp.topic, tp.partition)
        return None if choice is None else choice.chosen.log_start_offset

    def latest(self, tp: TopicPartition) -> int | None:
        return self.end_offsets.get(tp.topic, tp.partition).offset

    def for_timestamp(self, tp: TopicPartition, timestamp: int) -> int | None:
        """The offset of the first record at or after ``timestamp``, below :meth:`latest`
        (None: there is none; Kafka's ``UNKNOWN_OFFSET``)."""
        choice = self.log_dirs.choose(tp.topic, tp.partition)
        latest = self.latest(tp)
        if choice is None or latest is None:
            return None
        start = choice.chosen.log_start_offset
        segments = log_segments(choice.chosen.path)
        for i, (base, path) in enumerate(segments):
            if i + 1 < len(segments) and segments[i + 1][0] <= start:
                continue  # wholly below the log start
            if base >= latest:
                break
            try:
                with FileRecords(path) as records:
                    found = records.search_for_timestamp(timestamp, 0, start)
            except PylogctlError as exc:
                raise exc.at(path)
            if found is not None:
                return found.offset if found.offset < latest else None
        return None


# -- the plan ----------------------------------------------------------------------------
@dataclass
class GroupReset:
    """One group's new offsets (in Kafka's print order), or why it is not reset."""

    group: str
    state: str
    offsets: dict[TopicPartition, int] = field(default_factory=dict)
    error: str | None = None


@dataclass
class ResetPlan:
    """The groups' resets in Kafka's order; ``messages`` are the lines Kafka prints to stdout
    before the table, each after a blank line (``Error:`` for a group not reset, ``Warn:``
    for an empty partition of a by-time reset), ``notes`` what its log says (offsets clamped
    into range)."""

    resets: list[GroupReset]
    messages: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def refused(self) -> list[GroupReset]:
        return [r for r in self.resets if r.error is not None]


class ResetPlanner:
    """Computes :class:`ResetPlan` s; ``now_ms`` anchors ``--by-duration``."""

    def __init__(self, offsets: LogOffsets, spec: ResetSpec, now_ms: int) -> None:
        self.offsets = offsets
        self.spec = spec
        self.now_ms = now_ms
        self.plan = ResetPlan([])

    def plan_groups(self, groups: Mapping[str, Group | None], group_ids: Sequence[str],
                    partitions_for: Callable[[str, Group | None], list[TopicPartition]],
                    refuse: Callable[[str], str | None] = lambda _: None) -> ResetPlan:
        """Reset ``group_ids`` (``groups`` maps each to its loaded group, None if unknown);
        ``partitions_for(group_id, group)`` gives the partitions ``--topic``/``--all-topics``
        select; ``refuse(group_id)`` says why a group cannot be reset here, if it cannot."""
        for group_id in group_order(group_ids):
            group = groups.get(group_id)
            state = GroupState.DEAD if group is None else group.state
            error = refuse(group_id)
            if state not in RESETTABLE_STATES:
                error = (f"Assignments can only be reset if the group '{group_id}' is inactive, "
                         f"but the current state is {state}.")
            if error is not None:
                self.plan.resets.append(GroupReset(group_id, state, error=error))
                self.plan.messages.append(f"Error: {error}")
                continue
            offsets = self._offsets(group_id, group, partitions_for(group_id, group))
            self.plan.resets.append(GroupReset(group_id, state, offsets))
        return self.plan

    def _offsets(self, group_id: str, group: Group | None,
                 partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        spec, offsets = self.spec, self.offsets
        committed = {} if group is None else {tp: c.offset for tp, c in group.offsets.items()
                                               if c.offset >= 0}
        if spec.scenario == "from-file":
            assert spec.plan is not None
            wanted = spec.plan.get(group_id)
            if wanted is None:
                self.plan.messages.append(f"Error: No reset plan for group {group_id} found")
                return {}
            return self._ordered(self._clamped(dict(wanted)))
        new: dict[TopicPartition, int] = {}
        if spec.scenario == "to-offset":
            assert spec.value is not None
            new = self._clamped({tp: spec.value for tp in partitions})
        elif spec.scenario == "shift-by":
            assert spec.value is not None
            for tp in partitions:
                if tp not in committed:
                    raise UsageError(f"Cannot shift offset for partition {tp} since there is "
                                     f"no current committed offset")
            new = self._clamped({tp: committed[tp] + spec.value for tp in partitions})
        elif spec.scenario == "to-earliest":
            new = {tp: self._known(tp, offsets.earliest(tp), "starting") for tp in partitions}
        elif spec.scenario == "to-latest":
            new = {tp: self._known(tp, offsets.latest(tp), "ending") for tp in partitions}
        elif spec.scenario == "to-current":
            new = {tp: committed[tp] if tp in committed
                   else self._known(tp, offsets.latest(tp), "ending") for tp in partitions}
        else:  # to-datetime, by-duration
            assert spec.value is not None
            target = spec.value if spec.scenario == "to-datetime" else self.now_ms - spec.value
            for tp in partitions:
                self._known(tp, offsets.earliest(tp), "offset by timestamp of")
                found = offsets.for_timestamp(tp, target)
                if found is None:
                    self.plan.messages.append(f"Warn: Partition {tp.partition} from topic "
                                              f"{tp.topic} is empty. Falling back to latest "
                                              f"known offset.")
                    found = self._known(tp, offsets.latest(tp), "ending")
                new[tp] = found
        return self._ordered(new)

    def _known(self, tp: TopicPartition, offset: int | None, what: str) -> int:
        if offset is None:
            raise UsageError(f"Error getting {what} offset of topic partition: {tp} (it is in "
                             f"none of the log dirs given)")
        return offset

    def _clamped(self, requested: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """``checkOffsetsRange``: into [earliest, latest] where those are known."""
        out = {}
        for tp, offset in requested.items():
            end, start = self.offsets.latest(tp), self.offsets.earliest(tp)
            if end is not None and offset > end:
                self.plan.notes.append(f"New offset ({offset}) is higher than latest offset for "
                                       f"topic partition {tp}. Value will be set to {end}")
                offset = end
            elif start is not None and offset < start:
                self.plan.notes.append(f"New offset ({offset}) is lower than earliest offset "
                                       f"for topic partition {tp}. Value will be set to {start}")
                offset = start
            out[tp] = offset
        return out

    @staticmethod
    def _ordered(offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        return {tp: offsets[tp] for tp in partition_order(offsets)}
