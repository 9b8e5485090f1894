"""A KIP-848 member's next current assignment (Kafka's ``CurrentAssignmentBuilder`` of
``coordinator.group.modern.consumer``): how a member moves towards its target assignment
without two members ever owning a partition at once.

A member at the target epoch with nothing to do is ``STABLE``. When its target changes, the
partitions it must give up are revoked first (``UNREVOKED_PARTITIONS``, at its old epoch, until
a heartbeat shows it no longer owns them); then it takes the new epoch with the partitions that
are free, waiting in ``UNRELEASED_PARTITIONS`` for those another member still holds (the group's
``current_partition_epoch`` says who does). A member in ``UNKNOWN`` state must have dropped
everything. Each assigned partition carries the epoch it was assigned in, which offset commits
are checked against.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Callable

from .consumer_group_member import (STABLE, UNKNOWN, UNRELEASED_PARTITIONS,
                                    UNREVOKED_PARTITIONS, ConsumerGroupMember, EpochAssignment)
from .error_codes import Errors
from .partition_assignor import Assignment


class FencedMemberEpochError(Exception):
    """FENCED_MEMBER_EPOCH with Kafka's message."""

    code = Errors.FENCED_MEMBER_EPOCH


def next_assignment(member: ConsumerGroupMember, target_epoch: int, target: Assignment,
                    subscribed_topic_ids: frozenset[uuid.UUID], subscription_changed: bool,
                    current_partition_epoch: Callable[[uuid.UUID, int], int],
                    owned: dict[uuid.UUID, frozenset[int]] | None) -> ConsumerGroupMember:
    """The member after this heartbeat; ``owned`` is what the heartbeat says it owns (None:
    not said)."""
    builder = _Builder(member, target_epoch, target, subscribed_topic_ids,
                       current_partition_epoch, owned)
    if member.state == STABLE:
        if member.member_epoch != target_epoch:
            return builder.compute_next(member.member_epoch)
        if subscription_changed:
            return builder.update_current(member.member_epoch)
        return member
    if member.state == UNREVOKED_PARTITIONS:
        if builder.owns_revoked(member.pending_revocation):
            if subscription_changed:
                return builder.update_current(member.member_epoch)
            return member
        return builder.compute_next(member.member_epoch)
    if member.state == UNRELEASED_PARTITIONS:
        return builder.compute_next(member.member_epoch)
    if member.state == UNKNOWN:
        if owned is None or owned:
            raise FencedMemberEpochError(
                "The consumer group member is in a unknown state. The member must abandon all "
                "its partitions and rejoin.")
        return builder.compute_next(target_epoch)
    return member


@dataclasses.dataclass
class _Builder:
    member: ConsumerGroupMember
    target_epoch: int
    target: Assignment
    subscribed: frozenset[uuid.UUID]
    current_partition_epoch: Callable[[uuid.UUID, int], int]
    owned: dict[uuid.UUID, frozenset[int]] | None

    def owns_revoked(self, revoked: EpochAssignment) -> bool:
        if self.owned is None:
            return True
        return any(p in revoked.get(t, {}) for t, ps in self.owned.items() for p in ps)

    def _with(self, epoch: int, assigned: EpochAssignment, **changes: object
              ) -> ConsumerGroupMember:
        return dataclasses.replace(self.member, member_epoch=epoch,
                                   previous_member_epoch=self.member.member_epoch,
                                   assigned=assigned, **changes)

    def update_current(self, epoch: int) -> ConsumerGroupMember:
        """The subscription changed: revoke at once what the member no longer subscribes to."""
        current = self.member.assigned
        if not self.subscribed and not self.member.pending_revocation:
            assigned: EpochAssignment = {}
            revoked = current
        else:
            assigned = {t: ps for t, ps in current.items() if t in self.subscribed}
            revoked = {t: dict(ps) for t, ps in self.member.pending_revocation.items()}
            for topic_id, partitions in current.items():
                if topic_id not in self.subscribed:
                    revoked.setdefault(topic_id, {}).update(partitions)
        if assigned == current:
            return self.member
        if revoked and self.owns_revoked(revoked):
            return self._with(epoch, assigned, state=UNREVOKED_PARTITIONS,
                              pending_revocation=revoked)
        return self._with(epoch, assigned)

    def compute_next(self, epoch: int) -> ConsumerGroupMember:
        current = self.member.assigned
        pending = self.member.pending_revocation
        unreleased = False
        assigned: EpochAssignment = {}
        revoked: EpochAssignment = {}
        to_assign: dict[uuid.UUID, set[int]] = {}
        for topic_id in sorted({*self.target, *current}):
            target = self.target.get(topic_id, frozenset()) if topic_id in self.subscribed \
                else frozenset()
            have = current.get(topic_id, {})
            kept = {p: e for p, e in have.items() if p in target}
            gone = {p: e for p, e in have.items() if p not in kept}
            wanted = {p for p in target if p not in kept}
            blocked = {p for p in wanted if self.current_partition_epoch(topic_id, p) != -1
                       and p not in pending.get(topic_id, {})}
            unreleased = unreleased or bool(blocked)
            wanted -= blocked
            if kept:
                assigned[topic_id] = kept
            if gone:
                revoked[topic_id] = gone
            if wanted:
                to_assign[topic_id] = wanted
        if revoked and self.owns_revoked(revoked):
            return self._with(epoch, assigned, state=UNREVOKED_PARTITIONS,
                              pending_revocation=revoked)
        for topic_id, partitions in to_assign.items():
            assigned.setdefault(topic_id, {}).update(dict.fromkeys(partitions, self.target_epoch))
        return self._with(self.target_epoch, assigned,
                          state=UNRELEASED_PARTITIONS if unreleased else STABLE,
                          pending_revocation={})
