"""Session fixtures shared by every test directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataclasses import dataclass

from pylogctl.cli.app import main
from support import CORPUS, CORPUS_MISSING_REASON


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(CORPUS_MISSING_REASON)
    return CORPUS



@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


@pytest.fixture
def cli(capsys):
    def run(*args: str) -> Result:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)
    return run


@pytest.fixture(scope="session")
def kafka_scenario():
    """A log dir the real Apache Kafka broker wrote with real clients (cached per machine)."""
    from kafka_scenarios import generated_scenario

    return generated_scenario()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A real S3-compatible server (s3proxy) on loopback for the whole session, with the
    standard AWS variables of this process pointed at it (subprocesses inherit them)."""
    import os

    from s3_server import S3Server, require_s3proxy

    require_s3proxy()
    server = S3Server(tmp_path_factory.mktemp("s3")).start()
    saved = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    yield server
    server.stop()
    _restore(saved)


def _restore(saved: dict[str, str | None]) -> None:
    """Put environment variables back as they were (None: unset)."""
    import os

    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def s3_corpus(s3_server, corpus):
    """``name -> s3://kafka-logs/name``: a corpus dir uploaded (through the S3 API) on first
    use, once per session."""
    from s3_server import BUCKET

    class Uploads(dict):
        def __missing__(self, name: str) -> str:
            self[name] = s3_server.upload(corpus / name, BUCKET, name)
            return self[name]

    return Uploads()


@pytest.fixture(scope="session")
def store_corpus(tmp_path_factory, corpus):
    """``(scheme, corpus dir name) -> URL``: the Azure Blob (``abfs``) or GCS (``gs``)
    emulator of ``tests/object_stores.py``, started on first use (one of each per session)
    with its store's standard variable set in this process, and the corpus dir uploaded
    through the store's API on first use."""
    import os

    from object_stores import EMULATORS, require

    started: dict = {}
    saved: dict[str, str | None] = {}

    class Uploads(dict):
        def __missing__(self, key: tuple[str, str]) -> str:
            scheme, name = key
            if scheme not in started:
                require(scheme)
                server = EMULATORS[scheme](tmp_path_factory.mktemp(scheme)).start()
                started[scheme] = server
                for k, v in server.env.items():
                    saved.setdefault(k, os.environ.get(k))
                    os.environ[k] = v
            self[key] = started[scheme].upload(corpus / name, name)
            return self[key]

    yield Uploads()
    for server in started.values():
        server.stop()
    _restore(saved)
