"""Log dirs with transactions written batch by batch: data partitions with transactional
batches and markers, and ``__transaction_state`` records as a coordinator writes them."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.format.transaction_log_records import TOPIC as TXN_TOPIC
from pylogctl.format.transaction_log_records import TransactionState, encode_transaction_record
from pylogctl.groups.partitioner import partition_for
from pylogctl.groups.replica_append import AppendOutcome, append_to_replicas
from pylogctl.groups.replicas import LogDirs
from pylogctl.groups.transaction_state_topic import TransactionStateTopic
from pylogctl.groups.transaction_metadata import TransactionMetadata
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_dir_layout import log_segments
from pylogctl.storage.producer_recovery import producer_state_before

MINUTE = 60_000
NOW = time.time_ns() // 1_000_000  # the clock the tests pass as now_ms (the CLI reads its own)
OLD = NOW - 60 * MINUTE  # an hour before: past any transaction timeout


def log_dir(root: Path, broker_id: int = 1, name: str = "broker") -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "meta.properties").write_text(f"version=1\nnode.id={broker_id}\n"
                                       f"cluster.id=abcdefghijklmnopqrstuv\n")
    return d


class PartitionLog:
    """``{topic}-{partition}`` in a log dir, one segment, appended to batch by batch."""

    def __init__(self, log_dir: Path, topic: str, partition: int, leader_epoch: int = 0) -> None:
        self.dir = log_dir / f"{topic}-{partition}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.segment = self.dir / "00000000000000000000.log"
        self.segment.touch()
        self.offset = 0
        self.leader_epoch = leader_epoch
        (self.dir / "leader-epoch-checkpoint").write_text(f"0\n1\n{leader_epoch} 0\n")
        self.sequences: dict[int, int] = {}

    def _raw(self, data: bytes, next_offset: int) -> int:
        base = self.offset
        with open(self.segment, "ab") as f:
            f.write(data)
        self.offset = next_offset
        return base

    def records(self, values: list[tuple[bytes | None, bytes | None]], *, timestamp: int = OLD,
                producer_id: int = -1, epoch: int = 0, transactional: bool = False) -> int:
        """One batch; returns its base offset."""
        seq = self.sequences.get(producer_id, 0) if producer_id >= 0 else -1
        builder = RecordBatchBuilder(base_offset=self.offset, producer_id=producer_id,
                                     producer_epoch=epoch if producer_id >= 0 else -1,
                                     base_sequence=seq, is_transactional=transactional,
                                     partition_leader_epoch=self.leader_epoch)
        for key, value in values:
            builder.append(timestamp, key, value)
        if producer_id >= 0:
            self.sequences[producer_id] = seq + len(values)
        return self._raw(builder.build(), builder.next_offset())

    def txn(self, producer_id: int, n: int = 2, *, epoch: int = 0, timestamp: int = OLD) -> int:
        return self.records([(f"k{i}".encode(), f"v{i}".encode()) for i in range(n)],
                            timestamp=timestamp, producer_id=producer_id, epoch=epoch,
                            transactional=True)

    def marker(self, producer_id: int, commit: bool, *, epoch: int = 0,
               coordinator_epoch: int = 0, timestamp: int = OLD) -> int:
        return self._raw(build_end_txn_marker(
            offset=self.offset, producer_id=producer_id, producer_epoch=epoch, commit=commit,
            coordinator_epoch=coordinator_epoch, timestamp=timestamp,
            partition_leader_epoch=self.leader_epoch), self.offset + 1)

    def snapshot(self) -> None:
        """The producer snapshot at the log end a clean shutdown leaves."""
        manager = producer_state_before(str(self.dir), log_segments(self.dir), {}, self.offset,
                                        0, NOW)
        manager.take_snapshot()

    def high_watermark(self, log_dir: Path, hw: int | None = None) -> None:
        topic, _, partition = self.dir.name.rpartition("-")
        (log_dir / "replication-offset-checkpoint").write_text(
            f"0\n1\n{topic} {partition} {self.offset if hw is None else hw}\n")


class TransactionStateLog:
    """``__transaction_state`` with ``partitions`` partitions in a log dir."""

    def __init__(self, log_dir: Path, partitions: int = 2, leader_epoch: int = 3) -> None:
        self.partitions = partitions
        self.logs = [PartitionLog(log_dir, "__transaction_state", p, leader_epoch)
                     for p in range(partitions)]

    def write(self, metadata: TransactionMetadata | None, transactional_id: str | None = None,
              *, value_version: int = 0) -> int:
        """A record for the id (``None``: a tombstone for ``transactional_id``)."""
        tid = transactional_id if metadata is None else metadata.transactional_id
        assert tid is not None
        key, value = encode_transaction_record(
            tid, None if metadata is None else value_version,
            None if metadata is None else metadata.to_value())
        log = self.logs[partition_for(tid, self.partitions)]
        return log.records([(key, value)], timestamp=NOW - MINUTE)


def metadata(transactional_id: str, producer_id: int, state: TransactionState, *,
             partitions: frozenset = frozenset(), start_ms: int = OLD, epoch: int = 0,
             timeout_ms: int = 60_000) -> TransactionMetadata:
    return TransactionMetadata(transactional_id, producer_id, epoch, timeout_ms, state,
                               partitions, start_ms if state != TransactionState.Empty else -1,
                               start_ms + 10)


def forget(log_dir: Path, transactional_id: str) -> None:
    """Append a tombstone for the id to its ``__transaction_state`` partition."""
    dirs = LogDirs([log_dir])
    partition = TransactionStateTopic(dirs).partition_for(transactional_id)
    replica = dirs.choose(TXN_TOPIC, partition).chosen
    end = replica.log_end.offset
    builder = RecordBatchBuilder(base_offset=end, partition_leader_epoch=replica.leader_epoch)
    builder.append(time.time_ns() // 1_000_000, *encode_transaction_record(transactional_id))
    outcome = AppendOutcome(partition, 1, 1, end, end + 1, topic=TXN_TOPIC)
    append_to_replicas(dirs, TXN_TOPIC, partition, [builder.build()], outcome,
                       config=LogConfig(cleanup_policy=("compact",)))


_OPEN_PRODUCER = """
import sys
from confluent_kafka import Producer
bootstrap, tid, topic = sys.argv[1:4]
p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid,
              "transaction.timeout.ms": 900000})
p.init_transactions(60)
p.begin_transaction()
for i in range(3):
    p.produce(topic, key=b"open-%d" % i, value=b"never decided", partition=0)
p.flush(60)
print("ready", flush=True)
sys.stdin.read()
"""


def killed_mid_transaction(bootstrap: str, transactional_id: str, topic: str) -> None:
    """A confluent-kafka producer that writes 3 records to ``topic``-0 in a transaction and
    is SIGKILLed before ending it (its coordinator keeps it Ongoing for 15 minutes)."""
    opener = subprocess.Popen([sys.executable, "-c", _OPEN_PRODUCER, bootstrap,
                               transactional_id, topic],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert opener.stdout is not None and opener.stdout.readline().strip() == "ready"
    finally:
        opener.kill()
        opener.wait(30)
