"""Fixtures of the pipeline tests: one real local Spark session for all of them, and one real
standalone cluster (a master and two workers, separate JVMs) for those that need it.

The session is ``local[2]`` with the settings pylogctl gives a local session (workers on this
interpreter, no UI, few shuffle partitions). Starting it costs several seconds, so every test
shares it; tests that need no Spark do not ask for it and run without PySpark installed. The
cluster (tests/spark_cluster.py) is started once per session, on first use, with the executors'
Python holding the built wheel, and stopped at the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline_support import spark_missing_reason


@pytest.fixture(scope="session")
def spark():
    reason = spark_missing_reason()
    if reason:
        pytest.skip(reason)
    from pylogctl.pipeline.spark_session import get_session

    session, started = get_session("local[2]")
    yield session
    if started:
        session.stop()


@pytest.fixture(scope="session")
def pylogctl_wheel(tmp_path_factory) -> Path:
    """The wheel ``pip wheel`` builds from this checkout."""
    from spark_cluster import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory, pylogctl_wheel):
    """A running standalone cluster; ``.python`` is the executors' interpreter (the wheel
    installed in a virtualenv), whose ``bin/pylogctl`` is the CLI as an operator installs it."""
    from spark_cluster import SparkCluster, executor_python, require_cluster

    require_cluster()
    root = tmp_path_factory.mktemp("spark-cluster")
    python = executor_python(root / "pylogctl-env", pylogctl_wheel)
    cluster = SparkCluster(root / "cluster").start()
    cluster.python = python
    yield cluster
    cluster.stop()
