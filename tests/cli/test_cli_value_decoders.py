"""Values people can read, on the command line: ``scan``'s table shows bytes by the one rule,
``scan`` and ``dump-segment`` take the same decoders, the schema decoders read Confluent
wire-format values with the log dirs' ``_schemas`` and say in one stderr line per record what
they cannot read; ``dump-segment --print-data-log`` stays kafka-dump-log's (U+FFFD)."""

from __future__ import annotations

import json

import pytest

from schema_registry_support import build_registry_log_dir, write_partition
from support import run_pylogctl

pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")

ORDER = {"id": 7, "item": "tea", "price": 2.5, "tag": "\\x00\\xffok"}


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    d = build_registry_log_dir(tmp_path_factory.mktemp("registry"))
    write_partition(d, "bin", [(b"\xff\xfe", b"ok\x00\xff\n"), (b"k", "grüße\n".encode())])
    return d


def test_scan_table_shows_bytes_by_the_one_rule(log_dir):
    r = run_pylogctl("scan", log_dir, "--topic", "bin", "-o", "text")
    assert r.returncode == 0, r.stderr
    rows = [line.split(None, 5)[4:] for line in r.stdout.splitlines()[1:]]
    assert rows == [["\\xff\\xfe", "ok\\x00\\xff\\x0a"], ["k", "grüße\\n"]]
    assert "\ufffd" not in r.stdout


def test_scan_schema_registry_decoder(log_dir):
    r = run_pylogctl("scan", log_dir, "--topic", "shop", "-o", "ndjson",
                     "--value-decoder", "schema-registry", "--key-decoder", "string")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["key"] for row in rows] == [f"k{i}" for i in range(9)]
    assert [rows[i]["value"] for i in (0, 1, 2, 3, 5, 7)] == [
        ORDER, {"sku": "SKU-1", "qty": 3}, {"name": "Ada"}, {"user": "ada", "age": 36}, ORDER,
        {"age": "old"}]
    assert rows[8]["value"] == "plain text"
    problems = [line for line in r.stderr.splitlines() if " offset " in line]
    assert problems == [
        "pylogctl: shop-0 offset 4: the value: schema id 99 is not in _schemas; shown as raw "
        "bytes",
        "pylogctl: shop-0 offset 6: the value: schema id 5 is not in _schemas (its versions "
        "were hard-deleted); shown as raw bytes",
        "pylogctl: shop-0 offset 7: the value: the value does not match schema id 3: 'user' "
        "is a required property",
        "pylogctl: shop-0 offset 8: the value: not in the Confluent wire format: magic byte "
        "112, not 0; shown as raw bytes"]


def test_scan_simple_decoders_in_the_table(log_dir):
    r = run_pylogctl("scan", log_dir, "--topic", "bin", "-o", "text", "--key-decoder", "hex",
                     "--value-decoder", "base64")
    assert r.returncode == 0, r.stderr
    assert [line.split()[4:] for line in r.stdout.splitlines()[1:]] == [
        ["fffe", "b2sA/wo="], ["6b", "Z3LDvMOfZQo="]]


def test_scan_rejects_an_unknown_decoder(log_dir):
    r = run_pylogctl("scan", log_dir, "--value-decoder", "thrift")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].endswith(
        "Invalid value for --value-decoder: 'thrift' (choose from string, text, integer, "
        "long, hex, base64, json, avro, protobuf, json-schema, schema-registry, none)")


def test_decoders_do_not_go_with_count(log_dir):
    r = run_pylogctl("scan", log_dir, "--count", "--value-decoder", "json")
    assert (r.returncode, r.stderr.strip()) == (2, "pylogctl: --key-decoder and --value-decoder "
                                                   "shape the printed records; --count prints "
                                                   "none")


def test_schema_decoders_need_a_schemas_topic(tmp_path):
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=1\n")
    write_partition(tmp_path, "t", [(None, b"\x00\x00\x00\x00\x01")])
    r = run_pylogctl("scan", tmp_path, "--value-decoder", "avro")
    assert r.returncode == 2
    assert r.stderr.strip() == (f"pylogctl: The avro decoder reads schemas from the _schemas "
                                f"topic, which {tmp_path} do not hold")


def test_dump_segment_schema_decoder_and_kafkas_default(log_dir):
    segment = log_dir / "shop-0" / "00000000000000000000.log"
    r = run_pylogctl("dump-segment", segment, "--value-decoder", "avro",
                     "--skip-record-metadata")
    assert r.returncode == 0, r.stderr
    payloads = [line.split(" payload: ", 1)[1] for line in r.stdout.splitlines()
                if " payload: " in line]
    assert json.loads(payloads[0]) == ORDER and json.loads(payloads[5]) == ORDER
    assert payloads[4].startswith("\\x00\\x00\\x00\\x00c\\x0e\\x06tea")
    assert (f"pylogctl: {segment}: the value of the record at offset 4: schema id 99 is not "
            f"in _schemas; shown as raw bytes") in r.stderr.splitlines()
    # no decoder asked: kafka-dump-log's own line, Java's U+FFFD for the bytes it cannot read
    r = run_pylogctl("dump-segment", segment, "--print-data-log", "--skip-record-metadata")
    assert "payload: \x00\x00\x00\x00\x01\x0e\x06tea" in r.stdout and "\ufffd" in r.stdout
