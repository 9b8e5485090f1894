"""kafka-get-offsets' option rules (GetOffsetShell's parseOffsetSpec, TopicFilter, the
``--topic-partitions`` rules) and its errors, as one line and exit 2."""

from __future__ import annotations

import pytest

from pylogctl.errors import UsageError
from pylogctl.tools.get_offsets import parse_time, partition_filter
from pylogctl.tools.sample import write_sample_log_dir
from support import run_pylogctl


@pytest.mark.parametrize("text,value", [("latest", -1), ("earliest", -2), ("max-timestamp", -3),
                                        ("earliest-local", -4), ("latest-tiered", -5),
                                        ("earliest-pending-upload", -6), ("-1", -1),
                                        ("+17", 17), ("1700000000000", 1700000000000),
                                        ("-9", -9)])
def test_time_values(text, value):
    assert parse_time(text) == value


@pytest.mark.parametrize("text", ["", "now", "1_000", " 5", "1.5", str(2**63)])
def test_malformed_time(text):
    with pytest.raises(UsageError, match=f"Malformed time argument {text}. Please use -1 or "
                       "latest / -2 or earliest /"):
        parse_time(text)


PARTS = [(t, p) for t in ("orders", "order-x", "__consumer_offsets", "t") for p in range(12)]


def _selected(**options):
    allowed = partition_filter(options.get("topic"), options.get("partitions"),
                               options.get("topic_partitions"))
    return [(t, p) for t, p in PARTS if allowed(t, p)]


def test_topic_is_a_whole_name_regex_with_commas_as_alternatives():
    assert {t for t, _ in _selected(topic="order")} == set()
    assert {t for t, _ in _selected(topic="order.*")} == {"orders", "order-x"}
    assert {t for t, _ in _selected(topic=" 'orders, t' ")} == {"orders", "t"}
    assert _selected(topic="t", partitions="3,1") == [("t", 1), ("t", 3)]


def test_topic_partition_rules():
    assert _selected(topic_partitions="orders:3-5") == [("orders", 3), ("orders", 4)]
    assert _selected(topic_partitions="t:10-,orders:-1") == [("orders", 0), ("t", 10),
                                                             ("t", 11)]
    assert _selected(topic_partitions=":11") == [(t, 11) for t in ("orders", "order-x",
                                                                   "__consumer_offsets", "t")]
    assert len(_selected(topic_partitions="t,")) == 12  # Java's split drops the trailing ""


@pytest.mark.parametrize("options,message", [
    ({"topic_partitions": "t:1", "topic": "t"},
     "--topic-partitions cannot be used with --topic or --partitions"),
    ({"topic_partitions": "t:x"}, "Invalid rule specification: t:x"),
    ({"partitions": "1,a"}, "--partitions expects a comma separated list of numeric partition "
                            "ids, but received: 1,a"),
    ({"topic": "("}, r"\( is an invalid regex."),
])
def test_bad_filters(options, message):
    with pytest.raises(UsageError, match=message):
        _selected(**options)


def test_cli_errors_are_one_line_and_exit_2(tmp_path):
    write_sample_log_dir(tmp_path / "logs")
    for args, text in [(("--topic", "nope"), "Could not match any topic-partitions with the "
                                             "specified filters"),
                       (("--time", "soon"), "Malformed time argument soon."),
                       (("--topic-partitions", "orders:0", "--partitions", "0"),
                        "--topic-partitions cannot be used")]:
        run = run_pylogctl("get-offsets", tmp_path / "logs", *args)
        assert run.returncode == 2 and run.stdout == ""
        assert len(run.stderr.splitlines()) == 1 and text in run.stderr, run.stderr


def test_cli_missing_high_watermark_is_noted(tmp_path):
    write_sample_log_dir(tmp_path / "logs")
    (tmp_path / "logs" / "replication-offset-checkpoint").write_text("0\n0\n")
    run = run_pylogctl("get-offsets", tmp_path / "logs")
    assert run.stdout == "orders:0:0\n"
    assert "no entry in" in run.stderr and "replication-offset-checkpoint" in run.stderr
