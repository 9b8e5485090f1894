"""``scan --remote`` and ``stats`` with ``SPARK_REMOTE`` through a real Spark Connect server
on the standalone cluster, started and used as the README's "A Spark cluster" says: the
``kafka-log`` data source is registered over the connection, the server's Python workers
import it from the built wheel, the tasks run on both workers, and the output is the local
engine's, byte for byte. The server holds an executor on each worker while it runs, so it
runs for this module only."""

from __future__ import annotations

import pytest

from cluster_recipe import Run, argv, readme_commands
from spark_cluster import conf_options, event_log_conf, require_cluster, tasks_per_worker

DIRS = {"scan": "kraft3-cluster", "stats": "xpx-2016"}


@pytest.fixture(scope="module")
def connect_runs(spark_cluster, corpus, tmp_path_factory):
    require_cluster(connect=True)
    start, *commands = readme_commands("connect")
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
        for run in runs.values():
            run.result()
    finally:
        spark_cluster.stop_connect()
    assert set(runs) == set(DIRS)
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
