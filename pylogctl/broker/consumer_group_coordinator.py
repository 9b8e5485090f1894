"""The KIP-848 consumer group protocol (Kafka 4.4's ``GroupMetadataManager.consumerGroup*``):
ConsumerGroupHeartbeat joins, heartbeats, leaves and reconciles members; the server assignor
(:mod:`.partition_assignor`) computes the target assignment; members move towards it through
:mod:`.current_assignment_builder`; ConsumerGroupDescribe answers from the same state; offset
commits and fetches of members are checked against their epochs.

Every decision is a list of ``__consumer_offsets`` records, in the order Kafka writes them
(member metadata 5, group epoch 3, target assignments 7, target epoch 6, current assignment 8;
three tombstones for a member that goes), appended in one batch and then replayed into the
group (:mod:`.consumer_group`), so what the offline tools read is what the broker ran on, and a
log dir moves between this broker and Kafka's with its groups.

The group epoch is bumped when a member joins or leaves, or when the subscriptions, the topics
they name (the group's ``metadataHash``, Kafka's xxh3 of topic id, name and partitions) or
the preferred server assignor change; a new target assignment is computed on the next
heartbeat at least ``group.consumer.assignment.interval.ms`` after the last one. Members that
miss ``group.consumer.session.timeout.ms`` are fenced, as are members that do not revoke
within their rebalance timeout.

Deliberate differences, answered with Kafka's own errors: pylogctl runs as
``group.consumer.migration.policy=disabled`` with the classic groups, except that an empty
group of either kind becomes the other (so a non-empty classic group refuses a consumer-protocol
member with GROUP_ID_NOT_FOUND, and a consumer group a classic JoinGroup with
INCONSISTENT_GROUP_PROTOCOL); regular expressions are resolved when a member subscribes and at
most every 10 s afterwards, within the heartbeat (Kafka resolves them in the background).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from ..format.group_coordinator_records import GroupRecordType as T
from ..format.group_coordinator_records import encode_group_record
from ..storage.clock import wall_clock_ms
from .consumer_group import ConsumerGroup, metadata_hash
from .consumer_group_member import (LEFT_STATIC_EPOCH, UNREVOKED_PARTITIONS,
                                    ConsumerGroupMember)
from .current_assignment_builder import FencedMemberEpochError, next_assignment
from .error_codes import Errors
from .group_metadata import GroupConfig
from .log_manager import new_kafka_uuid, uuid_to_kafka
from .replica_manager import INTERNAL_TOPICS
from .partition_assignor import (ASSIGNORS, Assignment, MemberSpec, PartitionAssignorError,
                                 assign)

logger = logging.getLogger(__name__)

ASSIGNMENT_INTERVAL_MS = 1_000  # group.consumer.assignment.interval.ms
REGEX_REFRESH_MS = 10_000
Record = tuple[int, dict[str, Any], dict[str, Any] | None]


@dataclass(frozen=True)
class HeartbeatRequest:
    """A ConsumerGroupHeartbeat's fields (None: not sent; ``rebalance_timeout_ms`` -1)."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: dict[uuid.UUID, frozenset[int]] | None = None


class GroupError(Exception):
    def __init__(self, code: Errors, message: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message = code, message


TopicView = dict[str, tuple[uuid.UUID, int]]  # topic name -> (id, partition count)


class ConsumerGroupCoordinator:
    """The consumer groups of this node. ``store`` appends a batch of encoded records for a
    group (returning its error), ``topics`` is the current topic metadata."""

    def __init__(self, store: Callable[[str, list[tuple[bytes, bytes | None]]], Errors],
                 topics: Callable[[], TopicView], config: GroupConfig = GroupConfig(),
                 other_type: Callable[[str], bool] = lambda _: False) -> None:
        self.store = store
        self.topics = topics
        self.other_type = other_type  # does the id name a group of another type?
        self.config = config
        self.groups: dict[str, ConsumerGroup] = {}
        self._timers: dict[tuple[str, str, str], asyncio.TimerHandle] = {}

    # -- loading ----------------------------------------------------------------------------------
    def load(self, group_id: str, records: list[Record]) -> None:
        """Restore a group from its live records, and give its members a session again."""
        group = ConsumerGroup(group_id)
        for record_type, key, value in records:
            group.replay(record_type, key, value)
        if group.deleted:
            return
        self.groups[group_id] = group
        for member in group.members.values():
            self._schedule_session_timeout(group_id, member.member_id)

    # -- ConsumerGroupHeartbeat -------------------------------------------------------------------
    def heartbeat(self, body: HeartbeatRequest, version: int, client_id: str, client_host: str,
                  convert_classic: Callable[[str], list[Record] | None]) -> dict[str, Any]:
        """The response to one ConsumerGroupHeartbeat. ``convert_classic(group_id)`` answers
        for a classic group of that id: the records that delete it when it is empty, else None
        (it cannot become a consumer group)."""
        try:
            _validate(body, version)
            if body.member_epoch in (-1, LEFT_STATIC_EPOCH):
                return self._leave(body.group_id, body.instance_id, body.member_id,
                                   body.member_epoch)
            return self._heartbeat(body, client_id, client_host, convert_classic)
        except GroupError as exc:
            return {"throttle_time": 0, "error_code": exc.code, "error_message": exc.message,
                    "member_id": None, "member_epoch": 0, "heartbeat_interval": 0,
                    "assignment": None}

    def _heartbeat(self, body: HeartbeatRequest, client_id: str, client_host: str,
                   convert_classic: Callable[[str], list[Record] | None]) -> dict[str, Any]:
        group_id, epoch = body.group_id, body.member_epoch
        records: list[Record] = []
        existing = self.groups.get(group_id)
        if existing is None:
            if epoch != 0:
                raise GroupError(Errors.GROUP_ID_NOT_FOUND,
                                 f"Group {group_id} is not a consumer group."
                                 if self.other_type(group_id)
                                 else f"Consumer group {group_id} not found.")
            deleting = convert_classic(group_id)
            if deleting is None:
                raise GroupError(Errors.GROUP_ID_NOT_FOUND,
                                 f"Cannot upgrade classic group {group_id} to consumer group "
                                 "because online upgrade is disabled.")
            records.extend(deleting)
            group = ConsumerGroup(group_id)
        else:
            group = copy.deepcopy(existing)
        member_id = body.member_id or uuid_to_kafka(new_kafka_uuid())
        owned = body.topic_partitions
        if body.instance_id is None:
            member = self._dynamic_member(group, member_id, epoch, owned)
        else:
            member = self._static_member(group, member_id, epoch, body.instance_id, owned,
                                         records)
        updated = _updated_member(member, body, client_id, client_host)
        if updated.metadata_key() != member.metadata_key() or member_id not in group.members:
            records.append(_member_record(group_id, updated))
            self._replay(group, records[-1:])
        names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        topics = self.topics()
        regex_resolved = self._maybe_update_regexes(group, member, updated, topics, records)
        subscription_changed = names_changed or (
            updated.subscribed_topic_regex != member.subscribed_topic_regex)
        old_assignor = existing.preferred_server_assignor(ASSIGNORS[0]) if existing \
            else ASSIGNORS[0]
        assignor = group.preferred_server_assignor(ASSIGNORS[0])
        bump = names_changed or regex_resolved or old_assignor != assignor
        new_hash = metadata_hash(self.subscribed_names(group), topics)
        if bump or new_hash != group.metadata_hash:
            records.append((T.CONSUMER_GROUP_METADATA, {"groupId": group_id},
                            {"epoch": group.group_epoch + 1, "metadataHash": new_hash}))
            if group.has_subscription_metadata_record:
                records.append((T.CONSUMER_GROUP_PARTITION_METADATA, {"groupId": group_id},
                                None))
            self._replay(group, records[-2:] if group.has_subscription_metadata_record
                         else records[-1:])
        target_epoch, target = self._maybe_update_target(group, assignor, topics, records)
        member = group.members[member_id]
        if subscription_changed or not member.is_reconciled_to(target_epoch):
            try:
                reconciled = next_assignment(
                    member, target_epoch, target.get(member_id, {}),
                    self._subscribed_ids(group, member, topics), subscription_changed,
                    group.current_partition_epoch, owned)
            except FencedMemberEpochError as exc:
                raise GroupError(Errors.FENCED_MEMBER_EPOCH, str(exc)) from None
            if reconciled.assignment_key() != member.assignment_key():
                records.append((T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                                {"groupId": group_id, "memberId": member_id},
                                reconciled.assignment_value()))
                self._replay(group, records[-1:])
                if reconciled.state == UNREVOKED_PARTITIONS:
                    self._schedule_rebalance_timeout(group_id, reconciled)
                else:
                    self._cancel(group_id, member_id, "rebalance")
            member = reconciled
        self._commit(group, records)
        self._schedule_session_timeout(group_id, member_id)
        response: dict[str, Any] = {
            "throttle_time": 0, "error_code": Errors.NONE, "error_message": None,
            "member_id": member_id, "member_epoch": member.member_epoch,
            "heartbeat_interval": self.config.consumer_heartbeat_interval_ms,
            "assignment": None}
        full = body.rebalance_timeout_ms != -1 and owned is not None and (
            body.subscribed_topic_names is not None or body.subscribed_topic_regex is not None)
        before = existing.members.get(member_id) if existing else None
        if epoch == 0 or full or before is None or before.assigned != member.assigned:
            response["assignment"] = {"topic_partitions": [
                {"topic_id": t, "partitions": sorted(ps)} for t, ps in member.assigned.items()]}
        return response

    def _dynamic_member(self, group: ConsumerGroup, member_id: str, epoch: int,
                        owned: dict[uuid.UUID, frozenset[int]] | None) -> ConsumerGroupMember:
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group "
                                 f"{group.group_id}.")
            return ConsumerGroupMember(member_id)
        _check_epoch(member, epoch, owned)
        return member

    def _static_member(self, group: ConsumerGroup, member_id: str, epoch: int,
                       instance_id: str, owned: dict[uuid.UUID, frozenset[int]] | None,
                       records: list[Record]) -> ConsumerGroupMember:
        existing = group.static_member(instance_id)
        if epoch == 0:
            if existing is None:
                return group.members.get(member_id) or ConsumerGroupMember(member_id)
            if existing.member_epoch != LEFT_STATIC_EPOCH:
                raise GroupError(Errors.UNRELEASED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {instance_id} "
                                 "cannot join the group because the instance id is owned by "
                                 f"{existing.member_id} member.")
            new = dataclasses.replace(existing, member_id=member_id, member_epoch=0,
                           previous_member_epoch=0)
            replacing = _member_tombstones(group.group_id, existing.member_id) + [
                _member_record(group.group_id, new),
                _target_record(group.group_id, member_id, group.target.get(existing.member_id,
                                                                           {})),
                (T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                 {"groupId": group.group_id, "memberId": member_id}, new.assignment_value())]
            records.extend(replacing)
            self._replay(group, replacing)
            self._cancel_all(group.group_id, existing.member_id)
            return group.members[member_id]
        existing = _known_static_member(group, member_id, instance_id)
        _check_epoch(existing, epoch, owned)
        return existing

    # -- subscriptions, regular expressions and the target assignment -----------------------------
    def subscribed_names(self, group: ConsumerGroup) -> set[str]:
        names = {t for m in group.members.values() for t in m.subscribed_topic_names}
        for value in group.regular_expressions.values():
            names.update(value["topics"])
        return names

    def _member_topics(self, group: ConsumerGroup, member: ConsumerGroupMember) -> set[str]:
        names = set(member.subscribed_topic_names)
        regex = member.subscribed_topic_regex
        if regex and regex in group.regular_expressions:
            names.update(group.regular_expressions[regex]["topics"])
        return names

    def _subscribed_ids(self, group: ConsumerGroup, member: ConsumerGroupMember,
                        topics: TopicView) -> frozenset[uuid.UUID]:
        return frozenset(topics[n][0] for n in self._member_topics(group, member) if n in topics)

    def _maybe_update_regexes(self, group: ConsumerGroup, member: ConsumerGroupMember,
                              updated: ConsumerGroupMember, topics: TopicView,
                              records: list[Record]) -> bool:
        """Kafka's ``maybeUpdateRegularExpressions``, resolving at once; True when the
        group epoch must be bumped for it."""
        old, new = member.subscribed_topic_regex, updated.subscribed_topic_regex
        users = [m.subscribed_topic_regex for m in group.members.values()
                 if m.member_id != updated.member_id]
        resolved = False
        written: list[Record] = []
        if old != new:
            if old and old not in users:
                written.append((T.CONSUMER_GROUP_REGULAR_EXPRESSION,
                                {"groupId": group.group_id, "regularExpression": old}, None))
            if new:
                if new not in users or new not in group.regular_expressions:
                    written.append(self._resolve(group.group_id, new, topics))
                resolved = True
            elif old:
                resolved = True
        now = wall_clock_ms()
        for regex, value in group.regular_expressions.items():
            if regex == new or now <= value.get("timestamp", 0) + REGEX_REFRESH_MS:
                continue
            fresh = self._resolve(group.group_id, regex, topics)
            if sorted(fresh[2]["topics"]) != sorted(value["topics"]):  # type: ignore[index]
                written.append(fresh)
                resolved = True
        records.extend(written)
        self._replay(group, written)
        return resolved

    @staticmethod
    def _resolve(group_id: str, regex: str, topics: TopicView) -> Record:
        try:
            pattern = re.compile(regex)
        except re.error as exc:
            raise GroupError(Errors.INVALID_REGULAR_EXPRESSION,
                             f"SubscribedTopicRegex `{regex}` is not a valid regular "
                             f"expression: {exc.msg}.") from None
        matched = sorted(n for n in topics if n not in INTERNAL_TOPICS and pattern.fullmatch(n))
        return (T.CONSUMER_GROUP_REGULAR_EXPRESSION,
                {"groupId": group_id, "regularExpression": regex},
                {"topics": matched, "version": 0, "timestamp": wall_clock_ms()})

    def _maybe_update_target(self, group: ConsumerGroup, assignor: str, topics: TopicView,
                             records: list[Record]) -> tuple[int, dict[str, Assignment]]:
        """The target epoch and every member's target assignment."""
        if group.assignment_epoch >= group.group_epoch or not (
                group.assignment_timestamp == 0
                or wall_clock_ms() >= group.assignment_timestamp + ASSIGNMENT_INTERVAL_MS):
            return group.assignment_epoch, group.target
        members = {m.member_id: MemberSpec(self._subscribed_ids(group, m, topics), m.instance_id,
                                           group.target.get(m.member_id, {}))
                   for m in group.members.values()}
        counts = {tid: count for tid, count in topics.values()}
        name_counts = group.subscribed_topic_names(list(group.members.values()))
        homogeneous = not group.regular_expressions and all(
            n == len(members) for n in name_counts.values())
        try:
            result = assign(assignor, members, counts, homogeneous)
        except PartitionAssignorError as exc:
            raise GroupError(Errors.UNKNOWN_SERVER_ERROR,
                             f"Failed to compute a new target assignment for epoch "
                             f"{group.group_epoch}: {exc}") from None
        written: list[Record] = []
        for member_id in members:
            new = result.get(member_id, {})
            if member_id not in group.target or group.target[member_id] != new:
                written.append(_target_record(group.group_id, member_id, new))
        written.append((T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, {"groupId": group.group_id},
                        {"assignmentEpoch": group.group_epoch,
                         "assignmentTimestamp": wall_clock_ms()}))
        records.extend(written)
        self._replay(group, written)
        return group.assignment_epoch, group.target

    # -- leaving and fencing ----------------------------------------------------------------------
    def _leave(self, group_id: str, instance_id: str | None, member_id: str,
               epoch: int) -> dict[str, Any]:
        group = self._existing(group_id)
        response = {"throttle_time": 0, "error_code": Errors.NONE, "error_message": None,
                    "member_id": member_id, "member_epoch": epoch, "heartbeat_interval": 0,
                    "assignment": None}
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group_id}.")
            logger.info("[GroupId %s] Member %s left the consumer group.", group_id, member_id)
            self._fence(group, [member])
            return response
        member = _known_static_member(group, member_id, instance_id)
        if epoch == LEFT_STATIC_EPOCH:
            left = dataclasses.replace(
                member, member_epoch=LEFT_STATIC_EPOCH, pending_revocation={},
                assigned={t: dict.fromkeys(ps, 0) for t, ps in member.assigned.items()})
            working = copy.deepcopy(group)
            records: list[Record] = [(T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                                      {"groupId": group_id, "memberId": member_id},
                                      left.assignment_value())]
            self._replay(working, records)
            self._commit(working, records)
            response["member_epoch"] = LEFT_STATIC_EPOCH
            return response
        self._fence(group, [member])
        return response

    def leave_group(self, group_id: str, identities: list[tuple[str, str | None]]
                    ) -> tuple[Errors, list[tuple[str, str | None, Errors]]]:
        """A classic LeaveGroup naming members of a consumer group (the Admin client's
        ``removeMembersFromConsumerGroup``): Kafka's ``classicGroupLeaveToConsumerGroup``."""
        group = self.groups[group_id]
        results: list[tuple[str, str | None, Errors]] = []
        leaving: dict[str, ConsumerGroupMember] = {}
        for member_id, instance_id in identities:
            if instance_id is None:
                member = group.members.get(member_id)
                error = Errors.NONE if member is not None else Errors.UNKNOWN_MEMBER_ID
            else:
                member = group.static_member(instance_id)
                error = Errors.UNKNOWN_MEMBER_ID if member is None else (
                    Errors.FENCED_INSTANCE_ID if member_id and member.member_id != member_id
                    else Errors.NONE)
            results.append((member_id, instance_id, error))
            if error == Errors.NONE and member is not None:
                leaving[member.member_id] = member
        if leaving:
            try:
                self._fence(group, list(leaving.values()))
            except GroupError as exc:
                return exc.code, []
        return Errors.NONE, results

    def _fence(self, group: ConsumerGroup, members: list[ConsumerGroupMember]) -> None:
        working = copy.deepcopy(group)
        records: list[Record] = []
        for member in members:
            records.extend(_member_tombstones(group.group_id, member.member_id))
        leaving = {m.member_id for m in members}
        staying = [m for m in group.members.values() if m.member_id not in leaving]
        for regex in {m.subscribed_topic_regex for m in members if m.subscribed_topic_regex}:
            if not any(m.subscribed_topic_regex == regex for m in staying):
                records.append((T.CONSUMER_GROUP_REGULAR_EXPRESSION,
                                {"groupId": group.group_id, "regularExpression": regex}, None))
        self._replay(working, records)
        new_hash = metadata_hash(self.subscribed_names(working), self.topics())
        epoch = group.group_epoch + 1
        tail: list[Record] = [(T.CONSUMER_GROUP_METADATA, {"groupId": group.group_id},
                               {"epoch": epoch, "metadataHash": new_hash})]
        if not staying:
            tail.append((T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
                         {"groupId": group.group_id},
                         {"assignmentEpoch": epoch, "assignmentTimestamp": 0}))
        self._replay(working, tail)
        self._commit(working, records + tail)
        for member_id in leaving:
            self._cancel_all(group.group_id, member_id)

    def _fence_later(self, group_id: str, member_id: str, epoch: int | None, reason: str) -> None:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if group is None or member is None or (epoch is not None and member.member_epoch != epoch):
            return
        logger.info("[GroupId %s] Member %s fenced from the group because %s.", group_id,
                    member_id, reason)
        try:
            self._fence(group, [member])
        except GroupError as exc:
            logger.warning("[GroupId %s] Fencing member %s failed: %s", group_id, member_id,
                           exc.code.name)

    # -- timers -----------------------------------------------------------------------------------
    def _schedule(self, key: tuple[str, str, str], delay_ms: int, action: Callable[[], None]
                  ) -> None:
        self._cancel(*key)
        self._timers[key] = asyncio.get_running_loop().call_later(delay_ms / 1000, action)

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        self._schedule((group_id, member_id, "session"), self.config.consumer_session_timeout_ms,
                       lambda: self._fence_later(group_id, member_id, None,
                                                 "the member session expired"))

    def _schedule_rebalance_timeout(self, group_id: str, member: ConsumerGroupMember) -> None:
        epoch, member_id = member.member_epoch, member.member_id
        self._schedule((group_id, member_id, "rebalance"), member.rebalance_timeout_ms,
                       lambda: self._fence_later(
                           group_id, member_id, epoch,
                           f"it failed to transition from epoch {epoch} within "
                           f"{member.rebalance_timeout_ms}ms"))

    def _cancel(self, group_id: str, member_id: str, kind: str) -> None:
        timer = self._timers.pop((group_id, member_id, kind), None)
        if timer is not None:
            timer.cancel()

    def _cancel_all(self, group_id: str, member_id: str) -> None:
        for kind in ("session", "rebalance"):
            self._cancel(group_id, member_id, kind)

    def shutdown(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    # -- writing ----------------------------------------------------------------------------------
    @staticmethod
    def _replay(group: ConsumerGroup, records: list[Record]) -> None:
        for record_type, key, value in records:
            group.replay(record_type, key, value)

    def _commit(self, working: ConsumerGroup, records: list[Record]) -> None:
        """Write ``records`` in one batch; once written, ``working`` is the group."""
        if records:
            error = self.store(working.group_id, [encode_group_record(
                t, k, None if v is None else 0, v) for t, k, v in records])
            if error != Errors.NONE:
                raise GroupError(error)
        if working.deleted:
            self.groups.pop(working.group_id, None)
        else:
            self.groups[working.group_id] = working

    # -- other APIs -------------------------------------------------------------------------------
    def _existing(self, group_id: str) -> ConsumerGroup:
        """Kafka's ``consumerGroup(groupId)``."""
        group = self.groups.get(group_id)
        if group is None:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, self._not_found(group_id))
        return group

    def _not_found(self, group_id: str) -> str:
        return (f"Group {group_id} is not a consumer group." if self.other_type(group_id)
                else f"Group {group_id} not found.")

    def describe(self, group_id: str) -> dict[str, Any]:
        """One ConsumerGroupDescribe entry."""
        group = self.groups.get(group_id)
        if group is None:
            return {"error_code": Errors.GROUP_ID_NOT_FOUND,
                    "error_message": self._not_found(group_id),
                    "group_id": group_id, "group_state": "", "group_epoch": 0,
                    "assignment_epoch": 0, "assignor_name": "", "members": [],
                    "authorized_operations": -2147483648}
        names = {tid: name for name, (tid, _) in self.topics().items()}

        def partitions(assignment: dict[uuid.UUID, Any]) -> list[dict[str, Any]]:
            return [{"topic_id": t, "topic_name": names[t], "partitions": sorted(ps)}
                    for t, ps in assignment.items() if t in names]

        members = []
        for m in group.members.values():
            owned: dict[uuid.UUID, set[int]] = {}
            for assignment in (m.assigned, m.pending_revocation):
                for topic_id, ps in assignment.items():
                    owned.setdefault(topic_id, set()).update(ps)
            members.append({
                "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                "member_epoch": m.member_epoch, "client_id": m.client_id,
                "client_host": m.client_host,
                "subscribed_topic_names": sorted(m.subscribed_topic_names),
                "subscribed_topic_regex": m.subscribed_topic_regex,
                "assignment": {"topic_partitions": partitions(owned)},
                "target_assignment": {"topic_partitions": partitions(
                    group.target.get(m.member_id, {}))},
                "member_type": 0 if m.uses_classic_protocol else 1})
        return {"error_code": Errors.NONE, "error_message": None, "group_id": group_id,
                "group_state": group.state, "group_epoch": group.group_epoch,
                "assignment_epoch": group.assignment_epoch,
                "assignor_name": group.preferred_server_assignor(ASSIGNORS[0]),
                "members": members, "authorized_operations": -2147483648}

    def validate_commit(self, group_id: str, member_id: str, epoch: int,
                        partitions: list[tuple[str, int]], transactional: bool,
                        version: int) -> dict[tuple[str, int], Errors] | Errors:
        """Kafka's ``ConsumerGroup.validateOffsetCommit``: a group error, or per partition
        (NONE where the commit may go)."""
        group = self.groups[group_id]
        if epoch < 0 and not group.members:
            return Errors.NONE
        if transactional and epoch == -1 and not member_id:
            return Errors.NONE
        member = group.members.get(member_id)
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        if not transactional and not member.uses_classic_protocol and version < 9:
            return Errors.UNSUPPORTED_VERSION
        if epoch == member.member_epoch:
            return Errors.NONE
        if epoch > member.member_epoch:
            return Errors.STALE_MEMBER_EPOCH
        ids = {name: tid for name, (tid, _) in self.topics().items()}
        results = {}
        for topic, partition in partitions:
            assigned = member.assignment_epoch(ids[topic], partition) if topic in ids else None
            results[(topic, partition)] = Errors.STALE_MEMBER_EPOCH if (
                assigned is None or epoch < assigned) else Errors.NONE
        return results

    def validate_fetch(self, group_id: str, member_id: str | None, epoch: int) -> Errors:
        group = self.groups[group_id]
        if member_id is None and epoch < 0:
            return Errors.NONE
        member = group.members.get(member_id or "")
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        return Errors.NONE if epoch == member.member_epoch else Errors.STALE_MEMBER_EPOCH

    def tombstones(self, group_id: str) -> list[tuple[bytes, bytes | None]]:
        """The records deleting an empty group (Kafka's ``createGroupTombstoneRecords``)."""
        group = self.groups[group_id]
        gid = {"groupId": group_id}
        records: list[Record] = []
        records += [(T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, {**gid, "memberId": m}, None)
                    for m in group.members]
        records += [(T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, {**gid, "memberId": m}, None)
                    for m in group.members]
        records.append((T.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, gid, None))
        records += [(T.CONSUMER_GROUP_MEMBER_METADATA, {**gid, "memberId": m}, None)
                    for m in group.members]
        records += [(T.CONSUMER_GROUP_REGULAR_EXPRESSION, {**gid, "regularExpression": r}, None)
                    for r in group.regular_expressions]
        records.append((T.CONSUMER_GROUP_PARTITION_METADATA, gid, None))
        records.append((T.CONSUMER_GROUP_METADATA, gid, None))
        return [encode_group_record(t, k, None, v) for t, k, v in records]


def _validate(body: HeartbeatRequest, version: int) -> None:
    """``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid``."""
    def empty(value: str | None, message: str) -> None:
        if value is not None and not value.strip():
            raise GroupError(Errors.INVALID_REQUEST, message)
    epoch = body.member_epoch
    if version >= 1 or epoch > 0 or epoch == -1:
        if not body.member_id.strip():
            raise GroupError(Errors.INVALID_REQUEST, "MemberId can't be empty.")
    empty(body.group_id, "GroupId can't be empty.")
    empty(body.instance_id, "InstanceId can't be empty.")
    empty(body.rack_id, "RackId can't be empty.")
    if epoch == 0:
        if body.rebalance_timeout_ms == -1:
            raise GroupError(Errors.INVALID_REQUEST,
                             "RebalanceTimeoutMs must be provided in first request.")
        if body.topic_partitions is None or body.topic_partitions:
            raise GroupError(Errors.INVALID_REQUEST,
                             "TopicPartitions must be empty when (re-)joining.")
        if body.subscribed_topic_names is None and body.subscribed_topic_regex is None:
            raise GroupError(Errors.INVALID_REQUEST,
                             "Either SubscribedTopicNames or SubscribedTopicRegex must be "
                             "non-null when (re-)joining.")
    elif epoch == LEFT_STATIC_EPOCH:
        if body.instance_id is None:
            raise GroupError(Errors.INVALID_REQUEST, "InstanceId can't be null.")
    elif epoch < LEFT_STATIC_EPOCH:
        raise GroupError(Errors.INVALID_REQUEST, "MemberEpoch is invalid.")
    if body.server_assignor is not None and body.server_assignor not in ASSIGNORS:
        raise GroupError(Errors.UNSUPPORTED_ASSIGNOR,
                         f"ServerAssignor {body.server_assignor} is not supported. Supported "
                         f"assignors: {', '.join(ASSIGNORS)}.")


def _known_static_member(group: ConsumerGroup, member_id: str, instance_id: str
                         ) -> ConsumerGroupMember:
    """The static member of ``instance_id``, which must be ``member_id``
    (``throwIfStaticMemberIsUnknown``, ``throwIfInstanceIdIsFenced``)."""
    member = group.static_member(instance_id)
    if member is None:
        raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if member.member_id != member_id:
        raise GroupError(Errors.FENCED_INSTANCE_ID,
                         f"Static member {member_id} with instance id {instance_id} was "
                         f"fenced by member {member.member_id}.")
    return member


def _check_epoch(member: ConsumerGroupMember, epoch: int,
                 owned: dict[uuid.UUID, frozenset[int]] | None) -> None:
    """``throwIfConsumerGroupMemberEpochIsInvalid``."""
    if epoch == 0:
        return
    if epoch > member.member_epoch:
        raise GroupError(Errors.FENCED_MEMBER_EPOCH,
                         f"The consumer group member has a greater member epoch ({epoch}) than "
                         f"the one known by the group coordinator ({member.member_epoch}). The "
                         "member must abandon all its partitions and rejoin.")
    if epoch < member.member_epoch and not (epoch == member.previous_member_epoch
                                            and member.owned_subset_of_assigned(owned)):
        raise GroupError(Errors.FENCED_MEMBER_EPOCH,
                         f"The consumer group member has a smaller member epoch ({epoch}) than "
                         f"the one known by the group coordinator ({member.member_epoch}). The "
                         "member must abandon all its partitions and rejoin.")


def _updated_member(member: ConsumerGroupMember, body: HeartbeatRequest, client_id: str,
                    client_host: str) -> ConsumerGroupMember:
    """The member with what this heartbeat says (absent fields keep their values)."""
    changes: dict[str, Any] = {"client_id": client_id, "client_host": client_host,
                               "classic_member_metadata": None}
    if body.instance_id is not None:
        changes["instance_id"] = body.instance_id
    if body.rack_id is not None:
        changes["rack_id"] = body.rack_id
    if body.rebalance_timeout_ms != -1:
        changes["rebalance_timeout_ms"] = body.rebalance_timeout_ms
    if body.server_assignor is not None:
        changes["server_assignor"] = body.server_assignor
    if body.subscribed_topic_names is not None:
        changes["subscribed_topic_names"] = frozenset(body.subscribed_topic_names)
    if body.subscribed_topic_regex is not None:
        changes["subscribed_topic_regex"] = body.subscribed_topic_regex
    return dataclasses.replace(member, **changes)


def _member_record(group_id: str, member: ConsumerGroupMember) -> Record:
    return (T.CONSUMER_GROUP_MEMBER_METADATA, {"groupId": group_id, "memberId": member.member_id},
            member.metadata_value())


def _target_record(group_id: str, member_id: str, target: Assignment) -> Record:
    return (T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, {"groupId": group_id, "memberId": member_id},
            {"topicPartitions": [{"topicId": t.bytes, "partitions": sorted(ps)}
                                 for t, ps in target.items()]})


def _member_tombstones(group_id: str, member_id: str) -> list[Record]:
    key = {"groupId": group_id, "memberId": member_id}
    return [(T.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, key, None),
            (T.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, key, None),
            (T.CONSUMER_GROUP_MEMBER_METADATA, key, None)]
