"""How a KIP-848 member reaches its target (Kafka's ``CurrentAssignmentBuilder``): partitions
leaving it are revoked first, at its old epoch; partitions another member still owns wait
(UNRELEASED_PARTITIONS); the new epoch comes with what is free; a member in an unknown state
that still owns partitions is fenced."""

from __future__ import annotations

import uuid

import pytest

from pylogctl.broker.consumer_group_member import (STABLE, UNKNOWN, UNRELEASED_PARTITIONS,
                                                   UNREVOKED_PARTITIONS, ConsumerGroupMember)
from pylogctl.broker.current_assignment_builder import FencedMemberEpochError, next_assignment

T = uuid.UUID(int=7)
SUBSCRIBED = frozenset({T})


def _free(topic_id, partition):
    return -1


def test_a_new_member_takes_its_free_target_at_the_target_epoch():
    member = ConsumerGroupMember("m", member_epoch=0, previous_member_epoch=-1)
    after = next_assignment(member, 5, {T: frozenset({0, 1})}, SUBSCRIBED, True, _free, {})
    assert (after.state, after.member_epoch, after.previous_member_epoch) == (STABLE, 5, 0)
    assert after.assigned == {T: {0: 5, 1: 5}}


def test_partitions_leaving_are_revoked_before_the_epoch_moves():
    member = ConsumerGroupMember("m", member_epoch=5, previous_member_epoch=4,
                                 assigned={T: {0: 5, 1: 5, 2: 4}})
    target = {T: frozenset({0, 3})}
    # it still reports owning 1 and 2: revoke them, stay at epoch 5
    revoking = next_assignment(member, 6, target, SUBSCRIBED, False, _free,
                               {T: frozenset({0, 1, 2})})
    assert (revoking.state, revoking.member_epoch) == (UNREVOKED_PARTITIONS, 5)
    assert revoking.assigned == {T: {0: 5}} and revoking.pending_revocation == {T: {1: 5, 2: 4}}
    # until a heartbeat shows them gone, nothing changes
    assert next_assignment(revoking, 6, target, SUBSCRIBED, False, _free,
                           {T: frozenset({0, 1})}) is revoking
    # then it moves to epoch 6 with 3 added
    done = next_assignment(revoking, 6, target, SUBSCRIBED, False, _free, {T: frozenset({0})})
    assert (done.state, done.member_epoch, done.previous_member_epoch) == (STABLE, 6, 5)
    assert done.assigned == {T: {0: 5, 3: 6}} and done.pending_revocation == {}


def test_a_partition_another_member_owns_waits_until_it_is_released():
    owned_elsewhere = {(T, 1): 5}

    def epoch_of(topic_id, partition):
        return owned_elsewhere.get((topic_id, partition), -1)

    member = ConsumerGroupMember("m", member_epoch=5, assigned={T: {0: 5}})
    waiting = next_assignment(member, 6, {T: frozenset({0, 1})}, SUBSCRIBED, False, epoch_of,
                              {T: frozenset({0})})
    assert (waiting.state, waiting.member_epoch) == (UNRELEASED_PARTITIONS, 6)
    assert waiting.assigned == {T: {0: 5}}
    owned_elsewhere.clear()
    released = next_assignment(waiting, 6, {T: frozenset({0, 1})}, SUBSCRIBED, False, epoch_of,
                               {T: frozenset({0})})
    assert (released.state, released.assigned) == (STABLE, {T: {0: 5, 1: 6}})


def test_unsubscribing_revokes_at_once():
    member = ConsumerGroupMember("m", member_epoch=5, assigned={T: {0: 5}})
    after = next_assignment(member, 5, {T: frozenset({0})}, frozenset(), True, _free,
                            {T: frozenset({0})})
    assert (after.state, after.assigned, after.pending_revocation) == (
        UNREVOKED_PARTITIONS, {}, {T: {0: 5}})


def test_an_unknown_member_that_owns_partitions_is_fenced():
    member = ConsumerGroupMember("m", member_epoch=5, state=UNKNOWN, assigned={T: {0: 5}})
    with pytest.raises(FencedMemberEpochError, match="unknown state"):
        next_assignment(member, 6, {T: frozenset({0})}, SUBSCRIBED, False, _free,
                        {T: frozenset({0})})
    after = next_assignment(member, 6, {T: frozenset({0})}, SUBSCRIBED, False, _free, {})
    assert (after.state, after.member_epoch) == (STABLE, 6)
