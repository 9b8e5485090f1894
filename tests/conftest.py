"""Session fixtures shared by every test directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import CORPUS, CORPUS_MISSING_REASON


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(CORPUS_MISSING_REASON)
    return CORPUS
