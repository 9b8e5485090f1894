"""Kafka's topic config definitions, the one home of them: ``LogConfig``'s ``ConfigDef`` (each
topic config's type, default and validator) and ``ServerTopicConfigSynonyms`` (the broker-level
names each falls back to), with the parsing and validation Kafka applies to the text values a
client sends, in Kafka's messages (``ConfigException``: ``Invalid value V for configuration N:
...``; ``LogConfig.validateNames``: ``Unknown topic config name: N``).

:class:`~pylogctl.storage.log_config.LogConfig` models the configs the storage engine acts on
and takes its defaults from here; the others (replication, tiered storage, compression levels)
are validated and kept but change nothing offline. ``remote.storage.enable=true`` is refused as
by a broker without tiered storage. :mod:`.topic_config` resolves a topic's effective values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..format.jackson import java_double_str
from ..format.varint import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

# Java's Integer and Long bounds, by the names ConfigDef's types give them
INT_MIN, INT_MAX, LONG_MIN, LONG_MAX = INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX

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


def valid_list(*allowed: str) -> Validator:
    """``ConfigDef.ValidList.in``: no empty items, each one of ``allowed`` (an empty list is
    allowed). Kafka drops duplicates before it validates such a list
    (``ConfigDef.parseValue``): see :func:`distinct`."""
    each = one_of(*allowed)

    def check(name: str, value: Any) -> None:
        if len(set(value)) != len(value):
            raise ConfigError(f"Configuration '{name}' values must not be duplicated.")
        for item in value:
            if not item:
                raise ConfigError(f"Configuration '{name}' values must not be empty.")
            each(name, item)
    check.distinct = True  # type: ignore[attr-defined]
    return check


def distinct(key: "ConfigKey", value: Any) -> Any:
    """The value as Kafka validates it: a list checked by a ``ValidList`` without duplicates."""
    if isinstance(value, list) and getattr(key.validator, "distinct", False):
        return list(dict.fromkeys(value))
    return value


def level(low: int, high: int, default: int) -> Validator:
    """``CompressionType.GZIP.levelValidator``: a range, or the codec's default sentinel."""
    def check(name: str, value: Any) -> None:
        if value > high or (value < low and value != default):
            raise _invalid(name, value,
                           f"Value must be between {low} and {high} or equal to {default}")
    return check


_THROTTLED = re.compile(r"([0-9]+:[0-9]+)?")


def throttled_replicas(name: str, value: Any) -> None:
    """``ThrottledReplicaListValidator``: ``*``, or ``partition:broker`` pairs (empty items
    pass); its message shows the list as Java prints one."""
    items = [v.strip() for v in value]
    if all(_THROTTLED.fullmatch(v) for v in items) or "".join(items) == "*":
        return
    raise ConfigError(f"Invalid value [{', '.join(value)}] for configuration {name}: {name} must "
                      f"be the literal '*' or a list of replicas in the following format: "
                      f"[partitionId]:[brokerId],[partitionId]:[brokerId],...")


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: int
    default: Any
    validator: Validator | None = None


def _k(name: str, type_: int, default: Any, validator: Validator | None = None) -> ConfigKey:
    return ConfigKey(name, type_, default, validator)


_WEEK_MS = 7 * 24 * 60 * 60 * 1000
# LogConfig.CONFIG, in Kafka's definition order (Kafka 4.4, storage/.../LogConfig.java). The
# minimum segment.bytes is Kafka's internal one (14, LogConfig's internal.segment.bytes): Kafka
# 4 refuses topics below 1 MiB, pylogctl's own tests and brokers make smaller segments.
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
    _k("max.decompressed.message.bytes", INT, INT_MAX - 8, between(1, INT_MAX - 8)),
    _k("index.interval.bytes", INT, 4096, at_least(0)),
    _k("delete.retention.ms", LONG, 24 * 60 * 60 * 1000, at_least(0)),
    _k("min.compaction.lag.ms", LONG, 0, at_least(0)),
    _k("max.compaction.lag.ms", LONG, LONG_MAX, at_least(1)),
    _k("file.delete.delay.ms", LONG, 60_000, at_least(0)),
    _k("min.cleanable.dirty.ratio", DOUBLE, 0.5, between(0, 1)),
    _k("cleanup.policy", LIST, ["delete"], valid_list("compact", "delete")),
    _k("unclean.leader.election.enable", BOOLEAN, False),
    _k("min.insync.replicas", INT, 1, at_least(1)),
    _k("compression.type", STRING, "producer",
       one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    _k("compression.gzip.level", INT, -1, level(1, 9, -1)),
    _k("compression.lz4.level", INT, 9, between(1, 17)),
    _k("compression.zstd.level", INT, 3, between(-131072, 22)),
    _k("preallocate", BOOLEAN, False),
    _k("message.timestamp.type", STRING, "CreateTime", one_of("CreateTime", "LogAppendTime")),
    _k("message.timestamp.before.max.ms", LONG, LONG_MAX, at_least(0)),
    _k("message.timestamp.after.max.ms", LONG, 3_600_000, at_least(0)),  # 1 h since Kafka 4.0
    _k("leader.replication.throttled.replicas", LIST, [], throttled_replicas),
    _k("follower.replication.throttled.replicas", LIST, [], throttled_replicas),
    _k("remote.storage.enable", BOOLEAN, False),
    _k("local.retention.ms", LONG, -2, at_least(-2)),
    _k("local.retention.bytes", LONG, -2, at_least(-2)),
    _k("remote.log.copy.disable", BOOLEAN, False),
    _k("remote.copy.lag.ms", LONG, 0, at_least(-1)),
    _k("remote.copy.lag.bytes", LONG, -1, at_least(-1)),
    _k("remote.log.delete.on.disable", BOOLEAN, False),
    _k("errors.deadletterqueue.group.enable", BOOLEAN, False),
)}
# Topic configs of Kafka 3.x that 4.0 removed (KIP-724 and friends): a 4.x broker refuses them,
# but a 3.x cluster's metadata log or server.properties may hold them, and offline they are
# shown where set.
LEGACY_TOPIC_CONFIGS = ("message.format.version", "message.timestamp.difference.max.ms",
                        "message.downconversion.enable")

# what Kafka's coordinators create their topics with (GroupCoordinator's and TransactionLog's
# topic configs: offsets.topic.segment.bytes, transaction.state.log.segment.bytes, ...)
INTERNAL_TOPIC_CONFIGS = {
    "__consumer_offsets": {"cleanup.policy": "compact", "compression.type": "producer",
                           "segment.bytes": "104857600"},
    "__transaction_state": {"cleanup.policy": "compact", "compression.type": "uncompressed",
                            "segment.bytes": "104857600"},
}

_MS = {"": 1, "minutes": 60_000, "hours": 3_600_000}


def _syn(*names: str) -> tuple[tuple[str, int], ...]:
    """Broker synonyms in Kafka's order, each with its unit in ms (1: no conversion)."""
    return tuple((n, _MS[n.rsplit(".", 1)[-1]] if n.endswith(("minutes", "hours")) else 1)
                 for n in names)


# ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS (Kafka 4.4), then the 3.x synonyms of
# the legacy configs: the broker-level names a topic config falls back to, strongest first.
BROKER_SYNONYMS: dict[str, tuple[tuple[str, int], ...]] = {
    "segment.bytes": _syn("log.segment.bytes"),
    "segment.ms": _syn("log.roll.ms", "log.roll.hours"),
    "segment.jitter.ms": _syn("log.roll.jitter.ms", "log.roll.jitter.hours"),
    "segment.index.bytes": _syn("log.index.size.max.bytes"),
    "flush.messages": _syn("log.flush.interval.messages"),
    "flush.ms": _syn("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    "retention.bytes": _syn("log.retention.bytes"),
    "retention.ms": _syn("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "max.message.bytes": _syn("message.max.bytes"),
    "max.decompressed.message.bytes": _syn("max.decompressed.message.bytes"),
    "index.interval.bytes": _syn("log.index.interval.bytes"),
    "delete.retention.ms": _syn("log.cleaner.delete.retention.ms"),
    "min.compaction.lag.ms": _syn("log.cleaner.min.compaction.lag.ms"),
    "max.compaction.lag.ms": _syn("log.cleaner.max.compaction.lag.ms"),
    "file.delete.delay.ms": _syn("log.segment.delete.delay.ms"),
    "min.cleanable.dirty.ratio": _syn("log.cleaner.min.cleanable.ratio"),
    "cleanup.policy": _syn("log.cleanup.policy"),
    "unclean.leader.election.enable": _syn("unclean.leader.election.enable"),
    "min.insync.replicas": _syn("min.insync.replicas"),
    "compression.type": _syn("compression.type"),
    "compression.gzip.level": _syn("compression.gzip.level"),
    "compression.lz4.level": _syn("compression.lz4.level"),
    "compression.zstd.level": _syn("compression.zstd.level"),
    "preallocate": _syn("log.preallocate"),
    "message.timestamp.type": _syn("log.message.timestamp.type"),
    "message.timestamp.before.max.ms": _syn("log.message.timestamp.before.max.ms"),
    "message.timestamp.after.max.ms": _syn("log.message.timestamp.after.max.ms"),
    "local.retention.ms": _syn("log.local.retention.ms"),
    "local.retention.bytes": _syn("log.local.retention.bytes"),
    "remote.copy.lag.ms": _syn("log.remote.copy.lag.ms"),
    "remote.copy.lag.bytes": _syn("log.remote.copy.lag.bytes"),
    "message.format.version": _syn("log.message.format.version"),
    "message.timestamp.difference.max.ms": _syn("log.message.timestamp.difference.max.ms"),
    "message.downconversion.enable": _syn("log.message.downconversion.enable"),
}


def default_text(name: str) -> str:
    """A topic config's default as Kafka's tools print it."""
    return render_value(TOPIC_CONFIG_KEYS[name].default)


# what Double.parseDouble takes (decimal forms; Java's hexadecimal ones are left out)
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")


def parse_value(key: ConfigKey, text: str) -> Any:
    """``ConfigDef.parseType`` of a text value: trimmed first, the untrimmed text in errors."""
    raw = text.strip()
    if key.type == BOOLEAN:
        if raw.lower() not in ("true", "false"):
            raise _invalid(key.name, text, "Expected value to be either true or false")
        return raw.lower() == "true"
    if key.type in (INT, LONG):
        low, high = (INT_MIN, INT_MAX) if key.type == INT else (LONG_MIN, LONG_MAX)
        if not re.fullmatch(r"[+-]?\d+", raw) or not low <= int(raw) <= high:
            raise _invalid(key.name, text, f"Not a number of type {TYPE_NAMES[key.type]}")
        return int(raw)
    if key.type == DOUBLE:
        if not _JAVA_DOUBLE.fullmatch(raw):
            raise _invalid(key.name, text, "Not a number of type DOUBLE")
        return float(raw.rstrip("fFdD").replace("Infinity", "inf"))
    if key.type == LIST:
        return [] if not raw else [p.strip() for p in raw.split(",")]
    return raw


def render_value(value: Any) -> str:
    """``ConfigDef.convertToString``: lists comma-joined, booleans lower case, doubles as Java
    prints them (``Double.toString``)."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return java_double_str(value)
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
        value = distinct(key, parse_value(key, text or ""))
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
