"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs (Kafka's ``ConfigHelper`` and the
KRaft controller's ``ConfigurationControlManager``), for TOPIC and BROKER resources.

Describe, as ``ConfigHelper.createTopicConfigEntry``: every topic config with its value, its
source (TOPIC_CONFIG when the topic sets it, else the source of its first broker synonym:
STATIC_BROKER_CONFIG for a ``log.*`` default given at start-up, else DEFAULT_CONFIG) and, when
asked, its synonyms (the topic's own value, then the broker names it falls back to, strongest
first) and type. Documentation is null. A BROKER resource named after this node lists the
broker settings this broker has, all read-only: it has no dynamic broker configs (so ``""``,
the cluster-wide dynamic default, is empty, and altering a BROKER resource is refused).

Alter, as the controller: the topic's new set of overrides is checked whole (names, values,
nulls; INVALID_CONFIG with Kafka's message), then the topic's existence
(UNKNOWN_TOPIC_OR_PARTITION), then written as ``ConfigRecord``\\ s and applied to the live logs
(:class:`~.config_manager.ConfigManager`). AlterConfigs replaces the whole set (names left out
are deleted); IncrementalAlterConfigs applies SET, DELETE, APPEND and SUBTRACT (the last two on
LIST configs only, starting from Kafka's default when the topic does not set it).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import dropwhile
from operator import attrgetter
from typing import Any, Callable

from ..storage.log_config import LOG_CONFIG_NAMES, LogConfig
from .broker_config import BrokerConfig
from .config_manager import ConfigManager, static_broker_configs
from .error_codes import Errors
from .protocol import Request
from .replica_manager import ReplicaManager, topic_name_problem
from ..storage.topic_config_def import (BOOLEAN, BROKER_SYNONYMS, INT, STRING, TOPIC_CONFIG_KEYS,
                                        ConfigError, is_list, parse_value, render_value)

TOPIC, BROKER = 2, 4  # ConfigResource.Type
# ConfigSource
TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
SET, DELETE, APPEND, SUBTRACT = range(4)  # AlterConfigOp.OpType


@dataclass(frozen=True)
class Entry:
    """One described config: value, source, type and synonyms ((name, value, source))."""

    name: str
    value: str | None
    source: int
    type: int
    synonyms: tuple[tuple[str, str | None, int], ...]
    read_only: bool = False

    def describe(self, include_synonyms: bool) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "read_only": self.read_only,
                "config_source": self.source, "is_sensitive": False,
                "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in self.synonyms]
                if include_synonyms else [],
                "config_type": self.type, "documentation": None}


def _broker_synonyms(topic_name: str, static: dict[str, str]
                     ) -> list[tuple[str, str | None, int]]:
    """The broker names ``topic_name`` falls back to that have a value: the first synonym if
    given at start-up (STATIC), the one holding Kafka's default (its last) as DEFAULT; as
    ``ConfigHelper.configSynonyms``, those before the first one named like the primary broker
    config are dropped, so ``log.retention.hours``' default is no synonym of ``retention.ms``."""
    names = BROKER_SYNONYMS.get(topic_name, ())
    if not names:
        return []
    out: list[tuple[str, str | None, int]] = []
    if topic_name in static:
        out.append((names[0][0], static[topic_name], STATIC_BROKER_CONFIG))
    holder, unit = names[-1]
    key = TOPIC_CONFIG_KEYS.get(topic_name)
    if key is not None:
        default = key.default
        value = default // unit if unit != 1 and isinstance(default, int) else default
        out.append((holder, render_value(value), DEFAULT_CONFIG))
    return list(dropwhile(lambda synonym: synonym[0] != names[0][0], out))


# broker settings with Kafka's defaults: name, the BrokerConfig field, type
_BROKER_SETTINGS = tuple((name, attrgetter(field), type_) for name, field, type_ in (
    ("num.partitions", "num_partitions", INT),
    ("auto.create.topics.enable", "auto_create_topics", BOOLEAN),
    ("socket.request.max.bytes", "socket_request_max_bytes", INT),
    ("log.flush.offset.checkpoint.interval.ms", "checkpoint_interval_ms", INT),
    ("offsets.topic.num.partitions", "group.offsets_topic_partitions", INT),
    ("group.initial.rebalance.delay.ms", "group.initial_rebalance_delay_ms", INT),
    ("group.min.session.timeout.ms", "group.min_session_timeout_ms", INT),
    ("group.max.session.timeout.ms", "group.max_session_timeout_ms", INT),
    ("group.max.size", "group.max_size", INT),
    ("offset.metadata.max.bytes", "group.offset_metadata_max_bytes", INT),
    ("transaction.state.log.num.partitions", "transaction.state_log_partitions", INT),
    ("transaction.max.timeout.ms", "transaction.max_timeout_ms", INT),
    ("transaction.abort.timed.out.transaction.cleanup.interval.ms",
     "transaction.abort_interval_ms", INT)))


class ConfigHandler:
    """The config APIs over a :class:`ConfigManager`."""

    def __init__(self, configs: ConfigManager, replicas: ReplicaManager,
                 broker: BrokerConfig) -> None:
        self.configs = configs
        self.replicas = replicas
        self.broker = broker
        self.static = static_broker_configs(broker.log_config)

    # -- describe -------------------------------------------------------------------------------
    def topic_entries(self, topic: str) -> list[Entry]:
        return self._entries(self.configs.topic_overrides(topic))

    def new_topic_config(self, configs: Any) -> tuple[dict[str, str], LogConfig]:
        """A CreateTopics topic's overrides and the LogConfig they give (Kafka's checks;
        :class:`ConfigError` for INVALID_CONFIG)."""
        overrides = {c.name: c.value for c in configs}
        return overrides, self.configs.validated(overrides)

    def created_configs(self, overrides: dict[str, str]) -> list[dict[str, Any]]:
        """The configs a CreateTopics v5+ response shows for a new topic (KIP-525)."""
        return [{"name": e.name, "value": e.value, "read_only": e.read_only,
                 "config_source": e.source, "is_sensitive": False}
                for e in self._entries(overrides)]

    def _entries(self, overrides: dict[str, str]) -> list[Entry]:
        entries = []
        for name, key in TOPIC_CONFIG_KEYS.items():
            synonyms = _broker_synonyms(name, self.static)
            if name in overrides:
                value = render_value(parse_value(key, overrides[name]))
                synonyms.insert(0, (name, value, TOPIC_CONFIG))
            elif name in self.static:
                value = self.static[name]
            else:
                value = render_value(key.default)
            source = synonyms[0][2] if synonyms else DEFAULT_CONFIG
            entries.append(Entry(name, value, source, key.type, tuple(synonyms)))
        return entries

    def broker_entries(self) -> list[Entry]:
        b = self.broker
        listener = f"PLAINTEXT://{b.host}:{b.port}"
        advertised = (f"PLAINTEXT://{b.advertised_host or b.host}:{b.advertised_port}"
                      if b.advertised_host or b.advertised_port else None)
        d = type(b)(log_dir=b.log_dir)  # BrokerConfig's defaults are Kafka's
        # name -> (value, Kafka's default (None: always set here), type)
        settings: dict[str, tuple[Any, Any, int]] = {
            "node.id": (b.node_id, None, INT), "broker.id": (b.node_id, None, INT),
            "log.dirs": (b.log_dir, None, STRING), "listeners": (listener, None, STRING),
            "advertised.listeners": (advertised, advertised, STRING),
            **{name: (get(b), get(d), type_) for name, get, type_ in _BROKER_SETTINGS}}
        entries = []
        for name, (value, default, type_) in settings.items():
            text = None if value is None else render_value(value)
            source = DEFAULT_CONFIG if default is not None and value == default \
                else STATIC_BROKER_CONFIG
            entries.append(Entry(name, text, source, type_,
                                 ((name, text, source),) if text is not None else (), True))
        for topic_name in LOG_CONFIG_NAMES:
            names = BROKER_SYNONYMS.get(topic_name, ())
            synonyms = _broker_synonyms(topic_name, self.static)
            key = TOPIC_CONFIG_KEYS[topic_name]
            for name, unit in names:
                syns = tuple(x for x in synonyms if x[0] == name)  # static before default
                value, source = (syns[0][1], syns[0][2]) if syns else (None, DEFAULT_CONFIG)
                type_ = INT if unit != 1 else key.type
                entries.append(Entry(name, value, source, type_, syns, True))
        return entries

    def _describe_one(self, resource: Any) -> dict[str, Any]:
        kind, name = resource.resource_type, resource.resource_name
        result = {"error_code": Errors.NONE, "error_message": None, "resource_type": kind,
                  "resource_name": name, "configs": []}

        def error(code: Errors, message: str | None) -> dict[str, Any]:
            return {**result, "error_code": code, "error_message": message}
        if kind == TOPIC:
            problem = topic_name_problem(name)
            if problem is not None:
                return error(Errors.INVALID_TOPIC_EXCEPTION, problem)
            if name not in self.replicas.topics:
                return error(Errors.UNKNOWN_TOPIC_OR_PARTITION, None)
            entries = self.topic_entries(name)
        elif kind == BROKER:
            if name == "":
                entries = []  # no dynamic cluster-wide defaults
            else:
                try:
                    broker_id = int(name)
                except ValueError:
                    return error(Errors.INVALID_REQUEST,
                                 f"Broker id must be an integer, but it is: {name}")
                if broker_id != self.broker.node_id:
                    return error(Errors.INVALID_REQUEST,
                                 f"Unexpected broker id, expected {self.broker.node_id} or "
                                 f"empty string, but received {name}")
                entries = self.broker_entries()
        else:
            return error(Errors.INVALID_REQUEST, f"Unsupported resource type: {kind}")
        keys = resource.configuration_keys
        if keys:
            entries = [e for e in entries if e.name in keys]
        return {**result, "configs": entries}

    async def describe_configs(self, request: Request, connection: Any) -> dict[str, Any]:
        body = request.body
        synonyms = getattr(body, "include_synonyms", False)
        results = []
        for resource in body.resources:
            result = self._describe_one(resource)
            result["configs"] = [e.describe(synonyms) for e in result["configs"]]
            results.append(result)
        return {"throttle_time": 0, "results": results}

    # -- alter ----------------------------------------------------------------------------------
    def _alter_one(self, kind: int, name: str, validate_only: bool,
                   change: Callable[[dict[str, str]], dict[str, str | None]]
                   ) -> tuple[Errors, str | None]:
        if kind == BROKER:
            return Errors.INVALID_REQUEST, ("This broker has no dynamic broker configs: set "
                                            "them with `pylogctl broker start` options")
        if kind != TOPIC:
            return Errors.INVALID_REQUEST, f"Unknown resource type {kind}"
        problem = topic_name_problem(name)
        if problem is not None:
            return Errors.INVALID_TOPIC_EXCEPTION, problem
        try:
            new = change(self.configs.topic_overrides(name))
            self.configs.validated(new)
        except ConfigError as exc:
            return Errors.INVALID_CONFIG, exc.message
        if name not in self.replicas.topics:
            return Errors.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist."
        if not validate_only:
            self.configs.alter(name, {k: v for k, v in new.items() if v is not None})
        return Errors.NONE, None

    def _responses(self, body: Any, change_for: Callable[[Any], Callable]) -> dict[str, Any]:
        responses = []
        for r in body.resources:
            names = [c.name for c in r.configs]
            if len(names) != len(set(names)):
                code, message = Errors.INVALID_REQUEST, "Error due to duplicate config keys"
            else:
                code, message = self._alter_one(r.resource_type, r.resource_name,
                                                body.validate_only, change_for(r))
            responses.append({"error_code": code, "error_message": message,
                              "resource_type": r.resource_type,
                              "resource_name": r.resource_name})
        return {"throttle_time": 0, "responses": responses}

    async def alter_configs(self, request: Request, connection: Any) -> dict[str, Any]:
        """The legacy API: the request's configs become the topic's whole set."""
        def change_for(resource: Any) -> Callable:
            return lambda old: {c.name: c.value for c in resource.configs}
        return self._responses(request.body, change_for)

    async def incremental_alter_configs(self, request: Request,
                                        connection: Any) -> dict[str, Any]:
        def change_for(resource: Any) -> Callable:
            return lambda old: _apply_ops(old, resource.configs)
        return self._responses(request.body, change_for)


def _apply_ops(old: dict[str, str], ops: Any) -> dict[str, str | None]:
    new: dict[str, str | None] = dict(old)
    for op in ops:
        kind, name = op.config_operation, op.name
        if kind == SET:
            new[name] = op.value
        elif kind == DELETE:
            new.pop(name, None)
        elif kind in (APPEND, SUBTRACT):
            verb = "APPEND" if kind == APPEND else "SUBTRACT"
            if not is_list(name):
                raise ConfigError(f"Can't {verb} to key {name} because its type is not LIST.")
            current = new.get(name)
            if current is None:
                current = render_value(TOPIC_CONFIG_KEYS[name].default)
            parts = [p for p in current.split(",") if p]
            for item in (op.value or "").split(","):
                if kind == APPEND and item not in parts:
                    parts.append(item)
                elif kind == SUBTRACT and item in parts:
                    parts.remove(item)
            new[name] = ",".join(parts)
        else:
            raise ConfigError(f"Unknown config operation {kind} for key {name}")
    return new
