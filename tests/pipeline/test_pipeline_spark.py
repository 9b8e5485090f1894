"""The Spark engine on a real local[2] session: the ``kafka-log`` data source returns the rows
and statistics the local engine returns, pushed-down filters plan fewer segments, columns are
pruned on request, exports match, and a corrupt batch fails with its file and position."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from pipeline_support import ENGINE_DIRS, copy_dir
from pylogctl.errors import CorruptRecordError, UsageError
from pylogctl.pipeline.export import ExportTarget
from pylogctl.pipeline.local_engine import LocalEngine
from pylogctl.pipeline.scan_filter import ScanFilter
from pylogctl.tools.sample import write_sample_log_dir

SMALL_SPLITS = 256 * 1024


def engines(spark, paths, **options):
    from pylogctl.pipeline.spark_engine import SparkEngine

    paths = [str(p) for p in paths]
    return LocalEngine(paths, **options), SparkEngine(paths, spark=spark, **options)


@pytest.mark.parametrize("name", ENGINE_DIRS)
def test_spark_and_local_engines_return_identical_rows(spark, corpus, name):
    local, remote = engines(spark, [corpus / name])
    expected = list(local.rows())
    assert expected and list(remote.rows()) == expected


def test_identical_rows_for_every_codec_headers_tombstones_and_a_transaction(spark, tmp_path):
    """The sample log dir has what the corpus lacks: snappy and zstd batches."""
    write_sample_log_dir(tmp_path / "sample")
    local, remote = engines(spark, [tmp_path / "sample"])
    expected = list(local.rows())
    assert {r["codec"] for r in expected} == {"none", "gzip", "snappy", "lz4", "zstd"}
    assert any(r["value"] is None for r in expected) and any(r["isControl"] for r in expected)
    assert list(remote.rows()) == expected


@pytest.mark.parametrize("name", ["smartassets-connect", "xpx-2016", "ksql-kraft-2023",
                                  "kraft3-cluster", "spooldir-cp512"])
def test_spark_and_local_engines_compute_identical_statistics(spark, corpus, name):
    local, remote = engines(spark, [corpus / name])
    a, b = local.stats(), remote.stats()
    assert a.partitions == b.partitions and a.groups == b.groups
    assert sum(p["records"] for p in a.partitions) == local.count()
    assert any(p["distinctKeys"] for p in a.partitions)


def test_statistics_of_a_compacted_topic_by_hand(spark, corpus):
    """xpx-2016's __consumer_offsets-40: 860 commits of one group to one partition, so a
    compaction keeps one record per key."""
    local, remote = engines(spark, [corpus / "xpx-2016"])
    rows = [r for r in remote.stats().partitions
            if (r["topic"], r["partition"]) == ("__consumer_offsets", 40)]
    assert rows == [r for r in local.stats().partitions
                    if (r["topic"], r["partition"]) == ("__consumer_offsets", 40)]
    (row,) = rows
    assert row["records"] == 860 and row["firstOffset"] == 0 and row["lastOffset"] == 859
    assert row["compactionSavesRecords"] == row["keyedRecords"] - row["distinctKeys"]
    assert row["duplicateKeyRatio"] == round(1 - row["distinctKeys"] / row["keyedRecords"], 6)
    groups = local.stats().groups
    assert [g["group"] for g in groups] == ["GroupA"] and groups[0]["lag"] is not None


@pytest.mark.parametrize("condition, f", [
    ("offset >= 50000 AND offset < 50100", ScanFilter(offset_from=50_000, offset_to=50_100)),
    ("partition = 3", ScanFilter(partitions=frozenset({3}))),
    ("partition IN (0, 4) AND offset > 90000",
     ScanFilter(partitions=frozenset({0, 4}), offset_from=90_001)),
    ("topic = 'invoice' AND offset <= 100", ScanFilter(topics=frozenset({"invoice"}),
                                                       offset_to=101)),
    ("topic LIKE 'other%'", ScanFilter(topic_prefix="other")),
], ids=["offset-range", "partition", "partition-in", "topic-offset", "topic-prefix"])
def test_pushed_down_filters_read_fewer_segments(spark, corpus, condition, f):
    """Each Spark input partition is one split to read: with the filter pushed down the data
    source plans fewer of them (and fewer segments), the same as the local engine's plan."""
    from pylogctl.pipeline.datasource import NAME

    path = str(corpus / "invoice-multiseg")
    everything = spark.read.format(NAME).option("columns", "topic,partition,offset").load(path)
    df = everything.where(condition)
    unfiltered = everything.rdd.getNumPartitions()
    planned = LocalEngine([path]).plan(f)
    # default split size: one split per segment, so input partitions count segments read
    assert unfiltered == planned.segments == 20
    assert df.rdd.getNumPartitions() == max(1, planned.segments_read) < unfiltered
    expected = LocalEngine([path]).count(f)
    assert df.count() == expected
    assert sorted(tuple(r) for r in df.collect()) == sorted(
        (r["topic"], r["partition"], r["offset"])
        for r in LocalEngine([path]).rows(f, ("topic", "partition", "offset")))


def test_pushdown_seeks_inside_split_segments(spark, corpus):
    """Large segments cut into splits: an offset filter plans only the splits holding it."""
    from pylogctl.pipeline.datasource import NAME

    path = str(corpus / "invoice-multiseg")
    reader = (spark.read.format(NAME).option("columns", "partition,offset,key,value")
              .option("splitBytes", str(SMALL_SPLITS)).load(path))
    df = reader.where("offset >= 30000 AND offset < 30700")
    whole = reader.rdd.getNumPartitions()
    some = df.rdd.getNumPartitions()
    assert whole > 20 and some < 20
    local = LocalEngine([path], split_bytes=SMALL_SPLITS)
    f = ScanFilter(offset_from=30_000, offset_to=30_700)
    assert [tuple(r) for r in df.collect()] == [
        tuple(r.values()) for r in local.rows(f, ("partition", "offset", "key", "value"))]
    assert some == len(local.last_plan.splits)


def test_time_filter_pushed_down(spark, corpus):
    from pylogctl.pipeline.spark_engine import SparkEngine

    path = str(corpus / "invoice-multiseg")
    stamps = sorted(r["timestamp"] for r in LocalEngine([path]).rows(
        ScanFilter(partitions=frozenset({0})), ("timestamp",)))
    f = ScanFilter(time_from=stamps[len(stamps) // 2])
    remote = SparkEngine([path], spark=spark)
    df = remote.dataframe(f, ("partition", "offset", "timestamp"))
    assert df.rdd.getNumPartitions() == LocalEngine([path]).plan(f).segments_read < 20
    assert remote.count(f) == LocalEngine([path]).count(f)


def test_key_and_value_filters_run_in_the_tasks(spark, corpus):
    path = corpus / "smartassets-connect"
    local, remote = engines(spark, [path])
    f = ScanFilter(value_contains=b"RUNNING", topics=frozenset({"docker-connect-status"}))
    assert remote.count(f) == local.count(f) > 0
    k = ScanFilter(key=b"status-connector-jdbc-sink-rfid")
    assert list(remote.rows(k)) == list(local.rows(k))


def test_columns_are_pruned_on_request(spark, corpus):
    from pylogctl.pipeline.datasource import NAME

    path = str(corpus / "spooldir-cp512")
    df = spark.read.format(NAME).option("columns", "offset,key,timestampType").load(path)
    assert df.columns == ["offset", "key", "timestampType"]
    expected = [(r["offset"], r["key"], r["timestampType"])
                for r in LocalEngine([path]).rows(columns=("offset", "key", "timestampType"))]
    assert [tuple(r) for r in df.collect()] == expected
    assert {"CreateTime", "LogAppendTime"} <= {r[2] for r in expected}
    by_schema = spark.read.format(NAME).schema("valueSize INT, topic STRING").load(path)
    assert [tuple(r) for r in by_schema.collect()] == [
        (r["valueSize"], r["topic"]) for r in LocalEngine([path]).rows(
            columns=("valueSize", "topic"))]
    with pytest.raises(Exception, match="offset is BIGINT"):
        spark.read.format(NAME).schema("offset STRING").load(path).collect()


def test_several_log_dirs_in_one_load(spark, corpus):
    from pylogctl.pipeline.datasource import NAME

    paths = [str(corpus / "node-logx"), str(corpus / "xpx-2016")]
    assert spark.read.format(NAME).load(paths).count() == LocalEngine(paths).count() == 22330


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_exports_of_both_engines_hold_the_same_records(spark, corpus, tmp_path, fmt):
    path = corpus / "smartassets-connect"
    local, remote = engines(spark, [path])
    f = ScanFilter(topics=frozenset({"docker-connect-status", "_schemas",
                                     "__confluent.support.metrics"}))
    a = ExportTarget(fmt, str(tmp_path / "local"))
    b = ExportTarget(fmt, str(tmp_path / "spark"))
    assert local.export(a, f) == remote.export(b, f) == local.count(f) > 0
    assert (tmp_path / "local" / "_SUCCESS").exists() and (tmp_path / "spark" / "_SUCCESS").exists()
    with pytest.raises(UsageError, match="already exists"):
        local.export(a, f)
    assert _exported(tmp_path / "local", fmt) == _exported(tmp_path / "spark", fmt)


def _exported(directory: Path, fmt: str) -> list:
    if fmt == "json":
        rows = [json.loads(line) for p in sorted(directory.glob("part-*"))
                for line in p.read_text().splitlines()]
        return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["offset"]))
    import pyarrow.parquet as pq

    table = pq.read_table(str(directory))
    return sorted(table.to_pylist(), key=lambda r: (r["topic"], r["partition"], r["offset"]))


def test_a_corrupt_batch_fails_the_job_with_its_file_and_position(spark, corpus, tmp_path):
    part = copy_dir(corpus / "node-logx" / "topic-logx-001-0", tmp_path / "topic-logx-001-0")
    segment = part / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    second = 12 + struct.unpack_from(">i", data, 8)[0]
    data[second + 70] ^= 0xFF
    segment.write_bytes(bytes(data))
    _, remote = engines(spark, [part])
    with pytest.raises(CorruptRecordError, match="Record is corrupt") as info:
        remote.count()
    assert f"{segment}, byte position {second}" in str(info.value)
