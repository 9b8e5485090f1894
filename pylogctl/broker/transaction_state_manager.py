"""The ``__transaction_state`` topic (Kafka's ``TransactionStateManager``): which partition
holds a transactional id, the cache of every id's :class:`TransactionMetadata`, writing a
transition to the log, and loading the cache back at start-up.

A transactional id lives in partition ``Utils.abs(id.hashCode()) % N`` (the rule that places
groups in ``__consumer_offsets``), N being ``transaction.state.log.num.partitions`` (50) when
the topic is created on first use, compacted, with 100 MiB segments. Each transition is one
plain, uncompressed batch of one record: ``TransactionLogKey`` v0 -> ``TransactionLogValue``
v0, which is what Kafka writes while the ``transaction.version`` feature is 0 (v1, with
tagged fields, from level 1; this broker finalizes no features, so its clients use
transactions V1). The coordinator epoch of an id is the leader epoch of its partition, which
goes up at every start, so markers from a previous run's coordinator are fenced.
"""

from __future__ import annotations

import logging
import os
from typing import Iterator

from ..format.builder import RecordBatchBuilder
from ..format.log_stream import iter_batches
from ..format.transaction_log_records import (decode_transaction_record,
                                              encode_transaction_record)
from ..groups.partitioner import partition_for
from ..groups.transaction_metadata import TransactionMetadata
from ..storage.clock import wall_clock_ms
from ..storage.log import FetchIsolation, Log
from ..storage.log_config import TRANSACTION_STATE_TOPIC_CONFIG
from ..storage.producer_append import AppendOrigin
from .replica_manager import TRANSACTION_STATE_TOPIC, Partition, ReplicaManager

logger = logging.getLogger(__name__)

TRANSACTION_LOG_VALUE_VERSION = 0
_READ_CHUNK = 1 << 20


class TransactionStateManager:
    def __init__(self, replicas: ReplicaManager, num_partitions: int = 50) -> None:
        self.replicas = replicas
        self.num_partitions = num_partitions
        self.transactions: dict[str, TransactionMetadata] = {}

    @property
    def partition_count(self) -> int:
        topic = self.replicas.topics.get(TRANSACTION_STATE_TOPIC)
        return len(topic.partitions) if topic else self.num_partitions

    def ensure_topic(self) -> None:
        if TRANSACTION_STATE_TOPIC not in self.replicas.topics:
            self.replicas.create_topic(TRANSACTION_STATE_TOPIC, self.num_partitions,
                                       TRANSACTION_STATE_TOPIC_CONFIG)

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.partition_count)

    def state_partition(self, transactional_id: str) -> Partition:
        self.ensure_topic()
        partition = self.replicas.partition(TRANSACTION_STATE_TOPIC,
                                            self.partition_for(transactional_id))
        assert partition is not None
        return partition

    def coordinator_epoch(self, transactional_id: str) -> int:
        return self.state_partition(transactional_id).leader_epoch

    def append(self, metadata: TransactionMetadata) -> None:
        """Write ``metadata`` to its partition, then make it the cached state. Storage errors
        propagate (the cache is then unchanged)."""
        key, value = encode_transaction_record(metadata.transactional_id,
                                               TRANSACTION_LOG_VALUE_VERSION,
                                               metadata.to_value())
        builder = RecordBatchBuilder(base_offset=0)
        builder.append(wall_clock_ms(), key, value)
        self.replicas.append(self.state_partition(metadata.transactional_id), builder.build(),
                             AppendOrigin.COORDINATOR)
        self.transactions[metadata.transactional_id] = metadata

    def load(self) -> None:
        """Read every partition of the topic, the last record of an id winning (a tombstone
        removing it), as ``loadTransactionMetadata`` does."""
        topic = self.replicas.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            return
        for partition in topic.partitions.values():
            for key, value in _records(partition.log):
                try:
                    record = decode_transaction_record(key, value)
                except Exception as exc:  # noqa: BLE001 - Kafka skips what it cannot read
                    logger.warning("Skipping an unreadable record in %s: %s", partition.name,
                                   exc)
                    continue
                if record.value is None:
                    self.transactions.pop(record.transactional_id, None)
                else:
                    self.transactions[record.transactional_id] = \
                        TransactionMetadata.from_value(record.transactional_id, record.value)
        if self.transactions:
            logger.info("Loaded %d transactional ids from %s", len(self.transactions),
                        TRANSACTION_STATE_TOPIC)


def _records(log: Log) -> Iterator[tuple[bytes, bytes | None]]:
    """Every (key, value) of ``log`` below its high watermark, through the engine's read."""
    offset = log.log_start_offset
    while offset < log.high_watermark:
        info = log.read(offset, _READ_CHUNK, FetchIsolation.HIGH_WATERMARK, True)
        if info.path is None or not info.size:
            return
        fd = os.open(info.path, os.O_RDONLY)
        try:
            data = os.pread(fd, info.size, info.fetch_offset_metadata.relative_position_in_segment)
        finally:
            os.close(fd)
        moved = False
        for batch in iter_batches(data):
            if batch.next_offset <= offset:
                continue
            moved = True
            offset = batch.next_offset
            if getattr(batch, "is_control", False):
                continue
            for record in batch:
                if record.offset >= log.log_start_offset and record.key is not None:
                    yield record.key, record.value
        if not moved:
            return
