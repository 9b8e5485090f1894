"""Transactions against the broker with real transactional producers: commit and abort with
offsets sent to the transaction, what read_committed and read_uncommitted consumers see, the
state in ``__transaction_state`` across a restart, fencing by a new producer, the abort of a
timed-out transaction, the completion at start-up of a transaction left prepared,
UNSTABLE_OFFSET_COMMIT while a transactional commit is pending -- and the offline commands on
the log dir afterwards."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import struct
from pathlib import Path

import pytest

from broker_support import BrokerThread
from pylogctl.broker.transaction_coordinator import TransactionConfig
from pylogctl.format.transaction_log_records import TransactionState

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

TIMEOUT = 30
FAST_TXNS = TransactionConfig(state_log_partitions=5)
TOPIC = "payments"


def broker(log_dir: Path) -> BrokerThread:
    return BrokerThread(log_dir, transaction=FAST_TXNS)


def create_topic(bootstrap: str, name: str = TOPIC, partitions: int = 2) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(TIMEOUT)


def producer(bootstrap: str, transactional_id: str, **extra) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                  "log_level": 0, **extra})
    p.init_transactions(TIMEOUT)
    return p


def read_all(bootstrap: str, isolation: str, topic: str = TOPIC,
             partitions: int = 2) -> list[bytes]:
    """Every data record a consumer with ``isolation`` gets, up to the end of each partition
    (its high watermark or last stable offset)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}",
                  "isolation.level": isolation, "enable.partition.eof": True,
                  "enable.auto.commit": False, "log_level": 0})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values, ends = [], set()
    try:
        while len(ends) < partitions:
            m = c.poll(TIMEOUT)
            assert m is not None, "no end of partition reached"
            if m.error():
                assert m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF
                ends.add(m.partition())
                continue
            values.append(m.value())
    finally:
        c.close()
    return sorted(values)


def txn_state(b: BrokerThread, transactional_id: str):
    return b.call(lambda: b.broker.transactions.state.transactions.get(transactional_id))


def test_commit_abort_offsets_restart_and_offline_tools(tmp_path, cli):
    log_dir = tmp_path / "logs"
    with broker(log_dir) as b:
        create_topic(b.bootstrap)
        p = producer(b.bootstrap, "payments-tx")
        group = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "billing",
                          "enable.auto.commit": False, "log_level": 0})
        p.begin_transaction()
        for i in range(10):
            p.produce(TOPIC, value=b"committed-%d" % i, partition=i % 2)
        p.send_offsets_to_transaction([TopicPartition(TOPIC, 0, 5), TopicPartition(TOPIC, 1, 5)],
                                      group.consumer_group_metadata(), TIMEOUT)
        p.commit_transaction(TIMEOUT)
        p.begin_transaction()
        for i in range(4):
            p.produce(TOPIC, value=b"aborted-%d" % i, partition=i % 2)
        p.send_offsets_to_transaction([TopicPartition(TOPIC, 0, 7)],
                                      group.consumer_group_metadata(), TIMEOUT)
        p.flush(TIMEOUT)
        p.abort_transaction(TIMEOUT)

        committed = [b"committed-%d" % i for i in range(10)]
        assert read_all(b.bootstrap, "read_committed") == sorted(committed)
        assert read_all(b.bootstrap, "read_uncommitted") == \
            sorted(committed + [b"aborted-%d" % i for i in range(4)])
        offsets = group.committed([TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)], TIMEOUT)
        assert [tp.offset for tp in offsets] == [5, 5]  # the aborted commit of 7 is gone
        group.close()
        state = txn_state(b, "payments-tx")
        assert state.state == TransactionState.CompleteAbort and not state.partitions
        producer_id, epoch = state.producer_id, state.producer_epoch
        p.flush(0)
        del p

    with broker(log_dir) as b:  # state reloaded from __transaction_state and the logs
        state = txn_state(b, "payments-tx")
        assert (state.state, state.producer_id, state.producer_epoch) == \
            (TransactionState.CompleteAbort, producer_id, epoch)
        assert b.call(lambda: {tp: o.offset for tp, o in
                               b.broker.groups.groups["billing"].offsets.items()}) == \
            {(TOPIC, 0): 5, (TOPIC, 1): 5}
        p = producer(b.bootstrap, "payments-tx")  # the same id again: next epoch
        state = txn_state(b, "payments-tx")
        assert (state.state, state.producer_id, state.producer_epoch) == \
            (TransactionState.Empty, producer_id, epoch + 1)
        p.begin_transaction()
        p.produce(TOPIC, value=b"after-restart", partition=0)
        p.commit_transaction(TIMEOUT)
        assert b"after-restart" in read_all(b.bootstrap, "read_committed")
        del p

    # offline: markers in the data and offsets partitions, verified batches
    r = cli("dump-segment", "--print-data-log", *sorted(log_dir.glob(f"{TOPIC}-*/*.log")))
    assert r.code == 0, r.err
    assert "isvalid: false" not in r.out
    assert r.out.count("endTxnMarker: COMMIT") == 2 + 1
    assert r.out.count("endTxnMarker: ABORT") == 2
    r = cli("dump-segment", "--transaction-log-decoder",
            *sorted(log_dir.glob("__transaction_state-*/*.log")))
    assert r.code == 0, r.err
    payloads = [json.loads(line.split(" payload: ", 1)[1]) for line in r.lines
                if '"transactionalId":"payments-tx"' in line]
    states = [p["data"]["transactionStatus"] for p in payloads]
    # (a client adds partitions in one or more requests, so Ongoing may repeat; the decoder
    # names the states as Kafka 4.4's does)
    assert [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s] == [
        "Empty", "Ongoing", "PrepareCommit", "CompleteCommit", "Ongoing", "PrepareAbort",
        "CompleteAbort", "Empty", "Ongoing", "PrepareCommit", "CompleteCommit"]
    assert all(p["version"] == "0" for p in payloads)
    r = cli("consumer-groups", log_dir, "--describe", "--group", "billing", "-o", "json")
    assert r.code == 0, r.err
    assert sorted((row["partition"], row["currentOffset"]) for row in json.loads(r.out)) == \
        [(0, 5), (1, 5)]
    r = cli("recover", "--check", log_dir)
    assert r.code == 0, r.out + r.err


def test_new_producer_fences_and_aborts_the_ongoing_transaction(tmp_path):
    with broker(tmp_path / "logs") as b:
        create_topic(b.bootstrap)
        zombie = producer(b.bootstrap, "fenced-tx")
        zombie.begin_transaction()
        zombie.produce(TOPIC, value=b"zombie", partition=0)
        zombie.flush(TIMEOUT)
        first = txn_state(b, "fenced-tx")
        assert first.state == TransactionState.Ongoing
        successor = producer(b.bootstrap, "fenced-tx")  # retried past CONCURRENT_TRANSACTIONS
        state = txn_state(b, "fenced-tx")
        # one epoch for the fence (used by the abort markers), one for the new producer
        assert (state.state, state.producer_epoch) == \
            (TransactionState.Empty, first.producer_epoch + 2)
        with pytest.raises(KafkaException):
            zombie.commit_transaction(TIMEOUT)
        assert read_all(b.bootstrap, "read_committed", partitions=2) == []
        assert read_all(b.bootstrap, "read_uncommitted", partitions=2) == [b"zombie"]
        successor.begin_transaction()
        successor.produce(TOPIC, value=b"successor", partition=0)
        successor.commit_transaction(TIMEOUT)
        assert read_all(b.bootstrap, "read_committed") == [b"successor"]


def test_timed_out_transaction_is_aborted(tmp_path):
    with broker(tmp_path / "logs") as b:
        create_topic(b.bootstrap)
        p = producer(b.bootstrap, "slow-tx", **{"transaction.timeout.ms": 60000})
        p.begin_transaction()
        p.produce(TOPIC, value=b"too-late", partition=1)
        p.flush(TIMEOUT)
        ongoing = txn_state(b, "slow-tx")
        coordinator = b.broker.transactions
        assert b.call(coordinator.abort_timed_out_transactions, ongoing.start_ms) == []
        assert b.call(coordinator.abort_timed_out_transactions,
                      ongoing.start_ms + 60001) == ["slow-tx"]
        state = txn_state(b, "slow-tx")
        assert (state.state, state.producer_epoch) == \
            (TransactionState.CompleteAbort, ongoing.producer_epoch + 1)
        assert read_all(b.bootstrap, "read_committed") == []
        with pytest.raises(KafkaException):
            p.commit_transaction(TIMEOUT)


def test_prepared_transaction_is_completed_at_start(tmp_path):
    log_dir = tmp_path / "logs"
    with broker(log_dir) as b:
        create_topic(b.bootstrap)
        p = producer(b.bootstrap, "crashed-tx")
        p.begin_transaction()
        p.produce(TOPIC, value=b"decided", partition=0)
        p.flush(TIMEOUT)
        ongoing = txn_state(b, "crashed-tx")
        # as if the broker stopped right after writing PrepareCommit, before any marker
        b.call(b.broker.transactions.state.append,
               ongoing.prepare_abort_or_commit(True, ongoing.start_ms + 1))
        assert read_all(b.bootstrap, "read_committed") == []
        del p
    with broker(log_dir) as b:
        assert txn_state(b, "crashed-tx").state == TransactionState.CompleteCommit
        assert read_all(b.bootstrap, "read_committed") == [b"decided"]


def _kio_call(port: int, api_key: int, version: int, body) -> object:
    """One request over a socket, encoded and decoded with the protocol library."""
    import kio.index
    import kio.serial
    request_cls = kio.index.load_request_schema(api_key, version)
    response_cls = kio.index.load_response_schema(api_key, version)
    out = io.BytesIO()
    header_cls = request_cls.__header_schema__
    kio.serial.entity_writer(header_cls)(out, header_cls(
        request_api_key=api_key, request_api_version=version, correlation_id=7,
        client_id="test"))
    kio.serial.entity_writer(request_cls)(out, body)
    payload = out.getvalue()
    with socket.create_connection(("127.0.0.1", port), TIMEOUT) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        frame = sock.recv(size, socket.MSG_WAITALL)
    _, pos = kio.serial.entity_reader(response_cls.__header_schema__)(frame, 0)
    return kio.serial.entity_reader(response_cls)(frame, pos)[0]


def test_offset_fetch_require_stable_while_commit_pending(tmp_path):
    from kio.schema.offset_fetch.v7.request import OffsetFetchRequest, OffsetFetchRequestTopic
    with broker(tmp_path / "logs") as b:
        create_topic(b.bootstrap)
        p = producer(b.bootstrap, "offsets-tx")
        group = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "pending",
                          "log_level": 0})
        p.begin_transaction()
        p.send_offsets_to_transaction([TopicPartition(TOPIC, 0, 3)],
                                      group.consumer_group_metadata(), TIMEOUT)

        def fetch(stable: bool) -> tuple[int, int]:
            response = _kio_call(b.port, 9, 7, OffsetFetchRequest(
                group_id="pending", require_stable=stable,
                topics=(OffsetFetchRequestTopic(name=TOPIC, partition_indexes=(0,)),)))
            part = response.topics[0].partitions[0]
            return part.error_code.value, part.committed_offset

        assert fetch(True) == (88, -1)  # UNSTABLE_OFFSET_COMMIT
        assert fetch(False) == (0, -1)
        p.commit_transaction(TIMEOUT)
        assert fetch(True) == (0, 3)
        group.close()


def test_aiokafka_transactional_producer(tmp_path):
    aiokafka = pytest.importorskip("aiokafka")
    with broker(tmp_path / "logs") as b:
        create_topic(b.bootstrap)

        async def run() -> None:
            p = aiokafka.AIOKafkaProducer(bootstrap_servers=b.bootstrap,
                                          transactional_id="aio-tx")
            await p.start()
            try:
                async with p.transaction():
                    await p.send_and_wait(TOPIC, b"aio-committed", partition=0)
                await p.begin_transaction()
                await p.send_and_wait(TOPIC, b"aio-aborted", partition=1)
                await p.abort_transaction()
            finally:
                await p.stop()

        asyncio.run(run())
        assert read_all(b.bootstrap, "read_committed") == [b"aio-committed"]
        assert read_all(b.bootstrap, "read_uncommitted") == [b"aio-aborted", b"aio-committed"]


def test_kafka_python_transactional_producer(tmp_path):
    kafka = pytest.importorskip("kafka")
    with broker(tmp_path / "logs") as b:
        create_topic(b.bootstrap)
        p = kafka.KafkaProducer(bootstrap_servers=b.bootstrap, transactional_id="kp-tx")
        try:
            p.init_transactions()
            p.begin_transaction()
            p.send(TOPIC, b"kp-committed", partition=0)
            p.commit_transaction()
            p.begin_transaction()
            p.send(TOPIC, b"kp-aborted", partition=1)
            p.flush()
            p.abort_transaction()
        finally:
            p.close()
        assert read_all(b.bootstrap, "read_committed") == [b"kp-committed"]
        assert read_all(b.bootstrap, "read_uncommitted") == [b"kp-aborted", b"kp-committed"]
