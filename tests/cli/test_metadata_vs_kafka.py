"""``pylogctl metadata`` judged by Kafka: kafka-metadata-shell's ``ls``, ``cat``, ``tree`` and
``find`` on the same files, line for line (every top-level path of ``/image``), on the corpus's
KRaft dirs and on metadata a real Kafka 4.4 broker wrote for the purpose
(tests/metadata_scenario.py: ACLs, quotas, SCRAM, every config resource type, a deleted topic,
a partition increase); and the live ``kafka-topics --describe`` and ``kafka-features describe``
of that broker against the views from its stopped files.

kafka-metadata-shell reads one file (``--snapshot``: a snapshot, or a log segment from offset
0); a node reads the latest snapshot then the log after it. Where a dir's log starts at 0, both
must end in the same image, provenance included: the directory's image is compared with the
shell's on the whole segment.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from metadata_scenario import metadata_scenario, metadata_shell
from pylogctl.storage.metadata_loader import load_metadata_dir, load_metadata_file
from pylogctl.tools.metadata_nodes import root_node
from pylogctl.tools.metadata_shell import Shell
from support import run_pylogctl as pylogctl

TOP = ("acls", "clientQuotas", "cluster", "configs", "delegationToken", "features",
       "producerIds", "provenance", "scram", "topics")
# every top-level path, each command; /local is each program's own version
COMMANDS = ([["ls", "/"], ["ls", "/image"], ["find", "/image"], ["cat", "/image/*/*"],
             ["ls", "/image/*", "/image/*/*"], ["cat", "/image/*"],
             ["find", "/image/t*/by{Id,Name}", "missing"], ["tree", "/image/topics/byName/*/0"]]
            + [["tree", f"/image/{top}"] for top in TOP]
            + [["ls", f"/image/{top}"] for top in TOP])
CORPUS_FILES = [
    "airquality-kraft/__cluster_metadata-0/00000000000000055702-0000000003.checkpoint",
    "airquality-kraft/__cluster_metadata-0/00000000000000000000.log",
    "ksql-kraft-2023/__cluster_metadata-0/00000000000000014707-0000000001.checkpoint",
    "ksql-kraft-2023/__cluster_metadata-0/00000000000000000000.log",
    "stocksys-kraft/__cluster_metadata-0/00000000000000039002-0000000004.checkpoint",
    "kraft3-cluster/kafka1/__cluster_metadata-0/00000000000000000000.log",
    "kraft3-cluster/kafka2/__cluster_metadata-0/00000000000000000000.log",
]


def ours(shell: Shell, command: list[str]) -> list[str]:
    return getattr(shell, command[0])(command[1:])


def compare(copy: Path, shell: Shell, commands=COMMANDS) -> None:
    theirs = metadata_shell(copy, commands)
    for command, expected in zip(commands, theirs):
        assert ours(shell, command) == expected, command


def private_copy(src: Path, tmp_path: Path) -> Path:
    """The file alone under a dir of its own: the shell locks the log dir it finds above."""
    dest = tmp_path / "logs" / "__cluster_metadata-0" / src.name
    dest.parent.mkdir(parents=True)
    shutil.copyfile(src, dest)
    return dest


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_shell_commands_match_kafka_metadata_shell_on_the_corpus(corpus, tmp_path, name):
    copy = private_copy(corpus / name, tmp_path)
    compare(copy, Shell(root_node(load_metadata_file(copy).image)))


@pytest.fixture(scope="module")
def scenario():
    return metadata_scenario()


def test_shell_commands_match_on_every_file_kafka_wrote(scenario, tmp_path):
    meta = scenario.partition("__cluster_metadata-0")
    files = [meta / "00000000000000000000.log", max(meta.glob("*-*.checkpoint")),
             meta / "00000000000000000000-0000000000.checkpoint"]  # the bootstrap snapshot
    for i, path in enumerate(files):
        copy = private_copy(path, tmp_path / str(i))
        shell = Shell(root_node(load_metadata_file(copy).image))
        assert shell.ls(["/image/acls/byId"]) or i == 2  # the scenario wrote what it meant to
        compare(copy, shell)


@pytest.mark.parametrize("name", ["airquality-kraft", "ksql-kraft-2023"])
def test_a_nodes_image_is_the_whole_logs_image(corpus, tmp_path, name):
    """Snapshot then tail (a node's way) against the shell on the segment from offset 0."""
    metadata = corpus / name / "__cluster_metadata-0"
    replay = load_metadata_dir(metadata)
    assert replay.snapshot is not None and replay.records < 5000  # not the 16k-57k records
    copy = private_copy(metadata / "00000000000000000000.log", tmp_path)
    compare(copy, Shell(root_node(replay.image)), [["tree", "/image"]])


def test_the_cli_prints_what_the_shell_prints(scenario, tmp_path):
    meta = scenario.partition("__cluster_metadata-0")
    copy = private_copy(max(meta.glob("*-*.checkpoint")), tmp_path)
    theirs = metadata_shell(copy, [["tree", "/image/configs"], ["ls", "/image/scram/*"]])
    tree = pylogctl("metadata", "--snapshot", str(copy), "tree", "/image/configs")
    assert (tree.returncode, tree.stdout.splitlines()) == (0, theirs[0])
    ls = pylogctl("metadata", str(scenario.log_dir), "ls", "/image/scram/*")
    assert ls.stdout.splitlines() == theirs[1]


def test_topics_describe_matches_live_kafka_topics(scenario):
    config = str(scenario.root / "broker" / "server.properties")
    every = pylogctl("metadata", str(scenario.log_dir), "topics", "--describe",
                     "--config-file", config)
    assert (every.returncode, every.stdout) == (0, scenario.live["describe"])
    one = pylogctl("metadata", str(scenario.log_dir), "topics", "--topic", "orders",
                   "--config-file", config)
    assert one.stdout == scenario.live["describe-orders"]


def test_features_match_live_kafka_features_but_the_epoch(scenario):
    """The epoch is the image's offset when asked: the broker kept writing after."""
    done = pylogctl("metadata", str(scenario.log_dir), "features")
    assert done.returncode == 0

    def cut(text: str) -> list[str]:
        return [line.rsplit("Epoch:", 1)[0] for line in text.splitlines()]
    assert cut(done.stdout) == cut(scenario.live["features"])


def test_check_reports_the_cluster_id_mismatch_kafka_storage_info_reports(corpus, tmp_path):
    from kafka_jvm import run_tool

    for name in ("a", "b"):
        shutil.copytree(corpus / "kraft3-cluster" / "kafka1", tmp_path / name)
    (tmp_path / "b" / "meta.properties").write_text("node.id=1\nversion=1\ncluster.id=other\n")
    config = tmp_path / "server.properties"
    config.write_text(f"process.roles=broker\nnode.id=1\nlog.dirs={tmp_path / 'a'},"
                      f"{tmp_path / 'b'}\ncontroller.quorum.voters=9@localhost:9093\n"
                      f"controller.listener.names=CONTROLLER\nlisteners=PLAINTEXT://:9092\n")
    kafka = run_tool("kafka-storage", "info", "-c", str(config))
    assert kafka.returncode == 1
    assert "Found problem:\n  Mismatched cluster IDs between storage directories." in kafka.stdout
    ours = pylogctl("metadata", tmp_path / "a", "check", tmp_path / "a", tmp_path / "b")
    assert ours.returncode == 1
    assert ours.stdout.splitlines() == [
        f"{tmp_path / 'b'}: cluster-id-mismatch: Mismatched cluster IDs between storage "
        f"directories: other here, EP6hyiddQNW5FPrAvR9kWw where the metadata log is",
        "1 problem found"]
