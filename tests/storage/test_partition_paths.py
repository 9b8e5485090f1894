"""PATH arguments: what each names, and the partitions and segments they select."""

from pathlib import Path

import pytest

from pylogctl.errors import FileUnreadableError
from pylogctl.storage.naming import log_filename
from pylogctl.storage.partition_paths import PathKind, resolve_path, select_partitions
from pylogctl.tools.sample import write_sample_log_dir


@pytest.fixture
def brokers(tmp_path: Path) -> Path:
    root = tmp_path / "brokers"
    write_sample_log_dir(root / "kafka-logs-1")  # a log dir whose name parses as a partition
    write_sample_log_dir(root / "kafka-logs-2")
    return root


def test_each_path_is_judged_by_its_contents(brokers: Path, tmp_path: Path):
    part = brokers / "kafka-logs-1" / "orders-0"
    (tmp_path / "empty").mkdir()
    assert resolve_path(part / log_filename(0)).kind is PathKind.FILE
    assert resolve_path(part / "leader-epoch-checkpoint").segment_base is None
    (tmp_path / log_filename(7)).touch()
    assert resolve_path(tmp_path / log_filename(7)).segment_base == 7
    with pytest.raises(FileUnreadableError, match="No such file or directory"):
        resolve_path(tmp_path / "missing.log")  # said first, before its name is parsed
    assert resolve_path(part).kind is PathKind.PARTITION_DIR
    assert resolve_path(part).partition.topic == "orders"
    assert resolve_path(brokers / "kafka-logs-1").kind is PathKind.LOG_DIR
    assert resolve_path(brokers / "kafka-logs-1").log_dirs == [str(brokers / "kafka-logs-1")]
    logs_dirs = resolve_path(brokers)
    assert logs_dirs.kind is PathKind.LOG_DIRS
    assert logs_dirs.log_dirs == [str(brokers / "kafka-logs-1"), str(brokers / "kafka-logs-2")]
    assert resolve_path(tmp_path / "empty").kind is PathKind.OTHER_DIR


def test_a_log_dir_named_whole_covers_its_partitions_and_segments_merge(brokers: Path):
    one, two = brokers / "kafka-logs-1", brokers / "kafka-logs-2"
    seg = one / "orders-0" / log_filename(0)
    (one / "orders-0" / log_filename(7)).touch()  # named, so it must exist
    selected = select_partitions(resolve_path(p) for p in [
        seg, two / "orders-0", one / "orders-0" / log_filename(7), two, seg])
    assert [(s.log_dir, s.partitions) for s in selected] == [
        (str(one), {str(one / "orders-0"): {0, 7}}), (str(two), None)]
    selected = select_partitions(resolve_path(p) for p in [seg, one / "orders-0"])
    assert selected[0].partitions == {str(one / "orders-0"): None}


def test_only_partitions_are_selected(tmp_path: Path):
    with pytest.raises(ValueError, match="names no partition"):
        select_partitions([resolve_path(tmp_path)])
