"""One log dir, two brokers: ``pylogctl broker`` and the real Kafka 4.4 broker (KRaft combined
mode, started on the dir as it is, never formatted) take turns on the same dir, three times
each way, with Kafka's Java client producing and consuming in every turn
(``apache_kafka/clients/SwitchTraffic.java``: an idempotent producer, a transactional id that
commits and aborts, a classic consumer group and a KIP-848 one (``group.protocol=consumer``)
committing what they read).

At the start of every turn, whatever broker it is, Kafka's Java consumer and Admin client
(``ServedRecords.java``) must find every record served before at the same offset, followed by
exactly the records the previous turn sent and committed (no aborted one under
``read_committed``), both groups' committed offsets where the previous turn left them, the
topic's own ``retention.ms`` and the transactional id's producer epoch above the last one. Each
group then consumes exactly what its turn sent: nothing read twice, nothing skipped (the
KIP-848 group's records 3-8, written by either broker, are loaded by the other). Neither
broker may repair anything the other left after a clean stop. One turn of each ends with
SIGKILL instead (the next broker starts on a dir that was not shut down, and recovers it):
nothing acknowledged may be lost. In pylogctl's turns kafka-python and kcat read the same
records the Java consumer did.

For the real broker to start on pylogctl's dir, pylogctl's ``__cluster_metadata-0`` is a
metadata log Kafka's raft layer loads (``metadata.version``, raft epochs in ``quorum-state``
and ``LeaderChangeMessage``\\ s, topics and partitions with the ids in each
``partition.metadata``, leader epochs taken over with ``PartitionChangeRecord``\\ s); see
:mod:`pylogctl.broker.metadata_log`.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Iterator

from broker_support import BrokerProcess
from kafka_jvm import KAFKA_DIR, KafkaBroker, java_program, require_kafka
from kafka_served import REPAIR_LINES, Served, read_served

TOPIC = "switched"
GROUPS = {"switch-group": "", "switch-modern": "Modern"}  # group -> its keys' suffix
# (broker, how its turn ends): each hands the dir over three times, once after a SIGKILL
TURNS = (("pylogctl", "stop"), ("kafka", "stop"), ("pylogctl", "kill"), ("kafka", "kill"),
         ("pylogctl", "stop"), ("kafka", "stop"), ("pylogctl", "stop"))
TRAFFIC = KAFKA_DIR / "clients" / "SwitchTraffic.java"


@contextlib.contextmanager
def _running(which: str, end: str, logs: Path, work: Path
             ) -> Iterator[tuple[str, list[str]]]:
    """The broker's bootstrap address, and (after the block) its log lines; ``end`` is
    "stop" (SIGTERM: a clean shutdown) or "kill" (SIGKILL)."""
    lines: list[str] = []
    if which == "kafka":
        broker = KafkaBroker(log_dir=logs, work_dir=work)
        broker.start()
        try:
            yield broker.bootstrap, lines
        finally:
            broker.kill() if end == "kill" else broker.stop()
            lines += broker.log_text().splitlines()
    else:
        process = BrokerProcess(logs, "--log-level", "INFO").start()
        try:
            yield process.bootstrap, lines
        finally:
            process.stop(signal.SIGKILL if end == "kill" else signal.SIGTERM)
            lines += process.stderr


def _traffic(bootstrap: str, turn: int) -> dict:
    out = subprocess.run([*java_program(TRAFFIC), bootstrap, str(turn)], capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, f"SwitchTraffic failed:\n{out.stderr[-3000:]}"
    return json.loads(out.stdout.splitlines()[-1])


def _rows(served: Served) -> dict[int, list[tuple[int, str]]]:
    """(offset, key) of every record of the topic, by partition."""
    return {p: [(r["offset"], bytes.fromhex(r["key"]).decode())
                for r in served.records.get(f"{TOPIC}-{p}", [])] for p in range(3)}


def _kafka_python_rows(bootstrap: str) -> dict[int, list[tuple[int, str]]]:
    from kafka import KafkaConsumer, TopicPartition

    partitions = [TopicPartition(TOPIC, p) for p in range(3)]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                             enable_auto_commit=False)
    try:
        consumer.assign(partitions)
        consumer.seek_to_beginning()
        end = consumer.end_offsets(partitions)
        rows: dict[int, list[tuple[int, str]]] = {p: [] for p in range(3)}
        for _ in range(300):
            for tp, records in consumer.poll(200).items():
                rows[tp.partition] += [(r.offset, r.key.decode()) for r in records]
            if all(consumer.position(tp) >= end[tp] for tp in partitions):
                return rows
        raise AssertionError(f"kafka-python never reached {end}")
    finally:
        consumer.close()


def _kcat_rows(bootstrap: str) -> dict[int, list[tuple[int, str]]] | None:
    kcat = shutil.which("kcat")
    if kcat is None:
        return None
    out = subprocess.run([kcat, "-C", "-b", bootstrap, "-t", TOPIC, "-e", "-q",
                          "-f", "%p %o %k\\n", "-X", "isolation.level=read_committed"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows: dict[int, list[tuple[int, str]]] = {p: [] for p in range(3)}
    for line in out.stdout.splitlines():
        partition, offset, key = line.split(" ", 2)
        rows[int(partition)].append((int(offset), key))
    return {p: sorted(r) for p, r in rows.items()}


def test_a_log_dir_moves_between_pylogctl_and_kafka_three_times(tmp_path):
    require_kafka()
    logs = tmp_path / "logs"
    before: dict[int, list[tuple[int, str]]] = {p: [] for p in range(3)}
    last: dict | None = None
    after_kill = False
    for turn, (which, end) in enumerate(TURNS, 1):
        with _running(which, end, logs, tmp_path / f"turn-{turn}-{which}") as (bootstrap, log):
            served = read_served(bootstrap)
            rows = _rows(served)
            if which == "pylogctl" and turn > 1:
                assert _kafka_python_rows(bootstrap) == rows, turn
                kcat = _kcat_rows(bootstrap)
                assert kcat is None or kcat == rows, turn
            traffic = _traffic(bootstrap, turn)
        where = f"turn {turn} ({which})"
        if not after_kill:
            assert not [ln for ln in log if any(p in ln for p in REPAIR_LINES)], where
        assert not [ln for ln in log if "Traceback" in ln], where
        # every record served before, at its offset, then exactly what the last turn committed
        for p in range(3):
            assert rows[p][:len(before[p])] == before[p], (where, p)
            assert [o for o, _ in rows[p]] == sorted({o for o, _ in rows[p]}), (where, p)
        new = {key for p in range(3) for _, key in rows[p][len(before[p]):]}
        assert new == (set(last["sent"]) if last else set()), where
        if last is not None:
            for group, suffix in GROUPS.items():
                assert {tp: o for (g, tp), o in served.committed.items() if g == group} == {
                    f"{TOPIC}-{p}": o for p, o in last["committed" + suffix].items()}, where
            assert (traffic["producerId"], traffic["producerEpoch"]) != (
                last["producerId"], last["producerEpoch"]), where
            assert traffic["producerEpoch"] > last["producerEpoch"] or \
                traffic["producerId"] > last["producerId"], where
        # each group reads exactly what this turn sent, from where it had committed
        for suffix in GROUPS.values():
            consumed, committed = traffic["consumed" + suffix], traffic["committed" + suffix]
            assert sorted(key for _, _, key in consumed) == sorted(traffic["sent"]), where
            for p in range(3):
                offsets = [o for q, o, _ in consumed if q == p]
                start = last["committed" + suffix][str(p)] if last else 0
                assert offsets and min(offsets) >= start and offsets == sorted(set(offsets)), \
                    (where, suffix)
                assert committed[str(p)] > max(offsets), (where, suffix)
        assert traffic["retention"] == 604800001, where
        before, last, after_kill = rows, traffic, end == "kill"
