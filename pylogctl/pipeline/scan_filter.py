"""Which records a scan keeps, and what that lets it skip without decoding.

A :class:`ScanFilter` is a conjunction: topics, partitions, an offset range and a timestamp
range (both half-open, ``[from, to)``, so that ranges tile), a key, and bytes the value must
contain. The planner uses the topic, partition and offset parts to leave whole partition dirs,
segments and splits unread, and the timestamp's lower bound through the time index; the
reader applies every part to every record, exactly, so skipping is only ever an optimisation
and an index that lies cannot add or drop a record that is read.

The filter crosses to Spark tasks pickled inside the data source reader, and to the data
source as JSON options (:meth:`to_json`), which is how the CLI hands over the key and value
tests that Spark cannot push to a Python data source.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
from dataclasses import dataclass, replace

from ..errors import UsageError

LONG_MIN = -(1 << 63)
LONG_END = 1 << 63  # one past the largest long: "no upper bound" for half-open ranges
INT_END = 1 << 31


@dataclass(frozen=True)
class ScanFilter:
    topics: frozenset[str] | None = None  # None: every topic
    topic_prefix: str = ""
    partitions: frozenset[int] | None = None  # None: every partition
    partition_from: int = 0
    partition_to: int = INT_END
    offset_from: int = LONG_MIN
    offset_to: int = LONG_END
    time_from: int = LONG_MIN
    time_to: int = LONG_END
    key: bytes | None = None  # the record key must equal this
    value_contains: bytes | None = None  # the record value must contain this

    # -- building ---------------------------------------------------------------------------
    def narrowed(self, **parts) -> "ScanFilter":
        """This filter AND another condition: sets intersect, ranges shrink."""
        out = self
        for name, value in parts.items():
            current = getattr(out, name)
            if name in ("topics", "partitions"):
                value = frozenset(value)
                value = value if current is None else current & value
            elif name.endswith("_from"):
                value = max(current, value)
            elif name.endswith("_to"):
                value = min(current, value)
            elif name == "topic_prefix":
                if not (value.startswith(current) or current.startswith(value)):
                    value = "\0impossible"  # two prefixes no name has both of
                else:
                    value = max(current, value, key=len)
            elif current is not None and current != value:  # key / value_contains
                raise ValueError(f"{name} given twice")
            out = replace(out, **{name: value})
        return out

    # -- what the planner asks --------------------------------------------------------------
    def wants_topic(self, topic: str) -> bool:
        return ((self.topics is None or topic in self.topics)
                and topic.startswith(self.topic_prefix))

    def wants_partition(self, partition: int) -> bool:
        return ((self.partitions is None or partition in self.partitions)
                and self.partition_from <= partition < self.partition_to)

    def wants_offsets(self, lower: int, upper: int | None) -> bool:
        """Whether ``[lower, upper)`` (None: unbounded) can hold a wanted offset."""
        return ((upper is None or upper > self.offset_from) and lower < self.offset_to
                and not self.is_empty)

    @property
    def is_empty(self) -> bool:
        """Nothing can match (an empty set or range)."""
        return (self.offset_from >= self.offset_to or self.time_from >= self.time_to
                or self.partition_from >= self.partition_to
                or (self.topics is not None and not self.topics)
                or (self.partitions is not None and not self.partitions))

    @property
    def has_time_from(self) -> bool:
        return self.time_from > LONG_MIN

    # -- crossing to Spark ------------------------------------------------------------------
    def to_json(self) -> str:
        doc: dict[str, object] = {}
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if value == default:
                continue
            if isinstance(value, frozenset):
                value = sorted(value)
            elif isinstance(value, bytes):
                value = base64.b64encode(value).decode("ascii")
            doc[name] = value
        return json.dumps(doc, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "ScanFilter":
        try:
            doc = json.loads(text)
            parts = {}
            for name, value in doc.items():
                if name not in _DEFAULTS:
                    raise ValueError(f"unknown filter part {name!r}")
                if name in ("topics", "partitions"):
                    value = frozenset(value)
                elif name in ("key", "value_contains"):
                    value = base64.b64decode(value)
                parts[name] = value
            return cls(**parts)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"Invalid scan filter option {text!r}: {exc}") from None


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_DEFAULTS = {name: getattr(ScanFilter(), name) for name in ScanFilter.__dataclass_fields__}


def parse_time(text: str) -> int:
    """Epoch milliseconds from ``--from-time``/``--to-time``: an integer (milliseconds) or an
    ISO 8601 date-time (``2024-06-15T10:00:00Z``; without a zone it is UTC)."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        when = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"Invalid time {text!r}: give epoch milliseconds or an ISO 8601 "
                         f"date-time such as 2024-06-15T10:00:00Z") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return (when - _EPOCH) // _dt.timedelta(milliseconds=1)  # exact, no float rounding
