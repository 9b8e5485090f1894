"""ConsumerGroupHeartbeat in ``pylogctl broker`` (KIP-848), request by request: Kafka's checks
and messages for malformed requests, unknown groups and members, stale and future epochs,
unreleased instance ids and unknown assignors; a member whose session lapses is fenced; a
group, its members and their epochs survive a restart; classic and consumer groups of the same
id exclude each other unless the other is empty."""

from __future__ import annotations

import dataclasses
import time

import pytest

from broker_support import FAST_GROUPS, BrokerThread
from pylogctl.broker.consumer_group_coordinator import HeartbeatRequest
from pylogctl.broker.error_codes import Errors


def _heartbeat(broker, request, version=1):
    groups = broker.broker.groups
    return broker.call(lambda: groups.consumer_group_heartbeat(request, version, "client",
                                                               "/127.0.0.1"))


def _join(group, member, topics=("t",), instance=None, assignor=None):
    return HeartbeatRequest(group, member, 0, instance_id=instance, rebalance_timeout_ms=30000,
                            subscribed_topic_names=topics, server_assignor=assignor,
                            topic_partitions={})


@pytest.fixture
def broker(tmp_path):
    with BrokerThread(tmp_path / "logs") as b:
        b.call(lambda: b.broker.groups.replicas.create_topic("t", 4, b.broker.topic_config("t")))
        yield b


@pytest.mark.parametrize("request_, version, message", [
    (HeartbeatRequest("g", "", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t",),
                      topic_partitions={}), 1, "MemberId can't be empty."),
    (HeartbeatRequest("g", "m", 0, subscribed_topic_names=("t",), topic_partitions={}), 1,
     "RebalanceTimeoutMs must be provided in first request."),
    (HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t",)), 1,
     "TopicPartitions must be empty when (re-)joining."),
    (HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=1, topic_partitions={}), 1,
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    (HeartbeatRequest("g", "m", -2), 1, "InstanceId can't be null."),
    (HeartbeatRequest("g", "m", -3), 1, "MemberEpoch is invalid."),
    (HeartbeatRequest(" ", "m", 1), 1, "GroupId can't be empty."),
])
def test_malformed_heartbeats_are_invalid_requests_with_kafkas_message(broker, request_, version,
                                                                        message):
    response = _heartbeat(broker, request_, version)
    assert (response["error_code"], response["error_message"]) == (Errors.INVALID_REQUEST,
                                                                   message)


def test_a_v0_join_without_a_member_id_gets_one(broker):
    response = _heartbeat(broker, _join("g", ""), version=0)
    assert response["error_code"] == Errors.NONE and len(response["member_id"]) == 22


def test_unknown_assignors_groups_and_members_and_wrong_epochs_are_refused(broker):
    response = _heartbeat(broker, _join("g", "m", assignor="sticky"))
    assert (response["error_code"], response["error_message"]) == (
        Errors.UNSUPPORTED_ASSIGNOR,
        "ServerAssignor sticky is not supported. Supported assignors: uniform, range.")
    response = _heartbeat(broker, HeartbeatRequest("nope", "m", 3))
    assert (response["error_code"], response["error_message"]) == (
        Errors.GROUP_ID_NOT_FOUND, "Consumer group nope not found.")
    joined = _heartbeat(broker, _join("g", "m"))
    assert (joined["error_code"], joined["member_epoch"]) == (Errors.NONE, 2)
    assert sum(len(tp["partitions"]) for tp in joined["assignment"]["topic_partitions"]) == 4
    response = _heartbeat(broker, HeartbeatRequest("g", "other", 2))
    assert (response["error_code"], response["error_message"]) == (
        Errors.UNKNOWN_MEMBER_ID, "Member other is not a member of group g.")
    response = _heartbeat(broker, HeartbeatRequest("g", "m", 9))
    assert response["error_code"] == Errors.FENCED_MEMBER_EPOCH
    assert response["error_message"].startswith(
        "The consumer group member has a greater member epoch (9) than the one known by the "
        "group coordinator (2).")
    steady = _heartbeat(broker, HeartbeatRequest("g", "m", 2))
    assert (steady["error_code"], steady["member_epoch"], steady["assignment"]) == (
        Errors.NONE, 2, None)  # nothing changed: no assignment sent


def test_an_instance_id_in_use_is_unreleased_and_a_left_one_is_taken_over(broker):
    assert _heartbeat(broker, _join("g", "a", instance="i"))["error_code"] == Errors.NONE
    response = _heartbeat(broker, _join("g", "b", instance="i"))
    assert (response["error_code"], response["error_message"]) == (
        Errors.UNRELEASED_INSTANCE_ID, "Static member b with instance id i cannot join the group "
        "because the instance id is owned by a member.")
    left = _heartbeat(broker, HeartbeatRequest("g", "a", -2, instance_id="i"))
    assert (left["error_code"], left["member_epoch"]) == (Errors.NONE, -2)
    took = _heartbeat(broker, _join("g", "b", instance="i"))
    assert took["error_code"] == Errors.NONE
    members = broker.call(lambda: broker.broker.groups.consumer.groups["g"].members)
    assert list(members) == ["b"]
    assert sum(len(p) for p in members["b"].assigned.values()) == 4  # kept its partitions


def test_a_member_whose_session_lapses_is_fenced(tmp_path):
    with BrokerThread(tmp_path / "logs", group=dataclasses.replace(
            FAST_GROUPS, consumer_session_timeout_ms=200)) as broker:
        broker.call(lambda: broker.broker.groups.replicas.create_topic(
            "t", 1, broker.broker.topic_config("t")))
        _fenced_after_its_session(broker)


def _fenced_after_its_session(broker):
    assert _heartbeat(broker, _join("g", "m"))["error_code"] == Errors.NONE
    deadline = time.monotonic() + 10
    while broker.call(lambda: broker.broker.groups.consumer.groups["g"].members):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    group = broker.call(lambda: broker.broker.groups.consumer.groups["g"])
    assert (group.state, group.group_epoch, group.assignment_epoch) == ("Empty", 3, 3)


def test_members_and_epochs_survive_a_restart(tmp_path):
    with BrokerThread(tmp_path / "logs") as b:
        b.call(lambda: b.broker.groups.replicas.create_topic("t", 2, b.broker.topic_config("t")))
        assert _heartbeat(b, _join("g", "m"))["member_epoch"] == 2
    with BrokerThread(tmp_path / "logs") as b:
        group = b.call(lambda: b.broker.groups.consumer.groups["g"])
        assert (group.state, group.members["m"].member_epoch) == ("Stable", 2)
        topic_id = b.call(lambda: b.broker.groups.replicas.topics["t"].topic_id)
        response = _heartbeat(b, HeartbeatRequest("g", "m", 2, topic_partitions={
            topic_id: frozenset({0, 1})}))
        assert (response["error_code"], response["member_epoch"]) == (Errors.NONE, 2)


def test_classic_and_consumer_groups_of_one_id_exclude_each_other_unless_empty(broker):
    import asyncio

    groups = broker.broker.groups

    async def classic_join():
        return await groups.join_group("g", "", None, False, "c", "/127.0.0.1", 30000, 10000,
                                       "consumer", [("range", b"")])

    def join_classic():
        return asyncio.run_coroutine_threadsafe(classic_join(), broker.loop).result(30)

    joined = join_classic()
    assert joined["error_code"] == Errors.NONE
    response = _heartbeat(broker, _join("g", "m"))
    assert (response["error_code"], response["error_message"]) == (
        Errors.GROUP_ID_NOT_FOUND, "Cannot upgrade classic group g to consumer group because "
        "online upgrade is disabled.")
    broker.call(lambda: groups.leave_group("g", [(joined["member_id"], None)]))
    deadline = time.monotonic() + 10
    while broker.call(lambda: groups.groups["g"].state) != "Empty":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert _heartbeat(broker, _join("g", "m"))["error_code"] == Errors.NONE  # empty: converted
    assert join_classic()["error_code"] == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert _heartbeat(broker, HeartbeatRequest("g", "m", -1))["error_code"] == Errors.NONE
    assert join_classic()["error_code"] == Errors.NONE  # an empty consumer group: classic again
    assert broker.call(lambda: "g" not in groups.consumer.groups)
