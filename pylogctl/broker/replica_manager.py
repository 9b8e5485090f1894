"""Partitions this broker leads and the append and read paths through them (Kafka's
``ReplicaManager`` and ``Partition`` for a single-node cluster, plus the topic bookkeeping a
KRaft controller would do).

Every partition is led here with replicas = ISR = [this node], so an append is committed as
soon as it is written: the high watermark moves to the log end right after each append, and
``acks=-1`` needs no purgatory. The leader epoch is the partition's latest cached epoch + 1,
bumped at every start, as a controller bumps it on a leader election; it is stamped on every
batch (``append_as_leader``) and reported in Metadata, Fetch and ListOffsets.

A fetch that finds fewer than ``min_bytes`` waits (Kafka's ``DelayedFetch``) until an append
to one of its partitions, or ``max_wait_ms``; each append wakes the fetches watching its
partition, which read again. Topic names follow Kafka's rules (``[a-zA-Z0-9._-]``, at most
249 characters, not ``.`` or ``..``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from dataclasses import dataclass, field

from ..format import group_coordinator_records, transaction_log_records
from ..storage.log import AppendInfo, FetchIsolation, Log, LogReadInfo
from ..storage.log_config import LogConfig
from ..storage.producer_append import AppendOrigin
from ..storage.topic_config import INTERNAL_TOPICS  # noqa: F401 (imported from here)
from .log_manager import LoadedLog, LogManager, new_kafka_uuid

logger = logging.getLogger(__name__)

OFFSETS_TOPIC = group_coordinator_records.TOPIC
TRANSACTION_STATE_TOPIC = transaction_log_records.TOPIC
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
MAX_TOPIC_LENGTH = 249


def topic_name_problem(name: str) -> str | None:
    """Why Kafka's ``Topic.validate`` refuses ``name``, or None."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return "Topic name cannot be \".\" or \"..\""
    if len(name) > MAX_TOPIC_LENGTH:
        return (f"Topic name is illegal, it can't be longer than {MAX_TOPIC_LENGTH} "
                f"characters, topic name: {name}")
    if not _LEGAL_TOPIC.fullmatch(name):
        return (f"Topic name \"{name}\" is illegal, it contains a character other than ASCII "
                f"alphanumerics, '.', '_' and '-'")
    return None


@dataclass
class Partition:
    """One partition this broker leads."""

    topic: str
    index: int
    topic_id: uuid.UUID
    log: Log
    leader_epoch: int

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.index}"


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, Partition] = field(default_factory=dict)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


class ReplicaManager:
    """Topics and partitions of this node, appends, reads and the delayed-fetch watchers."""

    def __init__(self, log_manager: LogManager) -> None:
        self.log_manager = log_manager
        self.topics: dict[str, Topic] = {}
        self._watchers: dict[tuple[str, int], set[asyncio.Future[None]]] = {}
        for loaded in log_manager.logs.values():
            self._add(loaded)

    def _add(self, loaded: LoadedLog) -> Partition:
        topic = self.topics.get(loaded.topic)
        if topic is None:
            topic = self.topics[loaded.topic] = Topic(loaded.topic, loaded.topic_id)
        latest = loaded.log.leader_epoch_cache.latest_epoch()
        partition = Partition(loaded.topic, loaded.partition, topic.topic_id, loaded.log,
                              0 if latest is None else latest + 1)
        topic.partitions[loaded.partition] = partition
        loaded.log.update_high_watermark(loaded.log.log_end_offset)  # ISR = [self]
        return partition

    # -- topics ---------------------------------------------------------------------------------
    def partition(self, topic: str, index: int) -> Partition | None:
        t = self.topics.get(topic)
        return None if t is None else t.partitions.get(index)

    def create_topic(self, name: str, num_partitions: int,
                     config: LogConfig | None = None) -> Topic:
        """Create every partition dir of a new topic (the caller validated the request)."""
        topic_id = new_kafka_uuid()
        for index in range(num_partitions):
            self._add(self.log_manager.create_log(name, index, topic_id, config))
        self.log_manager.checkpoint()
        return self.topics[name]

    def add_partitions(self, name: str, count: int) -> list[Partition]:
        """Create the dirs of a live topic's partitions from its current count up to
        ``count`` (CreatePartitions; the caller validated it); the new partitions."""
        topic = self.topics[name]
        config = next(iter(topic.partitions.values())).log.config if topic.partitions else None
        added = [self._add(self.log_manager.create_log(name, index, topic.topic_id, config))
                 for index in range(len(topic.partitions), count)]
        self.log_manager.checkpoint()
        return added

    def delete_topic(self, name: str) -> None:
        self.topics.pop(name, None)
        self.log_manager.delete_topic(name)

    # -- appends --------------------------------------------------------------------------------
    def append(self, partition: Partition, records: bytes | memoryview,
               origin: AppendOrigin = AppendOrigin.CLIENT) -> AppendInfo:
        """Append as leader, move the high watermark to the log end (this node is the whole
        ISR) and wake the fetches waiting on the partition. Storage errors propagate."""
        log = partition.log
        info = log.append_as_leader(records, partition.leader_epoch, origin)
        if not info.duplicate:
            log.update_high_watermark(log.log_end_offset)
            self._wake(partition)
        return info

    # -- reads and delayed fetches ---------------------------------------------------------------
    def read(self, partition: Partition, offset: int, max_bytes: int,
             isolation: FetchIsolation, min_one_message: bool) -> LogReadInfo:
        return partition.log.read(offset, max_bytes, isolation, min_one_message)

    def watch(self, keys: list[tuple[str, int]]) -> asyncio.Future[None]:
        """A future completed by the next append to any of ``keys`` (unwatch it after)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        for key in keys:
            self._watchers.setdefault(key, set()).add(future)
        return future

    def unwatch(self, keys: list[tuple[str, int]], future: asyncio.Future[None]) -> None:
        for key in keys:
            watchers = self._watchers.get(key)
            if watchers is not None:
                watchers.discard(future)
                if not watchers:
                    del self._watchers[key]

    def _wake(self, partition: Partition) -> None:
        for future in self._watchers.pop((partition.topic, partition.index), ()):
            if not future.done():
                future.set_result(None)

    def all_partitions(self) -> list[Partition]:
        return [p for t in self.topics.values() for p in t.partitions.values()]
