"""``pylogctl metadata DIR check [LOGDIR...]``: the log dirs against the metadata image.

What a KRaft broker would find when it loads them (``LogManager`` with the image):

- a partition dir whose topic the image does not know, whose partition it does not know, that
  the image does not place on this broker (its ``node.id``), or whose ``partition.metadata`` names
  another topic id: a stray, which Kafka 4 renames ``-stray`` and deletes
  (``LogManager.isStrayReplica``; a topic id mismatch is reported as such);
- a partition the image places on this broker, in this log dir (its ``directory.id`` in the
  partition's ``Directories``, or no directory assigned yet), that no dir of the broker holds;
- ``meta.properties`` that disagree: another ``cluster.id`` than the metadata log's own log dir
  (``kafka-storage info``'s "Mismatched cluster IDs between storage directories"), a ``node.id``
  no broker or controller registered (unless none is: pylogctl's own broker registers no
  node), a ``directory.id`` the broker's registration does not list. Dirs with different node ids are taken for different brokers' (kafka-storage info,
  which reads one node's dirs, calls that "Mismatched node IDs").

Marked dirs (``-delete``, ``-future``, ``-stray``) are Kafka's business in progress and are left
out. With several brokers' log dirs each is checked as its own broker's.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Optional

from ..errors import PylogctlError
from ..storage.log_dir_layout import META_PROPERTIES, partition_dirs
from ..storage.metadata_files import read_partition_metadata, read_properties
from ..storage.metadata_image import MIGRATING_DIR, MetadataImage
from .metadata import MetadataSource

UNASSIGNED_DIR = "AAAAAAAAAAAAAAAAAAAAAQ"  # DirectoryId.UNASSIGNED
LOST_DIR = "AAAAAAAAAAAAAAAAAAAAAg"  # DirectoryId.LOST
PARTITION_METADATA = "partition.metadata"


def _problem(log_dir: str, kind: str, detail: str, topic: Optional[str] = None,
             partition: Optional[int] = None) -> dict[str, Any]:
    return {"logDir": log_dir, "problem": kind, "detail": detail, "topic": topic,
            "partition": partition}


def _meta(log_dir: str) -> dict[str, str]:
    path = os.path.join(log_dir, META_PROPERTIES)
    return read_properties(path) if os.path.exists(path) else {}


def check_log_dirs(src: MetadataSource, log_dirs: list[str]) -> list[dict[str, Any]]:
    """Every problem, log dir by log dir, partitions sorted."""
    image = src.image
    reference = _meta(src.log_dir).get("cluster.id") if src.log_dir else None
    problems: list[dict[str, Any]] = []
    held: dict[int, set[tuple[str, int]]] = {}  # node -> partitions its given dirs hold
    checked: dict[int, list[tuple[str, Optional[str]]]] = {}  # node -> (log dir, dir id)
    for log_dir in log_dirs:
        meta = _meta(log_dir)
        node = meta.get("node.id", meta.get("broker.id"))
        if reference is None:
            reference = meta.get("cluster.id")
        if meta.get("cluster.id") != reference:
            problems.append(_problem(log_dir, "cluster-id-mismatch",
                                     f"Mismatched cluster IDs between storage directories: "
                                     f"{meta.get('cluster.id')} here, {reference} where the "
                                     f"metadata log is"))
        if node is None or not node.lstrip("-").isdigit():
            problems.append(_problem(log_dir, "no-node-id", "meta.properties names no node.id: "
                                     "partitions cannot be placed"))
            continue
        node_id = int(node)
        registered = image.brokers.keys() | image.controllers.keys()
        if registered and node_id not in registered:  # none at all: pylogctl's broker wrote it
            problems.append(_problem(log_dir, "node-id-unregistered",
                                     f"node.id {node_id} is no registered broker or controller"))
        dir_id = meta.get("directory.id")
        broker = image.brokers.get(node_id)
        if dir_id and broker is not None and broker.directories \
                and dir_id not in broker.directories:
            problems.append(_problem(log_dir, "directory-id-unregistered",
                                     f"directory.id {dir_id} is not among broker {node_id}'s "
                                     f"registered log dirs"))
        checked.setdefault(node_id, []).append((log_dir, dir_id))
        mine = held.setdefault(node_id, set())
        problems.extend(_strays(image, log_dir, node_id, mine))
    for node_id, dirs in checked.items():
        problems.extend(_missing(image, node_id, dirs, held[node_id]))
    return problems


def _strays(image: MetadataImage, log_dir: str, node_id: int,
            held: set[tuple[str, int]]) -> Iterator[dict[str, Any]]:
    found, _ = partition_dirs(log_dir)
    for name, path in found:
        if name.marker is not None or name.topic == "__cluster_metadata":
            continue
        topic = image.topic_by_name(name.topic)
        where = f"{os.path.basename(path)}"
        if topic is None:
            yield _problem(log_dir, "stray", f"{where}: the image knows no topic "
                           f"{name.topic}", name.topic, name.partition)
            continue
        held.add((name.topic, name.partition))
        registration = topic.partitions.get(name.partition)
        if registration is None:
            yield _problem(log_dir, "stray", f"{where}: topic {name.topic} has no partition "
                           f"{name.partition}", name.topic, name.partition)
            continue
        if node_id not in registration.replicas:
            yield _problem(log_dir, "stray", f"{where}: the replicas are "
                           f"{list(registration.replicas)}, not broker {node_id}",
                           name.topic, name.partition)
        metadata = os.path.join(path, PARTITION_METADATA)
        if os.path.exists(metadata):
            try:
                topic_id = read_partition_metadata(metadata)["topicId"]
            except PylogctlError as exc:
                yield _problem(log_dir, "partition-metadata-unreadable", str(exc), name.topic,
                               name.partition)
                continue
            if topic_id != topic.id:
                yield _problem(log_dir, "topic-id-mismatch", f"{where}: partition.metadata has "
                               f"topic id {topic_id}, the image {topic.id}", name.topic,
                               name.partition)


def _missing(image: MetadataImage, node_id: int, dirs: list[tuple[str, Optional[str]]],
             held: set[tuple[str, int]]) -> Iterator[dict[str, Any]]:
    dir_ids = {d for _, d in dirs if d}
    unknown = (MIGRATING_DIR, UNASSIGNED_DIR)
    for name, topic_id in sorted(image.topic_ids.items()):
        topic = image.topics.get(topic_id)
        if topic is None:
            continue
        for pid, p in sorted(topic.partitions.items()):
            if node_id not in p.replicas or (name, pid) in held:
                continue
            index = p.replicas.index(node_id)
            assigned = p.directories[index] if index < len(p.directories) else MIGRATING_DIR
            if assigned == LOST_DIR:
                target = dirs[0][0]
                yield _problem(target, "lost", f"{name}-{pid}: the controller marked broker "
                               f"{node_id}'s replica LOST (its log dir failed)", name, pid)
            elif assigned in unknown or assigned in dir_ids or not dir_ids:
                target = next((d for d, i in dirs if i == assigned), dirs[0][0])
                yield _problem(target, "missing", f"{name}-{pid}: the image places a replica "
                               f"on broker {node_id} and no log dir given holds it", name, pid)
