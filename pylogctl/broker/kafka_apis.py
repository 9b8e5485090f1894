"""Request handling (Kafka's ``KafkaApis``): one handler per API, each turning a decoded
request into plain response data (see :mod:`pylogctl.broker.protocol`).

:data:`SUPPORTED` lists the API versions advertised in ApiVersions; every version listed is
served by the same handler, which reads the fields its version has (``getattr`` with the
schema's meaning of an absent field). The version floors are Kafka 4's (KIP-896); the ceilings
stop before versions that need features this broker does not have yet (topic ids in Fetch,
Produce, OffsetCommit v10 and OffsetFetch v10, transactions V2: AddPartitionsToTxn v4+ (batched,
broker-side verification), EndTxn v5, TxnOffsetCommit v5, InitProducerId v6).

Rules followed, by API (Kafka's ``KafkaApis`` and ``ReplicaManager``):

- Metadata: this node is the only broker and the controller; each partition's leader is this
  node with the partition's leader epoch, replicas = ISR = [node]. A missing topic is created
  when auto-creation is on and the request allows it, and returned at once (this node is its
  own controller, so the topic exists when the answer is written); otherwise
  UNKNOWN_TOPIC_OR_PARTITION. Internal topics are never auto-created here.
- Produce: acks must be 0, 1 or -1; clients may not write internal topics; each partition's
  records must be one v2 batch (zstd from v7). acks=0 gets no response at all.
- Fetch: reads up to the high watermark, or the last stable offset for read_committed (with
  the aborted transactions); incremental fetch sessions from v7 (:mod:`.fetch_session`);
  when less than ``min_bytes`` is available the request waits for an append or ``max_wait``.
  Records go out with sendfile.
- ListOffsets: -2 earliest, -1 latest (high watermark or LSO), -3 max timestamp, else the
  first offset whose timestamp is at or after the target (time index).
- Groups: classic ones (JoinGroup ... OffsetFetch) in :mod:`.group_coordinator`, KIP-848 ones
  (ConsumerGroupHeartbeat, ConsumerGroupDescribe, advertised at ``group.version`` 1) in
  :mod:`.consumer_group_coordinator`.
- Transactions (FindCoordinator key type 1, InitProducerId with a transactional id,
  AddPartitionsToTxn, AddOffsetsToTxn, EndTxn): the transaction coordinator
  (:mod:`.transaction_coordinator`); TxnOffsetCommit and OffsetFetch's ``require_stable``: the
  group coordinator. PRODUCER_FENCED goes to clients too old to know it as
  INVALID_PRODUCER_EPOCH, as Kafka's ``KafkaApis`` does.
- Topics (CreateTopics, DeleteTopics, CreatePartitions, DescribeTopicPartitions):
  :mod:`.topic_apis`.
- Configs (CreateTopics' configs, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs):
  :mod:`.config_handler`, kept in ``__cluster_metadata-0`` (:mod:`.metadata_log`), a topic
  that is never created, auto-created or served here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from ..format.record_batch import CODEC_MASK
from ..storage.delete_records import DeleteRecordsError, check_offset
from ..storage.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from ..storage.log import FetchIsolation, OffsetOutOfRangeError
from ..storage.log_config import LogConfig
from ..storage.log_dir import METADATA_TOPIC
from ..storage.log_validator import RecordValidationError
from ..storage.clock import wall_clock_ms
from .config_handler import ConfigHandler
from .coordinator_apis import CoordinatorApis
from .error_codes import Errors, error_for
from .fetch_session import FetchContext, FetchSessionCache, PartitionFetch
from .group_coordinator import GroupCoordinator
from .producer_id_manager import ProducerIdManager
from .broker_config import BrokerInfo
from .protocol import Connection, FileRegion, Request, millis
from .replica_manager import INTERNAL_TOPICS, ReplicaManager, topic_name_problem
from .topic_apis import TopicApis
from .transaction_coordinator import TransactionCoordinator

logger = logging.getLogger(__name__)

# api key -> (name, min version, max version)
SUPPORTED: dict[int, tuple[str, int, int]] = {
    0: ("Produce", 3, 9),
    1: ("Fetch", 4, 12),
    2: ("ListOffsets", 1, 7),
    3: ("Metadata", 0, 12),
    8: ("OffsetCommit", 2, 9),
    9: ("OffsetFetch", 1, 9),
    10: ("FindCoordinator", 0, 4),
    11: ("JoinGroup", 0, 9),
    12: ("Heartbeat", 0, 4),
    13: ("LeaveGroup", 0, 5),
    14: ("SyncGroup", 0, 5),
    15: ("DescribeGroups", 0, 5),
    16: ("ListGroups", 0, 5),
    18: ("ApiVersions", 0, 4),
    19: ("CreateTopics", 2, 7),
    20: ("DeleteTopics", 1, 6),
    21: ("DeleteRecords", 0, 2),
    22: ("InitProducerId", 0, 5),
    23: ("OffsetForLeaderEpoch", 2, 4),
    24: ("AddPartitionsToTxn", 0, 3),
    25: ("AddOffsetsToTxn", 0, 4),
    26: ("EndTxn", 0, 4),
    28: ("TxnOffsetCommit", 0, 4),
    32: ("DescribeConfigs", 1, 4),
    37: ("CreatePartitions", 0, 3),
    33: ("AlterConfigs", 0, 2),
    42: ("DeleteGroups", 0, 2),
    44: ("IncrementalAlterConfigs", 0, 1),
    47: ("OffsetDelete", 0, 0),
    61: ("DescribeProducers", 0, 0),
    65: ("DescribeTransactions", 0, 0),
    66: ("ListTransactions", 0, 2),
    68: ("ConsumerGroupHeartbeat", 0, 1),
    69: ("ConsumerGroupDescribe", 0, 1),
    75: ("DescribeTopicPartitions", 0, 0),
}

READ_COMMITTED = 1
ZSTD = 4


@dataclass(frozen=True)
class _UnknownId:
    """A Metadata request's topic id that names no topic."""

    topic_id: Any


# Advertised floors below the served ones (KAFKA-18659, as Kafka 4.0 does): older librdkafka
# releases (librdkafka#4956; kcat in Debian links 2.0.2) tie gzip/snappy/lz4 to Produce v2
# being in the range and silently produce uncompressed when it is not. Only ApiVersions says
# so: a Produce request below v3 is still refused like any unsupported version.
ADVERTISED_MIN_VERSION: dict[int, int] = {0: 0}
# APIs served only at a feature level (Kafka's ApiVersionsResponse filters them the same way)
FEATURE_GATED: dict[int, tuple[str, int]] = {68: ("group.version", 1), 69: ("group.version", 1)}


def api_versions_list(features: dict[str, int] | None = None) -> list[dict[str, int]]:
    """The advertised APIs; ``features`` are the finalized levels (None: every feature)."""
    return [{"api_key": k, "min_version": ADVERTISED_MIN_VERSION.get(k, lo), "max_version": hi}
            for k, (_, lo, hi) in sorted(SUPPORTED.items())
            if _enabled(k, features)]


def _enabled(api_key: int, features: dict[str, int] | None) -> bool:
    gate = FEATURE_GATED.get(api_key)
    return gate is None or features is None or features.get(gate[0], 0) >= gate[1]


class KafkaApis(CoordinatorApis, TopicApis):
    """Dispatch by API key; each handler returns response data, or None for no response."""

    def __init__(self, info: BrokerInfo, replicas: ReplicaManager,
                 groups: GroupCoordinator, producer_ids: ProducerIdManager,
                 topic_config: Callable[[str], LogConfig],
                 transactions: TransactionCoordinator, config_handler: ConfigHandler,
                 features: dict[str, int] | None = None) -> None:
        self.info = info
        self.features = features  # finalized feature levels (None: all)
        self.transactions = transactions
        self.replicas = replicas
        self.groups = groups
        self.producer_ids = producer_ids
        self.topic_config = topic_config
        self.configs = config_handler  # the config APIs (.config_handler)
        self.fetch_sessions = FetchSessionCache()
        self._handlers: dict[int, Callable[[Request, Connection], Awaitable[Any]]] = {
            0: self.produce, 1: self.fetch, 2: self.list_offsets, 3: self.metadata,
            8: self.offset_commit, 9: self.offset_fetch, 10: self.find_coordinator,
            11: self.join_group, 12: self.heartbeat, 13: self.leave_group,
            14: self.sync_group, 15: self.describe_groups, 16: self.list_groups,
            18: self.api_versions, 19: self.create_topics, 20: self.delete_topics,
            21: self.delete_records, 22: self.init_producer_id,
            23: self.offset_for_leader_epoch, 24: self.add_partitions_to_txn,
            25: self.add_offsets_to_txn, 26: self.end_txn, 28: self.txn_offset_commit,
            32: config_handler.describe_configs, 33: config_handler.alter_configs,
            37: self.create_partitions,
            42: self.delete_groups, 44: config_handler.incremental_alter_configs,
            47: self.offset_delete, 61: self.describe_producers,
            65: self.describe_transactions, 66: self.list_transactions,
            68: self.consumer_group_heartbeat, 69: self.consumer_group_describe,
            75: self.describe_topic_partitions,
        }

    def supports(self, api_key: int, version: int) -> bool:
        entry = SUPPORTED.get(api_key)
        return entry is not None and entry[1] <= version <= entry[2] and \
            _enabled(api_key, self.features)

    async def handle(self, request: Request, connection: Connection) -> dict[str, Any] | None:
        return await self._handlers[request.api_key](request, connection)

    # -- ApiVersions ----------------------------------------------------------------------------
    async def api_versions(self, request: Request, connection: Connection) -> dict[str, Any]:
        return {"error_code": Errors.NONE, "api_keys": api_versions_list(self.features),
                "throttle_time": 0}

    # -- Metadata -------------------------------------------------------------------------------
    async def metadata(self, request: Request, connection: Connection) -> dict[str, Any]:
        body, version = request.body, request.api_version
        wanted = body.topics
        names: list[Any]
        if wanted is None or (version == 0 and not wanted):
            names = sorted(self.replicas.topics)
        else:  # by name, or by topic id from v10 (a null name; KIP-516)
            by_id = {t.topic_id: name for name, t in self.replicas.topics.items()}
            names = [t.name if t.name is not None else
                     by_id.get(getattr(t, "topic_id", None), _UnknownId(t.topic_id))
                     for t in wanted]
        allow_create = getattr(body, "allow_auto_topic_creation", True)
        topics = []
        for name in names:
            if isinstance(name, _UnknownId):
                topics.append({"error_code": Errors.UNKNOWN_TOPIC_ID, "name": None,
                               "topic_id": name.topic_id, "is_internal": False,
                               "partitions": []})
                continue
            topic = self.replicas.topics.get(name)
            if topic is None:
                problem = topic_name_problem(name)
                if problem is not None:
                    topics.append(_topic_error(name, Errors.INVALID_TOPIC_EXCEPTION))
                    continue
                if not (allow_create and self.info.auto_create_topics) or \
                        name in INTERNAL_TOPICS or name == METADATA_TOPIC:
                    topics.append(_topic_error(name, Errors.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
                topic = self.replicas.create_topic(name, self.info.num_partitions,
                                                   self.topic_config(name))
                logger.info("Auto-created topic %s with %d partitions", name,
                            self.info.num_partitions)
            node = self.info.node_id
            topics.append({
                "error_code": Errors.NONE, "name": name, "topic_id": topic.topic_id,
                "is_internal": topic.is_internal,
                "partitions": [{"error_code": Errors.NONE, "partition_index": p.index,
                                "leader_id": node, "leader_epoch": p.leader_epoch,
                                "replica_nodes": [node], "isr_nodes": [node],
                                "offline_replicas": []}
                               for p in sorted(topic.partitions.values(),
                                               key=lambda p: p.index)],
                "topic_authorized_operations": -2147483648})
        return {"throttle_time": 0, "brokers": [self._broker()],
                "cluster_id": self.info.cluster_id, "controller_id": self.info.node_id,
                "topics": topics, "cluster_authorized_operations": -2147483648}

    def _broker(self) -> dict[str, Any]:
        return {"node_id": self.info.node_id, "host": self.info.host, "port": self.info.port,
                "rack": None}

    # -- DeleteRecords ---------------------------------------------------------------------------
    async def delete_records(self, request: Request, connection: Connection) -> dict[str, Any]:
        """Raise each partition's log start offset (-1: to the high watermark)."""
        topics = []
        for t in request.body.topics:
            partitions = []
            for p in t.partitions:
                partition = self.replicas.partition(t.name, p.partition_index)
                entry = {"partition_index": p.partition_index, "low_watermark": -1,
                         "error_code": Errors.NONE}
                if partition is None:
                    entry["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    log = partition.log
                    try:
                        log.maybe_increment_log_start_offset(check_offset(
                            t.name, p.partition_index, p.offset, log.high_watermark, log.config))
                        entry["low_watermark"] = log.log_start_offset
                    except DeleteRecordsError as exc:
                        entry["error_code"] = Errors[exc.error]
                partitions.append(entry)
            topics.append({"name": t.name, "partitions": partitions})
        self.replicas.log_manager.checkpoint()
        return {"throttle_time": 0, "topics": topics}

    async def describe_producers(self, request: Request,
                                 connection: Connection) -> dict[str, Any]:
        """Each partition's active producers, from its producer state (Kafka's
        ``ReplicaManager.activeProducerState``)."""
        topics = []
        for t in request.body.topics:
            partitions = []
            for index in t.partition_indexes:
                partition = self.replicas.partition(t.name, index)
                entry: dict[str, Any] = {"partition_index": index, "error_code": Errors.NONE,
                                         "error_message": None, "active_producers": []}
                if partition is None:
                    entry["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    producers = partition.log.producer_state.active_producers
                    entry["active_producers"] = [{
                        "producer_id": pid, "producer_epoch": e.producer_epoch,
                        "last_sequence": e.last_seq, "last_timestamp": e.last_timestamp,
                        "coordinator_epoch": e.coordinator_epoch,
                        "current_txn_start_offset": (-1 if e.current_txn_first_offset is None
                                                     else e.current_txn_first_offset)}
                        for pid, e in sorted(producers.items())]
                partitions.append(entry)
            topics.append({"name": t.name, "partitions": partitions})
        return {"throttle_time": 0, "topics": topics}

    # -- Produce --------------------------------------------------------------------------------
    async def produce(self, request: Request, connection: Connection) -> dict[str, Any] | None:
        body = request.body
        acks = body.acks
        responses = []
        for topic_data in body.topic_data:
            partitions = []
            for pd in topic_data.partition_data:
                if acks not in (0, 1, -1):
                    partitions.append(_produce_error(pd.index, Errors.INVALID_REQUIRED_ACKS))
                    continue
                partitions.append(self._produce_partition(request, topic_data.name, pd))
            responses.append({"name": topic_data.name, "partition_responses": partitions})
        if acks == 0:
            return None
        return {"responses": responses, "throttle_time": 0}

    def _produce_partition(self, request: Request, topic: str, pd: Any) -> dict[str, Any]:
        if topic in INTERNAL_TOPICS:
            return _produce_error(pd.index, Errors.INVALID_TOPIC_EXCEPTION)
        partition = self.replicas.partition(topic, pd.index)
        if partition is None:
            return _produce_error(pd.index, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        records = pd.records
        if not records or len(records) < 61 or records[16] != 2:
            return _produce_error(pd.index, Errors.INVALID_RECORD,
                                  f"Produce requests with version {request.api_version} are "
                                  f"only allowed to contain record batches with magic "
                                  f"version 2")
        if request.api_version < 7 and records[22] & CODEC_MASK == ZSTD:
            return _produce_error(pd.index, Errors.UNSUPPORTED_COMPRESSION_TYPE)
        try:
            info = self.replicas.append(partition, records)
        except Exception as exc:  # noqa: BLE001 - every storage failure becomes an error code
            code = error_for(exc)
            if code == Errors.UNKNOWN_SERVER_ERROR:
                logger.exception("Append to %s failed", partition.name)
            response = _produce_error(pd.index, code, getattr(exc, "message", str(exc)))
            if isinstance(exc, RecordValidationError):
                response["record_errors"] = [
                    {"batch_index": e.batch_index, "batch_index_error_message": e.message}
                    for e in exc.record_errors]
            response["log_start_offset"] = partition.log.log_start_offset
            return response
        return {"index": pd.index, "error_code": Errors.NONE, "base_offset": info.first_offset,
                "log_append_time": info.log_append_time, "log_start_offset":
                info.log_start_offset, "record_errors": [], "error_message": None}

    # -- Fetch ----------------------------------------------------------------------------------
    async def fetch(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        isolation = (FetchIsolation.TXN_COMMITTED if body.isolation_level == READ_COMMITTED
                     else FetchIsolation.HIGH_WATERMARK)
        if body.replica_id >= 0:
            isolation = FetchIsolation.LOG_END
        wanted = [((t.topic, p.partition), p) for t in body.topics for p in t.partitions]
        if request.api_version >= 7:  # fetch sessions (.fetch_session)
            forgotten = [(t.topic, i) for t in body.forgotten_topics_data for i in t.partitions]
            context = self.fetch_sessions.new_context(body.session_id, body.session_epoch,
                                                      wanted, forgotten)
        else:
            context = FetchContext([(key, PartitionFetch.of(p)) for key, p in wanted])
        if context.error != Errors.NONE:
            return {"throttle_time": 0, "error_code": context.error, "session_id": 0,
                    "responses": []}
        reads = [(topic, p) for (topic, _), p in context.partitions]
        keys = [key for key, _ in context.partitions]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + millis(body.max_wait) / 1000
        while True:
            results, total, errors = self._read_all(reads, body.max_bytes, isolation)
            remaining = deadline - loop.time()
            if total >= body.min_bytes or errors or remaining <= 0 or not reads:
                break
            _close_regions(results)
            future = self.replicas.watch(keys)
            try:
                await asyncio.wait_for(future, remaining)
            except asyncio.TimeoutError:
                pass
            finally:
                self.replicas.unwatch(keys, future)
        session_id, answered = self.fetch_sessions.respond(
            context, list(zip(keys, results)), wall_clock_ms())
        sent = {id(result) for _, result in answered}
        _close_regions([r for r in results if id(r) not in sent])
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, _), result in answered:
            topics.setdefault(topic, []).append(result)
        return {"throttle_time": 0, "error_code": Errors.NONE, "session_id": session_id,
                "responses": [{"topic": t, "partitions": ps} for t, ps in topics.items()]}

    def _read_all(self, wanted: list[tuple[str, Any]], max_bytes: int,
                  isolation: FetchIsolation) -> tuple[list[dict[str, Any]], int, bool]:
        results = []
        total = 0
        errors = False
        for topic, p in wanted:
            limit = max(0, min(p.partition_max_bytes, max_bytes - total))
            result = self._read_partition(topic, p, limit, isolation, total == 0)
            records = result["records"]
            total += len(records) if records is not None else 0
            errors = errors or result["error_code"] != Errors.NONE
            results.append(result)
        return results, total, errors

    def _read_partition(self, topic: str, p: Any, limit: int, isolation: FetchIsolation,
                        first: bool) -> dict[str, Any]:
        partition = self.replicas.partition(topic, p.partition)
        if partition is None:
            return _fetch_error(p.partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        log = partition.log
        current = getattr(p, "current_leader_epoch", -1)
        if current >= 0 and current != partition.leader_epoch:
            code = (Errors.FENCED_LEADER_EPOCH if current < partition.leader_epoch
                    else Errors.UNKNOWN_LEADER_EPOCH)
            return _fetch_error(p.partition, code, log)
        try:
            read = self.replicas.read(partition, p.fetch_offset, limit, isolation, first)
        except OffsetOutOfRangeError:
            return _fetch_error(p.partition, Errors.OFFSET_OUT_OF_RANGE, log)
        records: bytes | FileRegion = b""
        if read.path is not None and read.size:
            fd = os.open(read.path, os.O_RDONLY)
            records = FileRegion(fd, read.position, read.size)
        aborted = None
        if read.aborted_transactions is not None:
            aborted = [{"producer_id": t.producer_id, "first_offset": t.first_offset}
                       for t in read.aborted_transactions]
        return {"partition_index": p.partition, "error_code": Errors.NONE,
                "high_watermark": log.high_watermark,
                "last_stable_offset": log.last_stable_offset,
                "log_start_offset": log.log_start_offset, "aborted_transactions": aborted,
                "preferred_read_replica": -1, "records": records}

    # -- ListOffsets ----------------------------------------------------------------------------
    async def list_offsets(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        committed = getattr(body, "isolation_level", 0) == READ_COMMITTED
        topics = []
        for t in body.topics:
            partitions = []
            for p in t.partitions:
                partitions.append(self._list_offset(t.name, p, committed))
            topics.append({"name": t.name, "partitions": partitions})
        return {"throttle_time": 0, "topics": topics}

    def _list_offset(self, topic: str, p: Any, committed: bool) -> dict[str, Any]:
        def answer(code: Errors, timestamp: int = -1, offset: int = -1,
                   epoch: int = -1) -> dict[str, Any]:
            return {"partition_index": p.partition_index, "error_code": code,
                    "timestamp": timestamp, "offset": offset, "leader_epoch": epoch}
        partition = self.replicas.partition(topic, p.partition_index)
        if partition is None:
            return answer(Errors.UNKNOWN_TOPIC_OR_PARTITION)
        current = getattr(p, "current_leader_epoch", -1)
        if current >= 0 and current != partition.leader_epoch:
            return answer(Errors.FENCED_LEADER_EPOCH if current < partition.leader_epoch
                          else Errors.UNKNOWN_LEADER_EPOCH)
        log = partition.log
        fetchable = log.last_stable_offset if committed else log.high_watermark
        cache = log.leader_epoch_cache
        if p.timestamp == EARLIEST_TIMESTAMP:
            epoch = cache.epoch_for_offset(log.log_start_offset)
            return answer(Errors.NONE, -1, log.log_start_offset, -1 if epoch is None else epoch)
        if p.timestamp == LATEST_TIMESTAMP:
            return answer(Errors.NONE, -1, fetchable, partition.leader_epoch)
        found = log.fetch_offset_by_timestamp(p.timestamp, fetchable)
        if found is None:
            return answer(Errors.NONE)
        epoch = found.leader_epoch
        return answer(Errors.NONE, found.timestamp, found.offset,
                      -1 if epoch is None else epoch)

    # -- OffsetForLeaderEpoch -------------------------------------------------------------------
    async def offset_for_leader_epoch(self, request: Request,
                                      connection: Connection) -> dict[str, Any]:
        topics = []
        for t in request.body.topics:
            partitions = []
            for p in t.partitions:
                partition = self.replicas.partition(t.topic, p.partition)
                entry = {"partition": p.partition, "error_code": Errors.NONE,
                         "leader_epoch": -1, "end_offset": -1}
                if partition is None:
                    entry["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                elif 0 <= p.current_leader_epoch != partition.leader_epoch:
                    entry["error_code"] = (Errors.FENCED_LEADER_EPOCH
                                           if p.current_leader_epoch < partition.leader_epoch
                                           else Errors.UNKNOWN_LEADER_EPOCH)
                else:
                    found = partition.log.end_offset_for_epoch(p.leader_epoch)
                    if found is None and p.leader_epoch == partition.leader_epoch:
                        found = (p.leader_epoch, partition.log.log_end_offset)
                    if found is not None:
                        entry["leader_epoch"], entry["end_offset"] = found
                partitions.append(entry)
            topics.append({"topic": t.topic, "partitions": partitions})
        return {"throttle_time": 0, "topics": topics}


def _topic_error(name: str, code: Errors) -> dict[str, Any]:
    return {"error_code": code, "name": name, "topic_id": None, "is_internal": False,
            "partitions": [], "topic_authorized_operations": -2147483648}


def _produce_error(index: int, code: Errors, message: str | None = None) -> dict[str, Any]:
    return {"index": index, "error_code": code, "base_offset": -1, "log_append_time": -1,
            "log_start_offset": -1, "record_errors": [], "error_message": message}


def _fetch_error(index: int, code: Errors, log: Any = None) -> dict[str, Any]:
    return {"partition_index": index, "error_code": code,
            "high_watermark": -1 if log is None else log.high_watermark,
            "last_stable_offset": -1 if log is None else log.last_stable_offset,
            "log_start_offset": -1 if log is None else log.log_start_offset,
            "aborted_transactions": None, "preferred_read_replica": -1, "records": None}


def _close_regions(results: list[dict[str, Any]]) -> None:
    for result in results:
        records = result.get("records")
        if isinstance(records, FileRegion):
            os.close(records.fileno)


def close_response_regions(parts: list[Any]) -> None:
    """Close the file descriptors a response's file regions hold."""
    for part in parts:
        if isinstance(part, FileRegion):
            os.close(part.fileno)
