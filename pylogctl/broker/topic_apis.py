"""The topic APIs of :class:`~.kafka_apis.KafkaApis`: CreateTopics, DeleteTopics,
CreatePartitions and DescribeTopicPartitions, as Kafka's controller
(``ControllerApis``, ``ReplicationControlManager``) and broker
(``DescribeTopicPartitionsRequestHandler``, ``KRaftMetadataCache``) answer them.

A mixin, like :mod:`.coordinator_apis`: the handlers stay in ``KafkaApis``' one dispatch table.
Every change is recorded in the metadata log through the config manager (``TopicRecord``,
``PartitionRecord``, ``RemoveTopicRecord``) before the answer goes out.

- CreateTopics: duplicate names, ``__cluster_metadata``, invalid names, existing topics,
  manual assignments that Kafka's ``validateManualPartitionAssignment`` refuses (another
  broker, a broker twice, gaps), non-positive counts and replication factors other than 1
  are refused with Kafka's errors and messages; configs are validated whole.
- CreatePartitions: the count must be an increase (INVALID_PARTITIONS with Kafka's two
  messages), assignments must number the new partitions and name this broker once each
  (INVALID_REPLICA_ASSIGNMENT); more than 10,000 new partitions in one request is a
  POLICY_VIOLATION for every topic in it.
- DescribeTopicPartitions (what ``kafka-topics --describe`` asks since 3.8): topics sorted by
  name from the cursor's topic and partition, at most ``response_partition_limit`` partitions
  (capped at Kafka's ``max.request.partition.size.limit``, 2000), then a next cursor; all
  topics when none are named (unknown ones are then skipped, not reported). Eligible leader
  replicas are empty lists, as Kafka's with KIP-966 off.
"""

from __future__ import annotations

import logging
from typing import Any

from ..storage.log_dir import METADATA_TOPIC
from ..storage.topic_config_def import ConfigError
from .broker_config import BrokerInfo
from .config_handler import ConfigHandler
from .error_codes import Errors
from .protocol import Connection, Request
from .replica_manager import INTERNAL_TOPICS, ReplicaManager, Topic, topic_name_problem

logger = logging.getLogger(__name__)

MAX_PARTITIONS_PER_REQUEST = 10_000  # ReplicationControlManager.MAX_PARTITIONS_PER_BATCH
MAX_DESCRIBED_PARTITIONS = 2000  # max.request.partition.size.limit's default
NO_AUTHORIZED_OPERATIONS = -2147483648


class InvalidRequest(Exception):
    """A request Kafka answers with INVALID_REQUEST as a whole (``getErrorResponse``)."""


class TopicApis:
    """Handlers over the topics (attributes set by ``KafkaApis.__init__``)."""

    info: BrokerInfo
    replicas: ReplicaManager
    configs: ConfigHandler

    # -- CreateTopics ---------------------------------------------------------------------------
    async def create_topics(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        seen: dict[str, int] = {}
        for t in body.topics:
            seen[t.name] = seen.get(t.name, 0) + 1
        # a request may not create more than 10,000 partitions in all (else one request could
        # keep the controller busy creating dirs)
        total = sum(len(t.assignments) if t.assignments else
                    self.info.num_partitions if t.num_partitions == -1 else
                    max(t.num_partitions, 0) for t in body.topics)
        if total > MAX_PARTITIONS_PER_REQUEST:
            return {"throttle_time": 0, "topics": [
                {"name": t.name, "error_code": Errors.POLICY_VIOLATION,
                 "error_message": "Excessively large number of partitions per request.",
                 "topic_config_error_code": 0, "num_partitions": -1,
                 "replication_factor": -1, "configs": []} for t in body.topics]}
        results = []
        for t in body.topics:
            results.append(self._create_topic(t, seen[t.name] > 1, body.validate_only))
        return {"throttle_time": 0, "topics": results}

    def _create_topic(self, t: Any, duplicate: bool, validate_only: bool) -> dict[str, Any]:
        def error(code: Errors, message: str) -> dict[str, Any]:
            return {"name": t.name, "error_code": code, "error_message": message,
                    "topic_config_error_code": 0, "num_partitions": -1,
                    "replication_factor": -1, "configs": []}
        if duplicate:
            return error(Errors.INVALID_REQUEST, "Duplicate topic name.")
        if t.name == METADATA_TOPIC:  # its dir is the KRaft log (.metadata_log)
            return error(Errors.INVALID_REQUEST,
                         f"Creation of internal topic {METADATA_TOPIC} is prohibited.")
        problem = topic_name_problem(t.name)
        if problem is not None:
            return error(Errors.INVALID_TOPIC_EXCEPTION, problem)
        if t.name in self.replicas.topics:
            return error(Errors.TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists.")
        if t.assignments:
            problem = self._assignments_problem(t)
            if problem is not None:
                return error(*problem)
            count = len(t.assignments)
        else:
            if t.replication_factor < -1 or t.replication_factor == 0:
                return error(Errors.INVALID_REPLICATION_FACTOR, "Replication factor must be "
                             "larger than 0, or -1 to use the default value.")
            if t.num_partitions < -1 or t.num_partitions == 0:
                return error(Errors.INVALID_PARTITIONS,
                             "Number of partitions was set to an invalid non-positive value.")
            count = self.info.num_partitions if t.num_partitions == -1 else t.num_partitions
            replication = 1 if t.replication_factor == -1 else t.replication_factor
            if replication != 1:
                return error(Errors.INVALID_REPLICATION_FACTOR,
                             f"Unable to replicate the partition {replication} time(s): The "
                             f"target replication factor of {replication} cannot be reached "
                             f"because only 1 broker(s) are registered.")
        try:
            overrides, config = self.configs.new_topic_config(t.configs)
        except ConfigError as exc:
            return error(Errors.INVALID_CONFIG, exc.message)
        if not validate_only:
            created = self.replicas.create_topic(t.name, count, config)
            self.configs.configs.topic_created(created, overrides)
        topic = self.replicas.topics.get(t.name)
        return {"name": t.name, "topic_id": topic.topic_id if topic else None,
                "error_code": Errors.NONE, "error_message": None,
                "topic_config_error_code": 0, "num_partitions": count,
                "replication_factor": 1, "configs": self.configs.created_configs(overrides)}

    def _assignments_problem(self, t: Any) -> tuple[Errors, str] | None:
        """A CreateTopics manual assignment checked as ``ReplicationControlManager.createTopic``
        does."""
        if t.replication_factor != -1:
            return Errors.INVALID_REQUEST, ("A manual partition assignment was specified, but "
                                            "replication factor was not set to -1.")
        if t.num_partitions != -1:
            return Errors.INVALID_REQUEST, ("A manual partition assignment was specified, but "
                                            "numPartitions was not set to -1.")
        seen: set[int] = set()
        for a in t.assignments:
            if a.partition_index in seen:
                return Errors.INVALID_REPLICA_ASSIGNMENT, (
                    f"Found multiple manual partition assignments for partition "
                    f"{a.partition_index}")
            problem = self._assignment_problem(list(a.broker_ids))
            if problem is not None:
                return Errors.INVALID_REPLICA_ASSIGNMENT, problem
            seen.add(a.partition_index)
        if seen != set(range(len(seen))):
            return Errors.INVALID_REPLICA_ASSIGNMENT, ("partitions should be a consecutive "
                                                       "0-based integer sequence")
        return None

    # -- DeleteTopics ---------------------------------------------------------------------------
    async def delete_topics(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        if request.api_version >= 6:
            wanted = [(t.name, t.topic_id) for t in body.topics]
        else:
            wanted = [(name, None) for name in body.topic_names]
        by_id = {t.topic_id: name for name, t in self.replicas.topics.items()}
        responses = []
        for name, topic_id in wanted:
            if name is None and topic_id is not None:
                name = by_id.get(topic_id)
            entry = {"name": name, "topic_id": topic_id, "error_code": Errors.NONE,
                     "error_message": None}
            if name is None or name not in self.replicas.topics:
                entry["error_code"] = (Errors.UNKNOWN_TOPIC_ID if name is None
                                       else Errors.UNKNOWN_TOPIC_OR_PARTITION)
            elif name in INTERNAL_TOPICS:
                entry["error_code"] = Errors.TOPIC_AUTHORIZATION_FAILED
            else:
                entry["topic_id"] = self.replicas.topics[name].topic_id
                self.replicas.delete_topic(name)
                self.configs.configs.topic_deleted(name, entry["topic_id"])
                logger.info("Deleted topic %s", name)
            responses.append(entry)
        return {"throttle_time": 0, "responses": responses}

    # -- CreatePartitions -----------------------------------------------------------------------
    async def create_partitions(self, request: Request, connection: Connection
                                ) -> dict[str, Any]:
        body = request.body
        names = [t.name for t in body.topics]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        results = [_partitions_result(n, Errors.INVALID_REQUEST, "Duplicate topic name.")
                   for n in duplicates]
        wanted = [t for t in body.topics if t.name not in duplicates]
        added = 0
        for t in wanted:
            topic = self.replicas.topics.get(t.name)
            if topic is not None and t.count >= 0:
                added += max(t.count - len(topic.partitions), 0)
        if added > MAX_PARTITIONS_PER_REQUEST:
            return {"throttle_time": 0, "results": [_partitions_result(
                t.name, Errors.POLICY_VIOLATION,
                "Excessively large number of additional partitions per request.")
                for t in body.topics]}
        for t in wanted:
            results.append(self._create_partitions(t, body.validate_only))
        return {"throttle_time": 0, "results": results}

    def _create_partitions(self, t: Any, validate_only: bool) -> dict[str, Any]:
        topic = self.replicas.topics.get(t.name)
        if topic is None:
            return _partitions_result(t.name, Errors.UNKNOWN_TOPIC_OR_PARTITION, None)
        have = len(topic.partitions)
        if t.count == have:
            return _partitions_result(t.name, Errors.INVALID_PARTITIONS,
                                      f"Topic already has {have} partition(s).")
        if t.count < have:
            return _partitions_result(t.name, Errors.INVALID_PARTITIONS,
                                      f"The topic {t.name} currently has {have} partition(s); "
                                      f"{t.count} would not be an increase.")
        additional = t.count - have
        if t.assignments is not None:
            if len(t.assignments) != additional:
                return _partitions_result(
                    t.name, Errors.INVALID_REPLICA_ASSIGNMENT,
                    f"Attempted to add {additional} additional partition(s), but only "
                    f"{len(t.assignments)} assignment(s) were specified.")
            for a in t.assignments:
                problem = self._assignment_problem(list(a.broker_ids))
                if problem is not None:
                    return _partitions_result(t.name, Errors.INVALID_REPLICA_ASSIGNMENT, problem)
        if not validate_only:
            self._add_partitions(topic, t.count)
        return _partitions_result(t.name, Errors.NONE, None)

    def _assignment_problem(self, brokers: list[int]) -> str | None:
        """``validateManualPartitionAssignment`` on a cluster of this one broker."""
        if not brokers:
            return "The manual partition assignment includes an empty replica list."
        previous = None
        for broker in sorted(brokers):
            if broker != self.info.node_id:
                return (f"The manual partition assignment includes broker {broker}, but no "
                        f"such broker is registered.")
            if broker == previous:
                return (f"The manual partition assignment includes the broker {broker} more "
                        f"than once.")
            previous = broker
        return None

    def _add_partitions(self, topic: Topic, count: int) -> None:
        created = self.replicas.add_partitions(topic.name, count)
        self.configs.configs.partitions_created(topic, created)
        logger.info("Topic %s now has %d partitions", topic.name, count)

    # -- DescribeTopicPartitions ----------------------------------------------------------------
    async def describe_topic_partitions(self, request: Request, connection: Connection
                                        ) -> dict[str, Any]:
        try:
            return self._describe_topic_partitions(request.body)
        except InvalidRequest:  # DescribeTopicPartitionsRequest.getErrorResponse
            return {"throttle_time": 0, "next_cursor": None, "topics": [
                {"error_code": Errors.INVALID_REQUEST, "name": t.name, "topic_id": None,
                 "is_internal": False, "partitions": [],
                 "topic_authorized_operations": NO_AUTHORIZED_OPERATIONS}
                for t in request.body.topics]}

    def _describe_topic_partitions(self, body: Any) -> dict[str, Any]:
        cursor = body.cursor
        start_topic = cursor.topic_name if cursor is not None else ""
        all_topics = not body.topics
        if all_topics:
            names = {n for n in self.replicas.topics if n >= start_topic}
        else:
            names = {t.name for t in body.topics if t.name >= start_topic}
            if cursor is not None and cursor.topic_name not in names:
                raise InvalidRequest("DescribeTopicPartitionsRequest topic list should contain "
                                     f"the cursor topic: {cursor.topic_name}")
        if cursor is not None and cursor.partition_index < 0:
            raise InvalidRequest("DescribeTopicPartitionsRequest cursor partition must be "
                                 f"valid: {cursor}")
        remaining = max(min(MAX_DESCRIBED_PARTITIONS, body.response_partition_limit), 1)
        topics: list[dict[str, Any]] = []
        next_cursor = None
        for name in sorted(names):
            if remaining <= 0:
                next_cursor = {"topic_name": name, "partition_index": 0}
                break
            topic = self.replicas.topics.get(name)
            if topic is None:
                if not all_topics:
                    code = (Errors.INVALID_TOPIC_EXCEPTION if topic_name_problem(name)
                            else Errors.UNKNOWN_TOPIC_OR_PARTITION)
                    topics.append({"error_code": code, "name": name, "topic_id": None,
                                   "is_internal": name in INTERNAL_TOPICS, "partitions": [],
                                   "topic_authorized_operations": NO_AUTHORIZED_OPERATIONS})
                continue
            first = cursor.partition_index if cursor is not None and name == start_topic else 0
            upper = min(len(topic.partitions), first + remaining)
            topics.append({"error_code": Errors.NONE, "name": name, "topic_id": topic.topic_id,
                           "is_internal": topic.is_internal,
                           "partitions": [self._described(topic, i) for i in range(first, upper)
                                          if i in topic.partitions],
                           "topic_authorized_operations": NO_AUTHORIZED_OPERATIONS})
            if upper < len(topic.partitions):
                next_cursor = {"topic_name": name, "partition_index": upper}
                break
            remaining -= upper - first
        return {"throttle_time": 0, "topics": topics, "next_cursor": next_cursor}

    def _described(self, topic: Topic, index: int) -> dict[str, Any]:
        node = self.info.node_id
        return {"error_code": Errors.NONE, "partition_index": index, "leader_id": node,
                "leader_epoch": topic.partitions[index].leader_epoch, "replica_nodes": [node],
                "isr_nodes": [node], "eligible_leader_replicas": [], "last_known_elr": [],
                "offline_replicas": []}


def _partitions_result(name: str, code: Errors, message: str | None) -> dict[str, Any]:
    return {"name": name, "error_code": code, "error_message": message}
