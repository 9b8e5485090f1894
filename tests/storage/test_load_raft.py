"""The KRaft metadata log's snapshots checked against the log at load (``load_raft``: Kafka's
``KafkaRaftLog.recoverSnapshots`` and ``truncateToLatestSnapshot``), on copies of real metadata
logs from the corpus. ``tests/cli/test_cli_recover_metadata_log_vs_kafka.py`` judges the same
rules against the real broker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from load_support import fingerprint, writable_copy
from pylogctl.storage.loader.plan import CreateSegment, DeleteFile, DeleteSegment
from pylogctl.storage.loader.planner import LoadError
from pylogctl.storage.loader.raft import InconsistentSnapshotsError
from pylogctl.storage.loader.log_loader import apply_load, plan_load
from pylogctl.storage.naming import parse_raft_snapshot_name
from support import CORPUS, CORPUS_MISSING_REASON

META = "__cluster_metadata-0"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=CORPUS_MISSING_REASON)


def meta_copy(tmp_path: Path, log_dir: str) -> Path:
    return writable_copy(CORPUS / log_dir / META, tmp_path / log_dir / META)


def snapshots(d: Path) -> list[str]:
    return sorted(p.name for p in d.glob("*.checkpoint*"))


def test_a_metadata_log_without_segments_restarts_at_its_latest_snapshot(tmp_path):
    # stocksys-kraft kept its snapshots but no segment: Kafka's loader creates an empty
    # segment 0, whose epoch (none) is below the latest snapshot's, so the raft layer
    # truncates the log fully and restarts it at that snapshot
    d = meta_copy(tmp_path, "stocksys-kraft")
    latest = snapshots(d)[-1]
    plan = plan_load(d)
    assert (plan.log_start_offset, plan.log_end_offset) == (39002, 39002)
    assert [s for s in plan.steps if isinstance(s, CreateSegment)][0].base_offset == 39002
    assert sorted(Path(s.path).name for s in plan.steps if isinstance(s, DeleteFile)) == \
        snapshots(d)[:-1]
    assert plan.leader_epochs == ()
    assert any("KafkaRaftLog.truncateToLatestSnapshot" in n for n in plan.notes)
    apply_load(plan)
    assert snapshots(d) == [latest]
    assert sorted(p.name for p in d.glob("*.log")) == ["00000000000000039002.log"]
    again = plan_load(d)
    assert again.is_empty and (again.log_start_offset, again.log_end_offset) == (39002, 39002)


def test_a_metadata_log_that_covers_its_snapshots_keeps_them_all(tmp_path):
    # airquality-kraft: segment 0 holds every snapshot's offsets; Kafka keeps old snapshots
    # (cleaning them is the running controller's job)
    d = meta_copy(tmp_path, "airquality-kraft")
    plan = plan_load(d)
    assert not [s for s in plan.steps if isinstance(s, (DeleteFile, DeleteSegment))]
    assert plan.log_start_offset == 0


def test_partial_and_deleted_snapshots_and_those_below_the_log_start_go(tmp_path):
    d = meta_copy(tmp_path, "airquality-kraft")
    names = snapshots(d)
    shutil.copyfile(d / names[-1], d / (names[-1][:-len(".checkpoint")] + "-123.checkpoint.part"))
    (d / names[0]).rename(d / (names[0] + ".deleted"))
    plan = plan_load(d)
    gone = sorted(Path(s.path).name for s in plan.steps if isinstance(s, DeleteFile))
    assert gone == sorted([names[0] + ".deleted",
                           names[-1][:-len(".checkpoint")] + "-123.checkpoint.part"])
    apply_load(plan)
    assert snapshots(d) == names[1:]
    assert plan_load(d).is_empty


def test_a_log_start_above_every_snapshot_is_kafkas_inconsistent_snapshot_state(tmp_path):
    # a log restarted (empty) at 40000 whose snapshot at 40000 was lost: the records below
    # 40000 are nowhere, and Kafka refuses to start (the snapshots below the log start do not
    # count, so its message names none)
    d = meta_copy(tmp_path, "stocksys-kraft")
    (d / "00000000000000040000.log").write_bytes(b"")
    before = fingerprint(d)
    with pytest.raises(InconsistentSnapshotsError, match=r"Inconsistent snapshot state: there "
                       r"must be a snapshot at an offset larger than the current log start "
                       r"offset 40000, but the latest snapshot is Optional.empty"):
        plan_load(d)
    assert fingerprint(d) == before


def test_a_snapshot_name_kafka_cannot_parse_stops_the_load(tmp_path):
    d = meta_copy(tmp_path, "airquality-kraft")
    (d / "bogus.checkpoint").write_bytes(b"")
    with pytest.raises(LoadError, match="bogus.checkpoint.*Snapshots.parse"):
        plan_load(d)


@pytest.mark.parametrize("name, parsed", [
    ("00000000000000000066-0000000001.checkpoint", (66, 1, False, False)),
    ("00000000000000000066-0000000001-8837.checkpoint.part", (66, 1, True, False)),
    ("00000000000000000066-0000000001.checkpoint.deleted", (66, 1, False, True)),
    ("00000000000000000066.snapshot", None),
    ("leader-epoch-checkpoint", None),
])
def test_snapshot_names_parse_as_kafkas_snapshots_parse(name, parsed):
    got = parse_raft_snapshot_name(name)
    assert (got if got is None else (got.offset, got.epoch, got.partial, got.deleted)) == parsed


@pytest.mark.parametrize("name", ["bogus.checkpoint", "00000000000000000066.checkpoint",
                                  "0000000000000000006x-0000000001.checkpoint"])
def test_snapshot_names_kafkas_parse_throws_on_are_errors(name):
    with pytest.raises(ValueError):
        parse_raft_snapshot_name(name)
