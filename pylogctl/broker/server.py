"""A single-node Kafka broker over one log dir (Kafka's ``BrokerServer``): start-up, the
periodic tasks, and a clean shutdown.

Start-up takes the log dir's ``.lock`` and loads it as ``pylogctl recover`` would (after a
crash the segments above the recovery point are recovered), loads the groups stored in
``__consumer_offsets`` and the transactions stored in ``__transaction_state`` (completing
those left prepared), then listens. While running, the offset checkpoints are written
every ``checkpoint_interval_ms`` and timed-out transactions are aborted every
``transaction.abort.timed.out.transaction.cleanup.interval.ms``; retention runs every
``log.retention.check.interval.ms`` and the log cleaner compacts the compacted logs
(:mod:`.log_cleaner`), both on the live logs with the offline commands' engine. :meth:`Broker.stop`
(SIGTERM/SIGINT from the CLI) stops listening, answers parked group requests with
NOT_COORDINATOR, flushes every log, writes the checkpoints and the producer snapshots, trims
the active segments' indexes and writes ``.kafka_cleanshutdown``: the next start trusts the
log without recovering it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Callable

from ..storage.log_config import LogConfig
from ..storage.clock import wall_clock_ms
from .broker_config import BrokerConfig, BrokerInfo
from .config_handler import ConfigHandler
from .config_manager import ConfigManager
from .group_coordinator import GroupCoordinator
from .kafka_apis import KafkaApis
from .log_cleaner import LogCleaner
from .log_manager import LogManager
from .producer_id_manager import ProducerIdManager
from .protocol import preload as preload_protocol
from .replica_manager import ReplicaManager
from .socket_server import SocketServer
from .transaction_coordinator import TransactionCoordinator

logger = logging.getLogger(__name__)


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.log_manager = LogManager(config.log_dir, config.node_id, self.topic_config)
        self.configs = ConfigManager(self.log_manager, config.log_config)
        self.server: SocketServer | None = None
        self.groups: GroupCoordinator | None = None
        self.transactions: TransactionCoordinator | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stopped = asyncio.Event()
        self.port = config.port

    def topic_config(self, topic: str) -> LogConfig:
        """Broker defaults + the topic's own configs (:mod:`.config_manager`)."""
        return self.configs.topic_config(topic)

    async def start(self) -> int:
        """Load the log dir and listen; returns the bound port."""
        c = self.config
        self.log_manager.startup()
        try:
            replicas = ReplicaManager(self.log_manager)
            self.configs.startup(replicas)  # leader epochs first: the coordinators append
            self.groups = GroupCoordinator(replicas, c.group)
            self.groups.startup()
            ids = [pid for p in replicas.all_partitions()
                   for pid in p.log.producer_state.active_producers]
            producer_ids = ProducerIdManager(ids)
            self.transactions = TransactionCoordinator(replicas, self.groups, producer_ids,
                                                       c.transaction)
            self.transactions.startup()
            info = BrokerInfo(c.node_id, c.advertised_host or c.host, c.advertised_port or 0,
                              self.log_manager.cluster_id, c.num_partitions,
                              c.auto_create_topics)
            apis = KafkaApis(info, replicas, self.groups, producer_ids, self.topic_config,
                             self.transactions, ConfigHandler(self.configs, replicas, c),
                             self.configs.features)
            preload_protocol()
            self.server = SocketServer(apis, c.host, c.port, c.socket_request_max_bytes)
            self.port = await self.server.start()
            if c.advertised_port is None:
                apis.info = BrokerInfo(info.node_id, info.host, self.port, info.cluster_id,
                                       info.num_partitions, info.auto_create_topics)
        except BaseException:
            self.configs.shutdown()
            self.log_manager.shutdown()
            raise
        self._tasks.append(asyncio.create_task(self._checkpoint_loop()))
        self._tasks.append(asyncio.create_task(self._transaction_loop()))
        self._tasks.append(asyncio.create_task(self._retention_loop()))
        if c.cleaner.enable_cleaner:
            self._tasks.append(asyncio.create_task(
                LogCleaner(self.log_manager, c.cleaner).run()))
        logger.info("Broker %d serving %s on %s:%d", c.node_id, self.log_manager.path, c.host,
                    self.port)
        return self.port

    async def _checkpoint_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.checkpoint_interval_ms / 1000)
            self.log_manager.checkpoint()

    async def _retention_loop(self) -> None:
        """Kafka's ``kafka-log-retention`` task: retention on every non-compacted log."""
        while True:
            await asyncio.sleep(self.config.log_retention_check_interval_ms / 1000)
            try:
                self.log_manager.cleanup_logs(wall_clock_ms())
            except Exception:  # noqa: BLE001 - keep the task alive; the next round retries
                logger.exception("Log retention task failed")

    async def _transaction_loop(self) -> None:
        """Abort timed-out transactions, retry unfinished completions."""
        while True:
            await asyncio.sleep(self.config.transaction.abort_interval_ms / 1000)
            assert self.transactions is not None
            try:
                self.transactions.run_periodic_tasks()
            except Exception:  # noqa: BLE001 - keep the task alive; the next round retries
                logger.exception("Transaction coordinator task failed")

    async def stop(self) -> None:
        """Stop serving and shut the log dir down cleanly (idempotent)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.groups is not None:
            self.groups.shutdown()
        if self.server is not None:
            await self.server.stop()
        self.configs.shutdown()
        self.log_manager.shutdown()
        logger.info("Broker %d shut down cleanly", self.config.node_id)


async def serve(config: BrokerConfig, on_ready: Callable[[int], None] | None = None) -> None:
    """Run a broker until SIGTERM or SIGINT, then shut it down cleanly; ``on_ready(port)``
    is called once it listens."""
    broker = Broker(config)
    port = await broker.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if on_ready is not None:
        on_ready(port)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await broker.stop()
