"""A follower's truncation against a new leader, round by round as Kafka's fetcher runs it
(KIP-101 and KIP-279): each case is the leader's and the follower's epoch chains and ends; and
a property over random histories of appends, partial replication and (unclean) elections among
three replicas: the divergence point is exactly the prefix a follower shares with the leader
(about half the histories truncate, one in ten through an intermediate round)."""

from __future__ import annotations

from pylogctl.groups.follower_truncation import (ReplicaLog, elected_leader_epoch,
                                                 follower_truncation)
from pylogctl.storage.checkpoint import EpochEntry


def log(end: int, *epochs: tuple[int, int], start: int = 0, hw: int | None = None
        ) -> ReplicaLog:
    return ReplicaLog(start, end, end if hw is None else hw,
                      tuple(EpochEntry(e, s) for e, s in epochs))


def follow(leader: ReplicaLog, follower: ReplicaLog, epoch: int | None = None):
    """One record per batch: a truncation to T ends the log at T."""
    def truncate(offset, mode):
        if mode == "start-at":
            return ReplicaLog(offset, offset, offset, ())
        end = min(offset, follower.log_end_offset)
        return ReplicaLog(min(follower.log_start_offset, end), end,
                          min(follower.high_watermark, end),
                          tuple(e for e in follower.epochs if e.start_offset < end))
    if epoch is None:
        epoch = elected_leader_epoch([leader.latest_epoch, follower.latest_epoch])
    return follower_truncation(leader, follower, truncate, epoch)


def test_a_follower_with_the_leaders_epoch_keeps_what_the_leader_has():
    t = follow(log(10, (0, 0), (1, 5)), log(8, (0, 0), (1, 5)))
    assert not t.changed and t.divergence_point == 8


def test_records_of_an_epoch_the_leader_ended_earlier_are_truncated_kip_101():
    t = follow(log(8, (0, 0), (1, 5)), log(7, (0, 0)))
    assert (t.mode, t.offset, t.divergence_point) == ("to-offset", 5, 5)
    assert [s.kind for s in t.steps] == ["diverging-epoch"]


def test_an_epoch_the_leader_never_had_takes_two_rounds_kip_279():
    leader = log(10, (0, 0), (1, 5), (3, 7))
    follower = log(9, (0, 0), (2, 5))
    t = follow(leader, follower)
    assert [s.kind for s in t.steps] == ["intermediate"]
    assert t.divergence_point == 5 and t.log.epochs == (EpochEntry(0, 0),)


def test_two_rounds_where_the_second_cuts_further():
    leader = log(10, (0, 0), (1, 3), (3, 7))
    follower = log(9, (0, 0), (2, 5))
    t = follow(leader, follower)
    assert [(s.kind, s.offset) for s in t.steps] == [("intermediate", 5),
                                                      ("diverging-epoch", 3)]
    assert t.divergence_point == 3 and t.offset == 3


def test_electing_a_replica_with_an_older_epoch_truncates_the_newer_one():
    # the old leader wrote epoch 1 from 5; the elected replica has epoch 0 only, to 7
    t = follow(log(7, (0, 0)), log(9, (0, 0), (1, 5)))
    assert t.divergence_point == 5


def test_a_follower_without_epochs_truncates_to_its_high_watermark():
    t = follow(log(10, (0, 0)), log(8, hw=6))
    assert [(s.kind, s.offset) for s in t.steps] == [("high-watermark", 6)]
    assert t.divergence_point == 6


def test_a_follower_below_the_leaders_log_start_starts_over_there():
    t = follow(log(30, (4, 20), start=20), log(12, hw=12))
    assert (t.mode, t.offset, t.divergence_point) == ("start-at", 20, 20)


def test_an_epoch_older_than_every_leader_epoch_ends_where_the_leader_starts():
    t = follow(log(15, (3, 10), start=10), log(12, (1, 0)))
    assert t.divergence_point == 10


def test_an_epoch_entry_without_records_is_dropped_even_if_no_record_goes():
    # the follower was elected at epoch 2 at offset 5 but never wrote: truncateTo(5) at the
    # log end still removes the entry (UnifiedLog.truncateTo)
    t = follow(log(8, (0, 0), (3, 5)), log(5, (0, 0), (2, 5)))
    assert t.changed and t.divergence_point == 5 and t.log.epochs == (EpochEntry(0, 0),)


# -- property: random cluster histories -------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


class Replica:
    """One replica of a history: batches of one record as ``(epoch, writer's serial)``, and
    the epoch cache as Kafka keeps it (a leader assigns its epoch at its log end when elected;
    a follower assigns each newer batch epoch at the batch's offset)."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, int]] = []
        self.epochs: list[tuple[int, int]] = []

    def assign(self, epoch: int, offset: int) -> None:
        while self.epochs and (self.epochs[-1][0] >= epoch or self.epochs[-1][1] >= offset):
            self.epochs.pop()
        self.epochs.append((epoch, offset))

    def truncate(self, end: int) -> None:
        del self.batches[end:]
        self.epochs = [e for e in self.epochs if e[1] < end]

    def append(self, batch: tuple[int, int]) -> None:
        if not self.epochs or batch[0] > self.epochs[-1][0]:
            self.assign(batch[0], len(self.batches))
        self.batches.append(batch)

    def log(self) -> ReplicaLog:
        return log(len(self.batches), *self.epochs)


def common_prefix(a: list, b: list) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


# a step: ("append", n) to the leader; ("fetch", replica, n) a follower copies up to n more
# batches after truncating to the longest common prefix; ("elect", replica) any replica,
# uncleanly or not, becomes leader at the next epoch
STEPS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(1, 4)),
    st.tuples(st.just("fetch"), st.integers(0, 2), st.integers(0, 6)),
    st.tuples(st.just("elect"), st.integers(0, 2))), max_size=25)


@settings(max_examples=300, deadline=None)
@given(STEPS, st.integers(0, 2))
def test_a_follower_keeps_exactly_the_prefix_it_shares_with_the_leader(steps, final):
    replicas = [Replica() for _ in range(3)]
    leader, epoch, serial = 0, 0, 0
    replicas[0].assign(0, 0)
    for step in steps:
        if step[0] == "append":
            for _ in range(step[1]):
                serial += 1
                replicas[leader].append((epoch, serial))
        elif step[0] == "fetch" and step[1] != leader:
            f, lead = replicas[step[1]], replicas[leader]
            f.truncate(common_prefix(f.batches, lead.batches))
            for b in lead.batches[len(f.batches):len(f.batches) + step[2]]:
                f.append(b)
        elif step[0] == "elect":
            leader, epoch = step[1], epoch + 1
            replicas[leader].assign(epoch, len(replicas[leader].batches))
    lead = replicas[final]
    new_epoch = epoch + 1
    for i, f in enumerate(replicas):
        if i == final:
            continue
        t = follow(lead.log(), f.log(), new_epoch)
        shared = common_prefix(f.batches, lead.batches)
        assert t.divergence_point == shared, (t, f.batches, lead.batches)
