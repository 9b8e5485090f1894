"""Kafka's own Java client (4.4) against ``pylogctl broker``, judged by the real Kafka broker.

``apache_kafka/clients/ClientMatrix.java`` runs one fixed sequence of operations with the
producer, the consumer and the Admin client and prints what each returned, or the exception a
refusal raised: topics created (and one again: TopicExistsException); records produced with
every codec, with acks 0, 1 and all, idempotent and not; a record over ``message.max.bytes``
(RecordTooLargeException); three transactions, one aborted, read ``read_committed`` and
``read_uncommitted``; the transactions listed and described (and an unknown id:
TransactionalIdNotFoundException); the partition's producers described; a classic consumer
group that reads and commits, then listed, described, its offsets listed, altered and deleted,
and the group deleted; offsets listed (earliest, latest, max-timestamp, by time) and looked
up by time; records deleted; the cluster, topics and topic configs described; a config
altered; two members of a group sharing four partitions (range assignment) through a join
and a leave; a static member (``group.instance.id``) closing without leaving, rejoining into
its assignment without a rebalance, and removed by the Admin client; then the same with the
KIP-848 consumer protocol (``group.protocol=consumer``): a member that reads and commits, the
group described (state, type, assignor, members), listed and its offsets listed; two members
sharing four partitions through a join and a leave with each server assignor (``uniform``,
``range``); a pattern subscription; a static member leaving for now (it keeps its partitions,
the group Reconciling) and rejoining, then removed; an unknown assignor
(UnsupportedAssignorException); the groups deleted; a topic deleted.

The same program runs against a fresh real Kafka 4.4 broker and a fresh ``pylogctl broker``;
every line must be the same. It runs twice: on Kafka 4.4's client, and on Kafka 3.9's (the last
3.x release), which speaks older versions of most requests (its Admin lists groups with
ListGroups v4, without group types) and so must be served alike too. The real broker is formatted with ``transaction.version=1``, the
transaction protocol ``pylogctl broker`` implements (it does not advertise the feature, so the
client uses that protocol with it): with version 2 Kafka bumps the producer epoch at every
transaction's end, which ``describe-producers`` shows.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from broker_support import BrokerProcess
from kafka_answers import cached_json, dir_key
from kafka_jvm import KAFKA_DIR, KAFKA_VERSION, LEGACY_VERSION, KafkaBroker, java_program, \
    require_kafka

PROGRAM = KAFKA_DIR / "clients" / "ClientMatrix.java"
HEARTBEAT_MS = 500  # KIP-848 members heartbeat (and so reconcile) this often on both brokers


def run_matrix(bootstrap: str, client: str) -> list[dict]:
    out = subprocess.run([*java_program(PROGRAM, client), bootstrap], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines()]


def kafka_matrix(work: Path, client: str) -> list[dict]:
    """The program's lines against a fresh real Kafka broker."""
    kafka = KafkaBroker(log_dir=work / "logs", work_dir=work,
                        overrides={"group.consumer.min.heartbeat.interval.ms": HEARTBEAT_MS,
                                   "group.consumer.heartbeat.interval.ms": HEARTBEAT_MS})
    kafka.format(None, "--feature", "transaction.version=1")
    kafka.start()
    try:
        return run_matrix(kafka.bootstrap, client)
    finally:
        kafka.stop()


@pytest.mark.parametrize("client", [KAFKA_VERSION, LEGACY_VERSION])
def test_the_java_client_sees_pylogctl_broker_as_it_sees_kafka(tmp_path, client):
    require_kafka()
    require_kafka(client)
    # the real broker's answers, kept per machine for this program, client and configuration
    theirs = cached_json("java-client-matrix", dir_key(None, [PROGRAM, Path(__file__)], client),
                         lambda: kafka_matrix(tmp_path / "kafka", client))
    with BrokerProcess(tmp_path / "pylogctl" / "logs", "--group-consumer-heartbeat-interval-ms",
                       str(HEARTBEAT_MS)) as broker:
        ours = run_matrix(broker.bootstrap, client)
    assert len(theirs) == 49 and [s["step"] for s in ours] == [s["step"] for s in theirs]
    for mine, kafkas in zip(ours, theirs):
        assert mine == kafkas, mine["step"]
    refused = {s["step"] for s in theirs if "error" in s}
    assert refused == {"create-existing-topic", "produce-too-large",
                       "describe-missing-transaction", "consumer-protocol-unknown-assignor"}
