"""Fixtures of the pipeline tests: one real local Spark session for all of them.

The session is ``local[2]`` with the settings pylogctl gives a local session (workers on this
interpreter, no UI, few shuffle partitions). Starting it costs several seconds, so every test
shares it; tests that need no Spark do not ask for it and run without PySpark installed.
"""

from __future__ import annotations

import pytest

from pipeline_support import spark_missing_reason


@pytest.fixture(scope="session")
def spark():
    reason = spark_missing_reason()
    if reason:
        pytest.skip(reason)
    from pylogctl.pipeline.spark_engine import get_session

    session, started = get_session("local[2]")
    yield session
    if started:
        session.stop()
