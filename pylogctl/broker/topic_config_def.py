"""Kafka's topic config definitions (``LogConfig``'s ``ConfigDef``): each topic config's type,
default and validator, and the parsing and validation Kafka applies to the text values a client
sends, with Kafka's messages (``ConfigException``: ``Invalid value V for configuration N: ...``;
``LogConfig.validateNames``: ``Unknown topic config name: N``).

:class:`~pylogctl.storage.log_config.LogConfig` models the configs the storage engine acts on;
the others (replication, tiered storage, compression levels) are validated and kept but change
nothing here. ``message.format.version`` is accepted as any text (Kafka checks it against its
metadata versions). ``remote.storage.enable=true`` is refused as by a broker without tiered
storage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..storage.log_config import LONG_MAX

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN = -(2**63)

# DescribeConfigsResponse.ConfigType
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)
TYPE_NAMES = {BOOLEAN: "BOOLEAN", STRING: "STRING", INT: "INT", LONG: "LONG", DOUBLE: "DOUBLE",
              LIST: "LIST"}


class ConfigError(Exception):
    """An invalid topic config (Kafka answers INVALID_CONFIG with this message)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


Validator = Callable[[str, Any], None]


def _invalid(name: str, value: Any, why: str) -> ConfigError:
    return ConfigError(f"Invalid value {render_value(value)} for configuration {name}: {why}")


def at_least(low: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value < low:
            raise _invalid(name, value, f"Value must be at least {low}")
    return check


def between(low: float, high: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value < low:
            raise _invalid(name, value, f"Value must be at least {low}")
        if value > high:
            raise _invalid(name, value, f"Value must be no more than {high}")
    return check


def one_of(*allowed: str, case_insensitive: bool = False) -> Validator:
    def check(name: str, value: Any) -> None:
        for item in value if isinstance(value, list) else [value]:
            ok = (item.lower() in [a.lower() for a in allowed]) if case_insensitive \
                else item in allowed
            if not ok:
                kind = " (case insensitive)" if case_insensitive else ""
                raise _invalid(name, item, f"String must be one of{kind}: {', '.join(allowed)}")
    return check


def level(low: int, high: int, default: int) -> Validator:
    """``CompressionType.GZIP.levelValidator``: a range, or the codec's default sentinel."""
    def check(name: str, value: Any) -> None:
        if value > high or (value < low and value != default):
            raise _invalid(name, value,
                           f"Value must be between {low} and {high} or equal to {default}")
    return check


_THROTTLED = re.compile(r"\*|(\s*\d+\s*:\s*\d+\s*)")


def throttled_replicas(name: str, value: Any) -> None:
    """``ThrottledReplicaListValidator``: ``*`` or ``partition:broker`` pairs."""
    if value == ["*"] or all(_THROTTLED.fullmatch(v) and v != "*" for v in value):
        return
    raise _invalid(name, value, "must be the literal '*' or a list of replicas in the following "
                   "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: int
    default: Any
    validator: Validator | None = None


def _k(name: str, type_: int, default: Any, validator: Validator | None = None) -> ConfigKey:
    return ConfigKey(name, type_, default, validator)


_WEEK_MS = 7 * 24 * 60 * 60 * 1000
# LogConfig.CONFIG, in Kafka's definition order (Kafka 3.9/4.0, storage/.../LogConfig.java)
TOPIC_CONFIG_KEYS: dict[str, ConfigKey] = {k.name: k for k in (
    _k("segment.bytes", INT, 1024 * 1024 * 1024, at_least(14)),
    _k("segment.ms", LONG, _WEEK_MS, at_least(1)),
    _k("segment.jitter.ms", LONG, 0, at_least(0)),
    _k("segment.index.bytes", INT, 10 * 1024 * 1024, at_least(4)),
    _k("flush.messages", LONG, LONG_MAX, at_least(1)),
    _k("flush.ms", LONG, LONG_MAX, at_least(0)),
    _k("retention.bytes", LONG, -1),
    _k("retention.ms", LONG, _WEEK_MS, at_least(-1)),
    _k("max.message.bytes", INT, 1024 * 1024 + 12, at_least(0)),
    _k("index.interval.bytes", INT, 4096, at_least(0)),
    _k("delete.retention.ms", LONG, 24 * 60 * 60 * 1000, at_least(0)),
    _k("min.compaction.lag.ms", LONG, 0, at_least(0)),
    _k("max.compaction.lag.ms", LONG, LONG_MAX, at_least(1)),
    _k("file.delete.delay.ms", LONG, 60_000, at_least(0)),
    _k("min.cleanable.dirty.ratio", DOUBLE, 0.5, between(0, 1)),
    _k("cleanup.policy", LIST, ["delete"], one_of("compact", "delete")),
    _k("unclean.leader.election.enable", BOOLEAN, False),
    _k("min.insync.replicas", INT, 1, at_least(1)),
    _k("compression.type", STRING, "producer",
       one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    _k("compression.gzip.level", INT, -1, level(1, 9, -1)),
    _k("compression.lz4.level", INT, 9, between(1, 17)),
    _k("compression.zstd.level", INT, 3, between(-131072, 22)),
    _k("preallocate", BOOLEAN, False),
    _k("message.format.version", STRING, "3.0-IV1"),
    _k("message.timestamp.type", STRING, "CreateTime", one_of("CreateTime", "LogAppendTime")),
    _k("message.timestamp.difference.max.ms", LONG, LONG_MAX, at_least(0)),
    _k("message.timestamp.before.max.ms", LONG, LONG_MAX, at_least(0)),
    _k("message.timestamp.after.max.ms", LONG, 3_600_000, at_least(0)),  # 1 h since Kafka 4.0
    _k("leader.replication.throttled.replicas", LIST, [], throttled_replicas),
    _k("follower.replication.throttled.replicas", LIST, [], throttled_replicas),
    _k("message.downconversion.enable", BOOLEAN, True),
    _k("remote.storage.enable", BOOLEAN, False),
    _k("local.retention.ms", LONG, -2, at_least(-2)),
    _k("local.retention.bytes", LONG, -2, at_least(-2)),
    _k("remote.log.copy.disable", BOOLEAN, False),
    _k("remote.log.delete.on.disable", BOOLEAN, False),
)}


def parse_value(key: ConfigKey, text: str) -> Any:
    """``ConfigDef.parseType`` of a text value (trimmed first, as Kafka does)."""
    raw = text.strip()
    if key.type == BOOLEAN:
        if raw.lower() not in ("true", "false"):
            raise _invalid(key.name, raw, "Expected value to be either true or false")
        return raw.lower() == "true"
    if key.type in (INT, LONG):
        low, high = (INT_MIN, INT_MAX) if key.type == INT else (LONG_MIN, LONG_MAX)
        if not re.fullmatch(r"[+-]?\d+", raw) or not low <= int(raw) <= high:
            raise _invalid(key.name, raw, f"Not a number of type {TYPE_NAMES[key.type]}")
        return int(raw)
    if key.type == DOUBLE:
        try:
            return float(raw)
        except ValueError:
            raise _invalid(key.name, raw, "Not a number of type DOUBLE") from None
    if key.type == LIST:
        return [] if not raw else [p.strip() for p in raw.split(",")]
    return raw


def render_value(value: Any) -> str:
    """``ConfigDef.convertToString``: lists comma-joined, booleans lower case, doubles as Java
    prints them."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value) if not value.is_integer() or abs(value) >= 1e7 else f"{value:.1f}"
    return str(value)


def validate_topic_configs(configs: Mapping[str, str | None]) -> dict[str, Any]:
    """Kafka's checks of a topic's whole set of configs (``ControllerConfigurationValidator`` and
    ``LogConfig.validate``): no nulls, known names, values that parse and pass their validators,
    ``min.compaction.lag.ms <= max.compaction.lag.ms``. Returns the parsed values;
    raises :class:`ConfigError`."""
    nulls = [n for n, v in configs.items() if v is None]
    if nulls:
        raise ConfigError("Null value not supported for topic configs: " + ",".join(nulls))
    for name in configs:
        if name not in TOPIC_CONFIG_KEYS:
            raise ConfigError(f"Unknown topic config name: {name}")
    parsed: dict[str, Any] = {}
    for name, text in configs.items():
        key = TOPIC_CONFIG_KEYS[name]
        value = parse_value(key, text or "")
        if key.validator is not None:
            key.validator(name, value)
        parsed[name] = value
    if parsed.get("remote.storage.enable"):
        raise ConfigError("Tiered Storage functionality is disabled in the broker. Topic cannot "
                          "be configured with remote log storage.")
    low = parsed.get("min.compaction.lag.ms", 0)
    high = parsed.get("max.compaction.lag.ms", LONG_MAX)
    if low > high:
        raise ConfigError(f"conflict topic config setting min.compaction.lag.ms ({low}) > "
                          f"max.compaction.lag.ms ({high})")
    return parsed


def is_list(name: str) -> bool:
    key = TOPIC_CONFIG_KEYS.get(name)
    return key is not None and key.type == LIST
