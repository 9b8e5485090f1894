"""A partition log's topic-level configuration (Kafka's ``LogConfig``): the configs the storage
engine acts on.

Field names are Kafka's topic config names written the Python way (``segment.index.bytes`` ->
``segment_index_bytes``); :meth:`LogConfig.from_properties` takes the dotted names. Defaults,
parsing, validators and rendering are the topic config definitions' (:mod:`.topic_config_def`).
Broker-level names (``log.segment.bytes``, ...) are the broker's business and map onto these.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import UsageError
from .topic_config_def import (INTERNAL_TOPIC_CONFIGS, LONG_MAX, TOPIC_CONFIG_KEYS, ConfigError,
                               distinct, parse_value, render_value)

CLEANUP_POLICY_DELETE = "delete"
CLEANUP_POLICY_COMPACT = "compact"
__all__ = ["LONG_MAX", "CLEANUP_POLICY_DELETE", "CLEANUP_POLICY_COMPACT", "LOG_CONFIG_NAMES",
           "LogConfig", "OFFSETS_TOPIC_CONFIG", "TRANSACTION_STATE_TOPIC_CONFIG"]


def _default(name: str) -> Any:
    value = TOPIC_CONFIG_KEYS[name].default
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = _default("segment.bytes")
    segment_ms: int = _default("segment.ms")
    segment_jitter_ms: int = _default("segment.jitter.ms")
    segment_index_bytes: int = _default("segment.index.bytes")
    index_interval_bytes: int = _default("index.interval.bytes")
    preallocate: bool = _default("preallocate")
    file_delete_delay_ms: int = _default("file.delete.delay.ms")
    flush_messages: int = _default("flush.messages")
    flush_ms: int = _default("flush.ms")
    retention_bytes: int = _default("retention.bytes")
    retention_ms: int = _default("retention.ms")
    max_message_bytes: int = _default("max.message.bytes")
    cleanup_policy: tuple[str, ...] = _default("cleanup.policy")
    delete_retention_ms: int = _default("delete.retention.ms")
    min_compaction_lag_ms: int = _default("min.compaction.lag.ms")
    max_compaction_lag_ms: int = _default("max.compaction.lag.ms")
    min_cleanable_dirty_ratio: float = _default("min.cleanable.dirty.ratio")
    compression_type: str = _default("compression.type")
    message_timestamp_type: str = _default("message.timestamp.type")
    message_timestamp_before_max_ms: int = _default("message.timestamp.before.max.ms")
    message_timestamp_after_max_ms: int = _default("message.timestamp.after.max.ms")

    def __post_init__(self) -> None:
        """Kafka's validators of each value (the topic config definitions')."""
        for name, value in dataclasses.asdict(self).items():
            key = TOPIC_CONFIG_KEYS[_dotted(name)]
            if key.validator is not None:
                try:
                    key.validator(key.name, distinct(key, list(value) if isinstance(value, tuple)
                                                     else value))
                except ConfigError as exc:
                    raise UsageError(exc.message) from None

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> "LogConfig":
        """From Kafka's dotted topic config names (strings, parsed as Kafka parses them, or typed
        values); the rest default."""
        values: dict[str, Any] = {}
        for name, raw in props.items():
            if name not in LOG_CONFIG_NAMES:
                raise UsageError(f"Unknown topic config name: {name}")
            if isinstance(raw, str):
                try:
                    raw = parse_value(TOPIC_CONFIG_KEYS[name], raw)
                except ConfigError as exc:
                    raise UsageError(exc.message) from None
            values[name.replace(".", "_")] = tuple(raw) if isinstance(raw, list) else raw
        return cls(**values)

    def to_properties(self) -> dict[str, str]:
        """Dotted names -> values as Kafka renders them."""
        return {_dotted(name): render_value(list(value) if isinstance(value, tuple) else value)
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


LOG_CONFIG_NAMES = tuple(sorted(_dotted(f.name) for f in dataclasses.fields(LogConfig)))
# the internal topics' configs as Kafka's coordinators create them
OFFSETS_TOPIC_CONFIG = LogConfig.from_properties(INTERNAL_TOPIC_CONFIGS["__consumer_offsets"])
TRANSACTION_STATE_TOPIC_CONFIG = LogConfig.from_properties(
    INTERNAL_TOPIC_CONFIGS["__transaction_state"])
