"""A real Spark cluster on loopback, from the pyspark installation: a standalone master and
workers as separate JVMs (``bin/spark-class``), a Spark Connect server
(``sbin/start-connect-server.sh``) on that cluster, and the executors'
Python: a virtualenv holding the BUILT pylogctl wheel, as an operator installs it on every
node (``spark.pyspark.python``), never the source tree.

The cluster's processes get an environment without this checkout: no ``PYTHONPATH``, no
virtualenv on ``PATH`` (an executor that fell back to Spark's default ``python3`` would find
neither pyarrow nor pylogctl and fail). Where Java or pyspark is missing the tests that need
the cluster skip, unless ``PYLOGCTL_REQUIRE_SPARK=1`` (``.ci/run``) turns that into a failure.

Used by tests/pipeline (one cluster per session) and bench/scan.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from kafka_jvm import free_port

REPO = Path(__file__).resolve().parents[1]
REQUIRE_ENV = "PYLOGCTL_REQUIRE_SPARK"
# JVMs that start fast and stay small: the tests' jobs are short
QUICK_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"


def spark_home() -> Optional[Path]:
    try:
        import pyspark
    except ImportError:
        return None
    return Path(pyspark.__file__).parent


def missing_reason(connect: bool = False) -> Optional[str]:
    """Why the cluster cannot run here (None: it can)."""
    modules = ["pyspark", "pyarrow"] + (["grpc", "pandas", "google.rpc"] if connect else [])
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -e '.[test]')"
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        return "no Java runtime for Spark (java on PATH or JAVA_HOME)"
    home = spark_home()
    if home is None or not (home / "bin" / "spark-class").exists():
        return "pyspark has no bin/spark-class"
    return None


def require_cluster(connect: bool = False) -> None:
    """Skip the calling test where a Spark cluster cannot run; fail instead under .ci/run."""
    import pytest

    reason = missing_reason(connect)
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


def cluster_env(log_dir: Path) -> dict[str, str]:
    """The environment of the cluster's processes: nothing of this checkout or virtualenv."""
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYSPARK_", "SPARK_", "PYTHON")) and k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p != venv_bin)
    env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_LOG_DIR=str(log_dir), SPARK_PID_DIR=str(log_dir),
               SPARK_DAEMON_MEMORY="256m",
               SPARK_DAEMON_JAVA_OPTS=QUICK_JVM)
    return env


def build_wheel(out: Path) -> Path:
    """``pip wheel`` of this checkout into ``out`` (C accelerators compiled in)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(REPO)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return next(out.glob("pylogctl-*.whl"))


def executor_python(root: Path, wheel: Optional[Path] = None) -> Path:
    """A virtualenv with the wheel installed (if given): what every node would run. Its other
    libraries (pyspark, pyarrow, pandas, grpc) are this interpreter's, reached through a
    ``.pth`` line, which adds their directory but not the editable install's finder that
    points at the source."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    import pyarrow

    Path(site, "cluster-libs.pth").write_text(str(Path(pyarrow.__file__).parents[1]) + "\n")
    if wheel is not None:
        proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                               "-q", "--no-deps", "--no-index", "--ignore-installed",
                               str(wheel)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    return python


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen
    log: Path

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
        return f"--- {self.name} ---\n" + "\n".join(text.splitlines()[-lines:])


# what each application of the tests asks for: one 1-core executor on each of the two workers
# (the master spreads an application's executors over the workers), so that two
# applications, or one beside the Connect server, run at once on 2-core workers
APP_CONF = {"spark.cores.max": "2", "spark.executor.cores": "1",
            "spark.executor.memory": "512m", "spark.scheduler.minRegisteredResourcesRatio": "1",
            "spark.driver.extraJavaOptions": QUICK_JVM,
            "spark.executor.extraJavaOptions": QUICK_JVM}


def conf_options(conf: dict[str, str]) -> list[str]:
    return [word for key, value in conf.items() for word in ("--conf", f"{key}={value}")]


@dataclass
class SparkCluster:
    """A standalone master and ``workers`` workers of ``cores`` cores each, on loopback."""

    work_dir: Path
    workers: int = 2
    cores: int = 2
    memory: str = "1g"
    port: int = 0
    ui_port: int = 0
    daemons: list[Daemon] = field(default_factory=list)
    connect: Optional[Daemon] = None
    python: Optional[Path] = None  # the executors' interpreter, once the tests make one

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def state(self) -> dict:
        """The master's JSON status page (workers, applications)."""
        return _get_json(f"http://127.0.0.1:{self.ui_port}/json/")

    def _spawn(self, name: str, cmd: list[str], env: Optional[dict] = None) -> Daemon:
        log = self.work_dir / f"{name}.log"
        out = open(log, "ab")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=self.work_dir,
                                env=env or cluster_env(self.work_dir), start_new_session=True)
        out.close()
        daemon = Daemon(name, proc, log)
        self.daemons.append(daemon)
        return daemon

    def start(self, timeout: float = 120) -> "SparkCluster":
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.port, self.ui_port = free_port(), free_port()
        spark_class = str(spark_home() / "bin" / "spark-class")
        self._spawn("master", [spark_class, "org.apache.spark.deploy.master.Master",
                               "--host", "127.0.0.1", "--port", str(self.port),
                               "--webui-port", str(self.ui_port)])
        for i in range(self.workers):
            self._spawn(f"worker{i + 1}", [
                spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--cores", str(self.cores), "--memory", self.memory,
                "--webui-port", str(free_port()), "--work-dir", str(self.work_dir / f"w{i + 1}"),
                self.url])
        self._wait(timeout, lambda: self.state().get("aliveworkers") == self.workers)
        return self

    def _wait(self, timeout: float, ready) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for d in self.daemons:
                if d.proc.poll() is not None:
                    self.stop()
                    raise AssertionError(f"{d.name} exited {d.proc.returncode}:\n{d.tail()}")
            try:
                if ready():
                    return
            except OSError:
                pass
            time.sleep(0.3)
        logs = "\n".join(d.tail() for d in self.daemons)
        self.stop()
        raise AssertionError(f"the Spark cluster was not ready in {timeout}s:\n{logs}")

    def start_connect(self, args: list[str], env_vars: dict[str, str],
                      timeout: float = 120) -> str:
        """A Spark Connect server on this cluster: pyspark's ``sbin/start-connect-server.sh``
        in the foreground, with ``args`` and ``env_vars`` (the docs'); returns its
        ``sc://`` URL."""
        port = free_port()
        env = {**cluster_env(self.work_dir), **env_vars}
        env["SPARK_DAEMON_MEMORY"] = "1g"  # Spark's launcher sizes this server as a daemon
        daemon = self._spawn("connect", [
            str(spark_home() / "sbin" / "start-connect-server.sh"), "--wait", *args,
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf", "spark.ui.enabled=false", *conf_options(APP_CONF)], env)
        started = "Spark Connect server started"
        self._wait(timeout, lambda: started in daemon.log.read_text(errors="replace"))
        self.connect = daemon
        return f"sc://127.0.0.1:{port}"

    def stop_connect(self) -> None:
        daemon = self.connect
        if daemon is not None:
            # it stops its SparkContext on SIGTERM (freeing the workers' cores), but its gRPC
            # threads keep the JVM up
            self._terminate([daemon], timeout=8)
            self.daemons.remove(daemon)
            self.connect = None

    def stop(self) -> None:
        """Connect server and workers first, then the master: SIGTERM, then SIGKILL."""
        self.stop_connect()
        self._terminate(list(reversed(self.daemons)))
        self.daemons.clear()

    @staticmethod
    def _terminate(daemons: list[Daemon], timeout: float = 20) -> None:
        for d in daemons:
            if d.proc.poll() is None:
                os.killpg(d.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for d in daemons:
            try:
                d.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(d.proc.pid, signal.SIGKILL)
                d.proc.wait()


def event_log_conf(event_dir: Path) -> dict[str, str]:
    """Settings that make an application write its event log, uncompressed, to ``event_dir``:
    the record of which executor ran each task."""
    event_dir.mkdir(parents=True, exist_ok=True)
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(event_dir),
            "spark.eventLog.compress": "false"}


def tasks_per_worker(event_dir: Path) -> Counter:
    """From the event logs in ``event_dir``: the tasks each worker's executors ran, keyed by
    the worker's web UI port (the one thing telling apart two workers on one host)."""
    worker_of: dict[str, str] = {}
    tasks: Counter = Counter()
    for path in sorted(event_dir.rglob("events_*")):
        for line in path.read_text(errors="replace").splitlines():
            event = json.loads(line)
            if event["Event"] == "SparkListenerExecutorAdded":
                stdout_url = event["Executor Info"]["Log Urls"]["stdout"]
                worker_of[event["Executor ID"]] = stdout_url.split("//")[1].split("/")[0]
            elif event["Event"] == "SparkListenerTaskEnd":
                executor = event["Task Info"]["Executor ID"]
                tasks[worker_of.get(executor, executor)] += 1
    return tasks
