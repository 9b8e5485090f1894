"""The state of one classic group (Kafka's ``GroupMetadata`` and ``MemberMetadata``): its
members and their protocols, generation, leader, chosen protocol, committed offsets and the
offsets pending in open transactions, and the ``group.*`` settings that bound it.

Kept apart from the coordinator so the state model reads on its own: :class:`Group` answers
questions about itself (does a join fit the group's protocols, which protocol wins, has every
member rejoined), while :mod:`.group_coordinator` drives the transitions between the states

    Empty -> PreparingRebalance (a join) -> CompletingRebalance (every member joined, or the
    rebalance timeout) -> Stable (the leader's SyncGroup) -> PreparingRebalance (a member
    joins, leaves or expires) -> Empty (a rebalance that ends with no member)

and :mod:`.group_metadata_manager` stores it in ``__consumer_offsets``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ..format.varint import INT32_MAX
from ..groups.group_metadata import GroupState
from ..storage.clock import wall_clock_ms

EMPTY, PREPARING, COMPLETING, STABLE, DEAD = (
    GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
    GroupState.STABLE, GroupState.DEAD)


@dataclass(frozen=True)
class GroupConfig:
    offsets_topic_partitions: int = 50
    initial_rebalance_delay_ms: int = 3000
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    max_size: int = INT32_MAX
    offset_metadata_max_bytes: int = 4096
    consumer_heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms
    consumer_session_timeout_ms: int = 45_000  # group.consumer.session.timeout.ms


@dataclass
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_future: asyncio.Future[dict[str, Any]] | None = None
    sync_future: asyncio.Future[dict[str, Any]] | None = None
    expiry: asyncio.TimerHandle | None = None

    def metadata(self, protocol: str) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise ValueError(f"member {self.member_id} does not support {protocol}")

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols


@dataclass
class Group:
    group_id: str
    state: str = EMPTY
    # "classic" for the groups this coordinator runs; a KIP-848, share or streams group
    # loaded from a log dir Kafka wrote keeps its type (ListGroups v5 reports it)
    group_type: str = "classic"
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation: int = 0
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending_members: set[str] = field(default_factory=set)
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    # producer id -> offsets committed in its open transaction
    pending_txn_offsets: dict[int, dict[tuple[str, int], CommittedOffset]] = field(
        default_factory=dict)
    state_timestamp: int = -1
    new_member_added: bool = False
    join_timer: asyncio.TimerHandle | None = None
    initial_remaining_ms: int = 0

    def transition(self, state: str) -> None:
        self.state = state
        self.state_timestamp = wall_clock_ms()

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        names = {n for n, _ in protocols}
        if self.state == EMPTY or not self.members:
            return bool(protocol_type) and bool(names)
        if protocol_type != self.protocol_type:
            return False
        return bool(names & self.candidates())

    def candidates(self) -> set[str]:
        sets = [{n for n, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str:
        """Each member votes for its first candidate; the most votes win (first on ties)."""
        candidates = self.candidates()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = next(n for n, _ in member.protocols if n in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=lambda n: votes[n])

    def all_joined(self) -> bool:
        return (not self.pending_members
                and all(m.join_future is not None for m in self.members.values()))

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)
