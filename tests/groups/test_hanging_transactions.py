"""Producer state read offline and hanging transactions found as Kafka's
FindHangingTransactionsCommand finds them (plus open batches producer state lost)."""

from __future__ import annotations

import pytest

from pylogctl.errors import UsageError
from pylogctl.format.transaction_log_records import TransactionState as S
from pylogctl.groups.hanging_transactions import find_hanging, partitions_to_search
from pylogctl.groups.producer_states import producer_states, replica_for, unmarked_transactions
from pylogctl.groups.replicas import LogDirs
from pylogctl.groups.transaction_state_topic import TransactionStateTopic
from pylogctl.storage.producer_state import write_snapshot
from transactions_support import (MINUTE, NOW, OLD, PartitionLog, TransactionStateLog, log_dir,
                                  metadata)

TIMEOUT = 15 * MINUTE


@pytest.fixture
def cluster(tmp_path):
    """t-0: producer 10 committed, 11 aborted, 12 open since an hour, 13 open just now."""
    d = log_dir(tmp_path, broker_id=2)
    t = PartitionLog(d, "t", 0, leader_epoch=5)
    t.txn(10)
    t.marker(10, True)
    t.txn(11)
    t.marker(11, False)
    t.txn(12)  # offset 6
    t.txn(13, timestamp=NOW - MINUTE)  # offset 8
    t.records([(b"plain", b"x")])
    t.high_watermark(d)
    return d, t


def hanging(d, **kw):
    dirs = LogDirs([d])
    topic = TransactionStateTopic(dirs)
    states = topic.load() if topic.present else None
    return find_hanging(dirs, partitions_to_search(dirs, kw.pop("topic", "t"),
                                                   kw.pop("partition", None), None),
                        NOW, kw.pop("timeout", TIMEOUT), None, states)


def test_producer_state_at_the_log_end(cluster):
    d, t = cluster
    state = producer_states(replica_for(LogDirs([d]), "t", 0), "t", 0, NOW)
    by_id = {p.producer_id: p for p in state.producers}
    assert set(by_id) == {10, 11, 12, 13}
    assert by_id[10].current_transaction_start_offset is None
    assert by_id[10].coordinator_epoch == 0 and by_id[12].coordinator_epoch == -1
    assert by_id[12].current_transaction_start_offset == 6
    assert (by_id[12].last_sequence, by_id[12].last_timestamp) == (1, OLD)
    assert state.last_stable_offset == 6 and state.high_watermark == t.offset
    assert set(unmarked_transactions(state.replica)) == {12, 13}


def test_without_the_coordinators_state_every_old_open_transaction_hangs(cluster):
    d, _ = cluster
    found = hanging(d)
    assert [(h.producer_id, h.start_offset, h.last_stable_offset) for h in found] == [(12, 6, 6)]
    assert found[0].batch_timestamp == OLD and found[0].broker_id == 2
    assert "not checked against the coordinator" in found[0].note
    assert found[0].duration_minutes(NOW) == 60
    assert [h.producer_id for h in hanging(d, timeout=0)] == [12, 13]


def test_a_transaction_the_coordinator_still_runs_does_not_hang(cluster):
    d, _ = cluster
    log = TransactionStateLog(d)
    log.write(metadata("runs", 12, S.Ongoing, partitions=frozenset({("t", 0)})))
    assert hanging(d) == []


def test_the_coordinator_forgot_the_transaction(cluster):
    d, _ = cluster
    log = TransactionStateLog(d)
    log.write(metadata("forgot", 12, S.Ongoing, partitions=frozenset({("t", 0)})))
    log.write(metadata("forgot", 12, S.CompleteAbort))
    found = hanging(d)
    assert [(h.producer_id, h.transactional_id, h.note) for h in found] == [(12, "forgot", None)]
    log.write(None, "forgot")
    assert [(h.producer_id, h.transactional_id) for h in hanging(d)] == [(12, None)]


def test_an_open_batch_the_producer_state_lost_is_reported_with_a_note(cluster):
    d, t = cluster
    write_snapshot(t.dir / f"{t.offset:020d}.snapshot", [])  # a snapshot that knows no one
    TransactionStateLog(d)
    found = hanging(d)
    assert [(h.producer_id, h.start_offset, h.coordinator_epoch) for h in found] == [(12, 6, -1)]
    assert "not in the producer state" in found[0].note


def test_scope_errors_are_kafkas(cluster):
    d, _ = cluster
    dirs = LogDirs([d])
    with pytest.raises(UsageError, match="requires either --topic or --broker-id"):
        partitions_to_search(dirs, None, None, None)
    with pytest.raises(UsageError, match="--partition argument requires --topic"):
        partitions_to_search(dirs, None, 0, 2)
    with pytest.raises(UsageError, match="Unknown topic 'nope'"):
        partitions_to_search(dirs, "nope", None, None)
    with pytest.raises(UsageError, match="Unknown partition t-3"):
        replica_for(dirs, "t", 3)
    with pytest.raises(UsageError, match="Broker 9 holds no replica"):
        replica_for(dirs, "t", 0, 9)
    assert partitions_to_search(dirs, None, None, 2) == [("t", 0)]
    assert partitions_to_search(dirs, None, None, 3) == []
