"""How Spark's pushed filters become a scan filter (no session needed): exact ones are taken
over, the others go back to Spark, and a superset is still used to skip."""

from __future__ import annotations

import pytest

from pipeline_support import spark_missing_reason
from pylogctl.errors import UsageError
from pylogctl.pipeline.export import ExportTarget, json_record
from pylogctl.pipeline.scan_filter import ScanFilter

pytestmark = pytest.mark.skipif(spark_missing_reason() is not None,
                                reason=str(spark_missing_reason()))


def pushed(*filters):
    from pylogctl.pipeline.datasource import KafkaLogReader
    from pyspark.sql.types import LongType, StructField, StructType

    reader = KafkaLogReader({"path": "/nowhere", "columns": "offset"},
                            StructType([StructField("offset", LongType())]))
    left = list(reader.pushFilters(list(filters)))
    return reader.filter, left


def test_exact_filters_are_taken_over():
    from pyspark.sql.datasource import (EqualTo, GreaterThan, GreaterThanOrEqual, In,
                                        IsNotNull, LessThan, LessThanOrEqual, StringStartsWith)

    f, left = pushed(EqualTo(("topic",), "orders"), In(("partition",), (1, 3)),
                     GreaterThan(("offset",), 9), LessThanOrEqual(("offset",), 20),
                     GreaterThanOrEqual(("timestamp",), 5), LessThan(("timestamp",), 7),
                     IsNotNull(("offset",)), StringStartsWith(("topic",), "ord"))
    assert left == []
    assert f == ScanFilter(topics=frozenset({"orders"}), topic_prefix="ord",
                           partitions=frozenset({1, 3}), offset_from=10, offset_to=21,
                           time_from=5, time_to=7)


def test_other_filters_go_back_to_spark():
    from pyspark.sql.datasource import (EqualTo, In, IsNotNull, Not, StringContains,
                                        StringEndsWith)

    inexact = In(("offset",), (5, 100))
    others = [Not(EqualTo(("partition",), 1)), StringContains(("topic",), "x"),
              StringEndsWith(("topic",), "x"), IsNotNull(("key",)), EqualTo(("value",), b"v"),
              EqualTo(("offset",), "5"), EqualTo(("headers", "key"), "k")]
    f, left = pushed(inexact, *others)
    assert left == [inexact, *others]
    # the IN list still narrows the offsets planned (Spark keeps the exact test)
    assert (f.offset_from, f.offset_to) == (5, 101)


def test_export_targets_and_spark_style_json():
    assert ExportTarget.parse("parquet:/x/y") == ExportTarget("parquet", "/x/y")
    assert ExportTarget.parse("json:hdfs://nn/out") == ExportTarget("json", "hdfs://nn/out")
    for bad in ("csv:/x", "parquet:", "/x"):
        with pytest.raises(UsageError):
            ExportTarget.parse(bad)
    row = {"offset": 1, "key": None, "value": b"\x00v", "headers": (("h", None), ("i", b"1"))}
    assert json_record(row) == {"offset": 1, "value": "AHY=",
                                "headers": [{"key": "h"}, {"key": "i", "value": "MQ=="}]}
