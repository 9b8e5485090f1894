"""``pylogctl config``: each topic's effective configuration, and where each value came from.

The paths (partition dirs, log dirs, dirs of log dirs) name log dirs; every log dir is one
broker's view, so each gets its own :class:`~pylogctl.storage.topic_config.ConfigSources`: its
own ``__cluster_metadata`` log, or, when it has none, the metadata log of another log dir
given with the same ``cluster.id`` (a broker whose metadata log lives in another of its log
dirs). Each metadata log is replayed once per run. ``pylogctl retention`` resolves configs
through the same :class:`TopicConfigs`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from ..errors import PylogctlError
from ..storage.kraft_configs import KraftConfigs, find_metadata_dir, read_kraft_configs
from ..storage.lock import ensure_unlocked
from ..storage.log_dir_layout import META_PROPERTIES
from ..storage.log_dir import LogDir, PartitionEntry
from ..storage.metadata_files import read_properties
from ..storage.topic_config import ConfigSources, TopicConfig
from .log_dir_run import Target, resolve_targets


@dataclass(frozen=True)
class ConfigOptions:
    """Where configs come from besides the metadata log (see :mod:`..storage.topic_config`)."""

    overrides: Mapping[str, str] = field(default_factory=dict)  # --config NAME=VALUE
    config_file: str | None = None


class TopicConfigs:
    """The config sources of every log dir of a run, built on first use."""

    def __init__(self, log_dirs: list[str], options: ConfigOptions) -> None:
        self.log_dirs = log_dirs
        self.options = options
        self._sources: dict[str, ConfigSources] = {}
        self._replayed: dict[str, KraftConfigs] = {}

    def sources(self, log_dir: LogDir) -> ConfigSources:
        if log_dir.path not in self._sources:
            cluster = _cluster(log_dir.path)
            others = [m for d in self.log_dirs if d != log_dir.path and _cluster(d) == cluster
                      for m in [find_metadata_dir(d)] if m is not None]
            self._sources[log_dir.path] = ConfigSources.for_log_dir(
                log_dir.path, self.options.overrides, self.options.config_file,
                metadata_dirs=others, read_kraft=self._replay)
        return self._sources[log_dir.path]

    def _replay(self, metadata_dir: str) -> KraftConfigs:
        if metadata_dir not in self._replayed:
            self._replayed[metadata_dir] = read_kraft_configs(metadata_dir)
        return self._replayed[metadata_dir]


def _cluster(log_dir: str) -> str | None:
    path = os.path.join(log_dir, META_PROPERTIES)
    return read_properties(path).get("cluster.id") if os.path.exists(path) else None


@dataclass
class TopicConfigSection:
    """A formatter section: one topic of one log dir, a config value per item."""

    log_dir: str
    topic: str
    partitions: tuple[int, ...]
    config: TopicConfig | None = None
    error: PylogctlError | None = None
    kind: str = "topic-config"
    items_key: str = "configs"

    @property
    def header(self) -> dict[str, Any]:
        return {"topic": self.topic, "logDir": self.log_dir, "partitions": list(self.partitions)}

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        for v in self.config.values if self.config else ():
            yield {"name": v.name, "value": v.value, "source": v.source, "origin": v.origin,
                   "synonym": v.synonym}

    @property
    def footer(self) -> dict[str, Any]:
        return {"error": None if self.error is None else str(self.error)}


@dataclass
class ConfigRun:
    """``pylogctl config`` over ``paths``: a section per (log dir, topic), by topic name."""

    paths: list[str]
    topics: tuple[str, ...] = ()
    options: ConfigOptions = field(default_factory=ConfigOptions)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.targets = resolve_targets(self.paths, "config")
        for target in self.targets:
            ensure_unlocked(target.log_dir)  # a live broker's files are in flux
        self.configs = TopicConfigs([t.log_dir for t in self.targets], self.options)
        for target in self.targets:  # a bad config file or metadata log fails here, up front
            self.configs.sources(LogDir(target.log_dir))

    def sections(self) -> Iterator[TopicConfigSection]:
        for target in self.targets:
            log_dir = LogDir(target.log_dir)
            entries = selected_entries(log_dir, target, self.topics)
            by_topic: dict[str, list[int]] = {}
            for entry in entries:
                if not entry.is_metadata_log:
                    by_topic.setdefault(entry.topic, []).append(entry.partition)
            sources = self.configs.sources(log_dir)
            self.notes += [f"{log_dir.path}: {n}" for n in sources.notes]
            for topic, partitions in sorted(by_topic.items()):
                section = TopicConfigSection(log_dir.path, topic, tuple(partitions))
                try:
                    section.config = sources.topic(topic)
                except PylogctlError as exc:
                    section.error = exc
                yield section


def selected_entries(log_dir: LogDir, target: Target, topics: tuple[str, ...] = (),
                     partitions: tuple[int, ...] = ()) -> list[PartitionEntry]:
    """The partitions of a log dir a run covers: those named, else all; then filtered."""
    return [e for e in target.entries(log_dir) if (not topics or e.topic in topics)
            and (not partitions or e.partition in partitions)]

