"""The iteration orders of Java's hash maps, for output that Kafka's tools print in them.

``kafka-consumer-groups.sh --reset-offsets`` prints (and exports) its plan by iterating
``HashMap``s: groups keyed by id, partitions keyed by ``TopicPartition``. That order is not
sorted but it is deterministic (``HashMap``'s mechanics are
:mod:`pylogctl.format.java_collections`'s, which the storage layer uses too).

The group coordinator keeps members in a ``TimelineHashMap`` (:func:`timeline_order`), whose
order the describe responses, and so ``kafka-consumer-groups.sh`` and
``kafka-streams-groups.sh``, list members in.
"""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar

from ..format.java_collections import capacity_for, hash_map_order, java_int
from .offset_commits import TopicPartition
from .partitioner import java_string_hash

__all__ = ["capacity_for", "group_order", "hash_map_order", "partition_order",
           "timeline_order", "topic_partition_hash"]
T = TypeVar("T")


def topic_partition_hash(tp: TopicPartition) -> int:
    """``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return java_int(31 * (31 + tp.partition) + java_string_hash(tp.topic))


def group_order(group_ids: Iterable[str]) -> list[str]:
    return hash_map_order(group_ids, java_string_hash)


def partition_order(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    return hash_map_order(partitions, topic_partition_hash)


_GOLDEN = 0x9E3779B97F4A7C15  # -7046029254386353131 as an unsigned long


def timeline_order(items: Iterable[T], hash_code: Callable[[T], int]) -> list[T]:
    """``items`` (in insertion order) as a ``TimelineHashMap`` of the group coordinator
    iterates them: by slot, each slot from its last inserted key back to its first
    (``SnapshottableHashTable``'s iterators pop a slot's keys off the end). A slot is the top
    bits of the key's ``hashCode`` (sign-extended) times the golden ratio
    (``BaseHashTable.findSlot``). The table starts with 2 slots and doubles when a put, a
    replacement included, would fill it past 3/4; every member is put at least twice on load
    (its metadata and its assignment), so the last put finds all of them in. The size reached
    before members left is not on disk: the table is sized for the members that remain."""
    items = list(items)
    slots = 2
    for size in range(len(items) + 1):
        if (size + 1) * 0.75 > slots:
            slots *= 2
    shift = 64 - (slots.bit_length() - 1)

    def slot(item: T) -> int:
        h = hash_code(item) & 0xFFFFFFFFFFFFFFFF  # the int widened to a long
        return ((h * _GOLDEN) & 0xFFFFFFFFFFFFFFFF) >> shift

    order = {id(item): i for i, item in enumerate(items)}
    return sorted(items, key=lambda item: (slot(item), -order[id(item)]))
