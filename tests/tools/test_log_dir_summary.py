"""Log-dir summaries: built dirs with pylogctl's own writer, then the real corpus."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from support import CORPUS
from pylogctl.errors import FileUnreadableError, UsageError
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.storage.checkpoint import format_checkpoint
from pylogctl.storage.file_records import FileRecords
from pylogctl.storage.log_dir_layout import partition_dir_files
from pylogctl.storage.naming import (PartitionDirName, file_offset, log_filename,
                                     parse_partition_dir_name)
from pylogctl.tools.dump_dispatch import dump_file, expand_paths
from pylogctl.tools.log_dir_summary import LogDirSummaryDump, summarize_log_dir
from pylogctl.tools.sample import write_sample_log_dir

TS = 1_700_000_000_000


def _batches(base: int, sizes: list[int], epoch: int = 0) -> tuple[bytes, int]:
    """Batches of ``sizes`` records from ``base``; returns the bytes and the next offset."""
    out = []
    for n in sizes:
        b = RecordBatchBuilder(base_offset=base, partition_leader_epoch=epoch)
        for i in range(n):
            b.append(TS + i, f"k{base + i}".encode(), b"v" * 20)
        out.append(b.build())
        base = b.next_offset()
    return b"".join(out), base


def _partition(log_dir: Path, name: str, segments: list[list[int]], indexes: str = "rolled",
               first_base: int = 0) -> tuple[Path, int]:
    """A partition dir with one segment per entry of ``segments``; ``indexes`` says which
    segments get (empty) ``.index``/``.timeindex`` files: ``all``, ``rolled`` or ``none``."""
    part = log_dir / name
    part.mkdir(parents=True, exist_ok=True)
    offset = first_base
    for i, sizes in enumerate(segments):
        data, nxt = _batches(offset, sizes)
        (part / log_filename(offset)).write_bytes(data)
        if indexes == "all" or (indexes == "rolled" and i < len(segments) - 1):
            for sfx in (".index", ".timeindex"):
                (part / log_filename(offset).replace(".log", sfx)).write_bytes(b"")
        offset = nxt
    return part, offset


def _checkpoint(path: Path, entries: list[str]) -> None:
    path.write_text(format_checkpoint(entries))


def _only(summary, dir_name: str):
    [p] = [p for p in summary.partitions if p.dir_name == dir_name]
    return p


# -- names and layout -------------------------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("orders-3", PartitionDirName("orders", 3)),
    ("my-topic-12", PartitionDirName("my-topic", 12)),
    ("__cluster_metadata-0", PartitionDirName("__cluster_metadata", 0)),
    ("orders-3.0f1e2d3c4b5a69788796a5b4c3d2e1f0-delete", PartitionDirName("orders", 3, "delete")),
    ("orders-3.0f1e2d3c4b5a69788796a5b4c3d2e1f0-future", PartitionDirName("orders", 3, "future")),
    ("orders-3.0f1e2d3c4b5a69788796a5b4c3d2e1f0-stray", PartitionDirName("orders", 3, "stray")),
    ("orders-3-delete", None), ("orders", None), ("orders-", None), ("-3", None),
    ("orders-x", None), ("kafka1", None), ("orders-99999999999", None),
])
def test_partition_dir_names(name, expected):
    assert parse_partition_dir_name(name) == expected


def test_file_offsets():
    assert file_offset("00000000000000000058.log") == 58
    assert file_offset("00000000000000000058.log.deleted") == 58
    assert file_offset("00000000000000004758-0000000001.checkpoint") == 4758
    assert file_offset("leader-epoch-checkpoint") is None
    assert file_offset("0000000058.log") is None


def test_partition_files_come_in_offset_order(tmp_path: Path):
    names = ["partition.metadata", "leader-epoch-checkpoint", "zz-notes.txt",
             "00000000000000000010.snapshot", "00000000000000000007.timeindex",
             "00000000000000000007.index", "00000000000000000007.log",
             "00000000000000000000.txnindex", "00000000000000000000.log",
             "00000000000000000000.index", "00000000000000000000.timeindex",
             "00000000000000000007.snapshot", "00000000000000000003.snapshot",
             "00000000000000000000.log.deleted", "quorum-state"]
    for n in names:
        (tmp_path / n).write_bytes(b"")
    (tmp_path / "subdir").mkdir()
    assert [Path(p).name for p in partition_dir_files(tmp_path)] == [
        "00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
        "00000000000000000000.txnindex", "00000000000000000000.log.deleted",
        "00000000000000000003.snapshot",
        "00000000000000000007.log", "00000000000000000007.index", "00000000000000000007.timeindex",
        "00000000000000000007.snapshot", "00000000000000000010.snapshot",
        "leader-epoch-checkpoint", "partition.metadata", "quorum-state", "zz-notes.txt"]
    spelled = str(tmp_path) + "/"  # the argument's spelling is kept
    assert partition_dir_files(spelled)[0] == spelled + "00000000000000000000.log"


def test_expand_paths_opens_partition_dirs_and_dirs_of_log_dirs(tmp_path: Path):
    root = tmp_path / "brokers"
    write_sample_log_dir(root / "kafka-logs-1")  # a log dir whose name parses as a partition
    write_sample_log_dir(root / "kafka-logs-2")
    part = root / "kafka-logs-1" / "orders-0"
    seg = part / log_filename(0)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileUnreadableError, match="No such file or directory"):
        expand_paths([tmp_path / "missing.log"])  # before its name is parsed
    with pytest.raises(UsageError, match="neither a partition dir"):
        expand_paths([tmp_path / "empty"])
    assert expand_paths([seg, part, root]) == [
        str(seg), *partition_dir_files(part), str(root / "kafka-logs-1"),
        str(root / "kafka-logs-2")]
    assert isinstance(dump_file(root / "kafka-logs-1"), LogDirSummaryDump)
    with pytest.raises(UsageError):
        dump_file(part)


# -- built log dirs ---------------------------------------------------------------------------

def test_sample_log_dir(tmp_path: Path):
    write_sample_log_dir(tmp_path)
    with FileRecords(tmp_path / "orders-0" / log_filename(0)) as fr:
        next_offset = [b.next_offset for b in fr.batches()][-1]
    s = summarize_log_dir(tmp_path)
    assert (s.meta.version, s.meta.node_id, s.meta.id_key, s.meta.cluster_id) == (
        "1", 1, "node.id", "pylogctl-sample-clu")
    assert not s.clean_shutdown and not s.lock and s.notes == [] and s.other_dirs == []
    [p] = s.partitions
    assert (p.topic, p.partition, p.marker, p.segments) == ("orders", 0, None, 1)
    files = list((tmp_path / "orders-0").iterdir())
    # the segments' bytes, as kafka-log-dirs reports a partition's size; the rest apart
    assert p.bytes == sum(f.stat().st_size for f in files if f.suffix == ".log")
    assert p.other_bytes == sum(f.stat().st_size for f in files if f.suffix != ".log")
    assert (p.log_start_offset, p.log_end_offset, p.high_watermark, p.recovery_point) == (
        0, next_offset, next_offset, 0)
    assert (p.leader_epoch, p.leader_epoch_start_offset, p.leader_epoch_entries) == (
        1, next_offset - 2, 2)
    assert p.indexes == "missing:active" and p.topic_id and p.notes == []


def test_multi_segment_partition_and_index_presence(tmp_path: Path):
    _partition(tmp_path, "events-0", [[3, 2], [4], [1, 1]])
    _, leo1 = _partition(tmp_path, "events-1", [[2], [2], [2]], indexes="all")
    _partition(tmp_path, "events-2", [[2], [2], [2]], indexes="none")
    _partition(tmp_path, "events-10", [[5]], first_base=100)
    _checkpoint(tmp_path / "log-start-offset-checkpoint", ["events 0 4", "events 10 7"])
    (tmp_path / ".lock").write_bytes(b"")
    (tmp_path / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":7}')
    (tmp_path / "not-a-partition").mkdir()
    s = summarize_log_dir(tmp_path)
    assert s.lock and s.clean_shutdown and s.other_dirs == ["not-a-partition"] and s.meta is None
    assert [p.dir_name for p in s.partitions] == ["events-0", "events-1", "events-2", "events-10"]
    e0, e1, e2, e10 = s.partitions
    assert (e0.segments, e0.log_start_offset, e0.log_end_offset) == (3, 4, 11)
    assert e0.indexes == "missing:active" and e0.missing_indexes == [
        "00000000000000000009.index", "00000000000000000009.timeindex"]
    assert (e1.indexes, e1.log_end_offset) == ("all", leo1)
    assert e2.indexes == "missing:3"
    assert (e10.log_start_offset, e10.log_end_offset) == (100, 105)  # checkpoint below the base
    assert all(p.notes == [] for p in s.partitions)


def test_zero_byte_and_missing_checkpoints(tmp_path: Path):
    part, leo = _partition(tmp_path, "t-0", [[2]])
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                 "log-start-offset-checkpoint"):
        (tmp_path / name).write_bytes(b"")
    (part / "leader-epoch-checkpoint").write_bytes(b"")
    s = summarize_log_dir(tmp_path)
    [p] = s.partitions
    assert s.notes == [] and p.notes == []
    assert (p.high_watermark, p.recovery_point, p.log_start_offset, p.log_end_offset) == (
        None, None, 0, leo)
    assert (p.leader_epoch, p.leader_epoch_start_offset, p.leader_epoch_entries) == (None, None, 0)
    (part / "leader-epoch-checkpoint").unlink()
    assert summarize_log_dir(tmp_path).partitions[0].leader_epoch_entries is None


def test_malformed_checkpoints_are_problem_notes(tmp_path: Path):
    part, _ = _partition(tmp_path, "t-0", [[2]])
    (tmp_path / "replication-offset-checkpoint").write_text("0\n2\nt 0 5\n")
    (part / "leader-epoch-checkpoint").write_text("0\n1\nzero 0\n")
    (part / "partition.metadata").write_text("garbage\n")
    s = summarize_log_dir(tmp_path)
    assert [n.severity for n in s.notes] == ["problem"]
    assert "Expected 2 entries" in s.notes[0].message
    [p] = s.partitions
    assert p.high_watermark is None and p.leader_epoch_entries is None and p.topic_id is None
    assert [n.severity for n in p.notes] == ["problem", "problem"]
    assert "Malformed line" in p.notes[0].message and "partition metadata" in p.notes[1].message


def test_truncated_tail(tmp_path: Path):
    part, leo = _partition(tmp_path, "t-0", [[2, 3, 4]])
    seg = part / log_filename(0)
    data = seg.read_bytes()
    seg.write_bytes(data[:-10])
    [p] = summarize_log_dir(tmp_path).partitions
    assert p.log_end_offset == leo - 4  # the last batch is cut short, so it does not count
    [note] = p.notes
    assert note.severity == "problem"
    assert "invalid bytes at the end of 00000000000000000000.log" in note.message


def test_crc_invalid_last_batch(tmp_path: Path):
    part, leo = _partition(tmp_path, "t-0", [[2, 3]])
    seg = part / log_filename(0)
    data = bytearray(seg.read_bytes())
    data[-1] ^= 0xFF
    seg.write_bytes(bytes(data))
    [p] = summarize_log_dir(tmp_path).partitions
    assert p.log_end_offset == leo
    assert [n.severity for n in p.notes] == ["problem"] and "CRC" in p.notes[0].message


def test_corrupt_size_field(tmp_path: Path):
    part, leo = _partition(tmp_path, "t-0", [[2, 3]])
    seg = part / log_filename(0)
    seg.write_bytes(seg.read_bytes() + bytes(8) + (5).to_bytes(4, "big") + bytes(20))
    [p] = summarize_log_dir(tmp_path).partitions
    assert p.log_end_offset == leo
    [note] = p.notes
    assert note.severity == "problem" and "smaller than minimum record overhead" in note.message


def test_empty_active_segment_and_no_segments(tmp_path: Path):
    part, leo = _partition(tmp_path, "t-0", [[2, 2]], indexes="all")
    (part / log_filename(leo)).write_bytes(b"")
    (tmp_path / "t-1").mkdir()
    (tmp_path / "t-1" / "leader-epoch-checkpoint").write_text("0\n1\n3 40\n")
    _checkpoint(tmp_path / "replication-offset-checkpoint", ["t 0 4", "t 1 40"])
    t0, t1 = summarize_log_dir(tmp_path).partitions
    assert (t0.segments, t0.log_end_offset, t0.indexes) == (2, leo, "missing:active")
    assert (t1.segments, t1.log_end_offset, t1.log_start_offset, t1.indexes) == (0, None, None, "-")
    assert (t1.high_watermark, t1.leader_epoch, t1.notes) == (40, 3, [])


def test_marked_dirs(tmp_path: Path):
    """Deleted and stray dirs are listed but get no checkpoint entries; a future replica is
    checkpointed in the log dir it moves to."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    _partition(src, "t-0", [[2]])
    _partition(src, "t-0.fedcba9876543210fedcba9876543210-delete", [[3]])
    _partition(src, "t-1.fedcba9876543210fedcba9876543210-stray", [[4]])
    (src / "junk.1-future").mkdir()  # Kafka rejects the name too
    _checkpoint(src / "replication-offset-checkpoint", ["t 0 2", "t 1 4"])
    _partition(dst, "t-0.0123456789abcdef0123456789abcdef-future", [[1]])
    _checkpoint(dst / "replication-offset-checkpoint", ["t 0 1"])
    s = summarize_log_dir(src)
    assert [(p.topic, p.partition, p.marker) for p in s.partitions] == [
        ("t", 0, None), ("t", 0, "delete"), ("t", 1, "stray")]
    live, deleted, stray = s.partitions
    assert (live.high_watermark, deleted.high_watermark, stray.high_watermark) == (2, None, None)
    assert (deleted.log_end_offset, stray.log_end_offset) == (3, 4)
    assert "deleted" in deleted.notes[0].message and "stray" in stray.notes[0].message
    assert all(n.severity == "info" for n in deleted.notes + stray.notes)
    assert s.other_dirs == ["junk.1-future"]
    [future] = summarize_log_dir(dst).partitions
    assert (future.marker, future.high_watermark, future.log_end_offset) == ("future", 1, 1)
    assert "future" in future.notes[0].message and future.notes[0].severity == "info"


def test_section_protocol(tmp_path: Path):
    write_sample_log_dir(tmp_path)
    dump = LogDirSummaryDump(tmp_path)
    assert (dump.kind, dump.items_key, dump.header["type"]) == (
        "log-dir-summary", "partitions", "log-dir-summary")
    assert dump.header["metaProperties"]["nodeId"] == 1
    [item] = list(dump.items)
    assert item["topic"] == "orders" and item["notes"] == [] and item["indexes"] == "missing:active"
    assert dump.footer == {"partitionCount": 1, "attentionCount": 1, "problemCount": 0,
                           "unreadableCount": 0}  # its active segment has no index
    assert dump.diagnostics() == []


def test_unreadable_segment_is_a_note(tmp_path: Path):
    part, _ = _partition(tmp_path, "t-0", [[2]])
    (part / log_filename(50)).symlink_to(tmp_path / "gone.log")
    dump = LogDirSummaryDump(tmp_path)
    [item] = list(dump.items)
    assert item["logEndOffset"] is None
    assert dump.footer["unreadableCount"] == 2  # it cannot be sized, and cannot be read
    assert all(line.startswith(str(part)) for line in dump.diagnostics())


# -- the real corpus --------------------------------------------------------------------------

def _catalogue() -> dict[str, dict[str, object]]:
    """Per log dir of the corpus README (``airquality-kraft``, ``kraft3-cluster/kafka1``, ...):
    the partition-dir count and ``partition -> last offset + 1`` from its segment tables."""
    out: dict[str, dict[str, object]] = {}
    dataset = current = None
    for line in (CORPUS / "README.md").read_text().splitlines():
        if m := re.match(r"^### (\S+)", line):
            dataset = m.group(1)
        elif dataset and (m := re.match(r"^- \*\*log dir\*\* `([^`]+)`", line)):
            current = dataset if m.group(1) == "(root)" else f"{dataset}/{m.group(1)}"
            out[current] = {"partitions": None, "leo": {}}
        elif current and (m := re.match(r"^  - partitions: (\d+) dirs", line)):
            out[current]["partitions"] = int(m.group(1))
        elif current and (m := re.match(r"^  \| (\S+) \| \d{20}\.log \|.*?\| \d+\.\.(\d+) \|",
                                        line)):
            leo = out[current]["leo"]
            leo[m.group(1)] = max(leo.get(m.group(1), 0), int(m.group(2)) + 1)
    return out


@pytest.mark.corpus
def test_every_corpus_log_dir_summarizes_cleanly(corpus: Path):
    catalogue = _catalogue()
    assert len(catalogue) == 16  # 13 single log dirs + 3 brokers
    for name, facts in catalogue.items():
        s = summarize_log_dir(corpus / name)
        assert all(n.severity == "info" for n in s.notes), (name, s.notes)
        for p in s.partitions:
            assert all(n.severity == "info" for n in p.notes), (name, p.dir_name, p.notes)
        assert len(s.partitions) == facts["partitions"], name
        assert s.meta is not None and s.meta.node_id is not None, name
        by_dir = {p.dir_name: p for p in s.partitions}
        for part, leo in facts["leo"].items():
            assert by_dir[part].log_end_offset == leo, (name, part)


@pytest.mark.corpus
def test_multi_segment_counts_match_the_summary_table(corpus: Path):
    text = (corpus / "README.md").read_text()
    multi = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^\| `([\w-]+)` \|(?:[^|]*\|){9} (\d+) \|", text, re.M)}
    assert multi["invoice-multiseg"] == 5
    for name, expected in multi.items():
        roots = [corpus / name] if (corpus / name / "meta.properties").exists() else sorted(
            (corpus / name).iterdir())
        count = sum(p.segments > 1 for r in roots for p in summarize_log_dir(r).partitions)
        assert count == expected, name


@pytest.mark.corpus
@pytest.mark.parametrize("log_dir, partition", [
    ("invoice-multiseg", "invoice-3"), ("xpx-2016", "__consumer_offsets-40"),
    ("yuanliubei-src", "__consumer_offsets-17"), ("airquality-kraft", "__cluster_metadata-0"),
    ("node-logx", "topic-logx-001-0"), ("spooldir-cp512", "_confluent-command-0"),
])
def test_log_end_offset_is_the_last_dumped_offset_plus_one(corpus: Path, log_dir, partition):
    s = summarize_log_dir(corpus / log_dir)
    p = _only(s, partition)
    files = partition_dir_files(corpus / log_dir / partition)
    last_log = [f for f in files if f.endswith(".log")][-1]
    dump = dump_file(last_log)
    last = list(dump.items)[-1]
    assert p.log_end_offset == last["lastOffset"] + 1


@pytest.mark.corpus
def test_catalogue_facts(corpus: Path):
    inv = _only(summarize_log_dir(corpus / "invoice-multiseg"), "invoice-0")
    assert (inv.segments, inv.log_start_offset, inv.log_end_offset, inv.high_watermark,
            inv.recovery_point, inv.indexes) == (4, 0, 100294, 100294, 90867, "missing:active")
    assert (inv.leader_epoch, inv.leader_epoch_start_offset, inv.leader_epoch_entries) == (0, 0, 1)
    assert inv.topic_id == "bQyJ_ZYaSA6dEv8UbXmzWA"

    donaldy = summarize_log_dir(corpus / "donaldy-271")
    my = _only(donaldy, "myTopic-0")  # only an empty segment with base offset 38
    assert (my.segments, my.log_start_offset, my.log_end_offset, my.high_watermark) == (
        1, 38, 38, 38)
    c39 = _only(donaldy, "__consumer_offsets-39")
    assert (c39.segments, c39.log_end_offset, c39.high_watermark, c39.recovery_point) == (
        2, 20, 20, 18)

    yuan = summarize_log_dir(corpus / "yuanliubei-src")  # a clean shutdown: every index there
    assert yuan.clean_shutdown and all(p.indexes == "all" for p in yuan.partitions)

    xpx = _only(summarize_log_dir(corpus / "xpx-2016"), "__consumer_offsets-40")
    assert (xpx.log_end_offset, xpx.high_watermark, xpx.leader_epoch_entries) == (860, 856, None)

    ksql = summarize_log_dir(corpus / "ksql-kraft-2023")
    assert sum(any("high watermark" in n.message for n in p.notes) for p in ksql.partitions) == 10
    rep = _only(ksql, "_confluent-ksql-default_query_CTAS_CURRENTLOCATION_3-Aggregate-GroupBy-"
                      "repartition-0")
    assert (rep.log_start_offset, rep.log_end_offset) == (5, 6)

    air = _only(summarize_log_dir(corpus / "airquality-kraft"), "__consumer_offsets-14")
    assert (air.leader_epoch, air.leader_epoch_start_offset, air.leader_epoch_entries) == (8, 81, 4)

    stock = summarize_log_dir(corpus / "stocksys-kraft")
    meta = _only(stock, "__cluster_metadata-0")  # snapshots only, no .log
    assert (meta.segments, meta.log_end_offset, meta.kraft_snapshots, meta.indexes) == (
        0, None, 6, "-")
    assert (stock.meta.id_key, stock.meta.node_id, stock.meta.version) == ("node.id", 1, "1")

    k1 = summarize_log_dir(corpus / "kraft3-cluster" / "kafka1")
    assert k1.lock and not k1.clean_shutdown and k1.meta.node_id == 1
    assert sum(p.leader_epoch_entries == 0 for p in k1.partitions) == 5  # 0-byte files


@pytest.mark.corpus
def test_corpus_copy_with_a_truncated_tail(corpus: Path, tmp_path: Path):
    copy = tmp_path / "bheem"
    shutil.copytree(corpus / "bheem-cities", copy)
    seg = copy / "cities-0" / log_filename(0)
    seg.chmod(0o644)
    seg.write_bytes(seg.read_bytes()[:-5])
    p = _only(summarize_log_dir(copy), "cities-0")
    assert p.log_end_offset == 10
    assert [n.severity for n in p.notes] == ["problem", "info"]  # and the HW (11) is now above it
