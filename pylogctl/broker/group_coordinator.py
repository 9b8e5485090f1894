"""The classic group coordinator (Kafka's ``GroupCoordinator``): JoinGroup/SyncGroup
rebalances, heartbeats and session expiry, LeaveGroup, and the checks in front of offset
commits and fetches. The group state it moves is :mod:`.group_metadata`; storing groups and
offsets in ``__consumer_offsets`` (and loading them back) is :mod:`.group_metadata_manager`.

The rebalance follows Kafka's ``GroupCoordinator`` (KIP-394, KIP-134): a new dynamic member
of a JoinGroup v4+ first gets MEMBER_ID_REQUIRED with its id; the first rebalance of an Empty
group waits ``group.initial.rebalance.delay.ms`` (extended while members keep arriving, up to the
rebalance timeout); later ones complete as soon as every member rejoined, or at the
rebalance timeout, dropping those that did not; the leader gets every member's subscription,
its SyncGroup fans the assignment out (the group is stored then, and when a rebalance leaves
it Empty). A member that stops heartbeating for its session timeout is removed and the group
rebalances.

Differences from Kafka, deliberate for now: groups come back from the log without members
(see :mod:`.group_metadata_manager`); a static member that rejoins with a new member id
triggers a rebalance instead of silently replacing its predecessor.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from ..errors import CorruptRecordError
from ..format.group_coordinator_records import (CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                decode_consumer_protocol)
from ..format.group_coordinator_records import GroupRecordType
from ..groups.group_metadata import CONSUMER_PROTOCOL_TYPE
from .consumer_group_coordinator import ConsumerGroupCoordinator
from .error_codes import Errors
from .group_metadata import (COMPLETING, DEAD, EMPTY, PREPARING, STABLE, CommittedOffset, Group,
                             GroupConfig, Member)
from .group_metadata_manager import GroupMetadataManager
from .replica_manager import Partition, ReplicaManager

logger = logging.getLogger(__name__)

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


class GroupCoordinator:
    """Every classic group whose offsets partition this node leads (all of them)."""

    def __init__(self, replicas: ReplicaManager, config: GroupConfig = GroupConfig()) -> None:
        self.replicas = replicas
        self.config = config
        self.group_manager = GroupMetadataManager(replicas, config)
        self.groups: dict[str, Group] = self.group_manager.groups  # one cache, shared
        # KIP-848 groups: their membership there, their offsets in ``groups`` (type consumer)
        self.consumer = ConsumerGroupCoordinator(
            self.group_manager.store_records, self._topic_view, config,
            lambda g: g in self.groups and g not in self.consumer.groups)

    # -- the offsets topic (stored by the group manager) ----------------------------------------
    @property
    def partition_count(self) -> int:
        return self.group_manager.partition_count

    def ensure_offsets_topic(self) -> None:
        self.group_manager.ensure_offsets_topic()

    def startup(self) -> None:
        """Load the groups and offsets stored in ``__consumer_offsets`` (classic groups
        without members; KIP-848 groups with theirs)."""
        self.group_manager.startup()
        for group_id, records in self.group_manager.consumer_group_records.items():
            self.consumer.load(group_id, records)
        self.group_manager.consumer_group_records.clear()

    def _topic_view(self) -> dict[str, tuple[Any, int]]:
        return {name: (t.topic_id, len(t.partitions))
                for name, t in self.replicas.topics.items()}

    def _is_consumer_group(self, group_id: str) -> bool:
        return group_id in self.consumer.groups

    # -- ConsumerGroupHeartbeat, ConsumerGroupDescribe (KIP-848) --------------------------------
    def consumer_group_heartbeat(self, body: Any, version: int, client_id: str,
                                 client_host: str) -> dict[str, Any]:
        self.ensure_offsets_topic()
        response = self.consumer.heartbeat(body, version, client_id, client_host,
                                           self._classic_to_consumer)
        group_id = body.group_id
        if group_id in self.consumer.groups:
            group = self.groups.get(group_id)
            if group is None or group.group_type != "consumer":
                group = self.groups[group_id] = Group(
                    group_id, offsets=group.offsets if group else {},
                    pending_txn_offsets=group.pending_txn_offsets if group else {})
                group.group_type = group.protocol_type = CONSUMER_PROTOCOL_TYPE
        return response

    def _classic_to_consumer(self, group_id: str) -> list[Any] | None:
        """The records deleting an empty classic group a consumer-protocol member joins; None
        when the group cannot become a consumer group."""
        group = self.groups.get(group_id)
        if group is None or group.group_type == "consumer":
            return []
        if group.group_type != "classic" or group.members or group.state != EMPTY:
            return None
        return [(GroupRecordType.GROUP_METADATA, {"group": group_id}, None)]

    def consumer_group_describe(self, group_ids: list[str]) -> list[dict[str, Any]]:
        return [self.consumer.describe(g) for g in group_ids]

    def _consumer_to_classic(self, group_id: str) -> Errors:
        """A classic JoinGroup for a consumer group: an empty one is deleted (its offsets
        stay), a non-empty one refuses."""
        group = self.consumer.groups[group_id]
        if group.members:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        error = self.group_manager.store_records(group_id, self.consumer.tombstones(group_id))
        if error == Errors.NONE:
            del self.consumer.groups[group_id]
            classic = self.groups.get(group_id)
            if classic is not None:
                classic.group_type = "classic"
                classic.protocol_type = None
        return error

    def offsets_partition(self, group_id: str) -> Partition:
        return self.group_manager.offsets_partition(group_id)

    # -- JoinGroup ------------------------------------------------------------------------------
    async def join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                         require_known_member_id: bool, client_id: str, client_host: str,
                         rebalance_timeout_ms: int, session_timeout_ms: int,
                         protocol_type: str, protocols: list[tuple[str, bytes]]
                         ) -> dict[str, Any]:
        if not group_id:
            return _join_error(Errors.INVALID_GROUP_ID, member_id)
        if not (self.config.min_session_timeout_ms <= session_timeout_ms
                <= self.config.max_session_timeout_ms):
            return _join_error(Errors.INVALID_SESSION_TIMEOUT, member_id)
        self.ensure_offsets_topic()
        if self._is_consumer_group(group_id):
            error = self._consumer_to_classic(group_id)
            if error != Errors.NONE:
                return _join_error(error, member_id)
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                return _join_error(Errors.UNKNOWN_MEMBER_ID, member_id)
            group = self.groups[group_id] = Group(group_id)
        if group.state == DEAD:
            return _join_error(Errors.COORDINATOR_NOT_AVAILABLE, member_id)
        if not group.supports(protocol_type, protocols):
            return _join_error(Errors.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if len(group.members) >= self.config.max_size and member_id not in group.members:
            return _join_error(Errors.GROUP_MAX_SIZE_REACHED, "")
        loop = asyncio.get_running_loop()
        if not member_id:
            member_id = f"{group_instance_id or client_id}-{uuid.uuid4()}"
            if require_known_member_id:
                group.pending_members.add(member_id)
                loop.call_later(session_timeout_ms / 1000, self._expire_pending, group,
                                member_id)
                return _join_error(Errors.MEMBER_ID_REQUIRED, member_id)
            if group_instance_id is not None:
                old = next((m for m in group.members.values()
                            if m.group_instance_id == group_instance_id), None)
                if old is not None:
                    self._remove_member(group, old)
        elif member_id in group.pending_members:
            group.pending_members.discard(member_id)
        elif member_id not in group.members:
            return _join_error(Errors.UNKNOWN_MEMBER_ID, member_id)
        member = group.members.get(member_id)
        if member is None:
            member = Member(member_id, group_instance_id, client_id, client_host,
                            rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols)
            group.members[member_id] = member
            if group.leader_id is None:
                group.leader_id = member_id
            if group.state == PREPARING and group.generation == 0:
                group.new_member_added = True
            self._schedule_expiry(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        elif group.state == COMPLETING and member.matches(protocols):
            return self._join_response(group, member)  # a retried join: answer it again
        elif group.state == STABLE and member_id != group.leader_id and \
                member.matches(protocols):
            return {**self._join_response(group, member), "members": []}
        else:
            member.protocols = protocols
            member.rebalance_timeout_ms = rebalance_timeout_ms
            member.session_timeout_ms = session_timeout_ms
        member.join_future = loop.create_future()
        future = member.join_future
        self._maybe_prepare_rebalance(group)
        self._try_complete_join(group)
        return await future

    def _join_response(self, group: Group, member: Member) -> dict[str, Any]:
        is_leader = member.member_id == group.leader_id
        members = ([{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                     "metadata": m.metadata(group.protocol_name)}
                    for m in group.members.values()] if is_leader and group.protocol_name
                   else [])
        return {"error_code": Errors.NONE, "generation_id": group.generation,
                "protocol_type": group.protocol_type, "protocol_name": group.protocol_name,
                "leader": group.leader_id or "", "member_id": member.member_id,
                "members": members, "skip_assignment": False}

    def _maybe_prepare_rebalance(self, group: Group) -> None:
        if group.state not in (STABLE, COMPLETING, EMPTY):
            return
        if group.state == COMPLETING:
            for member in group.members.values():
                member.assignment = b""
                _complete(member, "sync_future", _sync_error(Errors.REBALANCE_IN_PROGRESS))
        loop = asyncio.get_running_loop()
        if group.join_timer is not None:
            group.join_timer.cancel()
        if group.state == EMPTY:
            delay = self.config.initial_rebalance_delay_ms
            group.initial_remaining_ms = max(group.rebalance_timeout_ms - delay, 0)
            group.join_timer = loop.call_later(delay / 1000, self._initial_join_expired, group)
        else:
            group.initial_remaining_ms = -1
            group.join_timer = loop.call_later(group.rebalance_timeout_ms / 1000,
                                               self._complete_join, group)
        group.transition(PREPARING)

    def _initial_join_expired(self, group: Group) -> None:
        if group.new_member_added and group.initial_remaining_ms > 0:
            group.new_member_added = False
            delay = min(self.config.initial_rebalance_delay_ms, group.initial_remaining_ms)
            group.initial_remaining_ms -= delay
            group.join_timer = asyncio.get_running_loop().call_later(
                delay / 1000, self._initial_join_expired, group)
            return
        self._complete_join(group)

    def _try_complete_join(self, group: Group) -> None:
        """A delayed join (not the initial one) completes once every member rejoined."""
        if group.state == PREPARING and group.initial_remaining_ms < 0 and group.all_joined():
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if group.state != PREPARING:
            return
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None
        for member in [m for m in group.members.values() if m.join_future is None
                       and m.group_instance_id is None]:
            self._remove_member(group, member, rebalance=False)
        joined = [m for m in group.members.values() if m.join_future is not None]
        if group.leader_id not in group.members or \
                group.members[group.leader_id].join_future is None:
            group.leader_id = joined[0].member_id if joined else None
        if not group.members:
            group.generation += 1
            group.protocol_name = None
            group.transition(EMPTY)
            self.group_manager.store_group(group)
            return
        if not joined:  # only static members that did not rejoin: wait again
            group.join_timer = asyncio.get_running_loop().call_later(
                group.rebalance_timeout_ms / 1000, self._complete_join, group)
            return
        group.generation += 1
        group.protocol_type = joined[0].protocol_type
        group.protocol_name = group.select_protocol()
        group.transition(COMPLETING)
        for member in group.members.values():
            response = self._join_response(group, member)
            _complete(member, "join_future", response)
            self._schedule_expiry(group, member, member.session_timeout_ms)

    # -- SyncGroup ------------------------------------------------------------------------------
    async def sync_group(self, group_id: str, generation: int, member_id: str,
                         protocol_type: str | None, protocol_name: str | None,
                         assignments: dict[str, bytes]) -> dict[str, Any]:
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            return _sync_error(Errors.UNKNOWN_MEMBER_ID)
        member = group.members[member_id]
        if generation != group.generation:
            return _sync_error(Errors.ILLEGAL_GENERATION)
        if (protocol_type is not None and protocol_type != group.protocol_type) or \
                (protocol_name is not None and protocol_name != group.protocol_name):
            return _sync_error(Errors.INCONSISTENT_GROUP_PROTOCOL)
        if group.state == EMPTY:
            return _sync_error(Errors.UNKNOWN_MEMBER_ID)
        if group.state == PREPARING:
            return _sync_error(Errors.REBALANCE_IN_PROGRESS)
        self._schedule_expiry(group, member, member.session_timeout_ms)
        if group.state == STABLE:
            return self._sync_response(group, member)
        member.sync_future = asyncio.get_running_loop().create_future()
        future = member.sync_future
        if member_id == group.leader_id:
            for m in group.members.values():
                m.assignment = assignments.get(m.member_id, b"")
            error = self.group_manager.store_group(group)
            if group.state == COMPLETING and group.generation == generation:
                if error != Errors.NONE:
                    for m in group.members.values():
                        m.assignment = b""
                        _complete(m, "sync_future", _sync_error(error))
                    self._maybe_prepare_rebalance(group)
                else:
                    group.transition(STABLE)
                    for m in group.members.values():
                        _complete(m, "sync_future", self._sync_response(group, m))
        return await future

    @staticmethod
    def _sync_response(group: Group, member: Member) -> dict[str, Any]:
        return {"error_code": Errors.NONE, "protocol_type": group.protocol_type,
                "protocol_name": group.protocol_name, "assignment": member.assignment}

    # -- heartbeats and leaving -----------------------------------------------------------------
    def heartbeat(self, group_id: str, generation: int, member_id: str) -> Errors:
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members or group.state in (EMPTY, DEAD):
            return Errors.UNKNOWN_MEMBER_ID
        member = group.members[member_id]
        if group.state == COMPLETING:
            self._schedule_expiry(group, member, member.session_timeout_ms)
            return Errors.NONE
        if group.state == PREPARING:
            self._schedule_expiry(group, member, member.session_timeout_ms)
            return Errors.REBALANCE_IN_PROGRESS
        if generation != group.generation:
            return Errors.ILLEGAL_GENERATION
        self._schedule_expiry(group, member, member.session_timeout_ms)
        return Errors.NONE

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]
                    ) -> tuple[Errors, list[tuple[str, str | None, Errors]]]:
        if self._is_consumer_group(group_id):
            return self.consumer.leave_group(group_id, members)
        group = self.groups.get(group_id)
        if group is None:
            return Errors.UNKNOWN_MEMBER_ID, [(m, i, Errors.UNKNOWN_MEMBER_ID)
                                              for m, i in members]
        results = []
        for member_id, instance_id in members:
            member = group.members.get(member_id)
            if member is None and instance_id is not None:
                member = next((m for m in group.members.values()
                               if m.group_instance_id == instance_id), None)
            if member is None:
                if member_id in group.pending_members:
                    group.pending_members.discard(member_id)
                    results.append((member_id, instance_id, Errors.NONE))
                    continue
                results.append((member_id, instance_id, Errors.UNKNOWN_MEMBER_ID))
                continue
            self._remove_member(group, member)
            results.append((member_id, instance_id, Errors.NONE))
        return Errors.NONE, results

    def _schedule_expiry(self, group: Group, member: Member, timeout_ms: int) -> None:
        if member.expiry is not None:
            member.expiry.cancel()
        member.expiry = asyncio.get_running_loop().call_later(
            timeout_ms / 1000, self._expire_member, group, member.member_id)

    def _expire_member(self, group: Group, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is not None:
            logger.info("Member %s in group %s has failed, removing it from the group",
                        member_id, group.group_id)
            self._remove_member(group, member)

    def _expire_pending(self, group: Group, member_id: str) -> None:
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._try_complete_join(group)

    def _remove_member(self, group: Group, member: Member, rebalance: bool = True) -> None:
        if member.expiry is not None:
            member.expiry.cancel()
        group.members.pop(member.member_id, None)
        _complete(member, "join_future", _join_error(Errors.UNKNOWN_MEMBER_ID, member.member_id))
        _complete(member, "sync_future", _sync_error(Errors.UNKNOWN_MEMBER_ID))
        if group.leader_id == member.member_id:
            group.leader_id = next(iter(group.members), None)
        if not rebalance:
            return
        if group.state in (STABLE, COMPLETING):
            self._maybe_prepare_rebalance(group)
        elif group.state == PREPARING:
            self._try_complete_join(group)

    # -- offsets --------------------------------------------------------------------------------
    def commit_offsets(self, group_id: str, generation: int, member_id: str,
                       offsets: dict[tuple[str, int], tuple[int, int, str | None]],
                       version: int = 9) -> dict[tuple[str, int], Errors]:
        """Commit ``(topic, partition) -> (offset, leader epoch, metadata)``."""
        def all_(code: Errors) -> dict[tuple[str, int], Errors]:
            return {tp: code for tp in offsets}
        if not group_id:
            return all_(Errors.INVALID_GROUP_ID)
        if self._is_consumer_group(group_id):
            checked = self.consumer.validate_commit(group_id, member_id, generation,
                                                    list(offsets), False, version)
            if isinstance(checked, Errors):
                checked = all_(checked)
            allowed = {tp: o for tp, o in offsets.items() if checked[tp] == Errors.NONE}
            return {**checked, **self.group_manager.store_offsets(self.groups[group_id],
                                                                  allowed)}
        group = self.groups.get(group_id)
        if group is None:
            if generation >= 0:
                return all_(Errors.ILLEGAL_GENERATION)
            group = self.groups[group_id] = Group(group_id)
        elif generation >= 0 or group.state != EMPTY:
            if group.state == COMPLETING:
                return all_(Errors.REBALANCE_IN_PROGRESS)
            if member_id not in group.members:
                return all_(Errors.UNKNOWN_MEMBER_ID)
            if generation != group.generation:
                return all_(Errors.ILLEGAL_GENERATION)
            member = group.members[member_id]
            self._schedule_expiry(group, member, member.session_timeout_ms)
        return self.group_manager.store_offsets(group, offsets)

    def commit_transactional_offsets(
            self, group_id: str, producer_id: int, producer_epoch: int, generation: int,
            member_id: str, group_instance_id: str | None,
            offsets: dict[tuple[str, int], tuple[int, int, str | None]]
    ) -> dict[tuple[str, int], Errors]:
        """TxnOffsetCommit (``handleTxnCommitOffsets``): store the offsets as part of the
        producer's transaction; they stay pending until its marker."""
        def all_(code: Errors) -> dict[tuple[str, int], Errors]:
            return {tp: code for tp in offsets}
        if not group_id:
            return all_(Errors.INVALID_GROUP_ID)
        self.ensure_offsets_topic()
        if self._is_consumer_group(group_id):
            checked = self.consumer.validate_commit(group_id, member_id, generation,
                                                    list(offsets), True, 5)
            if isinstance(checked, Errors):
                checked = all_(checked)
            allowed = {tp: o for tp, o in offsets.items() if checked[tp] == Errors.NONE}
            return {**checked, **self.group_manager.store_offsets(
                self.groups[group_id], allowed, producer_id, producer_epoch)}
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id)
        if group.state == DEAD:
            return all_(Errors.COORDINATOR_NOT_AVAILABLE)
        if group_instance_id is not None and member_id and any(
                m.group_instance_id == group_instance_id and m.member_id != member_id
                for m in group.members.values()):
            return all_(Errors.FENCED_INSTANCE_ID)
        if member_id and member_id not in group.members:
            return all_(Errors.UNKNOWN_MEMBER_ID)
        if generation >= 0 and generation != group.generation:
            return all_(Errors.ILLEGAL_GENERATION)
        return self.group_manager.store_offsets(group, offsets, producer_id, producer_epoch)

    def complete_transaction(self, producer_id: int, offsets_partition: int,
                             commit: bool) -> None:
        """A COMMIT/ABORT marker of ``producer_id`` was written to ``offsets_partition``:
        its pending commits in the groups of that partition become committed or go."""
        self.group_manager.complete_transaction(producer_id, offsets_partition, commit)

    def has_pending_offsets(self, group_id: str, tp: tuple[str, int]) -> bool:
        return self.group_manager.has_pending_offsets(group_id, tp)

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None
                      ) -> dict[tuple[str, int], CommittedOffset | None]:
        return self.group_manager.fetch_offsets(group_id, partitions)

    def validate_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> Errors:
        """OffsetFetch v9+'s member check (``validateOffsetFetch``): a consumer group's
        member must be known at its epoch; classic groups are not checked."""
        if self._is_consumer_group(group_id):
            return self.consumer.validate_fetch(group_id, member_id, member_epoch)
        return Errors.NONE

    # -- deleting (Kafka's ``deleteGroups``, ``deleteOffsets``) ---------------------------------
    def delete_groups(self, group_ids: list[str]) -> dict[str, Errors]:
        """Each group's error: deleted (NONE), GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP while it
        has members, INVALID_GROUP_ID for an empty id."""
        results = {}
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if not group_id:
                results[group_id] = Errors.INVALID_GROUP_ID
            elif self._is_consumer_group(group_id) and group is not None:
                results[group_id] = self._delete_consumer_group(group)
            elif group is None or group.state == DEAD:
                results[group_id] = Errors.GROUP_ID_NOT_FOUND
            elif group.state != EMPTY or group.members:
                results[group_id] = Errors.NON_EMPTY_GROUP
            else:
                results[group_id] = self.group_manager.delete_group(group)
        return results

    def _delete_consumer_group(self, group: Group) -> Errors:
        """Offsets first, then the group's records (Kafka's ``deleteGroups``); Empty only."""
        if self.consumer.groups[group.group_id].members:
            return Errors.NON_EMPTY_GROUP
        error = self.group_manager.delete_group(
            group, self.consumer.tombstones(group.group_id))
        if error == Errors.NONE:
            del self.consumer.groups[group.group_id]
        return error

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]
                       ) -> tuple[Errors, dict[tuple[str, int], Errors]]:
        """``(group error, partition errors)``: a partition of a topic a member subscribes to
        keeps its offset (GROUP_SUBSCRIBED_TO_TOPIC); the others' offsets are deleted."""
        group = self.groups.get(group_id)
        if group is None or group.state == DEAD:
            return Errors.GROUP_ID_NOT_FOUND, {}
        subscribed = self._subscribed_topics(group)
        results = {tp: Errors.GROUP_SUBSCRIBED_TO_TOPIC if tp[0] in subscribed else Errors.NONE
                   for tp in partitions}
        error = self.group_manager.delete_offsets(
            group, [tp for tp, code in results.items() if code == Errors.NONE])
        if error != Errors.NONE:
            return error, {}
        return Errors.NONE, results

    def _subscribed_topics(self, group: Group) -> set[str]:
        """The topics the members' consumer-protocol subscriptions name (Kafka's
        ``isSubscribedToTopic``; none for an empty group)."""
        consumer = self.consumer.groups.get(group.group_id)
        if consumer is not None:
            return self.consumer.subscribed_names(consumer)
        if group.protocol_type != CONSUMER_PROTOCOL_TYPE or not group.protocol_name:
            return set()
        topics: set[str] = set()
        for member in group.members.values():
            try:
                _, sub = decode_consumer_protocol(member.metadata(group.protocol_name),
                                                  CONSUMER_PROTOCOL_SUBSCRIPTION)
            except (CorruptRecordError, ValueError):
                continue
            topics.update(sub["topics"])
        return topics

    # -- describing ------------------------------------------------------------------------------
    def describe(self, group_id: str) -> dict[str, Any]:
        """DescribeGroups (up to v5: another type's group is a Dead one, without error)."""
        group = self.groups.get(group_id)
        if group is None or self._is_consumer_group(group_id):
            return {"error_code": Errors.NONE, "group_id": group_id, "group_state": DEAD,
                    "protocol_type": "", "protocol_data": "", "members": []}
        stable = group.state == STABLE
        members = [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id, "client_host": m.client_host,
                    "member_metadata": (m.metadata(group.protocol_name)
                                        if stable and group.protocol_name else b""),
                    "member_assignment": m.assignment if stable else b""}
                   for m in group.members.values()]
        return {"error_code": Errors.NONE, "group_id": group_id, "group_state": group.state,
                "protocol_type": group.protocol_type or "",
                "protocol_data": (group.protocol_name or "") if stable else "",
                "members": members}

    def list_groups(self) -> list[tuple[Group, str]]:
        """Each live group with its state (a consumer group's from its members)."""
        listed = []
        for group in self.groups.values():
            consumer = self.consumer.groups.get(group.group_id)
            state = consumer.state if consumer is not None else group.state
            if state != DEAD:
                listed.append((group, state))
        return listed

    def shutdown(self) -> None:
        self.consumer.shutdown()
        for group in self.groups.values():
            if group.join_timer is not None:
                group.join_timer.cancel()
            for member in group.members.values():
                if member.expiry is not None:
                    member.expiry.cancel()
                _complete(member, "join_future", _join_error(Errors.NOT_COORDINATOR,
                                                             member.member_id))
                _complete(member, "sync_future", _sync_error(Errors.NOT_COORDINATOR))


def _complete(member: Member, attribute: str, response: dict[str, Any]) -> None:
    future = getattr(member, attribute)
    setattr(member, attribute, None)
    if future is not None and not future.done():
        future.set_result(response)


def _join_error(error: Errors, member_id: str) -> dict[str, Any]:
    return {"error_code": error, "generation_id": -1, "protocol_type": None,
            "protocol_name": None, "leader": "", "member_id": member_id, "members": []}


def _sync_error(error: Errors) -> dict[str, Any]:
    return {"error_code": error, "protocol_type": None, "protocol_name": None,
            "assignment": b""}
