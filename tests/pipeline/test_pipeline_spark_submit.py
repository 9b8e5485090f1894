"""The cluster recipe of the docs, run for real: the built wheel shipped as ``--py-files``,
the documented two-line driver, ``spark-submit --master local[2]``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline_support import spark_missing_reason
from support import REPO

DOC_NAMES = ("README.md",)


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
def wheel_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(REPO)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    wheel = next(out.glob("pylogctl-*.whl"))
    target = out / "pylogctl.zip"  # Spark puts .zip files on the workers' path, not .whl
    shutil.copy(wheel, target)
    return target


def test_spark_submit_runs_the_documented_job_on_the_wheel(corpus, tmp_path, wheel_zip):
    reason = spark_missing_reason()
    if reason:
        pytest.skip(reason)
    submit = shutil.which("spark-submit", path=str(Path(sys.executable).parent)) or \
        shutil.which("spark-submit")
    if submit is None:
        pytest.skip("spark-submit is not on PATH (pyspark installs it)")
    job = tmp_path / "pylogctl_job.py"
    # the documented driver, plus a line on stderr saying where pylogctl was imported from
    job.write_text("import sys, pylogctl\nprint('pylogctl from', pylogctl.__file__, "
                   "file=sys.stderr)\n" + documented_job())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PYTHONPATH"] = ""
    cmd = [submit, "--master", "local[2]", "--conf", f"spark.pyspark.python={sys.executable}",
           "--conf", f"spark.pyspark.driver.python={sys.executable}",
           "--conf", "spark.ui.enabled=false", "--py-files", str(wheel_zip), str(job)]
    path = corpus / "xpx-2016"
    proc = subprocess.run([*cmd, "scan", str(path), "--engine", "spark", "--count",
                           "--topic", "TEST-TOPIC", "--from-offset", "100"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # spark-submit hands the Python driver's stderr to its own stdout
    lines = proc.stdout.splitlines()
    assert "21111" in lines
    assert f"pylogctl from {wheel_zip}/pylogctl/__init__.py" in lines  # not the source tree
    assert any("read 1 of 4 non-empty segments" in line and "spark engine" in line
               for line in lines)
