"""The Spark session a job runs on: local, a cluster's master, or a Spark Connect server.

In order: a Spark Connect session for ``remote`` (``sc://HOST:PORT``, or the ``SPARK_REMOTE``
environment variable PySpark itself reads, unless a master is given); the active session (a
notebook, a job that built its own); under ``spark-submit`` (which starts the driver's JVM and
passes ``--master`` and every ``--conf``), a session from that configuration; else a classic
session on the given master, ``local[*]`` by default.

A cluster's endpoint is tried with a plain TCP connection first, bounded by
:data:`CONNECT_TIMEOUT`: Spark's own clients retry an unreachable master or Connect server
for a minute or more before giving up, with a stack of warnings.

A session started here logs only errors and shows Spark's progress bar only on a terminal.
Only a local one is tuned for one machine (no UI, few shuffle partitions, workers on this
interpreter: Spark's default ``python3`` may be another Python without pylogctl or pyarrow).
On a cluster the executors' interpreter is the operator's choice: ``spark.pyspark.python``
(which ``spark-submit`` turns into ``PYSPARK_PYTHON`` for a Python driver, as
:func:`get_session` does here) or ``PYSPARK_PYTHON``.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import TYPE_CHECKING, Mapping
from urllib.parse import urlsplit

from ..errors import ServiceUnreachableError, UsageError
from .datasource import register

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CONNECT_TIMEOUT = 5.0  # seconds to open a TCP connection to a master or a Connect server
MASTER_PORT = 7077  # org.apache.spark.deploy.master.Master's default
CONNECT_PORT = 15002  # org.apache.spark.sql.connect.service.SparkConnectServer's default
PYTHON_CONF = "spark.pyspark.python"


def under_spark_submit() -> bool:
    """Whether this process is a driver that ``spark-submit`` (or ``pyspark``) launched."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def endpoints(url: str) -> list[tuple[str, int]]:
    """The host:port pairs of a ``spark://`` master URL (several for a standby list) or an
    ``sc://`` Connect URL; none for other masters (local, yarn, k8s: their own business)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("spark", "sc"):
        return []
    default = MASTER_PORT if scheme == "spark" else CONNECT_PORT
    out = []
    for part in rest.split("/")[0].split(";")[0].split(","):
        try:
            parsed = urlsplit(f"//{part}")
            host, port = parsed.hostname, parsed.port or default
        except ValueError:
            host = None
        if not host:
            raise UsageError(f"Bad Spark URL {url!r}: expected {scheme}://HOST:PORT")
        out.append((host, port))
    return out


def check_reachable(url: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise :class:`ServiceUnreachableError` unless one endpoint of ``url`` accepts a TCP
    connection within ``timeout`` seconds."""
    problems = []
    for host, port in endpoints(url):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return
        except OSError as exc:
            problems.append(f"{host}:{port}: {exc.strerror or exc}")
    if problems:
        what = "Spark Connect server" if url.startswith("sc://") else "Spark master"
        raise ServiceUnreachableError(f"Cannot reach the {what} {url} "
                                      f"({'; '.join(problems)})")


def remote_url(master: str | None, remote: str | None) -> str | None:
    """The Connect URL to use: ``remote``, else ``SPARK_REMOTE`` unless a master is given."""
    if remote is not None and master is not None:
        raise UsageError("Give at most one of --master and --remote")
    if remote is None and master is None and not under_spark_submit():
        remote = os.environ.get("SPARK_REMOTE") or None
    if remote is not None and not remote.startswith("sc://"):
        raise UsageError(f"Bad Spark Connect URL {remote!r}: expected sc://HOST:PORT")
    return remote


def get_session(master: str | None = None, remote: str | None = None,
                conf: Mapping[str, str] | None = None) -> tuple["SparkSession", bool]:
    """The session to run on (see the module docstring), with ``kafka-log`` registered, and
    whether it was started here (and so is ours to stop)."""
    conf = dict(conf or {})
    remote = remote_url(master, remote)
    if remote is not None:
        return _connect_session(remote, conf), True
    if master is not None:
        check_reachable(master)
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    started = spark is None
    if spark is None:
        builder = SparkSession.builder.appName("pylogctl")
        if master is None and not under_spark_submit():
            master = "local[*]"
        if master is not None:
            builder = builder.master(master)
        if not under_spark_submit():
            # a command's stderr: its own notes, not Spark's INFO and WARN lines
            builder = (builder.config("spark.log.level", "ERROR")
                       .config("spark.ui.showConsoleProgress", str(sys.stderr.isatty()).lower()))
        if master is not None and master.startswith("local") and not under_spark_submit():
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = (builder.config("spark.ui.enabled", "false")
                       .config("spark.sql.shuffle.partitions", str(2 * (os.cpu_count() or 1))))
        if PYTHON_CONF in conf:
            # PySpark's driver hands PYSPARK_PYTHON to every Python function it ships
            os.environ["PYSPARK_PYTHON"] = conf[PYTHON_CONF]
        for key, value in conf.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
    register(spark)
    return spark, started


def _connect_session(url: str, conf: dict[str, str]) -> "SparkSession":
    """A Spark Connect session; the server's Python workers import ``kafka-log`` by name, so
    pylogctl must be installed beside the server and its executors."""
    import importlib.util

    if importlib.util.find_spec("grpc") is None:
        raise UsageError("--remote needs the Spark Connect client: "
                         "pip install 'pyspark[connect]>=4,<5'")
    check_reachable(url)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(url)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.create()
    register(spark)
    return spark
