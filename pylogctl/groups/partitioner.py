"""Which ``__consumer_offsets`` partition holds a group: Kafka's ``partitionFor``.

The group coordinator stores every record of a group (registration, members, offset commits)
in partition ``Utils.abs(groupId.hashCode()) % N``, N being the offsets topic's partition
count. ``hashCode`` is Java's ``String.hashCode``: ``h = 31 * h + c`` over the UTF-16 code
units (a character outside the BMP counts as its two surrogates), wrapping at 32 bits.
``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0, so ``h & 0x7fffffff`` would be wrong (it gives
21 instead of 27 for ``testgroup`` with 50 partitions). The same rule places transactional ids
in ``__transaction_state``.
"""

from __future__ import annotations

import struct

from ..format.varint import INT32_MIN

_MASK = 0xFFFFFFFF


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text`` (a signed 32-bit int)."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for (unit,) in struct.iter_unpack(">H", units):
        h = (31 * h + unit) & _MASK
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``abs``, except that ``Integer.MIN_VALUE`` gives 0."""
    return 0 if n == INT32_MIN else abs(n)


def partition_for(group_id: str, partition_count: int) -> int:
    """The ``__consumer_offsets`` partition of ``group_id`` among ``partition_count``."""
    if partition_count <= 0:
        raise ValueError(f"the offsets topic needs at least one partition, not {partition_count}")
    return kafka_abs(java_string_hash(group_id)) % partition_count
