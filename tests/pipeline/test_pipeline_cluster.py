"""``scan`` and ``stats`` on a real standalone cluster (a master and two workers, separate
JVMs on loopback), run as "A Spark cluster" (docs/cluster-scale.md) says: the CLI and the executors'
Python come from the built wheel, the tasks run on both workers (Spark's event log names each
task's executor, and each executor's worker), and the output is the local engine's, byte for
byte. Also: an unreachable master or Connect server fails fast with one line and exit 3."""

from __future__ import annotations

import time

import pytest

from cluster_recipe import Run, argv, observable_options, documented_commands
from spark_cluster import conf_options, tasks_per_worker

# a corpus dir per documented command: consumer groups with lag; three brokers' replicas
DIRS = {"stats": "xpx-2016", "scan": "kraft3-cluster"}


def workers_of(cluster) -> set[str]:
    return {w["webuiaddress"].split("//")[1] for w in cluster.state()["workers"]}


@pytest.fixture(scope="module")
def cluster_runs(spark_cluster, corpus, tmp_path_factory) -> dict:
    """The documented commands, started together on the cluster."""
    runs = {}
    for line in documented_commands("master"):
        command = line.split()[1]
        env, args = argv(line, spark_cluster, [corpus / DIRS[command]])
        events = tmp_path_factory.mktemp(f"events-{command}")
        runs[command] = (Run([*args, *observable_options(events)], env), events)
    assert set(runs) == set(DIRS)
    return runs


@pytest.mark.parametrize("command", sorted(DIRS))
def test_readme_command_on_the_cluster_runs_on_both_workers_as_the_local_engine(
        spark_cluster, cluster_runs, corpus, cli, command):
    run, events = cluster_runs[command]
    assert "--master" in run.args and str(spark_cluster.python.parent) in run.args[0]
    proc = run.result()
    assert proc.returncode == 0, proc.stderr[:2500]
    local = cli(command, corpus / DIRS[command], "-o", "json")
    assert local.code == 0 and proc.stdout == local.out
    assert proc.stderr.splitlines()[-1].endswith("(spark engine)")
    tasks = tasks_per_worker(events)
    assert set(tasks) == workers_of(spark_cluster), tasks


@pytest.mark.parametrize("option, url, what", [
    ("--master", "spark://127.0.0.1:1", "Spark master"),
    ("--remote", "sc://127.0.0.1:1", "Spark Connect server")])
def test_an_unreachable_cluster_fails_at_once_with_one_line_and_exit_3(
        cli, corpus, option, url, what):
    started = time.monotonic()
    result = cli("scan", corpus / "node-logx", "--engine", "spark", option, url, "--count")
    assert result.code == 3 and result.out == ""
    assert result.err == f"pylogctl: Cannot reach the {what} {url} (127.0.0.1:1: Connection " \
                         f"refused)\n"
    assert time.monotonic() - started < 30  # not Spark's minute of retries


@pytest.mark.parametrize("args, message", [
    (("--master", "local[1]", "--remote", "sc://127.0.0.1:1"),
     "Give at most one of --master and --remote"),
    (("--remote", "http://127.0.0.1:1"),
     "Bad Spark Connect URL 'http://127.0.0.1:1': expected sc://HOST:PORT"),
    (("--master", "spark://"), "Bad Spark URL 'spark://': expected spark://HOST:PORT"),
    (("--conf", "spark.executor.memory"),
     "Bad --conf 'spark.executor.memory': expected KEY=VALUE")])
def test_bad_cluster_options_are_usage_errors(cli, corpus, args, message):
    result = cli("stats", corpus / "node-logx", "--engine", "spark", *args)
    assert (result.code, result.err) == (2, f"pylogctl: {message}\n")


@pytest.mark.parametrize("option", ["--master", "--remote", "--conf"])
def test_cluster_options_need_the_spark_engine(cli, corpus, option):
    result = cli("scan", corpus / "node-logx", option, "x=y")
    assert (result.code, result.err) == (2, f"pylogctl: {option} needs --engine spark\n")


def test_a_cluster_python_without_pylogctl_is_a_usage_error_saying_so():
    """What a task or planner of a cluster whose Python lacks pylogctl reports."""
    pytest.importorskip("pyspark")
    from pylogctl.errors import UsageError
    from pylogctl.pipeline.spark_engine import task_errors

    with pytest.raises(UsageError, match="The Spark cluster's Python cannot import pylogctl"):
        with task_errors():
            raise RuntimeError("[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source "
                               "instance: ... ModuleNotFoundError: No module named 'pylogctl'")


def test_the_clusters_executors_scan_a_bucket_as_the_local_engine_does(
        spark_cluster, s3_server, s3_corpus, corpus, cli, tmp_path):
    """A log dir in object storage on the standalone cluster: the driver plans from the
    bucket's listing, the executors on both workers fetch their splits' byte ranges from the
    server themselves (the standard AWS variables reach them as ``spark.executorEnv``), and
    the rows are the local engine's on the same URL."""
    name = "spooldir-cp512"  # one broker: the driver fetches no segment to choose a replica
    url = s3_corpus[name]
    executor_env = {f"spark.executorEnv.{k}": v for k, v in s3_server.env.items()}
    events = tmp_path / "events"
    events.mkdir()
    s3_server.proxy.reset()
    run = Run([str(spark_cluster.python.parent / "pylogctl"), "scan", url, "--engine", "spark",
               "--master", spark_cluster.url, "--conf",
               f"spark.pyspark.python={spark_cluster.python}", "-o", "json",
               *conf_options(executor_env), *observable_options(events)], s3_server.env)
    proc = run.result()
    assert proc.returncode == 0, proc.stderr[:2500]
    served = s3_server.proxy.bytes_served
    segments = sum(p.stat().st_size for p in (corpus / name).glob("*/*.log"))
    assert served >= segments  # every segment byte came from the server, through the tasks
    assert set(tasks_per_worker(events)) == workers_of(spark_cluster)
    local = cli("scan", url, "-o", "json")
    assert local.code == 0 and proc.stdout == local.out and local.out.count("\n") > 500
