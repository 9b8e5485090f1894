"""Replicas of a partition compared across brokers' log dirs: the divergence point as the
follower would truncate, confirmed by batch CRCs; records only one replica holds; topic ids
that disagree; the corpus's three-broker cluster, whose replicas agree."""

from __future__ import annotations

import pytest

from pylogctl.errors import UsageError
from pylogctl.groups.replica_divergence import check_log_dirs, compare_all, compare_partition
from pylogctl.groups.replicas import LogDirs
from replicas_support import broker_dir, unclean_election


def test_the_best_replica_leads_and_the_other_loses_what_it_wrote_alone(tmp_path):
    unclean_election(tmp_path)
    found = compare_partition(LogDirs([tmp_path]), "t", 0)
    lead, other = found.replicas
    assert lead.replica.broker_id == 2 and "highest leader epoch" in found.leader_reason
    assert other.divergence_point == 10 and other.mismatch is None
    assert (other.lost.first_offset, other.lost.end_offset, other.lost.records,
            other.lost.batches) == (10, 15, 5, 2)
    assert other.unique == other.lost  # nobody else has the records of the lone epoch 0
    assert (lead.unique.first_offset, lead.unique.end_offset) == (10, 17)
    assert not found.agrees


def test_electing_the_old_leader_instead_truncates_the_other_side(tmp_path):
    unclean_election(tmp_path)
    found = compare_partition(LogDirs([tmp_path]), "t", 0, elect=1)
    lead, other = found.replicas
    assert lead.replica.broker_id == 1 and other.replica.broker_id == 2
    # broker 2's epoch 1 is unknown to broker 1: it ends where broker 1's epoch 0 ... ends
    assert other.divergence_point == 10 and other.lost.records == 7


def test_a_batch_that_differs_below_the_point_is_reported(tmp_path):
    broker_dir(tmp_path, 1, [(0, 5, "a"), (0, 5, "x")])
    broker_dir(tmp_path, 2, [(0, 5, "a"), (0, 5, "y"), (0, 2, "y")])
    found = compare_partition(LogDirs([tmp_path]), "t", 0)
    other = found.replicas[1]
    assert other.divergence_point == 10 and other.truncation.changed is False
    assert "the batch at offset 5" in other.mismatch and "below the divergence point 10" \
        in other.mismatch


def test_replicas_that_agree_report_nothing(tmp_path):
    for node in (1, 2, 3):
        broker_dir(tmp_path, node, [(0, 5, "a"), (2, 3, "b")])
    found = compare_partition(LogDirs([tmp_path]), "t", 0)
    assert found.agrees and all(r.lost is None for r in found.replicas)


def test_a_follower_behind_the_leader_loses_nothing(tmp_path):
    broker_dir(tmp_path, 1, [(0, 5, "a"), (1, 3, "b")])
    broker_dir(tmp_path, 2, [(0, 5, "a")])
    found = compare_partition(LogDirs([tmp_path]), "t", 0)
    lead, other = found.replicas
    assert lead.replica.broker_id == 1 and other.lost is None and other.agrees
    assert (lead.unique.first_offset, lead.unique.end_offset) == (5, 8)


def test_topic_ids_that_disagree_are_flagged(tmp_path):
    broker_dir(tmp_path, 1, [(0, 5, "a")])
    broker_dir(tmp_path, 2, [(0, 5, "a")], topic_id="jFVsEhwtQ6ivFkVMJFarIg")
    found = compare_partition(LogDirs([tmp_path]), "t", 0)
    assert found.topic_id_mismatch and not found.agrees
    assert found.replicas[1].truncation is None and "another incarnation" in found.notes[0]


def test_log_dirs_of_two_clusters_are_refused(tmp_path):
    broker_dir(tmp_path, 1, [(0, 1, "a")])
    broker_dir(tmp_path, 2, [(0, 1, "a")], cluster="AAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(UsageError, match="different clusters"):
        check_log_dirs(LogDirs([tmp_path]))


def test_a_broker_given_twice_is_refused(tmp_path):
    import shutil

    one = broker_dir(tmp_path / "a", 1, [(0, 1, "a")])
    shutil.copytree(one, tmp_path / "b" / "broker1")
    with pytest.raises(UsageError, match="broker 1 given twice"):
        check_log_dirs(LogDirs([tmp_path / "a" / "broker1", tmp_path / "b" / "broker1"]))


@pytest.mark.corpus
def test_kraft3_replicated_partitions_agree(corpus):
    log_dirs = LogDirs([corpus / "kraft3-cluster"])
    check_log_dirs(log_dirs)
    found = list(compare_all(log_dirs))
    assert [(p.topic, p.partition) for p in found] == [
        (t, p) for t in ("test1", "test5") for p in range(5)]
    assert all(p.agrees and len(p.replicas) == 3 for p in found)
    four = next(p for p in found if (p.topic, p.partition) == ("test1", 4))
    assert [r.log.log_end_offset for r in four.replicas] == [1, 1, 1]
    assert len({r.batches[0].key for r in four.replicas}) == 1  # the same batch, CRC and all
