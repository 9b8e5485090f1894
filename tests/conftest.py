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
