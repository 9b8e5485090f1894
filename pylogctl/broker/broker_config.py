"""The broker's settings (Kafka's ``KafkaConfig``), and the part of them the request handlers
answer with (``BrokerInfo``: who this broker is, what it creates by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..storage.cleaner.cleaner_config import CleanerConfig
from ..storage.log_config import LogConfig
from .group_metadata import GroupConfig
from .transaction_coordinator import TransactionConfig

DEFAULT_MAX_REQUEST_BYTES = 100 * 1024 * 1024  # socket.request.max.bytes


@dataclass(frozen=True)
class BrokerConfig:
    """The broker's settings (Kafka's names in the comments)."""

    log_dir: str
    host: str = "127.0.0.1"  # listeners
    port: int = 9092
    advertised_host: str | None = None  # advertised.listeners (default: host)
    advertised_port: int | None = None  # (default: the bound port)
    node_id: int = 1  # node.id
    num_partitions: int = 1  # num.partitions
    auto_create_topics: bool = True  # auto.create.topics.enable
    socket_request_max_bytes: int = DEFAULT_MAX_REQUEST_BYTES  # socket.request.max.bytes
    checkpoint_interval_ms: int = 60_000  # log.flush.offset.checkpoint.interval.ms
    log_retention_check_interval_ms: int = 300_000  # log.retention.check.interval.ms
    cleaner: CleanerConfig = CleanerConfig()  # log.cleaner.* (enable, backoff.ms, buffers)
    log_config: LogConfig = field(default_factory=LogConfig)  # log.* defaults for topics
    group: GroupConfig = field(default_factory=GroupConfig)  # group.*, offsets.topic.*
    transaction: TransactionConfig = field(  # transaction.*, transaction.state.log.*
        default_factory=TransactionConfig)


@dataclass(frozen=True)
class BrokerInfo:
    """This broker as Metadata and FindCoordinator describe it."""

    node_id: int
    host: str
    port: int
    cluster_id: str
    num_partitions: int = 1
    auto_create_topics: bool = True
