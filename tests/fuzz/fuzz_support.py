"""What the differential fuzzers (fuzz_cleaner.py, fuzz_offsets_scan.py, fuzz_recover.py) have
in common: their command line, their RNG seed, the per-input time limit and how a failing
input is saved under ``tests/fuzz/crashes/``. Seeds and mutations are fuzz_dump.py's.

Import it after putting tests/fuzz on sys.path, as those scripts do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import fuzz_dump


def parse_args(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """--seconds, --seed, --corpus and --timeout, described by the first paragraph of doc."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    ap.add_argument("--seed", type=int, default=None, help="RNG seed (default: time-based)")
    ap.add_argument("--corpus", type=Path, default=fuzz_dump.DEFAULT_CORPUS)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per input")
    return ap.parse_args(argv)


def start(args: argparse.Namespace) -> tuple[int, random.Random]:
    """The run's seed (--seed, else the time) and its RNG; installs the SIGALRM handler that
    turns an input running past --timeout into fuzz_dump.FuzzTimeout (see time_limit)."""
    seed = args.seed if args.seed is not None else int(time.time())
    signal.signal(signal.SIGALRM, fuzz_dump._on_alarm)
    return seed, random.Random(seed)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise fuzz_dump.FuzzTimeout in the block after ``seconds`` (needs start())."""
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def save_failure(prefix: str, data: bytes, settings: dict, what: str,
                 json_default: Callable[[Any], Any] | None = None) -> Path:
    """Save a failing input and its settings under crashes/<prefix>-<digest>/."""
    digest = hashlib.sha1(data + json.dumps(settings, default=json_default).encode()
                          ).hexdigest()[:12]
    dest = fuzz_dump.CRASH_DIR / f"{prefix}-{digest}"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "input.log").write_bytes(data)
    (dest / "FAILURE.txt").write_text(json.dumps(settings, indent=1, default=json_default)
                                      + "\n\n" + what)
    return dest


def report_exception(prefix: str, data: bytes, settings: dict, exc: BaseException,
                     json_default: Callable[[Any], Any] | None = None) -> None:
    """Save an input that raised (or timed out) and say where."""
    dest = save_failure(prefix, data, settings, f"{type(exc).__name__}: {exc}", json_default)
    print(f"\nFAILURE {type(exc).__name__}: {exc} saved in {dest}", flush=True)
