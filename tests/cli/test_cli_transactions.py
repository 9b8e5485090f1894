"""``pylogctl transactions``: Kafka's tables (ToolsUtils.prettyPrintTable), the JSON rows and
the one-line errors, on log dirs written batch by batch."""

from __future__ import annotations

import json

import pytest

from pylogctl.format.transaction_log_records import TransactionState as S
from transactions_support import PartitionLog, TransactionStateLog, log_dir, metadata


@pytest.fixture
def cluster(tmp_path):
    d = log_dir(tmp_path, broker_id=1)
    t = PartitionLog(d, "orders", 0)
    t.txn(7)
    t.marker(7, True)
    t.txn(8)  # open since an hour, forgotten by the coordinator
    t.high_watermark(d)
    log = TransactionStateLog(d, partitions=2, leader_epoch=3)
    log.write(metadata("payments", 7, S.CompleteCommit))
    log.write(metadata("lost", 8, S.Ongoing, partitions=frozenset({("orders", 0)})))
    log.write(metadata("lost", 8, S.CompleteAbort))
    return d


def test_list_prints_kafkas_table(cli, cluster):
    r = cli("transactions", "list", cluster)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "TransactionalId\tCoordinator\tProducerId\tTransactionState\t"
    assert sorted(lines[1:]) == ["lost           \t1          \t8         \tCompleteAbort   \t",
                                 "payments       \t1          \t7         \tCompleteCommit  \t"]
    rows = json.loads(cli("transactions", "list", cluster, "-o", "json").out)
    assert {r["transactionalId"]: (r["coordinator"], r["coordinatorEpoch"], r["producerEpoch"])
            for r in rows} == {"payments": (1, 3, 0), "lost": (1, 3, 0)}
    assert set(rows[0]) >= {"transactionalId", "coordinator", "producerId", "transactionState",
                            "producerEpoch", "transactionTimeoutMs", "topicPartitions",
                            "transactionStartTimeMs", "lastUpdateTimeMs"}


def test_list_text_pads_every_cell_then_a_tab(cli, cluster):
    lines = cli("transactions", "list", cluster, "--transactional-id-pattern", "pay.*").out
    assert lines.splitlines() == ["TransactionalId\tCoordinator\tProducerId\tTransactionState\t",
                                  "payments       \t1          \t7         \tCompleteCommit  \t"]


def test_describe_and_describe_producers(cli, cluster):
    r = cli("transactions", "describe", cluster, "--transactional-id", "payments")
    header, row = r.out.splitlines()
    assert header.split("\t")[:-1] == ["CoordinatorId", "TransactionalId", "ProducerId",
                                       "ProducerEpoch", "TransactionState",
                                       "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
                                       "TransactionDurationMs", "TopicPartitions"]
    assert [c.strip() for c in row.split("\t")][:6] == ["1", "payments", "7", "0",
                                                        "CompleteCommit", "60000"]
    r = cli("transactions", "describe-producers", cluster, "--topic", "orders", "--partition", 0,
            "-o", "json")
    rows = {r["producerId"]: r for r in json.loads(r.out)}
    assert rows[7]["currentTransactionStartOffset"] is None
    assert rows[8]["currentTransactionStartOffset"] == 3
    text = cli("transactions", "describe-producers", cluster, "--topic", "orders",
               "--partition", 0).out
    assert "\tNone" in text and text.startswith("ProducerId\tProducerEpoch\t"
                                                "LatestCoordinatorEpoch\tLastSequence\t")


def test_find_hanging(cli, cluster):
    r = cli("transactions", "find-hanging", cluster, "--topic", "orders")
    assert r.code == 0, r.err
    header, row = r.out.splitlines()
    assert header == ("Topic \tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\t"
                      "StartOffset\tLastTimestamp\tDuration(min)\t")
    assert [c.strip() for c in row.split("\t")][:6] == ["orders", "0", "8", "0", "-1", "3"]
    (found,) = json.loads(cli("transactions", "find-hanging", cluster, "--broker-id", 1,
                              "-o", "json").out)
    assert (found["lastStableOffset"], found["batchOffset"], found["transactionalId"]) == \
        (3, 3, "lost")


@pytest.mark.parametrize("args, message", [
    (("describe-producers", "--topic", "nope", "--partition", "0"), "Unknown topic 'nope'"),
    (("describe-producers", "--topic", "orders", "--partition", "4"),
     "Unknown partition orders-4"),
    (("find-hanging",), "requires either --topic or --broker-id"),
    (("describe", "--transactional-id", "who"), "transactional-id `who`"),
    (("list", "--transactional-id-pattern", "("), "not a valid regular expression"),
])
def test_bad_input_is_one_line_and_exit_2(cli, cluster, args, message):
    r = cli("transactions", args[0], cluster, *args[1:])
    assert r.code == 2 and r.out == ""
    assert message in r.err and len(r.err.splitlines()) == 1


def _files(d):
    return {p: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_abort_plans_by_default_and_executes_with_execute(cli, cluster):
    before = _files(cluster)
    r = cli("transactions", "abort", cluster, "--topic", "orders", "--partition", 0,
            "--start-offset", 3, "-o", "json")
    assert r.code == 0, r.err
    (row,) = json.loads(r.out)
    assert (row["producerId"], row["markerOffset"], row["lastStableOffset"],
            row["newLastStableOffset"], row["executed"]) == (8, 5, 3, None, False)
    assert "dry run: nothing written" in r.err and _files(cluster) == before
    r = cli("transactions", "abort", cluster, "--all-hanging", "--execute")
    assert r.code == 0, r.err
    header, line = r.out.splitlines()
    assert header.split("\t")[-2:] == ["NewLastStableOffset", ""]
    assert [c.strip() for c in line.split("\t")][6:9] == ["5", "3", "6"]
    assert "appended 1 ABORT marker(s) to orders-0 at offsets 5-5" in r.err
    assert cli("transactions", "find-hanging", cluster, "--topic", "orders",
               "--max-transaction-timeout", 0).out.count("\n") == 1


@pytest.mark.parametrize("args, code, message", [
    (("--topic", "orders", "--partition", "0", "--start-offset", "4"), 2,
     "Could not find any open transactions starting at offset 4 on partition orders-0"),
    (("--topic", "orders", "--partition", "0", "--producer-id", "8", "--producer-epoch", "-1",
      "--coordinator-epoch", "0"), 5, "epoch has moved on"),
    (("--topic", "orders", "--partition", "0", "--producer-id", "8"), 2,
     "Missing required argument --producer-epoch"),
    (("--topic", "orders", "--partition", "0"), 2, "must be identified either with"),
    (("--topic", "orders", "--partition", "9", "--start-offset", "3"), 2,
     "Unknown partition orders-9"),
    (("--topic", "orders"), 2, "needs --topic and --partition"),
])
def test_abort_refusals_write_nothing(cli, cluster, args, code, message):
    before = _files(cluster)
    r = cli("transactions", "abort", cluster, *args, "--execute")
    assert (r.code, r.out) == (code, "") and message in r.err and len(r.err.splitlines()) == 1
    assert _files(cluster) == before
