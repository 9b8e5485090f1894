"""Every metadata record type Kafka 4.4 writes, in one log segment built for the purpose, read by
``kafka-metadata-shell`` and by pylogctl: the images must print alike, line for line.

What a broker's tools cannot make a broker write is here: controller registrations, fencing and
registration changes with directories and cordoned ones, PartitionChangeRecords with ELR then
a ClearElrRecord, delegation tokens, SCRAM and ACL removals, unregistered brokers, configs
Kafka's image drops (a 3.x topic config, a BROKER_LOGGER config, an unknown group config),
metadata transactions committed and aborted (KIP-868), NoOp and ZK migration records. (Records
Kafka's loader refuses, where replay stops, are tests/storage/test_metadata_image.py's.)
Seeded random cuts of the same records into batches check that applying record by record
ends where Kafka's batch-by-batch deltas end.
"""

from __future__ import annotations

import random

import pytest

from kafka_jvm import require_kafka
from metadata_scenario import metadata_shell
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.metadata_records import API_KEYS, encode_metadata_record
from pylogctl.storage.metadata_loader import load_metadata_file
from pylogctl.tools.metadata_nodes import root_node
from pylogctl.tools.metadata_shell import Shell

TOP = ("acls", "clientQuotas", "cluster", "configs", "delegationToken", "features",
       "producerIds", "provenance", "scram", "topics")
COMMANDS = [["find", "/image"], ["tree", "/image"], ["ls", "/image/*", "/image/*/*"]] + [
    ["tree", f"/image/{top}"] for top in TOP]


def rec(kind: str, version: int = 0, /, **data) -> bytes:
    return encode_metadata_record(API_KEYS[kind], version, data)


def uuid(n: int) -> bytes:
    return n.to_bytes(16, "big")


def endpoint(name: str, port: int, protocol: int = 0) -> dict:
    return {"name": name, "host": f"h{port}", "port": port, "securityProtocol": protocol}


def feature(name: str, low: int, high: int) -> dict:
    return {"name": name, "minSupportedVersion": low, "maxSupportedVersion": high}


def every_type() -> list[list[bytes]]:
    """Batches of records; the comments say what Kafka makes of each."""
    t1, t2, t3 = uuid(11), uuid(12), uuid(13)
    partition = dict(removingReplicas=[], addingReplicas=[], leaderEpoch=0, partitionEpoch=0)
    return [
        [rec("FEATURE_LEVEL_RECORD", name="metadata.version", featureLevel=33),  # cordoning
         rec("FEATURE_LEVEL_RECORD", name="group.version", featureLevel=1),
         rec("FEATURE_LEVEL_RECORD", name="transaction.version", featureLevel=2)],
        [rec("REGISTER_BROKER_RECORD", 3, brokerId=1, incarnationId=uuid(1), brokerEpoch=10,
             endPoints=[endpoint("PLAINTEXT", 9092), endpoint("SSL", 9093, 1)],
             features=[feature("metadata.version", 7, 25), feature("kraft.version", 0, 1)],
             rack="r1", fenced=True, logDirs=[uuid(102), uuid(101)]),
         rec("REGISTER_BROKER_RECORD", 4, brokerId=2, incarnationId=uuid(2), brokerEpoch=20,
             endPoints=[endpoint("PLAINTEXT", 9094)], features=[], rack=None, fenced=True,
             logDirs=[uuid(201)], cordonedLogDirs=[uuid(201)]),
         rec("REGISTER_BROKER_RECORD", 1, brokerId=3, incarnationId=uuid(3), brokerEpoch=30,
             endPoints=[], features=[], rack=None, fenced=True),
         rec("REGISTER_CONTROLLER_RECORD", controllerId=3000, incarnationId=uuid(4),
             zkMigrationReady=True, endPoints=[endpoint("CONTROLLER", 9095, 2)],
             features=[feature("kraft.version", 0, 1)])],
        [rec("UNFENCE_BROKER_RECORD", id=1, epoch=10),
         rec("FENCE_BROKER_RECORD", id=1, epoch=10),
         rec("UNFENCE_BROKER_RECORD", id=1, epoch=10),
         rec("BROKER_REGISTRATION_CHANGE_RECORD", 3, brokerId=2, brokerEpoch=20, fenced=-1,
             inControlledShutdown=1, logDirs=[uuid(202), uuid(201)], cordonedLogDirs=[]),
         rec("UNREGISTER_BROKER_RECORD", brokerId=3, brokerEpoch=30)],
        [rec("TOPIC_RECORD", name="orders", topicId=t1),
         rec("PARTITION_RECORD", 1, partitionId=0, topicId=t1, replicas=[1, 2], isr=[1, 2],
             leader=1, directories=[uuid(101), uuid(201)], **partition),
         rec("PARTITION_RECORD", 2, partitionId=1, topicId=t1, replicas=[2, 1], isr=[2],
             leader=2, leaderRecoveryState=1, directories=[], eligibleLeaderReplicas=[1],
             lastKnownElr=[], **partition)],
        [rec("PARTITION_CHANGE_RECORD", 2, partitionId=0, topicId=t1, leader=2, isr=[2],
             eligibleLeaderReplicas=[1], lastKnownElr=[1]),
         rec("PARTITION_CHANGE_RECORD", 1, partitionId=0, topicId=t1,
             directories=[uuid(102), uuid(202)]),
         rec("PARTITION_CHANGE_RECORD", partitionId=1, topicId=t1, leader=1,
             leaderRecoveryState=0, replicas=[2, 1, 3], addingReplicas=[3]),
         rec("CLEAR_ELR_RECORD", topicName="orders")],
        [rec("TOPIC_RECORD", name="gone", topicId=t2),
         rec("CONFIG_RECORD", resourceType=2, resourceName="gone", name="retention.ms",
             value="1")],
        [rec("REMOVE_TOPIC_RECORD", topicId=t2)],
        [rec("CONFIG_RECORD", resourceType=2, resourceName="orders", name="retention.ms",
             value="86400000"),
         rec("CONFIG_RECORD", resourceType=2, resourceName="orders",
             name="message.format.version", value="2.8"),  # a 3.x name: not in the image
         rec("CONFIG_RECORD", resourceType=2, resourceName="orders", name="segment.ms",
             value="5"),
         rec("CONFIG_RECORD", resourceType=2, resourceName="orders", name="segment.ms",
             value=None),
         rec("CONFIG_RECORD", resourceType=4, resourceName="", name="log.retention.ms",
             value="1000"),
         rec("CONFIG_RECORD", resourceType=4, resourceName="1", name="anything.goes",
             value="x"),
         rec("CONFIG_RECORD", resourceType=8, resourceName="1", name="kafka", value="DEBUG"),
         rec("CONFIG_RECORD", resourceType=32, resourceName="g1",
             name="consumer.session.timeout.ms", value="50000"),
         rec("CONFIG_RECORD", resourceType=32, resourceName="g1", name="no.such", value="1"),
         rec("CONFIG_RECORD", resourceType=16, resourceName="m1", name="interval.ms",
             value="1000")],
        [rec("CLIENT_QUOTA_RECORD", entity=[{"entityType": "user", "entityName": "alice"}],
             key="producer_byte_rate", value=1024.0, remove=False),
         rec("CLIENT_QUOTA_RECORD", entity=[{"entityType": "user", "entityName": "b(o)b"},
                                            {"entityType": "client-id", "entityName": "c_1"}],
             key="request_percentage", value=12.5, remove=False),
         rec("CLIENT_QUOTA_RECORD", entity=[{"entityType": "ip", "entityName": "10.0.0.1"}],
             key="connection_creation_rate", value=1e-7, remove=False),
         rec("CLIENT_QUOTA_RECORD", entity=[{"entityType": "user", "entityName": "alice"}],
             key="consumer_byte_rate", value=2.0, remove=False),
         rec("CLIENT_QUOTA_RECORD", entity=[{"entityType": "user", "entityName": "alice"}],
             key="consumer_byte_rate", value=0.0, remove=True)],
        [rec("PRODUCER_IDS_RECORD", brokerId=1, brokerEpoch=10, nextProducerId=5000)],
        [rec("ACCESS_CONTROL_ENTRY_RECORD", id=uuid(501), resourceType=2,
             resourceName="orders", patternType=3, principal="User:alice", host="*",
             operation=3, permissionType=3),
         rec("ACCESS_CONTROL_ENTRY_RECORD", id=uuid(502), resourceType=3, resourceName="g",
             patternType=4, principal="User:bob", host="10.0.0.1", operation=2,
             permissionType=2),
         rec("ACCESS_CONTROL_ENTRY_RECORD", id=uuid(503), resourceType=4,
             resourceName="kafka-cluster", patternType=3, principal="User:x", host="*",
             operation=9, permissionType=3)],
        [rec("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", id=uuid(503))],
        [rec("USER_SCRAM_CREDENTIAL_RECORD", name="alice", mechanism=1, salt=b"\x01\x02",
             storedKey=b"\xff" * 4, serverKey=b"\x00\x10", iterations=4096),
         rec("USER_SCRAM_CREDENTIAL_RECORD", name="alice", mechanism=2, salt=b"s",
             storedKey=b"k", serverKey=b"v", iterations=8192),
         rec("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", name="alice", mechanism=2)],
        [rec("DELEGATION_TOKEN_RECORD", owner="User:alice", requester="User:bob",
             renewers=["User:carol", "User:dave"], issueTimestamp=1, maxTimestamp=3,
             expirationTimestamp=2, tokenId="tok-1"),
         rec("DELEGATION_TOKEN_RECORD", owner="User:x", requester="User:x", renewers=[],
             issueTimestamp=1, maxTimestamp=3, expirationTimestamp=2, tokenId="tok-2"),
         rec("REMOVE_DELEGATION_TOKEN_RECORD", tokenId="tok-2")],
        [rec("BEGIN_TRANSACTION_RECORD", name="create big"),
         rec("TOPIC_RECORD", name="committed", topicId=t3)],
        [rec("PARTITION_RECORD", partitionId=0, topicId=t3, replicas=[1], isr=[1], leader=1,
             **partition)],
        [rec("END_TRANSACTION_RECORD")],
        [rec("BEGIN_TRANSACTION_RECORD"),
         rec("TOPIC_RECORD", name="aborted", topicId=uuid(14))],
        [rec("ABORT_TRANSACTION_RECORD", reason="too big")],
        [rec("NO_OP_RECORD"), rec("ZK_MIGRATION_STATE_RECORD", zkMigrationState=0)],
    ]


def segment(groups: list[list[bytes]], epoch: int = 3) -> bytes:
    out, offset = b"", 0
    for i, group in enumerate(groups):
        builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=epoch)
        for value in group:
            builder.append(1_700_000_000_000 + 1_234 * i, None, value)
        out += builder.build()
        offset += len(group)
    return out


def compare(tmp_path, groups: list[list[bytes]]) -> None:
    path = tmp_path / "logs" / "__cluster_metadata-0" / "00000000000000000000.log"
    path.parent.mkdir(parents=True)
    path.write_bytes(segment(groups))
    theirs = metadata_shell(path, COMMANDS)
    replay = load_metadata_file(path)
    shell = Shell(root_node(replay.image))
    for command, expected in zip(COMMANDS, theirs):
        assert getattr(shell, command[0])(command[1:]) == expected, command
    return replay


def test_every_record_type_prints_as_kafka_metadata_shell_prints_it(tmp_path):
    require_kafka()
    replay = compare(tmp_path, every_type())
    assert replay.stopped is None and replay.open_transaction is None
    assert "aborted" not in replay.image.topic_ids and "committed" in replay.image.topic_ids


@pytest.mark.parametrize("seed", [1, 2])
def test_the_same_records_in_other_batches(tmp_path, seed):
    """Kafka applies a batch's records together, pylogctl one by one: the same records cut
    into other batches (a transaction's markers kept in batches of their own, as the
    controller writes them) end in the same image."""
    require_kafka()
    rng = random.Random(seed)
    groups = every_type()
    head, txns = groups[:-6], groups[-6:]
    flat = [r for g in head for r in g]
    regrouped, i = [], 0
    while i < len(flat):
        n = rng.randint(1, 6)
        regrouped.append(flat[i:i + n])
        i += n
    compare(tmp_path, regrouped + txns)
