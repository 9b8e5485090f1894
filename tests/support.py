"""Helpers shared by the tests: where the real Kafka corpus lives and what it holds."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("PYLOGCTL_CORPUS", REPO.parent / "shared" / "corpus"))
CORPUS_MISSING_REASON = (f"the real Kafka corpus is not at {CORPUS} (it ships beside the repo as "
                         f"../shared/corpus; CI always has it)")


def corpus_dirs() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_dir())


def corpus_params():
    """Parametrize over corpus dirs; a single skipped param when the corpus is absent."""
    dirs = corpus_dirs()
    if not dirs:
        return [pytest.param(None, marks=pytest.mark.skip(reason=CORPUS_MISSING_REASON),
                             id="no-corpus")]
    return [pytest.param(d, id=d.name) for d in dirs]


def corpus_catalogue() -> dict[str, tuple[int, int]]:
    """``short-name -> (batches, records)`` from the corpus README's summary table."""
    text = (CORPUS / "README.md").read_text()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\| `([\w-]+)` \|.*?\| ([\d,]+) / ([\d,]+) \|", line)
        if m:
            out[m.group(1)] = (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
    return out


def segment_files(root: Path) -> list[Path]:
    """Every ``.log`` segment and KRaft snapshot ``.checkpoint`` below ``root``."""
    files = [p for p in root.rglob("*") if p.is_file()
             and (p.suffix == ".log" or p.name.endswith(".checkpoint"))]
    return sorted(files)


def run_pylogctl(*args: str, **kwargs) -> "subprocess.CompletedProcess[str]":
    """The installed CLI in its own process, as a script calls it (piped: plain text)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pylogctl", *map(str, args)],
                          capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}, **kwargs)


def require_tool(reason: str | None, variable: str) -> None:
    """Skip the calling test for ``reason`` (None: nothing is missing); fail instead where
    ``variable`` is 1 (``.ci/run`` sets it: there every tool must be installed)."""
    if reason is None:
        return
    if os.environ.get(variable) == "1":
        pytest.fail(f"{variable}=1 but {reason}")
    pytest.skip(reason)
