"""The "A Spark cluster" commands of docs/cluster-scale.md, run for real on the tests' cluster.

A block marked ``<!-- cluster-test: NAME -->`` holds the commands; its placeholders (the
master's and the Connect server's addresses, the virtualenv, the log dir) become the
cluster's own, and the tests add only what makes them observable and quick (an event log,
an executor on each worker, waiting for both, fast-starting JVMs). The commands of a block
run at once (:class:`Run`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from spark_cluster import APP_CONF, SparkCluster, conf_options, event_log_conf
from support import REPO

MASTER = "spark://master:7077"
CONNECT = "sc://master:15002"
VENV = "/opt/pylogctl"
LOG_DIRS = "/data/kafka-logs"


DOC = "docs/cluster-scale.md"


def documented_commands(name: str) -> list[str]:
    """The commands (continuation lines joined) of the docs' block marked ``name``."""
    text = (REPO / DOC).read_text()
    m = re.search(rf"<!-- cluster-test: {name} -->\n```bash\n(.*?)```", text, re.S)
    assert m, f"no <!-- cluster-test: {name} --> block in {DOC}"
    joined = m.group(1).replace("\\\n", " ")
    return [" ".join(line.split()) for line in joined.splitlines() if line.strip()]


def argv(command: str, cluster: SparkCluster, log_dirs: list[Path],
         connect: str = "") -> tuple[dict[str, str], list[str]]:
    """A documented command as (environment assignments, argv) on the tests' cluster."""
    python = str(cluster.python)
    words = []
    for word in shlex.split(command):
        if word == LOG_DIRS:
            words.extend(str(p) for p in log_dirs)
            continue
        word = word.replace(f"{VENV}/bin/", str(cluster.python.parent) + "/")
        word = word.replace(MASTER, cluster.url).replace(CONNECT, connect)
        words.append(word.replace(f"{VENV}/bin/python", python))
    env = {}
    while "=" in words[0] and not words[0].startswith(("/", "$")):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return env, words


def observable_options(event_dir: Path | None = None) -> list[str]:
    """What the tests add to a documented command: see the module docstring."""
    return conf_options({**APP_CONF, **(event_log_conf(event_dir) if event_dir else {})})


def clean_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """An operator's shell: nothing of this checkout on the path."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("PYSPARK_", "SPARK_", "PYTHON")) and k != "VIRTUAL_ENV"}
    clean.update(SPARK_LOCAL_IP="127.0.0.1", TZ="UTC", **(env or {}))
    return clean


class Run:
    """A command started now, in the background (the cluster runs several at once)."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.args = args
        self.proc = subprocess.Popen(args, env=clean_env(env), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._result: subprocess.CompletedProcess | None = None

    def result(self, timeout: float = 300) -> subprocess.CompletedProcess:
        if self._result is None:
            try:
                out, err = self.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out, err = self.proc.communicate()
                err += f"\n(killed after {timeout} s)"
            self._result = subprocess.CompletedProcess(self.args, self.proc.returncode, out, err)
        return self._result
