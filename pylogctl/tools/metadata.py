"""``pylogctl metadata``: the KRaft metadata image of a node, from its files.

The source is a log dir holding ``__cluster_metadata-0``, that dir itself (the image a node
builds: latest snapshot, then the log), or one ``.checkpoint``/``.log`` file, read alone as
``kafka-metadata-shell --snapshot FILE`` reads it (:func:`open_metadata`). On the image:
the shell's commands (:mod:`.metadata_shell`), and the views operators ask for, as rows:
topics as ``kafka-topics --describe`` shows them, brokers, controllers, features as
``kafka-features describe``. :mod:`.metadata_check` compares the image with log dirs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from ..errors import UsageError
from ..groups.java_hash_map import hash_map_order
from ..groups.partitioner import java_string_hash
from ..storage.files import require_path
from ..storage.kraft_configs import kraft_configs_of
from ..storage.metadata_image import (METADATA_VERSION_FEATURE, METADATA_VERSIONS,
                                      MetadataImage)
from ..storage.metadata_loader import (METADATA_PARTITION_DIR, MetadataReplay,
                                       bytes_to_replay, load_metadata_dir, load_metadata_file,
                                       metadata_files)
from ..storage.topic_config import DEFAULT, INTERNAL_TOPICS, ConfigSources, ConfigValue
from ..storage.topic_config_def import BROKER_SYNONYMS, TOPIC_CONFIG_KEYS
from .metadata_nodes import SECURITY_PROTOCOLS, root_node
from .metadata_shell import Shell


@dataclass
class MetadataSource:
    """What was read: the replay, and the log dir it belongs to (None for a lone file or a
    metadata dir outside a log dir)."""

    replay: MetadataReplay
    log_dir: Optional[str]

    @property
    def image(self) -> MetadataImage:
        return self.replay.image

    def shell(self, width: Optional[int] = None) -> Shell:
        return Shell(root_node(self.image), width=width)


def resolve_source(source: str | os.PathLike[str]) -> tuple[str, Optional[str], bool]:
    """``(path to read, its log dir or None, whether it is one file)``; one-line errors for
    what holds no metadata log."""
    path = os.path.abspath(require_path(source))
    if os.path.isfile(path):
        if not path.endswith((".checkpoint", ".log")):
            raise UsageError(f"{source}: not a KRaft snapshot (.checkpoint) or a log segment "
                             f"(.log)")
        return path, None, True
    if os.path.basename(path) == METADATA_PARTITION_DIR or any(metadata_files(path)):
        parent = os.path.dirname(path)
        is_log_dir = os.path.basename(path) == METADATA_PARTITION_DIR and \
            os.path.exists(os.path.join(parent, "meta.properties"))
        return path, parent if is_log_dir else None, False
    inner = os.path.join(path, METADATA_PARTITION_DIR)
    if os.path.isdir(inner):
        return inner, path, False
    raise UsageError(f"{source}: no {METADATA_PARTITION_DIR} in this dir: not the log dir of "
                     f"a KRaft broker or controller that keeps the metadata log")


def replay_size(source: str | os.PathLike[str]) -> int:
    """The bytes :func:`open_metadata` will read, for a progress bar."""
    path, _, is_file = resolve_source(source)
    return os.path.getsize(path) if is_file else bytes_to_replay(path)


def open_metadata(source: str | os.PathLike[str],
                  progress: Optional[Callable[[int], None]] = None) -> MetadataSource:
    """Read a log dir, a ``__cluster_metadata-0`` dir, or one snapshot or segment file."""
    path, log_dir, is_file = resolve_source(source)
    if is_file:
        return MetadataSource(load_metadata_file(path, progress), None)
    return MetadataSource(load_metadata_dir(path, progress=progress), log_dir)


def _config_order() -> list[str]:
    # LogConfig's values as DescribeConfigs lists them: a HashMap of the non-internal names
    return hash_map_order(list(TOPIC_CONFIG_KEYS), java_string_hash)


def topic_descriptions(src: MetadataSource, topics: Iterable[str] = (),
                       exclude_internal: bool = False,
                       config_file: Optional[str] = None) -> list[dict[str, Any]]:
    """A topic per item, ordered as ``kafka-topics --describe`` lists them, with its
    partitions sorted. ``configs`` are the values that are not Kafka's defaults, as the
    broker would describe them: the topic's own, the dynamic broker configs of the image and
    ``config_file`` (a server.properties: static configs are not in the metadata)."""
    image = src.image
    patterns = [re.compile(_include_list(t)) for t in topics]
    names = [n for n in sorted(image.topic_ids)
             if (not patterns or any(p.fullmatch(n) for p in patterns))
             and not (exclude_internal and n in INTERNAL_TOPICS)]
    if patterns and not names:
        raise UsageError(f"Topic '{','.join(topics)}' does not exist as expected")
    kraft = kraft_configs_of(src.replay)
    source = src.replay.source
    sources = ConfigSources.for_log_dir(
        src.log_dir or (source if os.path.isdir(source) else os.path.dirname(source)),
        config_file=config_file, metadata_dirs=[source], read_kraft=lambda _: kraft)
    order = _config_order()
    out = []
    for name in hash_map_order(names, java_string_hash):  # DescribeTopicsResult's HashMap
        topic = image.topic_by_name(name)
        assert topic is not None
        resolved = sources.topic(name)
        configs = {n: v.value for n in order
                   if (v := resolved.get(n)) is not None and _described(v)}
        partitions = [_partition_row(pid, p) for pid, p in sorted(topic.partitions.items())]
        first = partitions[0] if partitions else None
        out.append({
            "topic": name, "topicId": topic.id, "partitionCount": len(partitions),
            "replicationFactor": _replication_factor(first) if first else 0,
            "configs": configs, "partitions": partitions})
    return out


def _include_list(text: str) -> str:
    """``TopicFilter.IncludeList``'s regex: commas are alternatives, spaces and surrounding
    quotes go."""
    return re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", text.strip().replace(",", "|")
                                          .replace(" ", "")))


def _described(value: ConfigValue) -> bool:
    """Whether DescribeConfigs calls it other than a default: set on the topic, or through
    the first broker synonym (``ConfigHelper.configSynonyms`` drops the synonyms listed
    before it; ``log.flush.scheduler.interval.ms`` alone leaves ``flush.ms`` a default)."""
    if value.source == DEFAULT:
        return False
    return value.synonym is None or value.synonym == BROKER_SYNONYMS[value.name][0][0]


def _replication_factor(p: dict[str, Any]) -> int:
    # TopicCommand.getReplicationFactor: a reassignment's target size
    if p["addingReplicas"] or p["removingReplicas"]:
        return len(p["replicas"]) - len(p["addingReplicas"])
    return len(p["replicas"])


def _partition_row(pid: int, p) -> dict[str, Any]:
    return {"partition": pid, "leader": p.leader, "leaderEpoch": p.leader_epoch,
            "partitionEpoch": p.partition_epoch, "replicas": list(p.replicas),
            "isr": list(p.isr), "elr": list(p.elr), "lastKnownElr": list(p.last_known_elr),
            "addingReplicas": list(p.adding_replicas),
            "removingReplicas": list(p.removing_replicas),
            "leaderRecoveryState": "RECOVERING" if p.leader_recovery_state else "RECOVERED",
            "directories": list(p.directories)}


def _endpoints(endpoints) -> list[dict[str, Any]]:
    return [{"listener": e.listener, "securityProtocol":
             SECURITY_PROTOCOLS.get(e.security_protocol, str(e.security_protocol)),
             "host": e.host, "port": e.port} for e in endpoints]


def _features(features) -> dict[str, str]:
    return {name: f"{low}-{high}" for name, low, high in features}


def broker_rows(image: MetadataImage) -> list[dict[str, Any]]:
    """A row per registered broker, by id."""
    return [{"id": b.id, "epoch": b.epoch, "incarnationId": b.incarnation_id,
             "fenced": b.fenced, "inControlledShutdown": b.in_controlled_shutdown,
             "rack": b.rack, "endpoints": _endpoints(b.endpoints),
             "logDirs": list(b.directories),
             "cordonedLogDirs": None if b.cordoned_directories is None
             else list(b.cordoned_directories),
             "supportedFeatures": _features(b.features),
             "isMigratingZkBroker": b.is_migrating_zk_broker}
            for _, b in sorted(image.brokers.items())]


def controller_rows(image: MetadataImage) -> list[dict[str, Any]]:
    """A row per registered controller, by id."""
    return [{"id": c.id, "incarnationId": c.incarnation_id,
             "zkMigrationReady": c.zk_migration_ready, "endpoints": _endpoints(c.endpoints),
             "supportedFeatures": _features(c.features)}
            for _, c in sorted(image.controllers.items())]


def _level(feature: str, level: int) -> str:
    """``FeatureCommand.levelToString``."""
    if feature == METADATA_VERSION_FEATURE:
        name = METADATA_VERSIONS.get(level)
        return name if name is not None else f"UNKNOWN {level}"
    return str(level)


def feature_rows(image: MetadataImage, node_id: Optional[int] = None) -> list[dict[str, Any]]:
    """``kafka-features describe``'s rows: every feature node ``node_id`` (by default the
    lowest broker id, else the lowest controller id) registered support for, with the
    finalized level (0 when none) and the image's offset as the epoch."""
    nodes = {**image.controllers, **image.brokers}  # a controller-only node: its own
    node = nodes.get(node_id) if node_id is not None else \
        next((nodes[n] for n in sorted(image.brokers or nodes)), None)
    supported = {} if node is None else {n: (lo, hi) for n, lo, hi in node.features}
    finalized = dict(image.features)
    if image.metadata_version is not None:
        finalized[METADATA_VERSION_FEATURE] = image.metadata_version
    for name in finalized:
        supported.setdefault(name, (0, 0))  # finalized but unregistered: shown regardless
    rows = []
    for name in sorted(supported):
        low, high = supported[name]
        rows.append({"feature": name, "supportedMinVersion": _level(name, low),
                     "supportedMaxVersion": _level(name, high),
                     "finalizedVersionLevel": _level(name, finalized.get(name, 0)),
                     "epoch": image.provenance.offset})
    return rows
