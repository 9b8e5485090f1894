"""``consumer-groups --reset-offsets / --delete / --delete-offsets``: Kafka's output and
option rules, dry runs that write nothing, ``--execute`` read back by ``--describe``, the
refusals (a group not empty: exit 5; a running broker's lock: exit 4).

bigdata-docker-2020 (broker 1001): group ``nifi`` is Empty with aula-0 committed at 4 (the
high watermark, also 4) in ``__consumer_offsets-32``; ``KMOffsetCache-kafkamanager`` is
Stable. xpx-2016: ``GroupA`` is Stable, subscribed to ``foo``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rebuild_index_support import lock_held, tree_state

pytestmark = pytest.mark.corpus

HEADER = "\nGROUP           TOPIC           PARTITION  NEW-OFFSET"


def _copy(corpus: Path, name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(corpus / name, target, ignore=shutil.ignore_patterns(".lock"))
    return target


@pytest.fixture
def bigdata(corpus, tmp_path) -> Path:
    return _copy(corpus, "bigdata-docker-2020", tmp_path)


def _files(log_dir: Path) -> dict:
    return {k: v for k, v in tree_state(log_dir).items() if k != ".lock"}


def _committed(cli, log_dir: Path, group: str) -> dict[tuple[str, int], int | None]:
    r = cli("consumer-groups", log_dir, "--describe", "--group", group, "-o", "json")
    return {(row["topic"], row["partition"]): row["currentOffset"] for row in json.loads(r.out)}


# -- --reset-offsets -----------------------------------------------------------------------------
def test_a_dry_run_prints_kafkas_table_and_writes_nothing(cli, bigdata):
    before = _files(bigdata)
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--all-topics",
            "--to-earliest")
    assert r.code == 0
    assert r.out == f"{HEADER}\nnifi            aula            0          0\n"
    assert "dry run" in r.err and "appends 1 record(s) to __consumer_offsets-32" in r.err
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--topic", "aula",
            "--to-offset", "2", "--dry-run")
    assert r.code == 0 and r.out.endswith("nifi            aula            0          2\n")
    assert _files(bigdata) == before


def test_execute_appends_a_commit_that_describe_then_shows(cli, bigdata):
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--topic",
            "aula:0", "--shift-by", "-3", "--execute")
    assert r.code == 0, r.err
    assert r.out == f"{HEADER}\nnifi            aula            0          1\n"
    assert "appended 1 record(s) in 1 batch(es) to __consumer_offsets-32 at offsets 4-4" in r.err
    assert _committed(cli, bigdata, "nifi") == {("aula", 0): 1}
    assert cli("recover", bigdata / "__consumer_offsets-32", "--check").code == 0
    assert cli("rebuild-index", bigdata / "__consumer_offsets-32", "--verify").code == 0
    # a second reset stacks on the first, as a coordinator's replay sees it
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--all-topics",
            "--to-latest", "--execute")
    assert r.code == 0 and _committed(cli, bigdata, "nifi") == {("aula", 0): 4}


def test_a_group_that_is_not_empty_is_refused_with_exit_5(cli, bigdata):
    before = _files(bigdata)
    group = "KMOffsetCache-kafkamanager"
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", group, "--all-topics",
            "--to-earliest", "--execute")
    assert r.code == 5
    assert r.out == (f"\nError: Assignments can only be reset if the group '{group}' is "
                     f"inactive, but the current state is Stable.\n"
                     f"\n{'GROUP':<{len(group)}} {'TOPIC':<15} PARTITION  NEW-OFFSET\n")
    assert _files(bigdata) == before


def test_a_running_brokers_lock_stops_execute_with_exit_4(cli, bigdata):
    before = _files(bigdata)
    with lock_held(bigdata):
        r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi",
                "--all-topics", "--to-earliest", "--execute")
    assert r.code == 4 and r.err.strip().splitlines()[-1].startswith("pylogctl: ")
    assert _files(bigdata) == before


def test_export_writes_csv_that_from_file_applies(cli, bigdata, tmp_path):
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--all-topics",
            "--to-offset", "2", "--export")
    assert r.code == 0 and r.out == "aula,0,2\n\n"
    plan = tmp_path / "plan.csv"
    plan.write_text(r.out)
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--from-file",
            plan, "--execute")
    assert r.code == 0, r.err
    assert _committed(cli, bigdata, "nifi") == {("aula", 0): 2}
    two = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--group",
              "other", "--topic", "aula", "--to-earliest", "--export")
    assert sorted(two.out.split()) == ["nifi,aula,0,0", "other,aula,0,0"]


def test_json_rows_for_scripts(cli, bigdata):
    r = cli("consumer-groups", bigdata, "--reset-offsets", "--group", "nifi", "--all-topics",
            "--to-datetime", "2000-01-01T00:00:00.000", "-o", "json")
    assert r.code == 0
    assert json.loads(r.out) == [{"group": "nifi", "topic": "aula", "partition": 0,
                                  "newOffset": 0}]


@pytest.mark.parametrize("args, message", [
    (["--to-earliest", "--all-topics", "--execute", "--dry-run", "--group", "g"],
     "only accepts one of [execute] and [dry-run]"),
    (["--all-topics", "--group", "g"], "requires one of the following scenarios"),
    (["--to-earliest", "--to-latest", "--all-topics", "--group", "g"],
     "can't be used with option"),
    (["--to-earliest", "--group", "g"], "One of the reset scopes should be defined"),
    (["--to-earliest", "--all-topics"], "takes one of these options: [all-groups], [group]"),
    (["--to-earliest", "--topic", "aula:x", "--group", "g"], "Invalid partition 'x'"),
    (["--to-datetime", "yesterday", "--all-topics", "--group", "g"], "does not contain a 'T'"),
    (["--by-duration", "1h", "--all-topics", "--group", "g"], "cannot be parsed to a Duration"),
])
def test_reset_option_errors_are_kafkas_with_exit_2(cli, bigdata, args, message):
    r = cli("consumer-groups", bigdata, "--reset-offsets", *args)
    assert r.code == 2 and message in r.err and r.out == ""


# -- --delete --------------------------------------------------------------------------------------
def test_delete_tombstones_an_empty_group(cli, bigdata):
    before = _files(bigdata)
    r = cli("consumer-groups", bigdata, "--delete", "--group", "nifi")
    assert r.code == 0 and r.out == "Deletion of requested consumer groups ('nifi') was " \
                                    "successful.\n"
    assert "dry run" in r.err and _files(bigdata) == before
    r = cli("consumer-groups", bigdata, "--delete", "--group", "nifi", "--execute")
    assert r.code == 0
    listed = cli("consumer-groups", bigdata, "--list").out.split()
    assert "nifi" not in listed and "KMOffsetCache-kafkamanager" in listed


def test_delete_reports_each_failure_as_kafka_does(cli, bigdata):
    r = cli("consumer-groups", bigdata, "--delete", "--group", "ghost", "--group",
            "KMOffsetCache-kafkamanager", "--group", "nifi", "--execute")
    assert r.code == 5
    lines = r.out.splitlines()
    assert lines[:2] == ["", "Error: Deletion of some consumer groups failed:"]
    assert sorted(lines[2:4]) == [
        "* Group 'KMOffsetCache-kafkamanager' could not be deleted due to: "
        "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.",
        "* Group 'ghost' could not be deleted due to: "
        "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist."]
    assert lines[4:] == ["", "These consumer groups were deleted successfully: 'nifi'"]
    assert "nifi" not in cli("consumer-groups", bigdata, "--list").out.split()


def test_delete_does_not_take_topics(cli, bigdata):
    r = cli("consumer-groups", bigdata, "--delete", "--group", "nifi", "--topic", "aula")
    assert r.code == 2 and "does not support topic-specific offset deletion" in r.err


# -- --delete-offsets -------------------------------------------------------------------------------
def test_delete_offsets_prints_the_status_table(cli, bigdata):
    r = cli("consumer-groups", bigdata, "--delete-offsets", "--group", "nifi", "--topic",
            "aula", "--execute")
    assert r.code == 0, r.err
    assert r.out == ("Request succeeded for deleting offsets from group nifi.\n"
                     "\nTOPIC           PARTITION       STATUS         "
                     "\naula            0               Successful     \n")
    assert _committed(cli, bigdata, "nifi") == {}


def test_delete_offsets_of_a_subscribed_topic_is_refused(cli, corpus, tmp_path):
    xpx = _copy(corpus, "xpx-2016", tmp_path)
    before = _files(xpx)
    r = cli("consumer-groups", xpx, "--delete-offsets", "--group", "GroupA", "--topic", "foo",
            "--execute")
    assert r.code == 5
    assert r.out.startswith("\nError: Encountered some partition-level error, see the "
                            "follow-up details.\n")
    assert ("foo             0               Error: org.apache.kafka.common.errors."
            "GroupSubscribedToTopicException: The consumer group is actively subscribed to the "
            "topic\n") in r.out
    assert _files(xpx) == before


def test_delete_offsets_of_an_unknown_group(cli, bigdata):
    r = cli("consumer-groups", bigdata, "--delete-offsets", "--group", "ghost", "--topic",
            "aula:0")
    assert r.code == 5
    assert r.out.startswith("\nError: The group id does not exist.\n")
