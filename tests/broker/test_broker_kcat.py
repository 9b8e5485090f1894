"""``pylogctl broker`` with kcat (the Debian package, over librdkafka's C API rather than the
Python binding): ``kcat -P -K:`` produces keyed records to a topic the broker auto-creates,
``kcat -C -G group -e`` consumes them in a group to the end and commits as it closes (auto
commit); the broker restarts on the same log dir and the group resumes from its commit; then
the offline commands read the files (committed offsets with lag 0, every batch valid).

kcat comes from tests/install-tools.sh (apt-get); without it the test skips and says so."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from broker_support import round_trip_across_restart

PARTITIONS = 2
TIMEOUT_S = 60


def _kcat() -> str:
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.skip("no kcat on PATH; install the Debian package kcat (tests/install-tools.sh)")
    return kcat


def _session(kcat: str, bootstrap: str, first: int, count: int) -> set[tuple[str, str]]:
    """Produce ``count`` keyed records from ``first``; consume in the group to the end."""
    lines = "".join(f"key-{i}:value-{i}\n" for i in range(first, first + count))
    done = subprocess.run([kcat, "-P", "-b", bootstrap, "-t", "kc", "-K:", "-X", "compression.codec=snappy",
                           "-X", "enable.idempotence=true"],
                          input=lines, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([kcat, "-C", "-b", bootstrap, "-G", "kc-group", "kc", "-e",
                           "-f", "%k:%s\\n", "-X", "auto.offset.reset=earliest"],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return {tuple(line.split(":", 1)) for line in done.stdout.splitlines()}


def test_kcat_round_trip(tmp_path, cli):
    kcat = _kcat()
    log_dir = tmp_path / "logs"
    round_trip_across_restart(cli, log_dir, lambda *a: _session(kcat, *a), group="kc-group",
                              topic="kc", partitions=PARTITIONS, text=True)
    r = cli("dump-segment", *sorted(str(p) for p in log_dir.glob("kc-*/*.log")))
    assert "compresscodec: snappy" in r.out
