"""Planning and reading splits (no Spark): splits tile segments exactly, filters skip whole
partitions, segments and splits yet keep exactly the records a brute-force filter keeps, and
lying or unfinished indexes cost time, never records."""

from __future__ import annotations

import os
import struct
from dataclasses import replace

import pytest

from pipeline_support import all_rows, brute_force, copy_dir
from pylogctl.errors import CorruptRecordError, UsageError
from pylogctl.pipeline.columns import COLUMNS, ddl, select
from pylogctl.pipeline.local_engine import LocalEngine
from pylogctl.pipeline.plan import plan_scan
from pylogctl.pipeline.scan_filter import ScanFilter, parse_time
from pylogctl.pipeline.segment_reader import read_split

SMALL_SPLITS = 64 * 1024
COLS = ("topic", "partition", "offset", "timestamp", "key", "value")


@pytest.fixture(scope="module")
def invoice_rows(corpus):
    """invoice-multiseg (5 partitions, 20 segments with indexes, 500,000 records) read
    whole, as the reference the filtered reads are checked against."""
    return all_rows(corpus / "invoice-multiseg", COLS)


def test_every_corpus_record_is_read_once(corpus):
    """Record counts per dir: the catalogue's, less the records of KRaft snapshot files
    (``.checkpoint``), which are not segments; kraft3-cluster's three brokers hold replicas
    of the same partitions and one replica of each is read."""
    expected = {"xpx-2016": 22280, "invoice-multiseg": 500000, "node-logx": 50,
                "spooldir-cp512": 582, "smartassets-connect": 922, "iechenyb-2019": 29699,
                "yuanliubei-src": 4, "stocksys-kraft": 0}
    for name, records in expected.items():
        assert LocalEngine([str(corpus / name)]).count() == records, name


def test_small_splits_cut_at_index_positions_give_the_same_records(corpus):
    whole = plan_scan(str(corpus / "invoice-multiseg"))
    cut = plan_scan(str(corpus / "invoice-multiseg"), split_bytes=SMALL_SPLITS)
    assert len(whole.splits) == whole.segments == 20
    assert len(cut.splits) > 5 * len(whole.splits)  # ~1 MB segments indexed every 4 KiB
    assert cut.segments_read == whole.segments_read == 20
    # splits tile their segment: each starts where the previous one stopped
    for a, b in zip(cut.splits, cut.splits[1:]):
        if a.path == b.path:
            assert a.stop == b.start and a.offset_upper == b.offset_lower
    cols = ("topic", "partition", "offset", "key", "value")

    def rows(plan):
        return [r for s in plan.splits for c in read_split(s, ScanFilter(), cols)
                for r in zip(*(c[k] for k in cols))]
    assert rows(cut) == rows(whole)


def test_segments_without_an_index_stay_whole(corpus):
    """xpx-2016's brokers left no index files: a segment is then one split, however big."""
    plan = plan_scan(str(corpus / "xpx-2016"), split_bytes=1024)
    assert len(plan.splits) == plan.segments == 4
    assert all(s.start == 0 and s.stop is None and not s.indexed for s in plan.splits)


@pytest.mark.parametrize("f, skipped", [
    (ScanFilter(offset_from=50_000, offset_to=50_100), "offset"),
    (ScanFilter(partitions=frozenset({2})), "partition"),
    (ScanFilter(topics=frozenset({"nope"})), "topic"),
    (ScanFilter(offset_from=90_000), "offset"),
    (ScanFilter(offset_to=10), "offset"),
], ids=["offset-range", "partition", "topic", "offset-from", "offset-to"])
def test_filters_skip_segments_and_keep_exactly_the_matching_records(corpus, invoice_rows, f,
                                                                     skipped):
    path = corpus / "invoice-multiseg"
    reference = brute_force(invoice_rows, f)
    engine = LocalEngine([str(path)], split_bytes=SMALL_SPLITS)
    got = list(engine.rows(f, COLS))
    assert got == reference
    plan = engine.last_plan
    assert plan.segments_read < plan.segments and plan.skipped[skipped] > 0
    assert plan.segments_read + sum(plan.skipped.values()) == plan.segments


def test_offset_seek_reads_a_few_splits_of_a_segment(corpus):
    f = ScanFilter(offset_from=1000, offset_to=1002)
    plan = plan_scan(str(corpus / "invoice-multiseg"), f, split_bytes=SMALL_SPLITS)
    # one split per partition, and the reader seeks inside it with the offset index
    assert len(plan.splits) == 5 and all(s.indexed for s in plan.splits)
    assert [r["offset"] for r in LocalEngine([str(corpus / "invoice-multiseg")]).rows(f)] \
        == [1000, 1001] * 5


def test_time_filter_uses_the_time_index_to_skip(corpus, invoice_rows):
    path = corpus / "invoice-multiseg"
    rows = invoice_rows
    stamps = sorted(r["timestamp"] for r in rows)
    for t in (stamps[len(stamps) // 2], stamps[-1], stamps[0] + 1):
        f = ScanFilter(time_from=t, time_to=stamps[-1])
        engine = LocalEngine([str(path)], split_bytes=SMALL_SPLITS)
        assert list(engine.rows(f, COLS)) == brute_force(rows, f)
    plan = plan_scan(str(path), ScanFilter(time_from=stamps[len(stamps) // 2]))
    assert plan.skipped["time"] > 0


def test_key_and_value_filters(corpus):
    path = corpus / "smartassets-connect"
    rows = all_rows(path)
    for f in (ScanFilter(key=b"status-connector-jdbc-sink-rfid"),
              ScanFilter(value_contains=b"RUNNING"),
              ScanFilter(value_contains=b"RUNNING", topics=frozenset({"docker-connect-status"}),
                         offset_from=60)):
        got = list(LocalEngine([str(path)]).rows(f))
        assert got == brute_force(rows, f) and got


def test_replicas_of_several_brokers_are_read_once_unless_all_asked(corpus):
    path = corpus / "kraft3-cluster"
    one = plan_scan(str(path))
    every = plan_scan(str(path), replicas="all")
    assert len({(p.topic, p.partition) for p in one.partitions}) == len(one.partitions)
    assert len(every.partitions) > len(one.partitions)
    assert sum("partitions with replicas in several log dirs" in n for n in one.notes) == 1
    assert len(one.replica_choices) == 11 and all(": read " in n for n in one.replica_choices)
    # the partition dirs of one broker may also be named directly
    broker = corpus / "kraft3-cluster" / "kafka1"
    part = next(p for p in sorted(broker.iterdir()) if p.name == "test1-0")
    assert LocalEngine([str(part)]).count() == sum(
        1 for r in LocalEngine([str(broker)]).rows(ScanFilter(topics=frozenset({"test1"}),
                                                              partitions=frozenset({0}))))


def test_a_crashed_brokers_zero_filled_index_tail_is_not_trusted(corpus, tmp_path):
    """A preallocated index of a broker that crashed ends in zeros: planning must neither cut
    there nor seek with it."""
    part = copy_dir(corpus / "invoice-multiseg" / "invoice-0", tmp_path / "invoice-0")
    for index in list(part.glob("*.index")) + list(part.glob("*.timeindex")):
        with open(index, "ab") as f:
            f.write(b"\0" * 4096)
    rows = all_rows(part)
    assert len(rows) == LocalEngine([str(corpus / "invoice-multiseg" / "invoice-0")]).count()
    for f in (ScanFilter(offset_from=20_000, offset_to=20_010),
              ScanFilter(time_from=rows[len(rows) // 2]["timestamp"])):
        assert list(LocalEngine([str(part)], split_bytes=SMALL_SPLITS).rows(f)) \
            == brute_force(rows, f)
    assert not any(s.indexed for s in plan_scan(str(part), split_bytes=SMALL_SPLITS).splits)


def test_an_index_entry_off_a_batch_boundary_is_not_a_split_point(corpus, tmp_path):
    part = copy_dir(corpus / "invoice-multiseg" / "invoice-0", tmp_path / "invoice-0")
    index = part / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    for n in range(0, len(data) // 8, 3):  # every third entry now points one byte in
        rel, pos = struct.unpack_from(">ii", data, n * 8)
        struct.pack_into(">ii", data, n * 8, rel, pos + 1)
    index.write_bytes(bytes(data))
    moved = {struct.unpack_from(">ii", data, n * 8)[1] for n in range(0, len(data) // 8, 3)}
    plan = plan_scan(str(part), split_bytes=SMALL_SPLITS)
    assert len(plan.splits) > 3 and not moved & {s.start for s in plan.splits}
    cols = ("offset", "key", "value")
    assert all_rows(part, split_bytes=SMALL_SPLITS, columns=cols) == \
        all_rows(corpus / "invoice-multiseg" / "invoice-0", columns=cols)


def test_a_split_that_does_not_end_on_a_batch_boundary_is_an_error(corpus):
    split = plan_scan(str(corpus / "invoice-multiseg" / "invoice-0"), split_bytes=SMALL_SPLITS
                      ).splits[0]
    bad = replace(split, stop=split.stop + 1)
    with pytest.raises(CorruptRecordError, match="split boundary") as info:
        list(read_split(bad, ScanFilter(), ("offset",)))
    assert info.value.path == split.path and info.value.position == bad.stop


def test_a_corrupt_batch_is_reported_with_its_file_and_position(corpus, tmp_path):
    part = copy_dir(corpus / "node-logx" / "topic-logx-001-0", tmp_path / "topic-logx-001-0")
    segment = part / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    second = 12 + struct.unpack_from(">i", data, 8)[0]
    data[second + 70] ^= 0xFF  # inside the second batch's records: its CRC fails
    segment.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError, match="Record is corrupt") as info:
        LocalEngine([str(part)]).count()
    assert info.value.path == str(segment) and info.value.position == second


def test_columns_and_ddl():
    assert select(None) == COLUMNS and select("") == COLUMNS
    assert select("offset, key,offset") == ("offset", "key")
    with pytest.raises(UsageError, match="Unknown column"):
        select("offset,nope")
    assert ddl(("partition", "headers")) == \
        "`partition` INT, `headers` ARRAY<STRUCT<key: STRING, value: BINARY>>"


def test_filter_json_round_trip_and_time_parsing():
    f = ScanFilter(topics=frozenset({"a", "b"}), offset_from=3, time_to=9, key=b"\x00k",
                   value_contains=b"v")
    assert ScanFilter.from_json(f.to_json()) == f
    assert ScanFilter.from_json(ScanFilter().to_json()) == ScanFilter()
    assert parse_time("1718446825583") == 1718446825583
    assert parse_time("2024-06-15T10:20:25.583Z") == 1718446825583
    assert parse_time("2024-06-15T10:20:25.583") == 1718446825583
    with pytest.raises(UsageError):
        parse_time("yesterday")
    assert ScanFilter(offset_from=5, offset_to=5).is_empty
    assert ScanFilter().narrowed(topics={"a", "b"}).narrowed(topics={"b"}).topics == {"b"}


def test_local_engine_needs_neither_pyspark_nor_pyarrow():
    """``pylogctl --help`` and the local engine load no PySpark and no Arrow (start-up time,
    and machines without them)."""
    import subprocess
    import sys

    code = ("import sys; from pylogctl.cli.app import app; "
            "from pylogctl.pipeline.local_engine import LocalEngine; "
            "from pylogctl.cli import scan, stats; "
            "print(sorted(m for m in ('pyspark', 'pyarrow', 'py4j') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=os.path.dirname(__file__))
    assert out.stdout.strip() == "[]", out.stderr
