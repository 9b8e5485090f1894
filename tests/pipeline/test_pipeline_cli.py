"""``pylogctl scan`` and ``pylogctl stats`` from the command line, with both engines."""

from __future__ import annotations

import base64
import json

import pytest

from pipeline_support import copy_dir
from pylogctl.pipeline.local_engine import LocalEngine


def test_scan_table_shows_records_as_text(cli, corpus):
    r = cli("scan", corpus / "smartassets-connect", "--topic", "docker-connect-status",
            "--partition", "0", "--from-offset", "47", "--to-offset", "49")
    assert r.code == 0, r.err
    assert r.lines[0].split() == ["TOPIC", "PARTITION", "OFFSET", "TIMESTAMP", "KEY", "VALUE"]
    assert len(r.lines) == 3
    cells = r.lines[1].split(None, 5)
    assert cells[:4] == ["docker-connect-status", "0", "47", "2019-10-15T21:32:04.021Z"]
    assert cells[4] == "status-connector-jdbc-sink-rfid" and cells[5].startswith('{"state":')
    assert "of 40 non-empty segments" in r.err and "local engine" in r.err


def test_scan_json_rows_carry_every_column_with_base64_bytes(cli, corpus):
    r = cli("scan", corpus / "smartassets-connect", "-o", "json", "--topic", "temperature",
            "--to-offset", "2")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert rows and all(row["headers"] for row in rows)
    expected = list(LocalEngine([str(corpus / "smartassets-connect")]).rows())
    first = next(e for e in expected if e["topic"] == "temperature")
    row = rows[0]
    assert list(row) == list(first)
    assert base64.b64decode(row["value"]) == first["value"]
    assert row["headers"][0] == {"key": first["headers"][0].key,
                                 "value": base64.b64encode(first["headers"][0].value).decode()}


def test_scan_ndjson_count_and_time_filters(cli, corpus):
    path = corpus / "invoice-multiseg"
    r = cli("scan", path, "-o", "ndjson", "--partition", "2", "--from-offset", "10",
            "--to-offset", "13")
    assert r.code == 0, r.err
    assert [json.loads(line)["offset"] for line in r.lines] == [10, 11, 12]
    r = cli("scan", path, "--count", "--from-time", "2024-06-15T10:20:27.480Z",
            "--to-time", "1718446827866")
    assert r.code == 0 and int(r.out) > 0 and "skipped" in r.err
    r = cli("scan", path, "--count", "-o", "json", "--key", "nope")
    assert json.loads(r.out) == {"count": 0}


def test_scan_export_writes_part_files(cli, corpus, tmp_path):
    out = tmp_path / "out"
    r = cli("scan", corpus / "node-logx", "--export", f"json:{out}")
    assert r.code == 0, r.err
    assert "wrote 50 records" in r.err and r.out == ""
    lines = [json.loads(line) for p in sorted(out.glob("part-*.json"))
             for line in p.read_text().splitlines()]
    assert len(lines) == 50 and {row["codec"] for row in lines} == {"gzip"}
    r = cli("scan", corpus / "node-logx", "--export", f"json:{out}")
    assert r.code == 2 and "already exists" in r.err


@pytest.mark.parametrize("args, message", [
    (["--count", "--export", "json:/tmp/x"], "at most one"),
    (["--export", "csv:/tmp/x"], "parquet:DIR or json:DIR"),
    (["--from-time", "yesterday"], "Invalid time"),
    (["--master", "local[2]"], "--master needs --engine spark"),
])
def test_scan_usage_errors(cli, corpus, args, message):
    r = cli("scan", corpus / "node-logx", *args)
    assert r.code == 2 and message in r.err


def test_scan_takes_directories(cli, corpus, tmp_path):
    segment = corpus / "node-logx" / "topic-logx-001-0" / "00000000000000000000.log"
    r = cli("scan", segment)
    assert r.code == 2 and "is a file" in r.err
    r = cli("scan", tmp_path / "absent")
    assert r.code == 3 and "No such file or directory" in r.err
    (tmp_path / "plain").mkdir()
    r = cli("stats", tmp_path / "plain")
    assert r.code == 2 and "neither a partition dir" in r.err


def test_scan_of_a_corrupt_segment_exits_1_naming_file_and_position(cli, corpus, tmp_path):
    part = copy_dir(corpus / "node-logx" / "topic-logx-001-1", tmp_path / "topic-logx-001-1")
    segment = part / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[100] ^= 0xFF
    segment.write_bytes(bytes(data))
    r = cli("scan", part, "--count")
    assert r.code == 1
    assert r.err.startswith("pylogctl: Record is corrupt") and f"{segment}, byte position 0" in r.err


def test_stats_table_and_json(cli, corpus):
    r = cli("stats", corpus / "xpx-2016")
    assert r.code == 0, r.err
    assert r.lines[0].split()[:3] == ["TOPIC", "PARTITION", "RECORDS"]
    assert any(line.split()[:3] == ["TEST-TOPIC", "0", "21211"] for line in r.lines)
    assert any(line.split()[:2] == ["GroupA", "Stable"] for line in r.lines)
    assert "partitions without data not shown" in r.err
    doc = json.loads(cli("stats", corpus / "xpx-2016", "-o", "json").out)
    assert len(doc["partitions"]) == 53 and doc["groups"][0]["group"] == "GroupA"


def test_cli_spark_engine_matches_the_local_engine(cli, spark, corpus):
    """The commands with --engine spark run on the active session (as under spark-submit)."""
    path = corpus / "ksql-kraft-2023"
    for args in (["scan", path, "--count", "--grep", "KSQL"],
                 ["scan", path, "-o", "ndjson", "--topic", "_confluent-ksql-default__command_topic"],
                 ["stats", path, "-o", "json"]):
        local, remote = cli(*args), cli(*args, "--engine", "spark")
        assert local.code == remote.code == 0, remote.err
        assert remote.out == local.out and local.out.strip() not in ("", "0")
        assert "spark engine" in remote.err
