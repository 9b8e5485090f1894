"""Topic configs of the broker (the parts of Kafka's ``ConfigurationControlManager``,
``ConfigRepository`` and ``DynamicConfigManager`` a single node needs).

A topic's effective config is the broker's ``log.*`` defaults overlaid with the topic's own
configs (its overrides), as ``LogConfig.fromProps(config.extractLogConfigMap, topicProps)``.
The overrides live in ``__cluster_metadata-0`` as KRaft ``ConfigRecord``\\ s
(:mod:`.metadata_log`), so a restart replays them and ``pylogctl config`` on the stopped log
dir reports them as ``kraft-topic`` values. Internal topics get the configs their coordinator
creates them with (compacted, 100 MiB segments) as overrides, as Kafka's do.

Topics appear in the metadata log as ``TopicRecord`` + ``PartitionRecord``\\ s: at once when
created through CreateTopics, otherwise (auto-created, internal, or created by a broker that
predates this log) at the next :meth:`ConfigManager.sync_topics`: at start-up, before every
config change, and at shutdown. A deleted topic gets its ``RemoveTopicRecord`` (which drops its
configs in every replay) at once. A change to a live topic's configs is applied to its logs at
once (Kafka's ``UnifiedLog.updateConfig``): a new retention, segment size or cleanup policy
counts from the next roll, retention pass or cleaning.
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any, Mapping

from ..storage.log_config import (LOG_CONFIG_NAMES, OFFSETS_TOPIC_CONFIG,
                                  TRANSACTION_STATE_TOPIC_CONFIG, LogConfig)
from ..storage.log_dir_layout import META_PROPERTIES
from ..storage.metadata_files import read_properties
from ..storage.kraft_configs import PartitionState
from .log_manager import LogManager, uuid_from_kafka, uuid_to_kafka
from .metadata_log import (MetadataLog, Record, config_record, partition_change_records,
                           partition_record, remove_topic_record, topic_record)
from .replica_manager import (OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, Partition,
                              ReplicaManager, Topic)
from ..storage.topic_config_def import ConfigError, validate_topic_configs

logger = logging.getLogger(__name__)


def _diff(config: LogConfig, base: LogConfig = LogConfig()) -> dict[str, str]:
    """The topic config names (and values) where ``config`` differs from ``base``."""
    mine, theirs = config.to_properties(), base.to_properties()
    return {k: v for k, v in mine.items() if theirs[k] != v}


# what the coordinators create their topics with (offsets.topic.*, transaction.state.log.*)
INTERNAL_TOPIC_OVERRIDES: dict[str, dict[str, str]] = {
    OFFSETS_TOPIC: _diff(OFFSETS_TOPIC_CONFIG),
    TRANSACTION_STATE_TOPIC: _diff(TRANSACTION_STATE_TOPIC_CONFIG),
}


class ConfigManager:
    """The broker's topic configs: :meth:`topic_config` for the logs, validation and changes
    for the config APIs. Loads itself on first use (under the log dir's lock)."""

    def __init__(self, log_manager: LogManager, broker_defaults: LogConfig) -> None:
        self.log_manager = log_manager
        self.broker_defaults = broker_defaults
        self.metadata = MetadataLog(log_manager.path, log_manager.lock)
        self.overrides: dict[str, dict[str, str]] = {}
        self._topic_ids: dict[uuid.UUID, str] = {}  # as the metadata log has them
        self._partitions: dict[tuple[str, int], PartitionState] = {}  # as replayed at start
        self._loaded = False
        self.replicas: ReplicaManager | None = None
        self.features: dict[str, int] = {}  # finalized feature levels (metadata log)

    # -- life cycle -----------------------------------------------------------------------------
    def _load(self) -> None:
        if self._loaded:
            return
        if not self.log_manager.lock.locked:
            raise RuntimeError("topic configs are read under the log dir's lock")
        replay = self.metadata.open(self.log_manager.node_id)
        self._loaded = True
        self._partitions = replay.partitions
        self.features = dict(replay.features)
        for note in replay.notes:
            logger.warning("%s", note)
        self.overrides = {t: {n: e.value for n, e in c.items()} for t, c in replay.topics.items()
                          if c}
        self._topic_ids = {uuid_from_kafka(i): name for i, name in replay.topic_names.items()}

    def startup(self, replicas: ReplicaManager) -> None:
        """Lead every partition the metadata log knows, in a new leader epoch; record the
        topics it does not know yet. Before anything is appended to a partition."""
        self._load()
        self.replicas = replicas
        self._take_over_partitions()
        self.sync_topics()

    def _take_over_partitions(self) -> None:
        """Each known partition's leader epoch goes above both the registered one and the
        last one in its data, recorded in ``PartitionChangeRecord`` entries, so the real
        broker starting on this dir later leads it in an epoch the data has not passed."""
        assert self.replicas is not None
        node = self.log_manager.node_id
        records: list[Record] = []
        for partition in self.replicas.all_partitions():
            old = self._partitions.get((uuid_to_kafka(partition.topic_id), partition.index))
            if old is None or self._topic_ids.get(partition.topic_id) != partition.topic:
                continue
            partition.leader_epoch = max(partition.leader_epoch, old.leader_epoch + 1)
            records += partition_change_records(partition.topic_id, partition.index, node, old,
                                                partition.leader_epoch)
        self.metadata.append(records)

    def shutdown(self) -> None:
        if self._loaded and self.metadata.log is not None:
            if self.replicas is not None:
                self.sync_topics()
            self.metadata.close()

    # -- reading --------------------------------------------------------------------------------
    def topic_overrides(self, topic: str) -> dict[str, str]:
        self._load()
        return dict(self.overrides.get(topic, INTERNAL_TOPIC_OVERRIDES.get(topic, {})))

    def topic_config(self, topic: str) -> LogConfig:
        """The effective LogConfig of ``topic`` (broker defaults + its overrides)."""
        return self.effective_config(self.topic_overrides(topic))

    def effective_config(self, overrides: Mapping[str, str]) -> LogConfig:
        props: dict[str, Any] = self.broker_defaults.to_properties()
        props.update({k: v for k, v in overrides.items() if k in LOG_CONFIG_NAMES})
        return LogConfig.from_properties(props)

    def validated(self, overrides: Mapping[str, str | None]) -> LogConfig:
        """Check a topic's complete set of overrides as Kafka does; the LogConfig they give.
        Raises :class:`ConfigError`."""
        validate_topic_configs(overrides)
        try:
            return self.effective_config({k: v for k, v in overrides.items() if v is not None})
        except Exception as exc:  # noqa: BLE001 - LogConfig's own range checks
            raise ConfigError(getattr(exc, "message", str(exc))) from None

    # -- changes --------------------------------------------------------------------------------
    def topic_created(self, topic: Topic, overrides: Mapping[str, str]) -> None:
        """Record a topic CreateTopics made, with its configs, as one batch."""
        self._load()
        self.overrides[topic.name] = dict(overrides)
        records = self._topic_records(topic)
        records += [config_record(topic.name, n, v) for n, v in overrides.items()]
        self.metadata.append(records)
        self._topic_ids[topic.topic_id] = topic.name

    def partitions_created(self, topic: Topic, partitions: list[Partition]) -> None:
        """Record partitions CreatePartitions added to a live topic, as one batch."""
        self._load()
        node, directory = self.log_manager.node_id, self._directory_id()
        self.metadata.append([partition_record(topic.topic_id, p.index, node, p.leader_epoch,
                                               directory) for p in partitions])

    def topic_deleted(self, name: str, topic_id: uuid.UUID) -> None:
        """Forget the topic's configs (``RemoveTopicRecord``)."""
        self._load()
        self.overrides.pop(name, None)
        if self._topic_ids.pop(topic_id, None) is not None:
            self.metadata.append([remove_topic_record(topic_id)])

    def alter(self, topic: str, new_overrides: Mapping[str, str]) -> None:
        """Replace a live topic's overrides (validated by the caller): write the changed
        names, apply the new config to its logs."""
        self._load()
        self.sync_topics()
        old = self.topic_overrides(topic)
        records = [config_record(topic, n, v) for n, v in sorted(new_overrides.items())
                   if old.get(n) != v]
        records += [config_record(topic, n, None) for n in sorted(old) if n not in new_overrides]
        self.metadata.append(records)
        self.overrides[topic] = dict(new_overrides)
        config = self.effective_config(new_overrides)
        assert self.replicas is not None
        live = self.replicas.topics.get(topic)
        for partition in live.partitions.values() if live else ():
            partition.log.config = config  # UnifiedLog.updateConfig
        logger.info("Topic %s configs now %s", topic, new_overrides)

    def sync_topics(self) -> None:
        """Write ``TopicRecord``\\ s for live topics the metadata log lacks, with their
        internal-topic configs, and ``RemoveTopicRecord``\\ s for ones gone."""
        assert self.replicas is not None
        live = {t.topic_id: t for t in self.replicas.topics.values()}
        records: list[Record] = []
        for topic_id, name in list(self._topic_ids.items()):
            if topic_id not in live:
                records.append(remove_topic_record(topic_id))
                del self._topic_ids[topic_id]
                self.overrides.pop(name, None)
        for topic_id, topic in live.items():
            if topic_id in self._topic_ids:
                continue
            records += self._topic_records(topic)
            internal = INTERNAL_TOPIC_OVERRIDES.get(topic.name, {})
            if internal and topic.name not in self.overrides:
                self.overrides[topic.name] = dict(internal)
                records += [config_record(topic.name, n, v) for n, v in internal.items()]
            self._topic_ids[topic_id] = topic.name
        self.metadata.append(records)

    def _topic_records(self, topic: Topic) -> list[Record]:
        node, directory = self.log_manager.node_id, self._directory_id()
        return [topic_record(topic.name, topic.topic_id)] + [
            partition_record(topic.topic_id, p.index, node, p.leader_epoch, directory)
            for p in sorted(topic.partitions.values(), key=lambda p: p.index)]

    def _directory_id(self) -> uuid.UUID | None:
        path = os.path.join(self.log_manager.path, META_PROPERTIES)
        found = read_properties(path).get("directory.id") if os.path.exists(path) else None
        return uuid_from_kafka(found) if found else None


def static_broker_configs(defaults: LogConfig) -> dict[str, str]:
    """Topic config name -> value of the broker defaults that differ from Kafka's (what a
    ``server.properties`` would set as ``log.*``)."""
    return _diff(defaults)
