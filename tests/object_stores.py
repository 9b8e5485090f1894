"""Emulators of Azure Blob Storage and Google Cloud Storage on loopback, for the tests that read
log dirs from ``abfs://`` and ``gs://`` URLs as ``tests/s3_server.py`` does for ``s3://``.

``tests/install-tools.sh`` installs both, pinned, beside this file: Azurite from npm into
``object_stores/azurite/`` (package.json pins it) and fake-gcs-server with ``go install`` into
``object_stores/bin/``. Nothing is downloaded while tests run. Where one is absent its tests
skip with the reason; under ``PYLOGCTL_REQUIRE_STORES=1`` (set by ``.ci/run``) that is a
failure.

Clients find them as pylogctl's users find the real stores, through each store's standard
variables: ``AZURE_STORAGE_CONNECTION_STRING`` (Azurite's well-known development account, its
``BlobEndpoint`` on loopback) and ``STORAGE_EMULATOR_HOST`` (read by Google's client libraries).
Both servers keep their objects in memory: one of each per test session.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support import require_tool

HERE = Path(__file__).resolve().parent / "object_stores"
AZURITE = HERE / "azurite" / "node_modules" / ".bin" / "azurite-blob"
FAKE_GCS_VERSION = "v1.56.1"
FAKE_GCS = HERE / "bin" / "fake-gcs-server"
# Azurite's development account: its key is published in Azure's documentation
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
               "KBHBeksoGMGw==")
CONTAINER = "kafka-logs"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Emulator:
    """A store's emulator on a free loopback port; :attr:`env` points the store's standard
    variables at it; :meth:`upload` copies a folder in through the store's API."""

    name = ""
    scheme = ""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self, timeout: float = 60.0) -> "Emulator":
        self.root.mkdir(parents=True, exist_ok=True)
        self.log = open(self.root / f"{self.name}.log", "wb")
        self.proc = subprocess.Popen(self.command(), stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=self.root)
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{self.name} did not start (see {self.log.name})")
                time.sleep(0.1)

    def filesystem(self):
        raise NotImplementedError

    def url(self, prefix: str) -> str:
        raise NotImplementedError

    def upload(self, local: Path, prefix: str) -> str:
        """Copy the folder ``local`` to ``prefix`` in the container/bucket :data:`CONTAINER`
        (made on first use); returns its URL."""
        fs = self.filesystem()
        try:
            fs.create_dir(CONTAINER)
        except OSError:
            pass  # exists already

        def put(path: Path) -> None:
            with fs.open_output_stream(f"{CONTAINER}/{prefix}/"
                                       f"{path.relative_to(local).as_posix()}") as out:
                out.write(path.read_bytes())

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(put, sorted(p for p in local.rglob("*") if p.is_file())))
        return self.url(prefix)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # Azurite exits on ^C, not on SIGTERM
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "log", None) is not None:
            self.log.close()


class Azurite(Emulator):
    """Azure Blob Storage (``abfs://CONTAINER/PATH``, the account from the connection string)."""

    name, scheme = "azurite", "abfs"

    def command(self) -> list[str]:
        return [str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
                "--inMemoryPersistence", "--skipApiVersionCheck", "--loose", "--silent"]

    def start(self, timeout: float = 60.0) -> "Emulator":
        endpoint = f"http://127.0.0.1:{self.port}/{AZURITE_ACCOUNT}"
        self.env = {"AZURE_STORAGE_CONNECTION_STRING": (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={endpoint};")}
        return super().start(timeout)

    def filesystem(self):
        import pyarrow.fs as pafs

        authority = f"127.0.0.1:{self.port}"
        return pafs.AzureFileSystem(AZURITE_ACCOUNT, account_key=AZURITE_KEY,
                                    blob_storage_authority=authority, blob_storage_scheme="http",
                                    dfs_storage_authority=authority, dfs_storage_scheme="http")

    def url(self, prefix: str) -> str:
        return f"abfs://{CONTAINER}/{prefix}"


class FakeGcs(Emulator):
    """Google Cloud Storage (``gs://BUCKET/PATH``)."""

    name, scheme = "fake-gcs-server", "gs"

    def command(self) -> list[str]:
        return [str(FAKE_GCS), "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port),
                "-backend", "memory", "-public-host", f"127.0.0.1:{self.port}",
                "-external-url", f"http://127.0.0.1:{self.port}", "-log-level", "error"]

    def start(self, timeout: float = 60.0) -> "Emulator":
        self.env = {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{self.port}"}
        return super().start(timeout)

    def filesystem(self):
        import pyarrow.fs as pafs

        return pafs.GcsFileSystem(anonymous=True, scheme="http", project_id="pylogctl-test",
                                  endpoint_override=f"127.0.0.1:{self.port}")

    def url(self, prefix: str) -> str:
        return f"gs://{CONTAINER}/{prefix}"


EMULATORS = {"abfs": Azurite, "gs": FakeGcs}


def missing_reason(scheme: str) -> str | None:
    if scheme == "abfs":
        if shutil.which("node") is None:
            return "no node on PATH for Azurite (tests/install-tools.sh)"
        if not AZURITE.exists():
            return (f"Azurite is not at {AZURITE} (tests/install-tools.sh installs it from "
                    f"npm)")
    elif not FAKE_GCS.exists():
        return (f"fake-gcs-server {FAKE_GCS_VERSION} is not at {FAKE_GCS} "
                f"(tests/install-tools.sh builds it with go install)")
    return None


def require(scheme: str) -> None:
    require_tool(missing_reason(scheme), "PYLOGCTL_REQUIRE_STORES")
