"""``pylogctl metadata`` on the corpus's KRaft dirs: the sources it takes, the views' formats,
the interactive shell fed from stdin, ``check`` on a 3-broker cluster made to disagree with its
image, and one-line errors. The outputs themselves are judged by Kafka in
tests/cli/test_metadata_vs_kafka.py."""

from __future__ import annotations

import json
import shutil

import pytest

from support import run_pylogctl as pylogctl

SNAPSHOT = "airquality-kraft/__cluster_metadata-0/00000000000000055702-0000000003.checkpoint"


@pytest.fixture
def cluster(corpus, tmp_path):
    """A copy of the three brokers' log dirs of kraft3-cluster."""
    root = tmp_path / "cluster"
    shutil.copytree(corpus / "kraft3-cluster", root)
    return root


def test_every_kind_of_source_and_kafkas_snapshot_option(corpus):
    log_dir = corpus / "kraft3-cluster" / "kafka1"
    by_dir = pylogctl("metadata", log_dir, "ls", "/image/topics/byName")
    by_metadata_dir = pylogctl("metadata", log_dir / "__cluster_metadata-0", "ls",
                               "/image/topics/byName")
    assert by_dir.stdout == by_metadata_dir.stdout == "__consumer_offsets\ntest1\ntest5\n"
    for args in ([corpus / SNAPSHOT], ["--snapshot", corpus / SNAPSHOT],
                 [f"--snapshot={corpus / SNAPSHOT}"], ["-s", corpus / SNAPSHOT]):
        done = pylogctl("metadata", *args, "cat", "/image/provenance")
        assert (done.returncode, done.stdout) == (
            0, "offset 61, epoch 3, time 2025-09-23T18:16:33.67Z[UTC]\n"), args


def test_topics_describe_text_json_and_table(corpus):
    log_dir = corpus / "kraft3-cluster" / "kafka1"
    text = pylogctl("metadata", log_dir, "topics", "--describe", "--topic", "test1")
    assert text.stdout.splitlines()[:2] == [
        "Topic: test1\tTopicId: GnR8wmiIQKa1VoPcAvrx8w\tPartitionCount: 5\tReplicationFactor: 3"
        "\tConfigs: ",
        "\tTopic: test1\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: \t"
        "LastKnownElr: "]
    (topic,) = json.loads(pylogctl("metadata", log_dir, "topics", "--topic", "test1", "-o",
                                   "json").stdout)
    assert topic["partitions"][1] == {
        "partition": 1, "leader": 2, "leaderEpoch": 0, "partitionEpoch": 0,
        "replicas": [2, 3, 1], "isr": [2, 3, 1], "elr": [], "lastKnownElr": [],
        "addingReplicas": [], "removingReplicas": [], "leaderRecoveryState": "RECOVERED",
        "directories": ["AAAAAAAAAAAAAAAAAAAAAA"] * 3}
    offsets = json.loads(pylogctl("metadata", log_dir, "topics", "--topic", "__consumer.*",
                                  "-o", "json").stdout)[0]
    assert (offsets["partitionCount"], offsets["configs"]) == (50, {
        "compression.type": "producer", "cleanup.policy": "compact",
        "segment.bytes": "104857600"})
    listed = pylogctl("metadata", log_dir, "topics", "--topic", "'test5, test1'")  # IncludeList
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()
            if line.startswith("Topic")] == ["Topic: test5", "Topic: test1"]
    table = pylogctl("metadata", log_dir, "topics", "--exclude-internal", "-o", "table")
    assert len(table.stdout.splitlines()) == 1 + 10  # two topics of five partitions


def test_brokers_controllers_and_features(corpus):
    log_dir = corpus / "kraft3-cluster" / "kafka1"
    brokers = json.loads(pylogctl("metadata", log_dir, "brokers", "-o", "json").stdout)
    assert [(b["id"], b["epoch"], b["fenced"]) for b in brokers] == [(1, 1, False), (2, 6, False),
                                                                      (3, 3, False)]
    assert brokers[1]["endpoints"][0] == {"listener": "PLAINTEXT", "securityProtocol":
                                          "PLAINTEXT", "host": "kafka2", "port": 9192}
    assert json.loads(pylogctl("metadata", log_dir, "controllers", "-o", "json").stdout) == []
    features = pylogctl("metadata", log_dir, "features")
    assert features.stdout == (
        "Feature: metadata.version                          SupportedMinVersion: UNKNOWN 1      "
        "  SupportedMaxVersion: 3.3-IV3          FinalizedVersionLevel: 3.3-IV3          "
        "Epoch: 2981\n")


def test_the_shell_reads_commands_from_stdin(corpus):
    done = pylogctl("metadata", corpus / "kraft3-cluster" / "kafka1", "shell",
                    input="cd /image/cluster\npwd\nls\ncd brokers/1\ncd nowhere\nhistory 2\n"
                          "bogus\nexit\nls\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "/image/cluster", "brokers", "controllers", "cd: brokers/1: not a directory.",
        "cd: nowhere: no such directory.", "    4  cd nowhere", "    5  history 2",
        "invalid choice: 'bogus' (choose from 'cat', 'cd', 'exit', 'find', 'help', 'history', "
        "'ls', 'pwd', 'tree')"]


def test_the_shell_on_a_terminal_completes_paths(corpus):
    pexpect = pytest.importorskip("pexpect")
    import sys

    child = pexpect.spawn(sys.executable, ["-m", "pylogctl", "metadata",
                                           str(corpus / "kraft3-cluster" / "kafka1"), "shell"],
                          env={**__import__("os").environ, "TERM": "dumb", "COLUMNS": "40"},
                          encoding="utf-8", timeout=30, dimensions=(24, 40))
    child.expect_exact("[ Kafka Metadata Shell ]")
    child.expect_exact(">> ")
    child.send("cd /image/clu\t")  # readline completes the directory
    child.send("\r")
    child.expect_exact(">> ")
    child.sendline("pwd")
    child.expect_exact("pwd\r\n/image/cluster\r\n")  # "cluster/" completed, then resolved
    child.sendline("ls /image")  # in columns on a terminal, as Kafka's shell lays them out
    child.expect_exact("acls          delegationToken  scram\r\n"
                       "clientQuotas  features         topics")
    child.sendline("exit")
    child.expect(pexpect.EOF)


def test_check_finds_nothing_on_a_consistent_cluster(corpus):
    done = pylogctl("metadata", corpus / "kraft3-cluster" / "kafka1", "check",
                    corpus / "kraft3-cluster")
    assert (done.returncode, done.stdout) == (0, "no problem found\n")


def test_check_finds_strays_mismatches_missing_replicas_and_other_clusters(cluster):
    k1, k2, k3 = (cluster / f"kafka{i}" for i in (1, 2, 3))
    (k1 / "ghost-0").mkdir()
    shutil.copytree(k2 / "__consumer_offsets-0", k1 / "__consumer_offsets-0")  # broker 2's
    (k1 / "test1-0" / "partition.metadata").write_text(
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    shutil.rmtree(k2 / "test1-1")
    (k3 / "meta.properties").write_text("node.id=3\nversion=1\ncluster.id=other\n")
    done = pylogctl("metadata", k1, "check", cluster, "-o", "json")
    assert done.returncode == 1
    found = [(r["logDir"].rsplit("/", 1)[1], r["problem"], r["topic"], r["partition"])
             for r in json.loads(done.stdout)]
    assert found == [
        ("kafka1", "stray", "__consumer_offsets", 0),
        ("kafka1", "stray", "ghost", 0),
        ("kafka1", "topic-id-mismatch", "test1", 0),
        ("kafka3", "cluster-id-mismatch", None, None),
        ("kafka2", "missing", "test1", 1),
    ]
    text = pylogctl("metadata", k1, "check", cluster).stdout.splitlines()
    assert text[1].endswith("ghost-0: the image knows no topic ghost")
    assert text[-1] == "5 problems found"


def test_bad_sources_are_one_line_errors(corpus, tmp_path):
    zk = pylogctl("metadata", corpus / "xpx-2016", "ls")
    assert zk.returncode == 2 and zk.stdout == ""
    assert zk.stderr.endswith("no __cluster_metadata-0 in this dir: not the log dir of a KRaft "
                              "broker or controller that keeps the metadata log\n")
    missing = pylogctl("metadata", tmp_path / "nope", "ls")
    assert missing.returncode == 3 and len(missing.stderr.splitlines()) == 1
    topic = pylogctl("metadata", corpus / "kraft3-cluster" / "kafka1", "topics", "--topic", "x")
    assert (topic.returncode, topic.stderr) == (
        2, "pylogctl: Topic 'x' does not exist as expected\n")


def test_a_torn_metadata_log_shows_what_was_read_and_where_it_stopped(corpus, tmp_path):
    log_dir = tmp_path / "kafka1"
    shutil.copytree(corpus / "kraft3-cluster" / "kafka1", log_dir)
    log = log_dir / "__cluster_metadata-0" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    first_batch_end = 12 + int.from_bytes(data[8:12], "big")
    data[first_batch_end - 1] ^= 0xFF  # the last byte of the first batch's records
    log.write_bytes(bytes(data))
    done = pylogctl("metadata", log_dir, "ls", "/image/topics/byName")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line == (f"pylogctl: replay stopped: {log}, offset 0, byte position 0: the batch's "
                    f"CRC does not match its bytes")
    assert done.stdout == ""  # nothing read before it
    data[first_batch_end - 1] ^= 0xFF
    data[first_batch_end + 7] ^= 0x01  # the second batch's base offset 1 is 0 (no CRC on it)
    log.write_bytes(bytes(data))
    header = pylogctl("metadata", log_dir, "ls", "/image/topics/byName")
    assert header.returncode == 1
    assert f"offset 0, byte position {first_batch_end}: the batch's base offset 0 does not " \
           f"follow offset 0" in header.stderr
