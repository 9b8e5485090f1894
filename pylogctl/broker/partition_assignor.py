"""Server-side partition assignors of KIP-848 consumer groups (Kafka's
``org.apache.kafka.coordinator.group.assignor``): ``uniform`` (the default, first of
``group.consumer.assignors``) and ``range``.

An assignor maps each member to the partitions it should own, from every member's subscribed
topic ids and current target assignment (so it can be sticky) and each topic's partition count.
``range`` is Kafka's ``RangeAssignor`` exactly: members sorted by instance id, then member id;
each topic's partitions cut in consecutive ranges, the first ``n % members`` one larger.
``uniform`` with one subscription for all members is Kafka's
``UniformHomogeneousAssignmentBuilder``: every member keeps up to its quota (``total /
members``, plus one for the first ``total % members`` members that can take it) of what it
has, and the partitions left go to the members below quota. Where Kafka walks members and
topics in ``HashMap`` order, this walks them sorted, so the sizes match Kafka's and the member
a given partition lands on may not.

With different subscriptions (Kafka's ``UniformHeterogeneousAssignmentBuilder``), this assigns
stickily and balances each topic's partitions among the members subscribing to it: members keep
what they still subscribe to, unowned partitions go to the least loaded subscriber, then
partitions move from the most to the least loaded subscriber while they differ by more than
one. Balanced like Kafka's, not necessarily the same partitions.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

Assignment = dict[uuid.UUID, frozenset[int]]
UNIFORM, RANGE = "uniform", "range"
ASSIGNORS = (UNIFORM, RANGE)  # group.consumer.assignors' default, in Kafka's order


class PartitionAssignorError(Exception):
    """Kafka's ``PartitionAssignorException`` (the heartbeat answers UNKNOWN_SERVER_ERROR)."""


@dataclass(frozen=True)
class MemberSpec:
    """What an assignor knows of a member (Kafka's ``MemberSubscriptionAndAssignment``)."""

    subscribed_topic_ids: frozenset[uuid.UUID]
    instance_id: str | None = None
    target: Assignment = field(default_factory=dict)


def assign(assignor: str, members: dict[str, MemberSpec], partition_counts: dict[uuid.UUID, int],
           homogeneous: bool) -> dict[str, Assignment]:
    """Every member's new target assignment; ``partition_counts`` has every subscribed topic
    (a missing one is a :class:`PartitionAssignorError`)."""
    if not members:
        return {}
    if assignor == RANGE:
        return _range(members, partition_counts, homogeneous)
    if homogeneous:
        return _uniform_homogeneous(members, partition_counts)
    return _uniform_heterogeneous(members, partition_counts)


def _count(partition_counts: dict[uuid.UUID, int], topic_id: uuid.UUID) -> int:
    count = partition_counts.get(topic_id)
    if count is None:
        raise PartitionAssignorError(
            f"Members are subscribed to topic {topic_id} which doesn't exist in the topic "
            "metadata.")
    return count


def _range(members: dict[str, MemberSpec], partition_counts: dict[uuid.UUID, int],
           homogeneous: bool) -> dict[str, Assignment]:
    order = sorted(members, key=lambda m: (members[m].instance_id is None,
                                           members[m].instance_id or "", m))
    subscribers: dict[uuid.UUID, int] = {}
    for member_id in order:
        for topic_id in members[member_id].subscribed_topic_ids:
            subscribers[topic_id] = subscribers.get(topic_id, 0) + 1
    if homogeneous:
        subscribers = dict.fromkeys(members[order[0]].subscribed_topic_ids, len(members))
    next_start = dict.fromkeys(subscribers, 0)
    extra = {t: _count(partition_counts, t) % n for t, n in subscribers.items()}
    result: dict[str, Assignment] = {}
    for member_id in order:
        assignment: Assignment = {}
        topics = (members[order[0]] if homogeneous else members[member_id]).subscribed_topic_ids
        for topic_id in sorted(topics):
            count = _count(partition_counts, topic_id)
            quota = count // subscribers[topic_id]
            if extra[topic_id] > 0:
                quota += 1
                extra[topic_id] -= 1
            start = next_start[topic_id]
            end = next_start[topic_id] = min(start + quota, count)
            if start < end:
                assignment[topic_id] = frozenset(range(start, end))
        result[member_id] = assignment
    return result


def _uniform_homogeneous(members: dict[str, MemberSpec], partition_counts: dict[uuid.UUID, int]
                         ) -> dict[str, Assignment]:
    order = sorted(members)
    subscribed = members[order[0]].subscribed_topic_ids
    if not subscribed:
        return {}
    owned = {(t, p) for spec in members.values() for t, ps in spec.target.items() for p in ps}
    unassigned: list[tuple[uuid.UUID, int]] = []
    total = 0
    for topic_id in sorted(subscribed):
        count = _count(partition_counts, topic_id)
        unassigned.extend((topic_id, p) for p in range(count) if (topic_id, p) not in owned)
        total += count
    minimum, extra_left = divmod(total, len(order))
    result: dict[str, dict[uuid.UUID, set[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for index, member_id in enumerate(order):
        quota, has_extra = minimum, False
        if extra_left > 0:
            quota, has_extra = quota + 1, True
        kept: dict[uuid.UUID, set[int]] = {}
        for topic_id, partitions in sorted(members[member_id].target.items()):
            if topic_id not in subscribed:
                continue
            for partition in sorted(partitions):
                if quota > 0:
                    quota -= 1
                    kept.setdefault(topic_id, set()).add(partition)
                else:
                    unassigned.append((topic_id, partition))
        if quota > 0 and has_extra and len(order) - index > extra_left:
            quota, has_extra = quota - 1, False
        if quota > 0:
            unfilled.append((member_id, quota))
        if has_extra:
            extra_left -= 1
        result[member_id] = kept
    position = 0
    for member_id, quota in unfilled:
        for _ in range(quota):
            if position >= len(unassigned):
                break
            topic_id, partition = unassigned[position]
            result[member_id].setdefault(topic_id, set()).add(partition)
            position += 1
    if position < len(unassigned):
        raise PartitionAssignorError("Partitions were left unassigned")
    return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in result.items()}


def _uniform_heterogeneous(members: dict[str, MemberSpec],
                           partition_counts: dict[uuid.UUID, int]) -> dict[str, Assignment]:
    order = sorted(members)
    result: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in order}
    load = dict.fromkeys(order, 0)
    owner: dict[tuple[uuid.UUID, int], str] = {}
    topics = sorted({t for spec in members.values() for t in spec.subscribed_topic_ids})
    counts = {t: _count(partition_counts, t) for t in topics}
    for member_id in order:  # keep what is still subscribed and still exists
        spec = members[member_id]
        for topic_id, partitions in sorted(spec.target.items()):
            if topic_id not in spec.subscribed_topic_ids:
                continue
            for partition in sorted(partitions):
                if partition < counts[topic_id] and (topic_id, partition) not in owner:
                    owner[(topic_id, partition)] = member_id
                    result[member_id].setdefault(topic_id, set()).add(partition)
                    load[member_id] += 1
    for topic_id in topics:
        subscribers = [m for m in order if topic_id in members[m].subscribed_topic_ids]
        for partition in range(counts[topic_id]):
            if (topic_id, partition) not in owner:
                member_id = min(subscribers, key=lambda m: (load[m], order.index(m)))
                owner[(topic_id, partition)] = member_id
                result[member_id].setdefault(topic_id, set()).add(partition)
                load[member_id] += 1
    moved = True
    while moved:  # even out: move one partition at a time from the most to the least loaded
        moved = False
        for topic_id in topics:
            subscribers = [m for m in order if topic_id in members[m].subscribed_topic_ids]
            donors = sorted((m for m in subscribers if result[m].get(topic_id)),
                            key=lambda m: -load[m])
            for donor in donors:
                taker = min(subscribers, key=lambda m: (load[m], order.index(m)))
                if load[donor] - load[taker] > 1:
                    partition = max(result[donor][topic_id])
                    result[donor][topic_id].discard(partition)
                    if not result[donor][topic_id]:
                        del result[donor][topic_id]
                    result[taker].setdefault(topic_id, set()).add(partition)
                    load[donor] -= 1
                    load[taker] += 1
                    moved = True
                    break
    return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in result.items()}
