"""The server assignors of KIP-848 groups: ``range`` cuts each topic as Kafka's
``RangeAssignor`` does; ``uniform`` balances (no member more than one partition above another),
assigns every partition once, and lets each member keep what it owns up to its quota."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pylogctl.broker.partition_assignor import (MemberSpec, PartitionAssignorError, assign)

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def _sizes(result):
    return {m: sum(len(ps) for ps in a.values()) for m, a in result.items()}


def _owners(result):
    owners = {}
    for member, assignment in result.items():
        for topic, partitions in assignment.items():
            for p in partitions:
                assert (topic, p) not in owners, "a partition assigned twice"
                owners[(topic, p)] = member
    return owners


def test_range_cuts_consecutive_ranges_in_instance_then_member_order():
    members = {"b": MemberSpec(frozenset({T1})), "a": MemberSpec(frozenset({T1})),
               "z": MemberSpec(frozenset({T1}), instance_id="i-1")}
    result = assign("range", members, {T1: 7}, homogeneous=True)
    # static members first (by instance id), then dynamic ones by member id; 7 = 3 + 2 + 2
    assert result == {"z": {T1: frozenset({0, 1, 2})}, "a": {T1: frozenset({3, 4})},
                      "b": {T1: frozenset({5, 6})}}


def test_range_with_different_subscriptions_cuts_each_topic_among_its_subscribers():
    members = {"a": MemberSpec(frozenset({T1, T2})), "b": MemberSpec(frozenset({T1}))}
    result = assign("range", members, {T1: 3, T2: 2}, homogeneous=False)
    assert result == {"a": {T1: frozenset({0, 1}), T2: frozenset({0, 1})},
                      "b": {T1: frozenset({2})}}


def test_a_subscribed_topic_missing_from_the_metadata_is_an_assignor_error():
    with pytest.raises(PartitionAssignorError):
        assign("uniform", {"a": MemberSpec(frozenset({T1}))}, {}, homogeneous=True)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.lists(st.integers(1, 9), min_size=1, max_size=3),
       st.data())
def test_uniform_balances_and_is_sticky(member_count, partition_counts, data):
    topics = {uuid.UUID(int=i + 1): n for i, n in enumerate(partition_counts)}
    all_partitions = [(t, p) for t, n in topics.items() for p in range(n)]
    ids = [f"m{i}" for i in range(member_count)]
    # what each member owned before: a random partial, non-overlapping assignment
    owner_of = data.draw(st.lists(st.sampled_from([None, *ids]), min_size=len(all_partitions),
                                  max_size=len(all_partitions)))
    owned = {m: {} for m in ids}
    for (t, p), m in zip(all_partitions, owner_of):
        if m is not None:
            owned[m].setdefault(t, set()).add(p)
    members = {m: MemberSpec(frozenset(topics), target={t: frozenset(ps)
                                                        for t, ps in owned[m].items()})
               for m in ids}
    result = assign("uniform", members, topics, homogeneous=True)
    owners = _owners(result)
    assert set(owners) == set(all_partitions)
    sizes = _sizes(result)
    assert max(sizes.values()) - min(sizes.values()) <= 1
    quota = -(-len(all_partitions) // member_count)  # the most anyone may keep
    for m in ids:
        kept = sum(len(ps & result[m].get(t, frozenset())) for t, ps in owned[m].items())
        assert kept >= min(sum(len(ps) for ps in owned[m].values()), quota) - 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sets(st.sampled_from([T1, T2]), min_size=1), min_size=1, max_size=5),
       st.integers(1, 8), st.integers(1, 8))
def test_uniform_with_different_subscriptions_gives_each_partition_to_a_subscriber(
        subscriptions, n1, n2):
    members = {f"m{i}": MemberSpec(frozenset(s)) for i, s in enumerate(subscriptions)}
    result = assign("uniform", members, {T1: n1, T2: n2}, homogeneous=False)
    owners = _owners(result)
    wanted = {(t, p) for t, n in ((T1, n1), (T2, n2)) for p in range(n)
              if any(t in s for s in subscriptions)}
    assert set(owners) == wanted
    for (t, _), m in owners.items():
        assert t in members[m].subscribed_topic_ids
    # every topic spread evenly enough: no subscriber of a partition's topic holds two more
    sizes = _sizes(result)
    for (t, _), m in owners.items():
        assert all(sizes[m] - sizes[o] <= 1 for o in members
                   if t in members[o].subscribed_topic_ids), (t, m, sizes)
