"""The coordinator APIs of :class:`~.kafka_apis.KafkaApis`: group coordination
(FindCoordinator, Join/Sync/Heartbeat/LeaveGroup, OffsetCommit/Fetch, Describe/ListGroups),
producer ids and transactions (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
TxnOffsetCommit).

A mixin, so that the request handlers stay in the one dispatch table of ``KafkaApis`` while
the handlers that only translate between the wire and the coordinators
(:mod:`.group_coordinator`, :mod:`.transaction_coordinator`) live apart from the log-facing
ones (Produce, Fetch, ListOffsets, topics).
"""

from __future__ import annotations

from typing import Any

from .broker_config import BrokerInfo
from .consumer_group_coordinator import HeartbeatRequest
from .error_codes import Errors
from .group_coordinator import GroupCoordinator
from .producer_id_manager import ProducerIdManager
from .protocol import Connection, Request, millis
from .replica_manager import ReplicaManager
from .transaction_coordinator import TransactionCoordinator


class CoordinatorApis:
    """Handlers over the group and transaction coordinators (attributes set by
    ``KafkaApis.__init__``)."""

    info: BrokerInfo
    replicas: ReplicaManager
    groups: GroupCoordinator
    producer_ids: ProducerIdManager
    transactions: TransactionCoordinator

    # -- group coordination ---------------------------------------------------------------------
    async def find_coordinator(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        keys = list(body.coordinator_keys) if request.api_version >= 4 else [body.key]
        key_type = getattr(body, "key_type", 0)
        found = []
        for key in keys:
            entry = {"key": key, "node_id": self.info.node_id, "host": self.info.host,
                     "port": self.info.port, "error_code": Errors.NONE, "error_message": None}
            if key_type == 0:
                self.groups.ensure_offsets_topic()
            elif key_type == 1:
                self.transactions.ensure_topic()
            else:
                entry.update(node_id=-1, host="", port=-1,
                             error_code=Errors.INVALID_REQUEST,
                             error_message=f"Unknown coordinator type {key_type}")
            found.append(entry)
        if request.api_version >= 4:
            return {"throttle_time": 0, "coordinators": found}
        return {"throttle_time": 0, **found[0]}

    async def join_group(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        session = millis(body.session_timeout)
        rebalance = millis(getattr(body, "rebalance_timeout", None)) if \
            request.api_version >= 1 else session
        instance = getattr(body, "group_instance_id", None)
        result = await self.groups.join_group(
            body.group_id, body.member_id, instance,
            request.api_version >= 4 and instance is None, request.header.client_id or "",
            connection.client_host, rebalance, session, body.protocol_type,
            [(p.name, bytes(p.metadata)) for p in body.protocols])
        return {"throttle_time": 0, **result}

    async def sync_group(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        result = await self.groups.sync_group(
            body.group_id, body.generation_id, body.member_id,
            getattr(body, "protocol_type", None), getattr(body, "protocol_name", None),
            {a.member_id: bytes(a.assignment) for a in body.assignments})
        return {"throttle_time": 0, **result}

    async def heartbeat(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        return {"throttle_time": 0, "error_code": self.groups.heartbeat(
            body.group_id, body.generation_id, body.member_id)}

    async def leave_group(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        if request.api_version >= 3:
            members = [(m.member_id, m.group_instance_id) for m in body.members]
        else:
            members = [(body.member_id, None)]
        error, results = self.groups.leave_group(body.group_id, members)
        if request.api_version < 3:
            return {"throttle_time": 0, "error_code": results[0][2]}
        return {"throttle_time": 0, "error_code": error,
                "members": [{"member_id": m, "group_instance_id": i, "error_code": e}
                            for m, i, e in results]}

    async def offset_commit(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        offsets = _requested_commits(body)
        results = self.groups.commit_offsets(body.group_id, body.generation_id_or_member_epoch,
                                             body.member_id, offsets, request.api_version)
        return {"throttle_time": 0, "topics": _commit_results(results)}

    async def offset_fetch(self, request: Request, connection: Connection) -> dict[str, Any]:
        """One group up to v7; from v8 a list of groups, each with its error (v9: the
        member's id and epoch, checked for consumer groups)."""
        body = request.body
        stable = getattr(body, "require_stable", False)
        if request.api_version < 8:
            return {"throttle_time": 0, "error_code": Errors.NONE,
                    "topics": self._fetched_offsets(body.group_id, body.topics, stable)}
        groups = []
        for group in body.groups:
            error = self.groups.validate_fetch(group.group_id, getattr(group, "member_id", None),
                                               getattr(group, "member_epoch", -1))
            topics = [] if error != Errors.NONE else \
                self._fetched_offsets(group.group_id, group.topics, stable)
            groups.append({"group_id": group.group_id, "error_code": error, "topics": topics})
        return {"throttle_time": 0, "groups": groups}

    def _fetched_offsets(self, group_id: str, wanted_topics: Any, stable: bool
                         ) -> list[dict[str, Any]]:
        wanted = None if wanted_topics is None else \
            [(t.name, i) for t in wanted_topics for i in t.partition_indexes]
        found = self.groups.fetch_offsets(group_id, wanted)
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, index), committed in found.items():
            if stable and self.groups.has_pending_offsets(group_id, (topic, index)):
                topics.setdefault(topic, []).append({
                    "partition_index": index, "committed_offset": -1,
                    "committed_leader_epoch": -1, "metadata": "",
                    "error_code": Errors.UNSTABLE_OFFSET_COMMIT})
                continue
            topics.setdefault(topic, []).append({
                "partition_index": index,
                "committed_offset": -1 if committed is None else committed.offset,
                "committed_leader_epoch": -1 if committed is None else committed.leader_epoch,
                "metadata": "" if committed is None else committed.metadata,
                "error_code": Errors.NONE})
        return [{"name": n, "partitions": ps} for n, ps in topics.items()]

    async def describe_groups(self, request: Request, connection: Connection) -> dict[str, Any]:
        return {"throttle_time": 0,
                "groups": [{**self.groups.describe(g), "authorized_operations": -2147483648}
                           for g in request.body.groups]}

    async def list_groups(self, request: Request, connection: Connection) -> dict[str, Any]:
        states = set(getattr(request.body, "states_filter", ()) or ())
        types = {t.lower() for t in getattr(request.body, "types_filter", ()) or ()}
        groups = [{"group_id": g.group_id, "protocol_type": g.protocol_type or "",
                   "group_state": state, "group_type": g.group_type}
                  for g, state in self.groups.list_groups()
                  if (not states or state in states) and (not types or g.group_type in types)]
        return {"throttle_time": 0, "error_code": Errors.NONE, "groups": groups}

    async def consumer_group_heartbeat(self, request: Request,
                                       connection: Connection) -> dict[str, Any]:
        body = request.body
        owned = None if body.topic_partitions is None else {
            tp.topic_id: frozenset(tp.partitions) for tp in body.topic_partitions}
        names = None if body.subscribed_topic_names is None else \
            tuple(body.subscribed_topic_names)
        heartbeat = HeartbeatRequest(
            body.group_id, body.member_id, body.member_epoch, body.instance_id, body.rack_id,
            millis(body.rebalance_timeout), names, getattr(body, "subscribed_topic_regex", None),
            body.server_assignor, owned)
        return self.groups.consumer_group_heartbeat(heartbeat, request.api_version,
                                                    request.header.client_id or "",
                                                    connection.client_host)

    async def consumer_group_describe(self, request: Request,
                                      connection: Connection) -> dict[str, Any]:
        return {"throttle_time": 0,
                "groups": self.groups.consumer_group_describe(list(request.body.group_ids))}

    async def delete_groups(self, request: Request, connection: Connection) -> dict[str, Any]:
        results = self.groups.delete_groups(list(request.body.groups_names))
        return {"throttle_time": 0, "results": [{"group_id": g, "error_code": code}
                                                for g, code in results.items()]}

    async def offset_delete(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        wanted = [(t.name, p.partition_index) for t in body.topics for p in t.partitions]
        error, results = self.groups.delete_offsets(body.group_id, wanted)
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, index), code in results.items():
            topics.setdefault(topic, []).append({"partition_index": index, "error_code": code})
        return {"error_code": error, "throttle_time": 0,
                "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()]}

    # -- producers ------------------------------------------------------------------------------
    async def init_producer_id(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        if body.transactional_id is not None:
            code, producer_id, epoch = self.transactions.init_producer_id(
                body.transactional_id, millis(body.transaction_timeout),
                getattr(body, "producer_id", -1), getattr(body, "producer_epoch", -1))
            if code == Errors.PRODUCER_FENCED and request.api_version < 4:
                code = Errors.INVALID_PRODUCER_EPOCH  # older clients do not know the code
            return {"throttle_time": 0, "error_code": code, "producer_id": producer_id,
                    "producer_epoch": epoch}
        producer_id, epoch = self.producer_ids.next_id(), 0
        return {"throttle_time": 0, "error_code": Errors.NONE, "producer_id": producer_id,
                "producer_epoch": epoch}

    # -- transactions ---------------------------------------------------------------------------
    async def add_partitions_to_txn(self, request: Request,
                                    connection: Connection) -> dict[str, Any]:
        """v0-v3 (one transaction per request). As Kafka's ``KafkaApis``: when a partition
        does not exist, it gets UNKNOWN_TOPIC_OR_PARTITION and the others
        OPERATION_NOT_ATTEMPTED, and nothing is added."""
        body = request.body
        wanted = [(t.name, p) for t in body.v3_and_below_topics for p in t.partitions]
        missing = {tp for tp in wanted if self.replicas.partition(*tp) is None}
        if missing:
            codes = {tp: (Errors.UNKNOWN_TOPIC_OR_PARTITION if tp in missing
                          else Errors.OPERATION_NOT_ATTEMPTED) for tp in wanted}
        else:
            code = self.transactions.add_partitions(
                body.v3_and_below_transactional_id, body.v3_and_below_producer_id,
                body.v3_and_below_producer_epoch, frozenset(wanted))
            codes = {tp: _fenced_for(code, request.api_version) for tp in wanted}
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, index), code in codes.items():
            topics.setdefault(topic, []).append({"partition_index": index,
                                                 "partition_error_code": code})
        return {"throttle_time": 0, "results_by_topic_v3_and_below": [
            {"name": n, "results_by_partition": ps} for n, ps in topics.items()]}

    async def add_offsets_to_txn(self, request: Request,
                                 connection: Connection) -> dict[str, Any]:
        body = request.body
        code = self.transactions.add_offsets(body.transactional_id, body.producer_id,
                                             body.producer_epoch, body.group_id)
        return {"throttle_time": 0, "error_code": _fenced_for(code, request.api_version)}

    async def end_txn(self, request: Request, connection: Connection) -> dict[str, Any]:
        body = request.body
        code = self.transactions.end_transaction(body.transactional_id, body.producer_id,
                                                 body.producer_epoch, body.committed)
        return {"throttle_time": 0, "error_code": _fenced_for(code, request.api_version)}

    async def txn_offset_commit(self, request: Request,
                                connection: Connection) -> dict[str, Any]:
        body = request.body
        offsets = _requested_commits(body)
        results = self.groups.commit_transactional_offsets(
            body.group_id, body.producer_id, body.producer_epoch,
            getattr(body, "generation_id", -1), getattr(body, "member_id", ""),
            getattr(body, "group_instance_id", None), offsets)
        return {"throttle_time": 0, "topics": _commit_results(results)}


    async def list_transactions(self, request: Request,
                                connection: Connection) -> dict[str, Any]:
        body = request.body
        code, unknown, found = self.transactions.list_transactions(
            list(body.state_filters), set(body.producer_id_filters),
            millis(getattr(body, "duration_filter", None)),
            getattr(body, "transactional_id_pattern", None))
        return {"throttle_time": 0, "error_code": code, "unknown_state_filters": unknown,
                "transaction_states": [{"transactional_id": m.transactional_id,
                                        "producer_id": m.producer_id,
                                        "transaction_state": str(m.state)} for m in found]}

    async def describe_transactions(self, request: Request,
                                    connection: Connection) -> dict[str, Any]:
        states = []
        for tid in request.body.transactional_ids:
            m = self.transactions.describe_transaction(tid)
            if m is None:
                states.append({"error_code": Errors.TRANSACTIONAL_ID_NOT_FOUND,
                               "transactional_id": tid, "transaction_state": "",
                               "transaction_timeout": 0, "transaction_start_time": -1,
                               "producer_id": -1, "producer_epoch": -1, "topics": []})
                continue
            topics: dict[str, list[int]] = {}
            for topic, index in sorted(m.partitions):
                topics.setdefault(topic, []).append(index)
            states.append({"error_code": Errors.NONE, "transactional_id": tid,
                           "transaction_state": str(m.state), "transaction_timeout": m.timeout_ms,
                           "transaction_start_time": m.start_ms, "producer_id": m.producer_id,
                           "producer_epoch": m.producer_epoch,
                           "topics": [{"topic": t, "partitions": ps}
                                      for t, ps in topics.items()]})
        return {"throttle_time": 0, "transaction_states": states}


def _requested_commits(body: Any) -> dict[tuple[str, int], tuple[int, int, str | None]]:
    """(topic, partition) -> (offset, leader epoch, metadata) of an OffsetCommit or
    TxnOffsetCommit request (no leader epoch before their v6 and v2: -1)."""
    return {(t.name, p.partition_index): (p.committed_offset,
                                          getattr(p, "committed_leader_epoch", -1),
                                          p.committed_metadata)
            for t in body.topics for p in t.partitions}


def _commit_results(results: dict[tuple[str, int], Errors]) -> list[dict[str, Any]]:
    """The per-topic partition error codes of an (Txn)OffsetCommit response."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), code in results.items():
        topics.setdefault(topic, []).append({"partition_index": index, "error_code": code})
    return [{"name": n, "partitions": ps} for n, ps in topics.items()]


def _fenced_for(code: Errors, version: int) -> Errors:
    """PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for v0-v1 of the transaction APIs (their
    clients predate the code, KIP-588)."""
    return Errors.INVALID_PRODUCER_EPOCH if code == Errors.PRODUCER_FENCED and version < 2 \
        else code
