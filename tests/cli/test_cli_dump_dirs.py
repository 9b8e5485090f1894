"""``pylogctl dump-segment`` with directory arguments: partition dirs and log dirs."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from pylogctl.storage.log_dir_layout import partition_dir_files
from pylogctl.storage.naming import log_filename
from pylogctl.tools.log_dir_summary import LogDirSummaryDump
from pylogctl.tools.sample import write_sample_log_dir
from pylogctl.formatters.log_dir_table import COLUMNS, render_log_dir_summary


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    write_sample_log_dir(tmp_path / "logs")
    return tmp_path / "logs"


def _dumped(out: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("Dumping ")]


def test_partition_dir_dumps_its_files_in_offset_order(cli, sample: Path):
    part = sample / "orders-0"
    (part / "00000000000000000010.snapshot").write_bytes(b"")
    r = cli("dump-segment", part)
    assert _dumped(r.out) == partition_dir_files(part) == [
        str(part / log_filename(0)), str(part / "00000000000000000010.snapshot"),
        str(part / "leader-epoch-checkpoint"), str(part / "partition.metadata")]
    assert "baseOffset: 0 lastOffset: 2" in r.out and "topicId:" in r.out


@pytest.mark.corpus
def test_corpus_partition_dir(cli, corpus: Path):
    part = corpus / "invoice-multiseg" / "invoice-0"
    r = cli("dump-segment", part)
    names = [Path(p).name for p in _dumped(r.out)]
    assert names[:4] == ["00000000000000000000.log", "00000000000000000000.index",
                         "00000000000000000000.timeindex", "00000000000000030626.log"]
    assert names[-3:] == ["00000000000000090867.snapshot", "leader-epoch-checkpoint",
                          "partition.metadata"]


def test_log_dir_plain_text(cli, sample: Path):
    r = cli("dump-segment", sample)
    assert r.code == 0, r.err
    lines = r.lines
    assert lines[0] == f"Dumping {sample}"
    assert lines[1] == ("meta.properties: version=1 node.id=1 cluster.id=pylogctl-sample-clu; "
                        ".kafka_cleanshutdown: absent; .lock: absent")
    assert lines[2].split() == list(COLUMNS)
    rows = [line.split() for line in lines[3:]]
    assert rows == [["orders", "0", "1", rows[0][3], "0", "19", "19", "0", "1", "17", "2",
                     "missing:active", "-"]]
    # BYTES is the segments' bytes, the size kafka-log-dirs reports (UnifiedLog.size)
    assert int(rows[0][3]) == sum(f.stat().st_size for f in (sample / "orders-0").glob("*.log"))
    assert all(len(line) == len(lines[2]) for line in lines[3:])  # aligned columns
    assert r.err == ""


def test_log_dir_json_ndjson_yaml(cli, sample: Path, tmp_path: Path):
    other, _ = _second_partition(sample)
    r = cli("dump-segment", "-o", "json", sample)
    [doc] = json.loads(r.out)
    assert doc["type"] == "log-dir-summary" and doc["file"] == str(sample)
    assert doc["metaProperties"] == {"version": "1", "nodeId": 1, "idKey": "node.id",
                                     "clusterId": "pylogctl-sample-clu", "directoryId": None}
    assert [p["topic"] for p in doc["partitions"]] == ["audit", "orders"]
    orders = doc["partitions"][1]
    assert (orders["logEndOffset"], orders["highWatermark"], orders["leaderEpoch"]) == (19, 19, 1)
    files = [f for f in (sample / "orders-0").iterdir() if f.is_file()]
    assert (orders["bytes"], orders["otherBytes"]) == (
        sum(f.stat().st_size for f in files if f.suffix == ".log"),
        sum(f.stat().st_size for f in files if f.suffix != ".log"))
    assert (doc["partitionCount"], doc["problemCount"], doc["unreadableCount"]) == (2, 0, 0)

    nd = [json.loads(line) for line in cli("dump-segment", "-o", "ndjson", sample).lines]
    assert [(p["file"], p["topic"]) for p in nd] == [(str(sample), "audit"),
                                                     (str(sample), "orders")]

    [ydoc] = yaml.safe_load(cli("dump-segment", "-o", "yaml", sample).out)
    assert ydoc["partitions"] == doc["partitions"]


def _second_partition(log_dir: Path) -> tuple[Path, Path]:
    part = log_dir / "audit-0"
    part.mkdir()
    src = log_dir / "orders-0" / log_filename(0)
    seg = part / log_filename(0)
    shutil.copy(src, seg)
    return part, seg


def test_truncated_tail_exits_1_with_the_note_on_stderr(cli, sample: Path):
    _, seg = _second_partition(sample)
    seg.write_bytes(seg.read_bytes()[:-7])
    r = cli("dump-segment", sample)
    assert r.code == 1
    audit = next(line.split() for line in r.lines if line.startswith("audit "))
    assert audit[-1] == "1"  # one note
    assert r.err.startswith(f"{sample / 'audit-0'}: Found ")
    assert "invalid bytes at the end of 00000000000000000000.log" in r.err


def test_unreadable_segment_exits_3(cli, sample: Path):
    (sample / "orders-0" / log_filename(99)).symlink_to(sample / "nowhere.log")
    r = cli("dump-segment", sample)
    assert r.code == 3 and "00000000000000000099.log" in r.err


def test_a_directory_that_is_nothing_is_a_usage_error(cli, tmp_path: Path):
    (tmp_path / "empty").mkdir()
    r = cli("dump-segment", tmp_path / "empty")
    assert r.code == 2 and r.out == ""
    assert f"{tmp_path / 'empty'} is neither a partition dir, a log dir nor" in r.err


def test_files_and_dirs_mixed_in_argument_order(cli, sample: Path):
    seg = sample / "orders-0" / log_filename(0)
    r = cli("dump-segment", "--files", f"{sample},{seg}")
    assert _dumped(r.out) == [str(sample), str(seg)] and r.code == 0


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _render(log_dir: Path) -> str:
    out = _Tty()
    render_log_dir_summary(LogDirSummaryDump(log_dir), out)
    return out.getvalue()


def test_rich_table_on_a_terminal(sample: Path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "160")
    lines = re.sub(r"\x1b\[[0-9;]*m", "", _render(sample)).splitlines()
    assert lines[0] == f"Dumping {sample}" and any(set(line.strip()) == {"─"} for line in lines)
    assert any(line.split() == list(COLUMNS) for line in lines)
    [row] = [line.split() for line in lines if line.strip().startswith("orders")]
    assert row[:3] + row[4:] == ["orders", "0", "1", "0", "19", "19", "0", "1", "17", "2",
                                 "missing:active", "-"]
    monkeypatch.setenv("COLUMNS", "80")  # too narrow for whole numbers: plain columns
    assert _render(sample).splitlines()[2].split() == list(COLUMNS)
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setenv("NO_COLOR", "1")
    assert _render(sample).splitlines()[2].split() == list(COLUMNS)


@pytest.mark.corpus
def test_every_corpus_dir_dumps_as_a_summary(cli, corpus: Path):
    for d in sorted(p for p in corpus.iterdir() if p.is_dir()):
        r = cli("dump-segment", "-o", "json", d)
        assert r.code == 0, (d, r.err)
        docs = json.loads(r.out)
        assert all(doc["problemCount"] == 0 and doc["unreadableCount"] == 0 for doc in docs)
        assert len(docs) == (3 if d.name == "kraft3-cluster" else 1)


@pytest.mark.corpus
def test_corpus_log_dir_text(cli, corpus: Path):
    r = cli("dump-segment", corpus / "donaldy-271")
    assert r.code == 0
    rows = {(c[0], c[1]): c for c in (line.split() for line in r.lines[3:])}
    assert len(rows) == 53
    # an empty segment: 0 bytes (its 157 bytes of snapshot and checkpoint are otherBytes)
    assert rows[("myTopic", "0")][2:8] == ["1", "0", "38", "38", "38", "38"]
    assert rows[("__consumer_offsets", "39")][4:8] == ["0", "20", "20", "18"]


@pytest.mark.corpus
def test_corpus_copy_with_a_truncated_tail(cli, corpus: Path, tmp_path: Path):
    copy = tmp_path / "node-logx"
    shutil.copytree(corpus / "node-logx", copy)
    seg = copy / "topic-logx-001-0" / log_filename(0)
    seg.chmod(0o644)
    seg.write_bytes(seg.read_bytes()[:-3])
    r = cli("dump-segment", copy)
    assert r.code == 1 and "invalid bytes at the end of" in r.err
