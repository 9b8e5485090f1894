"""A partition log's topic-level configuration (Kafka's ``LogConfig``), with Kafka's defaults.

Field names are Kafka's topic config names written the Python way (``segment.index.bytes`` ->
``segment_index_bytes``); :meth:`LogConfig.from_properties` takes the dotted names. Values are
checked against Kafka's ranges. Broker-level names (``log.segment.bytes``, ...) are the
broker's business and map onto these.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import UsageError

LONG_MAX = 2**63 - 1
CLEANUP_POLICY_DELETE = "delete"
CLEANUP_POLICY_COMPACT = "compact"
_TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
_COMPRESSION_TYPES = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = 1024 * 1024 * 1024
    segment_ms: int = 7 * 24 * 60 * 60 * 1000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10 * 1024 * 1024
    index_interval_bytes: int = 4096
    preallocate: bool = False
    file_delete_delay_ms: int = 60_000
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    retention_bytes: int = -1
    retention_ms: int = 7 * 24 * 60 * 60 * 1000
    max_message_bytes: int = 1024 * 1024 + 12
    cleanup_policy: tuple[str, ...] = (CLEANUP_POLICY_DELETE,)
    delete_retention_ms: int = 24 * 60 * 60 * 1000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    compression_type: str = "producer"
    message_timestamp_type: str = "CreateTime"
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = 3_600_000  # Kafka 4.0 lowered it from Long.MAX_VALUE

    def __post_init__(self) -> None:
        minimums = {"segment_bytes": 14, "segment_ms": 1, "segment_jitter_ms": 0,
                    "segment_index_bytes": 4, "index_interval_bytes": 0,
                    "file_delete_delay_ms": 0, "flush_messages": 1, "flush_ms": 0,
                    "retention_ms": -1, "max_message_bytes": 0, "delete_retention_ms": 0,
                    "min_compaction_lag_ms": 0, "max_compaction_lag_ms": 1,
                    "message_timestamp_before_max_ms": 0, "message_timestamp_after_max_ms": 0}
        for name, low in minimums.items():
            value = getattr(self, name)
            if value < low:
                raise UsageError(f"Invalid value {value} for configuration "
                                 f"{_dotted(name)}: Value must be at least {low}")
        if not 0 <= self.min_cleanable_dirty_ratio <= 1:
            raise UsageError(f"Invalid value {self.min_cleanable_dirty_ratio} for configuration "
                             f"min.cleanable.dirty.ratio: Value must be between 0 and 1")
        for policy in self.cleanup_policy:
            if policy not in (CLEANUP_POLICY_DELETE, CLEANUP_POLICY_COMPACT):
                raise UsageError(f"Invalid value {policy} for configuration cleanup.policy")
        if self.message_timestamp_type not in _TIMESTAMP_TYPES:
            raise UsageError(f"Invalid value {self.message_timestamp_type} for configuration "
                             f"message.timestamp.type")
        if self.compression_type not in _COMPRESSION_TYPES:
            raise UsageError(f"Invalid value {self.compression_type} for configuration "
                             f"compression.type")

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> "LogConfig":
        """From Kafka's dotted topic config names (strings or typed values); the rest default."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in props.items():
            name = key.replace(".", "_")
            if name not in fields:
                raise UsageError(f"Unknown topic config name: {key}")
            values[name] = _parse(key, raw, type(getattr(cls, name)))
        return cls(**values)

    def to_properties(self) -> dict[str, str]:
        return {_dotted(name): (",".join(value) if isinstance(value, tuple) else
                                str(value).lower() if isinstance(value, bool) else str(value))
                for name, value in dataclasses.asdict(self).items()}

    @property
    def compact(self) -> bool:
        return CLEANUP_POLICY_COMPACT in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return CLEANUP_POLICY_DELETE in self.cleanup_policy

    @property
    def init_file_size(self) -> int:
        """The length a new ``.log`` file is preallocated to (0 unless ``preallocate``)."""
        return self.segment_bytes if self.preallocate else 0

    def max_segment_ms(self) -> int:
        """Roll age: a compacted log with a max compaction lag rolls at least that often."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    def random_segment_jitter(self, rng: random.Random | None = None) -> int:
        """A segment's roll jitter: uniform in ``[0, min(segment.jitter.ms, segment.ms))``."""
        if self.segment_jitter_ms == 0:
            return 0
        return (rng or random).randrange(min(self.segment_jitter_ms, self.segment_ms))


def _dotted(name: str) -> str:
    return name.replace("_", ".")


def _parse(key: str, raw: Any, kind: type) -> Any:
    if not isinstance(raw, str):
        return tuple(raw) if kind is tuple else raw
    text = raw.strip()
    try:
        if kind is bool:
            if text.lower() not in ("true", "false"):
                raise ValueError(text)
            return text.lower() == "true"
        if kind is tuple:
            return tuple(p.strip() for p in text.split(",") if p.strip())
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
    except ValueError:
        raise UsageError(f"Invalid value {raw} for configuration {key}") from None
    return text
