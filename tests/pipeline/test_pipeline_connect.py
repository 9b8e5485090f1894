"""``scan --remote`` and ``stats`` with ``SPARK_REMOTE`` through a real Spark Connect server
on the standalone cluster, started and used as "A Spark cluster" (docs/cluster-scale.md) says: the
``kafka-log`` data source is registered over the connection, the server's Python workers
import it from the built wheel, the tasks run on both workers, and the output is the local
engine's, byte for byte; a corrupt batch read through Connect fails with one line naming its
file and byte position, and exit 1. The server holds an executor on each worker while it
runs, so it runs for this module only."""

from __future__ import annotations

import struct

import pytest

from cluster_recipe import Run, argv, documented_commands
from pipeline_support import copy_dir
from spark_cluster import conf_options, event_log_conf, require_cluster, tasks_per_worker

DIRS = {"scan": "kraft3-cluster", "stats": "xpx-2016"}


def corrupt_copy(corpus, root):
    """A partition dir whose second batch has a flipped byte (its CRC no longer matches)."""
    part = copy_dir(corpus / "node-logx" / "topic-logx-001-0", root / "topic-logx-001-0")
    segment = part / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    second = 12 + struct.unpack_from(">i", data, 8)[0]
    data[second + 70] ^= 0xFF
    segment.write_bytes(bytes(data))
    return part, segment, second


@pytest.fixture(scope="module")
def connect_runs(spark_cluster, corpus, tmp_path_factory):
    require_cluster(connect=True)
    start, *commands = documented_commands("connect")
    env, args = argv(start, spark_cluster, [])
    assert args[0].endswith("/sbin/start-connect-server.sh")
    events = tmp_path_factory.mktemp("events-connect")
    url = spark_cluster.start_connect([*args[1:], *conf_options(event_log_conf(events))], env)
    try:
        runs = {}
        for line in commands:
            command = "scan" if " scan " in line else "stats"
            env, args = argv(line, spark_cluster, [corpus / DIRS[command]], url)
            runs[command] = Run(args, env)
        part, segment, second = corrupt_copy(corpus, tmp_path_factory.mktemp("corrupt"))
        runs["corrupt"] = Run([args[0], "scan", str(part), "--engine", "spark", "--remote",
                               url, "--count"])
        runs["corrupt"].expected = f"{segment}, byte position {second}"
        for run in runs.values():
            run.result()
    finally:
        spark_cluster.stop_connect()
    assert set(runs) == {*DIRS, "corrupt"}
    return runs, events


@pytest.mark.parametrize("command, how", [("scan", "--remote"), ("stats", "SPARK_REMOTE")])
def test_readme_command_through_spark_connect_gives_the_local_engines_output(
        spark_cluster, connect_runs, corpus, cli, command, how):
    runs, events = connect_runs
    proc = runs[command].result()
    assert proc.returncode == 0, proc.stderr[:2500]
    assert (how in proc.args) if how.startswith("--") else "--remote" not in proc.args
    local = cli(command, corpus / DIRS[command], "-o", "json")
    assert local.code == 0 and proc.stdout == local.out
    assert proc.stderr.splitlines()[-1].endswith("(spark engine)")


def test_the_connect_servers_tasks_ran_on_both_workers(spark_cluster, connect_runs):
    _, events = connect_runs
    tasks = tasks_per_worker(events)
    assert len(tasks) == 2 and all(tasks.values()), tasks


def test_a_corrupt_batch_read_through_connect_is_one_line_with_its_file_and_position(
        connect_runs):
    run = connect_runs[0]["corrupt"]
    proc = run.result()
    assert (proc.returncode, proc.stdout) == (1, "")
    (line,) = proc.stderr.splitlines()
    assert line.startswith("pylogctl: ") and "Record is corrupt" in line
    assert run.expected in line
