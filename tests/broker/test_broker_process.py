"""``pylogctl broker start`` as a process: SIGTERM shuts down cleanly, SIGKILL loses no
acknowledged (acks=-1) record and the next start recovers, and a locked log dir is refused."""

from __future__ import annotations

import signal
import subprocess
import sys

from kafka import KafkaConsumer, KafkaProducer

from broker_support import BrokerProcess, BrokerThread

COUNT = 200


def produce(bootstrap: str, first: int, count: int) -> list[int]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2)
    futures = [producer.send("storm", key=str(i).encode(), value=f"value-{i}".encode())
               for i in range(first, first + count)]
    producer.flush(30)
    offsets = [f.get(30).offset for f in futures]
    producer.close(5)
    return offsets


def read_all(bootstrap: str, expected: int) -> list[bytes]:
    consumer = KafkaConsumer("storm", bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=10_000)
    values = []
    for message in consumer:
        values.append(message.value)
        if len(values) >= expected:
            break
    consumer.close()
    return values


def test_sigterm_shuts_down_cleanly(tmp_path, cli):
    log_dir = tmp_path / "logs"
    with BrokerProcess(log_dir) as broker:
        produce(broker.bootstrap, 0, COUNT)
        assert broker.stop(signal.SIGTERM) == 0
    assert (log_dir / ".kafka_cleanshutdown").exists()
    assert cli("recover", "--check", log_dir).code == 0
    index = next(log_dir.glob("storm-0/*.index"))
    assert index.stat().st_size < 10 * 1024 * 1024  # trimmed, not preallocated


def test_sigkill_loses_no_acknowledged_record(tmp_path, cli):
    log_dir = tmp_path / "logs"
    broker = BrokerProcess(log_dir).start()
    offsets = produce(broker.bootstrap, 0, COUNT)
    assert broker.stop(signal.SIGKILL) == -signal.SIGKILL
    assert not (log_dir / ".kafka_cleanshutdown").exists()
    with BrokerProcess(log_dir) as again:  # loads with recovery, as `pylogctl recover` would
        values = read_all(again.bootstrap, COUNT)
        assert sorted(offsets) == list(range(COUNT))
        assert values == [f"value-{i}".encode() for i in range(COUNT)]
    assert cli("recover", "--check", log_dir).code == 0


def test_a_locked_log_dir_is_refused(tmp_path):
    log_dir = tmp_path / "logs"
    with BrokerThread(log_dir):
        result = subprocess.run(
            [sys.executable, "-c", "from pylogctl.cli.app import main; main()", "broker",
             "start", "--log-dir", str(log_dir), "--port", "0"],
            capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stderr
    assert "lock" in result.stderr.lower()
