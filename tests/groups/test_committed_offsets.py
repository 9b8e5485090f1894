"""Committed offsets against end offsets: one reading for ``consumer-groups`` and ``stats``."""

from __future__ import annotations

from pathlib import Path

from groups_support import OffsetsLog, data_partition, member
from pylogctl.groups.committed_offsets import CommittedOffsets
from pylogctl.pipeline.stats import group_lag


def log_dir(tmp_path: Path) -> Path:
    """Group ``g``: member ``m`` owns t-0 (committed 3, high watermark 10); t-1 is committed at
    50, above its log end 10, and owned by nobody."""
    d = tmp_path / "broker"
    d.mkdir()
    (d / "meta.properties").write_text("version=1\nnode.id=3\n")
    log = OffsetsLog(d, 0)  # a single partition: every group lives in it
    log.group("g", [member("m", {"t": [0]})])
    log.commit("g", {("t", 0): 3, ("t", 1): 50})
    for p in (0, 1):
        data_partition(d, "t", p, end=10)
    (d / "replication-offset-checkpoint").write_text("0\n2\nt 0 10\nt 1 10\n")
    return d


def test_lags_follow_the_offsets_view_and_keep_stranded_commits_apart(tmp_path):
    offsets = CommittedOffsets([log_dir(tmp_path)])
    group = offsets.load_groups(None)["g"]
    lags = offsets.partition_lags(group)
    assert [(p.topic, p.partition, p.member and p.member.member_id, p.offset, p.end, p.lag,
             p.stranded) for p in lags] == [("t", 0, "m", 3, 10, 7, False),
                                            ("t", 1, None, 50, 10, -40, True)]
    assert [c.describe() for c in offsets.stranded] == [
        "group g: t-1 committed at 50, above the log end (0..10)"]
    assert offsets.reading_provenance().lines[0].startswith("read 1 of 1 __consumer_offsets")


def test_stats_sums_the_lag_of_commits_inside_the_log(tmp_path):
    rows, notes, problem = group_lag([str(log_dir(tmp_path))])
    assert rows == [{"group": "g", "state": "Stable", "topics": ["t"], "partitions": 2,
                     "partitionsWithLag": 1, "partitionsOutOfRange": 1, "lag": 7}]
    assert notes[-1] == ("consumer groups: not in the lag: group g: t-1 committed at 50, above "
                         "the log end (0..10)")
    assert not problem
