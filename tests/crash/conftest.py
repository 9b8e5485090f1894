"""The crash tests start hundreds of pylogctl processes: give them one bytecode cache, and stop
the fork servers they run in at the session's end."""

from __future__ import annotations

import pytest

import crash_support


@pytest.fixture(scope="session", autouse=True)
def shared_bytecode_cache(tmp_path_factory):
    crash_support.PYCACHE["prefix"] = tmp_path_factory.mktemp("pycache")
    yield
    crash_support.close_servers()
    crash_support.PYCACHE["prefix"] = None
