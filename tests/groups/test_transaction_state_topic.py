"""``__transaction_state`` loaded as Kafka's TransactionStateManager loads it, and listed as
its listTransactionStates filters."""

from __future__ import annotations

import pytest

from pylogctl.errors import UsageError
from pylogctl.format.transaction_log_records import TransactionState as S
from pylogctl.groups.replicas import LogDirs
from pylogctl.groups.transaction_state_topic import TransactionStateTopic, list_transactions
from transactions_support import MINUTE, NOW, TransactionStateLog, log_dir, metadata


def test_last_record_wins_and_a_tombstone_removes_the_id(tmp_path):
    d = log_dir(tmp_path, broker_id=4)
    log = TransactionStateLog(d, leader_epoch=9)
    log.write(metadata("a", 1, S.Ongoing, partitions=frozenset({("t", 0)})))
    log.write(metadata("a", 1, S.CompleteCommit))
    log.write(metadata("gone", 2, S.Ongoing, partitions=frozenset({("t", 1)})))
    log.write(None, "gone")
    log.write(metadata("b", 3, S.Empty), value_version=1)
    states = TransactionStateTopic(LogDirs([d])).load()
    a = states.get("a")
    assert a is not None and a.metadata.state == S.CompleteCommit
    assert (a.coordinator, a.coordinator_epoch) == (4, 9)
    assert states.get("gone") is None
    assert states.get("b").metadata.state == S.Empty
    assert set(states.by_producer_id()) == {1, 3}


def test_records_below_the_log_start_offset_are_not_loaded(tmp_path):
    d = log_dir(tmp_path)
    log = TransactionStateLog(d, partitions=1)
    log.write(metadata("a", 1, S.Ongoing))
    log.write(metadata("b", 2, S.Ongoing))
    (d / "log-start-offset-checkpoint").write_text("0\n1\n__transaction_state 0 1\n")
    states = TransactionStateTopic(LogDirs([d])).load()
    assert states.get("a") is None and states.get("b") is not None


def test_list_filters_as_kafka_does(tmp_path):
    d = log_dir(tmp_path)
    log = TransactionStateLog(d, partitions=1)
    log.write(metadata("young", 1, S.Ongoing, start_ms=NOW - MINUTE))
    log.write(metadata("old", 2, S.Ongoing, start_ms=NOW - 10 * MINUTE))
    log.write(metadata("idle", 3, S.Empty))  # no start time: now - (-1) passes any filter
    log.write(metadata("dead", 4, S.Dead))
    states = TransactionStateTopic(LogDirs([d])).load()

    def ids(**kw):
        return sorted(e.transactional_id for e in list_transactions(states, NOW, **kw))

    assert ids() == ["idle", "old", "young"]
    assert ids(duration_filter_ms=5 * MINUTE) == ["idle", "old"]
    assert ids(duration_filter_ms=MINUTE) == ["idle", "old"]  # "longer than": not equal
    assert ids(pattern="o.*") == ["old"]  # matches() is a full match
    assert ids(pattern="") == ["idle", "old", "young"]
    with pytest.raises(UsageError, match="not a valid regular expression"):
        ids(pattern="(")


def test_list_order_is_the_coordinators_partitions_then_hash_order(tmp_path):
    d = log_dir(tmp_path)
    log = TransactionStateLog(d, partitions=3)
    names = [f"txn-{i}" for i in range(10)]
    for n, name in enumerate(names):
        log.write(metadata(name, n, S.Empty))
    topic = TransactionStateTopic(LogDirs([d]))
    listed = [e.transactional_id for e in list_transactions(topic.load(), NOW)]
    partitions = [topic.partition_for(n) for n in listed]
    assert partitions == sorted(partitions) and sorted(listed) == names


def test_without_the_topic_nothing_is_present(tmp_path):
    d = log_dir(tmp_path)
    (d / "t-0").mkdir()
    topic = TransactionStateTopic(LogDirs([d]))
    assert not topic.present and topic.partition_for("x") is None
    assert topic.load().all() == []
