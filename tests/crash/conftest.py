"""The crash tests start hundreds of pylogctl processes: give them one bytecode cache."""

from __future__ import annotations

import pytest

import crash_support


@pytest.fixture(scope="session", autouse=True)
def shared_bytecode_cache(tmp_path_factory):
    crash_support.PYCACHE["prefix"] = tmp_path_factory.mktemp("pycache")
    yield
    crash_support.PYCACHE["prefix"] = None
