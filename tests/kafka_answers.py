"""The real Kafka broker's answers about a log dir, cached per machine by the dir's bytes.

A start of the real broker costs about 16 s on CI's 2-core machine, and a suite run asks it about
the same bytes again and again: the cached scenarios' baselines, and pylogctl's output wherever
that output is the same bytes from run to run (``truncate``, ``retention``, ``rebuild-index``,
``recover`` ...). What the broker does with a log dir is a function of its files, of the
broker's configuration and of the program asking, so an answer is keyed by all of them: every
file's name and bytes (the ``.lock`` left out), the Kafka version, :mod:`kafka_jvm` (the
broker's configuration) and the caller's own sources. Any change to what pylogctl writes
changes the key, and the real broker runs again; a command whose output carries the time it
ran (commit timestamps) never hits and is judged afresh every run.

The broker also reads the clock (time retention, offset expiry, transaction timeouts), so an
answer older than :data:`MAX_AGE` is not reused: answers combined in one run were given within
a day of each other. ``PYLOGCTL_KAFKA_ANSWERS=0`` turns the cache off (every answer live).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from kafka_jvm import KAFKA_VERSION, TEST_CACHE, KafkaBroker

CACHE = TEST_CACHE / "kafka-answers"
MAX_AGE = 24 * 3600  # seconds
HERE = Path(__file__).resolve().parent
HARNESS = (HERE / "kafka_jvm.py",)  # the broker's configuration and how it is run


def enabled() -> bool:
    return os.environ.get("PYLOGCTL_KAFKA_ANSWERS", "1") != "0"


def dir_key(log_dir: Path | None, sources: Iterable[Path], *params: str,
            version: str = KAFKA_VERSION) -> str:
    """The key of an answer about ``log_dir`` (None: a fresh broker's): its files (names and
    bytes, ``.lock`` left out, empty dirs too), the harness's and ``sources``' text, ``params``
    and the version."""
    h = hashlib.blake2b(digest_size=20)
    for part in (version, *params):
        h.update(f"{part}\0".encode())
    for source in (*HARNESS, *sources):
        h.update(Path(source).read_bytes())
    for path in sorted(log_dir.rglob("*")) if log_dir is not None else ():
        if path.name == ".lock":
            continue
        rel = str(path.relative_to(log_dir)).encode()
        if path.is_dir():
            h.update(b"d\0" + rel + b"\0")
        else:
            data = path.read_bytes()
            h.update(b"f\0" + rel + b"\0" + len(data).to_bytes(8, "big"))
            h.update(data)
    return h.hexdigest()


def _fresh(path: Path) -> bool:
    return path.exists() and time.time() - path.stat().st_mtime < MAX_AGE


def _publish(tmp: Path, final: Path) -> None:
    """Move a finished answer into place (another run may have put the same one there)."""
    if final.exists():
        shutil.rmtree(final) if final.is_dir() else final.unlink()
    os.replace(tmp, final)


def cached_json(kind: str, key: str, compute: Callable[[], Any],
                keep: Callable[[Any], bool] = lambda value: True) -> Any:
    """``compute()`` (a JSON value), or the answer it gave for this key on this machine.
    An answer ``keep`` refuses (one that shows the broker's own timing) is not kept."""
    path = CACHE / kind / f"{key}.json.gz"
    if enabled() and _fresh(path):
        with gzip.open(path, "rt") as f:
            return json.load(f)
    value = compute()
    if enabled() and keep(value):
        _prune(path.parent)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with gzip.open(tmp, "wt", compresslevel=1) as f:
            json.dump(value, f)
        _publish(tmp, path)
    return value


def _prune(kind_dir: Path) -> None:
    """Answers too old to be reused go (a served scenario is tens of MB)."""
    kind_dir.mkdir(parents=True, exist_ok=True)
    for old in kind_dir.iterdir():
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > MAX_AGE:
                shutil.rmtree(old) if old.is_dir() else old.unlink()


def started_and_stopped(log_dir: Path, work: Path, sources: Iterable[Path],
                        **broker: Any) -> str:
    """The real broker started on ``log_dir`` (``KafkaBroker(**broker)``) and stopped cleanly:
    ``log_dir`` is left as it left it, and its log text returned. On a hit, ``log_dir`` is
    replaced by the copy kept of what the broker left from these bytes, with its log."""
    key = dir_key(log_dir, sources, "started-and-stopped", json.dumps(broker, sort_keys=True,
                                                                      default=str))
    kept = CACHE / "started-and-stopped" / key
    if enabled() and _fresh(kept / "done"):
        shutil.rmtree(log_dir)
        shutil.copytree(kept / "logs", log_dir)
        return (kept / "server.log").read_text()
    kafka = KafkaBroker(log_dir=log_dir, work_dir=work, **broker)
    kafka.start()
    kafka.stop()
    text = kafka.log_text()
    if enabled():
        _prune(kept.parent)
        tmp = kept.with_name(f"{key}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(log_dir, tmp / "logs", ignore=shutil.ignore_patterns(".lock"))
        (tmp / "server.log").write_text(text)
        (tmp / "done").write_text("")
        _publish(tmp, kept)
    return text
