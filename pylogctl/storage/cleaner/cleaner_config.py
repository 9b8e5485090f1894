"""The broker-level settings of Kafka's log cleaner (``CleanerConfig``), with Kafka's defaults.

Topic-level settings (``cleanup.policy``, ``delete.retention.ms``, ``min.compaction.lag.ms``,
``segment.bytes``, ...) live in :class:`~pylogctl.storage.log_config.LogConfig`; these are the
``log.cleaner.*`` broker settings that size one cleaner thread's resources. Kafka divides them
among ``log.cleaner.threads``: each thread gets ``dedupe.buffer.size / threads`` bytes of offset
map (capped at ``Int.MaxValue``) and two I/O buffers of ``io.buffer.size / threads / 2`` bytes.
An offline run is one thread, but the division is kept so that a broker's configuration gives
the same offset map, hence the same passes over a dirty section that does not fit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from ...errors import UsageError
from ...format.varint import INT32_MAX
from ..topic_config_def import TOPIC_CONFIG_KEYS

_PROPERTY_NAMES = {
    "log.cleaner.threads": "num_threads",
    "log.cleaner.dedupe.buffer.size": "dedupe_buffer_size",
    "log.cleaner.io.buffer.load.factor": "dedupe_buffer_load_factor",
    "log.cleaner.io.buffer.size": "io_buffer_size",
    "message.max.bytes": "max_message_size",
    "log.cleaner.io.max.bytes.per.second": "max_io_bytes_per_second",
    "log.cleaner.backoff.ms": "backoff_ms",
    "log.cleaner.enable": "enable_cleaner",
}
CLEANER_CONFIG_NAMES = frozenset(_PROPERTY_NAMES)


@dataclass(frozen=True)
class CleanerConfig:
    """``log.cleaner.*`` (and ``message.max.bytes``, the cleaner's largest I/O buffer)."""

    num_threads: int = 1
    dedupe_buffer_size: int = 128 * 1024 * 1024
    dedupe_buffer_load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    max_message_size: int = TOPIC_CONFIG_KEYS["max.message.bytes"].default  # message.max.bytes
    max_io_bytes_per_second: float = float("inf")  # not applied offline: nothing to share with
    backoff_ms: int = 15_000
    enable_cleaner: bool = True
    hash_algorithm: str = "MD5"

    def __post_init__(self) -> None:
        if self.num_threads < 1:
            raise UsageError(f"Invalid value {self.num_threads} for configuration "
                             f"log.cleaner.threads: Value must be at least 1")
        if self.dedupe_buffer_size // self.num_threads <= 1024 * 1024:
            raise UsageError("log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner "
                             "thread.")
        if self.io_buffer_size < 0 or self.max_message_size < 0:
            raise UsageError("log.cleaner.io.buffer.size and message.max.bytes must be at "
                             "least 0")

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> "CleanerConfig":
        """From Kafka's broker property names; the rest default."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in props.items():
            name = _PROPERTY_NAMES.get(key)
            if name is None:
                raise UsageError(f"Unknown log cleaner config name: {key}")
            kind = type(fields[name].default)
            try:
                if kind is bool and isinstance(raw, str):
                    if raw.strip().lower() not in ("true", "false"):
                        raise ValueError(raw)
                    values[name] = raw.strip().lower() == "true"
                else:
                    values[name] = kind(raw)
            except ValueError:
                raise UsageError(f"Invalid value {raw} for configuration {key}") from None
        return cls(**values)

    @property
    def offset_map_memory(self) -> int:
        """Bytes of offset map one cleaner thread gets (``SkimpyOffsetMap`` memory)."""
        return min(self.dedupe_buffer_size // self.num_threads, INT32_MAX)

    @property
    def io_buffer_per_thread(self) -> int:
        """Size of each of a thread's read and write buffers."""
        return self.io_buffer_size // self.num_threads // 2
