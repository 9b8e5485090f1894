"""A topic's effective configuration, and where each value comes from.

A broker gives a partition's log the topic's own configs, and for every name the topic does not
set, the broker's value of the matching broker-level name (``retention.ms`` <- ``log.retention.ms``,
``log.retention.minutes`` or ``log.retention.hours``, the first set, converted to ms; Kafka's
``ServerTopicConfigSynonyms``), else Kafka's default (the names, synonyms and defaults are
:mod:`.topic_config_def`'s, Kafka 4.4's; a topic shows every one, as ``kafka-configs --describe
--all`` does, and the Kafka 3.x configs 4.0 removed where a source sets them). Offline, the
sources are, strongest first:

1. ``--config NAME=VALUE`` with a topic config name;
2. a properties file (``--config-file``), its topic config names;
3. the topic's ``ConfigRecord``\\ s in the KRaft metadata log (:mod:`.kraft_configs`);
4. broker-level names: merged name by name from the KRaft broker records for this broker
   (``node.id``), then the cluster-wide default records (resource ``""``), then ``--config``,
   then the properties file (a broker's ``server.properties``: dynamic broker configs beat static
   ones in Kafka), and mapped onto topic names as above;
5. the configs Kafka gives its internal topics at creation (``__consumer_offsets`` and
   ``__transaction_state`` are compacted; on a ZooKeeper cluster they are not on disk);
6. Kafka's defaults.

A broker-level name never beats a topic's own config, so pointing ``--config-file`` at a
``server.properties`` with ``log.retention.hours=168`` leaves a topic set to keep its data
forever (``retention.ms=-1``) alone. Names in the file that are neither topic configs nor their
broker synonyms (``listeners``, ``node.id``, ...) are ignored; on the command line they are an
error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from ..errors import UsageError
from .kraft_configs import KraftConfigs, find_metadata_dir, read_kraft_configs
from .cleaner.cleaner_config import CLEANER_CONFIG_NAMES
from .log_config import LOG_CONFIG_NAMES, LogConfig
from .topic_config_def import (BROKER_SYNONYMS, INTERNAL_TOPIC_CONFIGS, LEGACY_TOPIC_CONFIGS,
                               TOPIC_CONFIG_KEYS, default_text)
from .log_dir_layout import META_PROPERTIES
from .metadata_files import read_properties

# every name a topic config can have offline: Kafka 4.4's, and the 3.x ones a 3.x cluster set
TOPIC_CONFIG_NAMES = frozenset(TOPIC_CONFIG_KEYS) | frozenset(LEGACY_TOPIC_CONFIGS)
# broker-only settings other commands read through :meth:`ConfigSources.broker_settings`
_SYNONYMS = {name for synonyms in BROKER_SYNONYMS.values() for name, _ in synonyms}
BROKER_ONLY_CONFIGS = CLEANER_CONFIG_NAMES - _SYNONYMS  # log.cleaner.*
_BROKER_NAMES = _SYNONYMS | BROKER_ONLY_CONFIGS
# Kafka's Topic.INTERNAL_TOPICS: hidden from listings that exclude internal topics, refused to
# producers and to deletion
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})

# sources, strongest first
COMMAND_LINE = "command-line"
CONFIG_FILE = "config-file"
KRAFT_TOPIC = "kraft-topic"
KRAFT_BROKER = "kraft-broker"
KRAFT_CLUSTER_DEFAULT = "kraft-cluster-default"
COMMAND_LINE_BROKER = "command-line-broker"
CONFIG_FILE_BROKER = "config-file-broker"
INTERNAL_TOPIC_DEFAULT = "internal-topic-default"
DEFAULT = "default"


@dataclass(frozen=True)
class ConfigValue:
    """One effective topic config: its value (as text), the source, and where in the source
    (a file and line, a metadata-log record); ``synonym`` is the broker-level name it came
    from, if it did."""

    name: str
    value: str
    source: str
    origin: str | None = None
    synonym: str | None = None


@dataclass(frozen=True)
class TopicConfig:
    topic: str
    values: tuple[ConfigValue, ...]  # by name
    log_config: LogConfig

    def get(self, name: str) -> ConfigValue | None:
        return next((v for v in self.values if v.name == name), None)


_Layer = dict[str, tuple[str, str]]  # name -> (value, origin)


@dataclass
class ConfigSources:
    """The sources of one broker's topic configs (a log dir's view). Build with
    :meth:`for_log_dir`; :meth:`topic` resolves a topic."""

    overrides: _Layer = field(default_factory=dict)
    file_topic: _Layer = field(default_factory=dict)
    kraft: KraftConfigs | None = None
    broker_id: str | None = None
    broker_layers: tuple[tuple[str, _Layer], ...] = ()
    notes: list[str] = field(default_factory=list)

    @classmethod
    def for_log_dir(cls, log_dir: str | os.PathLike[str], overrides: Mapping[str, str] = {},
                    config_file: str | os.PathLike[str] | None = None, *,
                    metadata_dirs: Iterable[str] = (),
                    read_kraft: Callable[[str], KraftConfigs] = read_kraft_configs
                    ) -> "ConfigSources":
        """The sources for the partitions of ``log_dir``. Its own ``__cluster_metadata`` log is
        replayed, or else the first of ``metadata_dirs`` (the metadata log of another log dir
        of the same broker); ``read_kraft`` lets a caller replay each metadata log once."""
        cli_topic, cli_broker = _split(overrides.items(), "--config", strict=True)
        file_topic: _Layer = {}
        file_broker: _Layer = {}
        notes: list[str] = []
        if config_file is not None:
            file_topic, file_broker, ignored = _read_config_file(os.fspath(config_file))
            if ignored:
                notes.append(f"{config_file}: {len(ignored)} names that are neither topic "
                             f"configs nor their broker synonyms ignored ({', '.join(ignored[:5])}"
                             f"{', ...' if len(ignored) > 5 else ''})")
        metadata_dir = find_metadata_dir(log_dir) or next(iter(metadata_dirs), None)
        kraft = None if metadata_dir is None else read_kraft(metadata_dir)
        if kraft is None:
            notes.append("no __cluster_metadata log: topic configs kept by ZooKeeper (or by a "
                         "metadata log dir not given) are not on disk; pass them with --config "
                         "or --config-file")
        broker_id = _broker_id(os.fspath(log_dir))
        layers: list[tuple[str, _Layer]] = []
        if kraft is not None:
            notes += kraft.notes
            if broker_id is not None:
                layers.append((KRAFT_BROKER, _entries(kraft.brokers.get(broker_id, {}))))
            layers.append((KRAFT_CLUSTER_DEFAULT, _entries(kraft.brokers.get("", {}))))
        layers += [(COMMAND_LINE_BROKER, cli_broker), (CONFIG_FILE_BROKER, file_broker)]
        return cls(cli_topic, file_topic, kraft, broker_id, tuple(layers), notes)

    def topic(self, topic: str) -> TopicConfig:
        """The effective configuration of ``topic``; a value LogConfig refuses is a
        :class:`UsageError` naming its source."""
        kraft_topic = _entries(self.kraft.topics.get(topic, {})) if self.kraft else {}
        topic_layers = ((COMMAND_LINE, self.overrides), (CONFIG_FILE, self.file_topic),
                        (KRAFT_TOPIC, kraft_topic))
        broker = self._merged_broker()
        names = set(TOPIC_CONFIG_KEYS)  # every config Kafka describes, as kafka-configs --all
        names.update(n for n in LEGACY_TOPIC_CONFIGS
                     if any(syn in broker for syn, _ in BROKER_SYNONYMS[n]))
        for _, layer in topic_layers:
            names.update(layer)
        values = [self._resolve(topic, name, topic_layers, broker) for name in sorted(names)]
        found = [v for v in values if v is not None]
        return TopicConfig(topic, tuple(found), _log_config(found))

    def broker_settings(self, names: Iterable[str]) -> dict[str, ConfigValue]:
        """The broker-level settings among ``names`` that a source sets (the cleaner's
        ``log.cleaner.*``, say), each from its strongest source (step 4 of the module docs)."""
        broker = self._merged_broker()
        return {n: ConfigValue(n, broker[n][0], broker[n][1], broker[n][2]) for n in names
                if n in broker}

    def _merged_broker(self) -> dict[str, tuple[str, str, str]]:
        """Broker name -> (value, source, origin), the strongest layer setting it."""
        merged: dict[str, tuple[str, str, str]] = {}
        for source, layer in self.broker_layers:
            for name, (value, origin) in layer.items():
                merged.setdefault(name, (value, source, origin))
        return merged

    def _resolve(self, topic: str, name: str, topic_layers, broker) -> ConfigValue | None:
        for source, layer in topic_layers:
            if name in layer:
                value, origin = layer[name]
                return ConfigValue(name, value, source, origin)
        for synonym, unit in BROKER_SYNONYMS.get(name, ()):
            if synonym in broker:
                value, source, origin = broker[synonym]
                return ConfigValue(name, _convert(synonym, value, unit, origin), source, origin,
                                   synonym)
        internal = INTERNAL_TOPIC_CONFIGS.get(topic, {})
        if name in internal:
            return ConfigValue(name, internal[name], INTERNAL_TOPIC_DEFAULT,
                               f"what Kafka creates {topic} with")
        default = _DEFAULTS.get(name)
        return None if default is None else ConfigValue(name, default, DEFAULT)


_DEFAULTS = {name: default_text(name) for name in TOPIC_CONFIG_KEYS}


def parse_overrides(pairs: Iterable[str]) -> dict[str, str]:
    """``NAME=VALUE`` strings (``--config``), the last of a name winning."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--config takes NAME=VALUE, not {pair!r}")
        out[name.strip()] = value.strip()
    return out


def _split(items: Iterable[tuple[str, str]], origin: str, strict: bool
           ) -> tuple[_Layer, _Layer]:
    topic: _Layer = {}
    broker: _Layer = {}
    for name, value in items:
        if name in TOPIC_CONFIG_NAMES:
            topic[name] = (value, origin)
        elif name in _BROKER_NAMES:
            broker[name] = (value, origin)
        elif strict:
            raise UsageError(f"Unknown topic config name: {name} (topic configs such as "
                             f"retention.ms, their broker synonyms such as log.retention.hours, "
                             f"or log.cleaner.* settings)")
    return topic, broker


def _read_config_file(path: str) -> tuple[_Layer, _Layer, list[str]]:
    props = read_properties(path)
    lines = _line_numbers(path)
    topic, broker = _split(((n, v) for n, v in props.items()), path, strict=False)
    for layer in (topic, broker):
        for name, (value, _) in layer.items():
            layer[name] = (value, f"{path} line {lines.get(name, '?')}")
    ignored = [n for n in props if n not in topic and n not in broker]
    return topic, broker, ignored


def _line_numbers(path: str) -> dict[str, int]:
    """Name -> the line of its last definition (the one ``read_properties`` keeps)."""
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            text = line.strip()
            if text and text[0] not in "#!":
                cut = min((i for i in (text.find("="), text.find(":")) if i >= 0),
                          default=len(text))
                out[text[:cut].strip()] = number
    return out


def _entries(configs: Mapping) -> _Layer:
    return {name: (entry.value, entry.origin) for name, entry in configs.items()}


def _convert(synonym: str, value: str, unit: int, origin: str) -> str:
    if unit == 1:
        return value
    try:
        return str(int(value.strip()) * unit)
    except ValueError:
        raise UsageError(f"Invalid value {value} for configuration {synonym} "
                         f"({origin})") from None


def _log_config(values: list[ConfigValue]) -> LogConfig:
    props = {v.name: v.value for v in values if v.name in LOG_CONFIG_NAMES}
    try:
        return LogConfig.from_properties(props)
    except UsageError:
        for v in values:  # find the culprit, to name its source
            if v.name in props:
                try:
                    LogConfig.from_properties({v.name: v.value})
                except UsageError as exc:
                    where = f"{v.source}" + (f", {v.origin}" if v.origin else "")
                    raise UsageError(f"{exc.message} (from {where})") from None
        raise


def _broker_id(log_dir: str) -> str | None:
    """``node.id`` (KRaft) or ``broker.id`` from the log dir's ``meta.properties``."""
    path = os.path.join(log_dir, META_PROPERTIES)
    if not os.path.exists(path):
        return None
    props = read_properties(path)
    return props.get("node.id", props.get("broker.id"))

