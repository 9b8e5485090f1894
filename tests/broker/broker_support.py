"""Running a broker for tests: in this process, on its own event loop thread, on an ephemeral
loopback port (so real clients in the test thread can talk to it), or as a ``pylogctl broker
start`` subprocess (for signals and SIGKILL)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

from pylogctl.broker import Broker, BrokerConfig
from pylogctl.broker.group_metadata import GroupConfig

FAST_GROUPS = GroupConfig(offsets_topic_partitions=5, initial_rebalance_delay_ms=0)
FIRST_RUN, SECOND_RUN = 40, 7  # records a client round trip sends before and after a restart


class BrokerThread:
    """``with BrokerThread(log_dir) as b:`` -- ``b.bootstrap`` is ``127.0.0.1:port``."""

    def __init__(self, log_dir: Path, **options) -> None:
        options.setdefault("group", FAST_GROUPS)
        self.config = BrokerConfig(log_dir=str(log_dir), host="127.0.0.1", port=0, **options)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.broker: Broker | None = None
        self.port = 0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "BrokerThread":
        self.thread.start()
        self.broker = Broker(self.config)
        self.port = asyncio.run_coroutine_threadsafe(self.broker.start(), self.loop).result(30)
        return self

    def stop(self) -> None:
        if self.broker is not None:
            asyncio.run_coroutine_threadsafe(self.broker.stop(), self.loop).result(30)
            self.broker = None
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the broker's loop (to inspect its state safely)."""
        async def run():
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(30)

    def __enter__(self) -> "BrokerThread":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class BrokerProcess:
    """``pylogctl broker start --port 0`` in a subprocess; ready when it prints its
    "listening on" line (read from its stderr, which is then drained by a thread)."""

    def __init__(self, log_dir: Path, *extra: str) -> None:
        self.port = 0
        self.args = [sys.executable, "-c", "from pylogctl.cli.app import main; main()",
                     "broker", "start", "--log-dir", str(log_dir), "--port", "0",
                     "--offsets-topic-partitions", "5",
                     "--group-initial-rebalance-delay-ms", "0", "--log-level", "WARNING",
                     *extra]
        self.proc: subprocess.Popen | None = None
        self.stderr: list[str] = []

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "BrokerProcess":
        self.proc = subprocess.Popen(self.args, stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            self.stderr.append(line)
            if " listening on " in line:
                self.port = int(line.split(" listening on ")[1].split()[0].rsplit(":", 1)[1])
                break
        else:
            raise RuntimeError(f"broker exited with {self.proc.wait()}: {''.join(self.stderr)}")
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self) -> None:
        assert self.proc is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(30)

    def __enter__(self) -> "BrokerProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()


def check_offline(cli, log_dir: Path, group: str, topic: str, partitions: int,
                  total: int) -> dict[int, int]:
    """After a clean stop, the offline commands agree with what a client did: ``consumer-groups
    --describe`` shows ``group`` committed at the end of each of ``topic``'s partitions
    (``total`` records in all, lag 0), ``recover --check`` finds nothing to repair and
    ``dump-segment`` verifies every batch. Returns {partition: committed offset}."""
    r = cli("consumer-groups", log_dir, "--describe", "--group", group, "-o", "json")
    assert r.code == 0, r.err
    rows = [row for row in json.loads(r.out) if row["topic"] == topic]
    assert len(rows) == partitions
    assert all(row["lag"] == 0 and row["currentOffset"] == row["logEndOffset"] for row in rows)
    assert sum(row["currentOffset"] for row in rows) == total
    r = cli("recover", "--check", log_dir)
    assert r.code == 0, r.out + r.err
    r = cli("dump-segment", *sorted(str(p) for p in log_dir.glob("*/*.log")))
    assert r.code == 0, r.err
    assert "isvalid: false" not in r.out
    return {row["partition"]: row["currentOffset"] for row in rows}


def sent_records(first: int, count: int, text: bool = False) -> set[tuple]:
    """The (key, value) pairs a round-trip client sends: ``key-i``/``value-i`` for i in
    [first, first + count), as bytes (or str for clients that print them)."""
    pairs = {(f"key-{i}", f"value-{i}") for i in range(first, first + count)}
    return pairs if text else {(k.encode(), v.encode()) for k, v in pairs}


def round_trip_across_restart(cli, log_dir: Path, session, *, group: str, topic: str,
                              partitions: int, text: bool = False) -> dict[int, int]:
    """A client's ``session(bootstrap, first, count)`` (produce ``count`` records to ``topic``,
    consume them in ``group``, commit; returns the pairs it consumed) against a broker, then
    again against a broker restarted on the same log dir, which must resume the group from
    its commit; then :func:`check_offline`. Returns its {partition: committed offset}."""
    for first, count in ((0, FIRST_RUN), (FIRST_RUN, SECOND_RUN)):
        with BrokerThread(log_dir, num_partitions=partitions) as broker:
            assert session(broker.bootstrap, first, count) == sent_records(first, count, text)
    return check_offline(cli, log_dir, group, topic, partitions, FIRST_RUN + SECOND_RUN)
