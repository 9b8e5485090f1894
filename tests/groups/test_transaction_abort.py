"""Aborting an open transaction offline: the marker Kafka's leader would write, on every
in-step replica, with the .txnindex, snapshot and checkpoints; refusals write nothing."""

from __future__ import annotations

import shutil

import pytest

from pylogctl.errors import LogDirLockedError, UsageError
from pylogctl.format.log_stream import iter_batches
from pylogctl.groups.producer_states import producer_states, replica_for
from pylogctl.groups.replicas import LogDirs
from pylogctl.groups.transaction_abort import (AbortRefusedError, execute_abort, plan_abort,
                                               spec_for_producer, spec_for_start_offset)
from pylogctl.storage.lock import LogDirLock
from pylogctl.storage.transaction_index import AbortedTxn, read_transaction_index
from transactions_support import NOW, PartitionLog, log_dir


@pytest.fixture
def broker(tmp_path):
    """orders-0: producer 7 committed, 8 open at offset 3 (epoch 2), a plain write after it."""
    d = log_dir(tmp_path, broker_id=1, name="b1")
    t = PartitionLog(d, "orders", 0, leader_epoch=4)
    t.txn(7)
    t.marker(7, True, coordinator_epoch=1)
    t.txn(8, epoch=2)
    t.records([(b"k", b"plain")], producer_id=20)
    t.high_watermark(d)
    t.snapshot()
    return d


def state(*dirs):
    dirs = LogDirs(list(dirs))
    return dirs, producer_states(replica_for(dirs, "orders", 0), "orders", 0, NOW)


def files(d):
    return {p.relative_to(d): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def test_the_marker_ends_the_transaction_and_frees_the_last_stable_offset(broker):
    dirs, before = state(broker)
    assert before.last_stable_offset == 3
    spec = spec_for_start_offset(before, 3)
    assert (spec.producer_id, spec.producer_epoch, spec.coordinator_epoch) == (8, 2, 0)
    plan = plan_abort(dirs, [spec], NOW)
    assert (plan.marker_offset, plan.leader_epoch) == (6, 4)
    outcome = execute_abort(dirs, plan, NOW)
    (written,) = outcome.written
    assert (outcome.first_offset, outcome.next_offset, written.last_stable_offset) == (6, 7, 7)
    part = broker / "orders-0"
    marker = list(iter_batches((part / "00000000000000000000.log").read_bytes()))[-1]
    assert marker.is_control and (marker.base_offset, marker.producer_id,
                                  marker.producer_epoch, marker.partition_leader_epoch) == \
        (6, 8, 2, 4)
    assert read_transaction_index(part / "00000000000000000000.txnindex") == \
        [AbortedTxn.of(8, 3, 6, 7)]
    assert (part / "00000000000000000007.snapshot").exists()
    assert "orders 0 7" in (broker / "replication-offset-checkpoint").read_text()
    _, after = state(broker)
    assert after.last_stable_offset == 7
    assert all(p.current_transaction_start_offset is None for p in after.producers)


def test_every_in_step_replica_gets_the_same_marker(broker, tmp_path):
    other = tmp_path / "b2"
    shutil.copytree(broker, other)
    (other / "meta.properties").write_text("version=1\nnode.id=2\n")
    behind = tmp_path / "b3"
    shutil.copytree(broker, behind)
    (behind / "meta.properties").write_text("version=1\nnode.id=3\n")
    (behind / "orders-0" / "leader-epoch-checkpoint").write_text("0\n1\n3 0\n")
    dirs, s = state(broker, other, behind)
    outcome = execute_abort(dirs, plan_abort(dirs, [spec_for_start_offset(s, 3)], NOW), NOW)
    assert sorted(w.broker_id for w in outcome.written) == [1, 2]
    assert len(outcome.skipped) == 1 and "not in step" in outcome.skipped[0]
    log = "orders-0/00000000000000000000.log"
    assert (broker / log).read_bytes() == (other / log).read_bytes() != (behind / log).read_bytes()


def test_refusals_name_the_problem_and_write_nothing(broker):
    before = files(broker)
    dirs, s = state(broker)
    with pytest.raises(UsageError, match="starting at offset 4 on partition orders-0"):
        spec_for_start_offset(s, 4)
    with pytest.raises(AbortRefusedError, match="epoch has moved on: 1 is older than .* 2"):
        spec_for_producer(s, 8, 1, 0)
    with pytest.raises(UsageError, match="Producer 7 has no open transaction"):
        spec_for_producer(s, 7, 0, 5)
    assert AbortRefusedError("x").exit_code == 5
    assert spec_for_producer(s, 8, 2, -1).coordinator_epoch == 0
    plan = plan_abort(dirs, [spec_for_start_offset(s, 3)], NOW)
    with LogDirLock(broker):
        with pytest.raises(LogDirLockedError):
            execute_abort(LogDirs([broker]), plan, NOW)
    assert files(broker) == before


def test_a_coordinator_epoch_older_than_the_producers_is_fenced(tmp_path):
    d = log_dir(tmp_path)
    t = PartitionLog(d, "orders", 0)
    t.txn(8)
    t.marker(8, False, coordinator_epoch=5)
    t.txn(8)
    _, s = state(d)
    assert spec_for_start_offset(s, 3).coordinator_epoch == 5
    with pytest.raises(AbortRefusedError, match="Coordinator epoch 4 is older than 5"):
        spec_for_producer(s, 8, 0, 4)
