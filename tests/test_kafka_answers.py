"""The cache of the real broker's answers (:mod:`kafka_answers`) reuses an answer only for the
very bytes it was given, and only while it is fresh."""

from __future__ import annotations

import os
import time

import pytest

import kafka_answers
from kafka_answers import cached_json, dir_key


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(kafka_answers, "CACHE", tmp_path / "cache")
    monkeypatch.delenv("PYLOGCTL_KAFKA_ANSWERS", raising=False)
    return tmp_path / "cache"


def _log_dir(root):
    (root / "t-0").mkdir(parents=True)
    (root / "t-0" / "00000000000000000000.log").write_bytes(b"abc")
    (root / "meta.properties").write_text("node.id=1\n")
    return root


def test_the_key_is_every_files_name_and_bytes_but_the_lock(tmp_path):
    logs = _log_dir(tmp_path / "logs")
    key = dir_key(logs, [])
    (logs / ".lock").write_text("")
    assert dir_key(logs, []) == key
    (logs / "t-0" / "00000000000000000000.log").write_bytes(b"abd")
    assert dir_key(logs, []) != key
    (logs / "t-0" / "00000000000000000000.log").write_bytes(b"abc")
    (logs / "t-0" / "00000000000000000000.log").rename(logs / "t-0" / "00000000000000000001.log")
    assert dir_key(logs, []) != key
    assert dir_key(logs, [], "read_uncommitted") != dir_key(logs, [], "read_committed")


def test_an_answer_is_reused_for_its_key_while_fresh(cache):
    calls = []
    ask = lambda: calls.append(1) or {"end": len(calls)}  # noqa: E731
    assert cached_json("served", "k", ask) == {"end": 1}
    assert cached_json("served", "k", ask) == {"end": 1}
    assert cached_json("served", "other", ask) == {"end": 2}
    (path,) = (cache / "served").glob("k.*")
    old = time.time() - kafka_answers.MAX_AGE - 60
    os.utime(path, (old, old))
    assert cached_json("served", "k", ask) == {"end": 3}


def test_an_answer_refused_by_keep_or_with_the_cache_off_is_asked_again(cache, monkeypatch):
    calls = []
    ask = lambda: calls.append(1) or len(calls)  # noqa: E731
    assert cached_json("served", "k", ask, keep=lambda v: False) == 1
    assert cached_json("served", "k", ask) == 2
    monkeypatch.setenv("PYLOGCTL_KAFKA_ANSWERS", "0")
    assert cached_json("served", "k", ask) == 3
