"""The cluster recipe of the docs, run for real: the built wheel shipped as ``--py-files``,
the documented two-line driver, ``spark-submit --master spark://...`` on the tests'
standalone cluster. Driver and executors run a Python that has pyspark and pyarrow but no
pylogctl at all, so every import of pylogctl comes from the shipped zip."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cluster_recipe import Run, observable_options
from spark_cluster import executor_python, spark_home, tasks_per_worker
from support import REPO

DOC_NAMES = ("docs/commands/scan.md",)


def documented_job() -> str:
    """The ``pylogctl_job.py`` code block of the docs."""
    for name in DOC_NAMES:
        path = REPO / name
        if path.exists():
            m = re.search(r"```python\n(# pylogctl_job\.py.*?)```", path.read_text(), re.S)
            if m:
                return m.group(1)
    raise AssertionError(f"no pylogctl_job.py block in {' or '.join(DOC_NAMES)}")


@pytest.fixture(scope="module")
def wheel_zip(pylogctl_wheel, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("zip") / "pylogctl.zip"  # Spark puts .zip files on the
    shutil.copy(pylogctl_wheel, target)                       # workers' path, not .whl
    return target


def test_spark_submit_runs_the_documented_job_on_the_wheel_on_both_workers(
        spark_cluster, corpus, cli, tmp_path, wheel_zip):
    python = executor_python(tmp_path / "libs-only")  # pyspark and pyarrow, no pylogctl
    job = tmp_path / "pylogctl_job.py"
    # the documented driver, plus a line on stderr saying where pylogctl was imported from
    job.write_text("import sys, pylogctl\nprint('pylogctl from', pylogctl.__file__, "
                   "file=sys.stderr)\n" + documented_job())
    events = tmp_path / "events"
    cmd = [str(spark_home() / "bin" / "spark-submit"), "--master", spark_cluster.url,
           "--conf", f"spark.pyspark.python={python}",
           "--conf", f"spark.pyspark.driver.python={python}",
           "--conf", "spark.ui.enabled=false", *observable_options(events),
           "--py-files", str(wheel_zip), str(job)]
    path = corpus / "xpx-2016"
    proc = Run([*cmd, "scan", str(path), "--engine", "spark", "--count"]).result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    # spark-submit hands the Python driver's stderr to its own stdout
    lines = proc.stdout.splitlines()
    local = cli("scan", path, "--count")
    assert local.code == 0 and local.lines[0] in lines
    assert f"pylogctl from {wheel_zip}/pylogctl/__init__.py" in lines  # not the source tree
    assert any("read 4 of 4 non-empty segments" in line and "spark engine" in line
               for line in lines)
    tasks = tasks_per_worker(events)
    assert len(tasks) == 2 and all(tasks.values()), tasks
