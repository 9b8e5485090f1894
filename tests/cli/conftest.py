"""Run the real ``pylogctl`` entry point in-process and capture what it prints."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pylogctl.cli.app import main


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
