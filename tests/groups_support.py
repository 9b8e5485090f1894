"""Writing small ``__consumer_offsets`` partitions for the group tests, with pylogctl's own
writer (``RecordBatchBuilder``) and record encoders, one batch per call, in offset order."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.format.compression import Codec
from pylogctl.format.group_coordinator_records import (CONSUMER_PROTOCOL_ASSIGNMENT,
                                                       CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                       encode_consumer_protocol,
                                                       encode_group_record)

TS = 1_700_000_000_000


def commit_key(group: str, topic: str, partition: int, key_type: int = 1) -> bytes:
    return encode_group_record(key_type, {"group": group, "topic": topic,
                                          "partition": partition})[0]


def commit_value(offset: int, *, version: int = 3, epoch: int = -1, metadata: str = "",
                 ts: int = TS, expire: int = -1) -> bytes:
    value: dict[str, Any] = {"offset": offset, "leaderEpoch": epoch, "metadata": metadata,
                             "commitTimestamp": ts, "expireTimestamp": expire}
    return encode_group_record(1, {"group": "", "topic": "", "partition": 0}, version, value)[1]


def member(member_id: str, topics: dict[str, list[int]], *, client_id: str = "client",
           host: str = "/10.0.0.1", instance: str | None = None) -> dict[str, Any]:
    """A classic consumer-protocol member assigned ``topics``."""
    return {"memberId": member_id, "groupInstanceId": instance, "clientId": client_id,
            "clientHost": host, "rebalanceTimeout": 300000, "sessionTimeout": 45000,
            "subscription": encode_consumer_protocol(
                0, {"topics": sorted(topics), "userData": None}, CONSUMER_PROTOCOL_SUBSCRIPTION),
            "assignment": encode_consumer_protocol(0, {"assignedPartitions": [
                {"topic": t, "partitions": ps} for t, ps in topics.items()], "userData": None},
                CONSUMER_PROTOCOL_ASSIGNMENT)}


def group_value(members: list[dict[str, Any]], *, version: int = 3, generation: int = 1,
                protocol_type: str = "consumer", protocol: str | None = "range",
                ts: int = TS) -> bytes:
    """A ``GroupMetadataValue``; fields the version lacks are left at their defaults."""
    absent = {"rebalanceTimeout"} if version < 1 else set()
    absent |= {"groupInstanceId"} if version < 3 else set()
    members = [{k: v for k, v in m.items() if k not in absent} for m in members]
    return encode_group_record(2, {"group": ""}, version, {
        "protocolType": protocol_type, "generation": generation,
        "protocol": protocol if members else None,
        "leader": members[0]["memberId"] if members else None,
        "currentStateTimestamp": ts if version >= 2 else -1, "members": members})[1]


class OffsetsLog:
    """``__consumer_offsets-{partition}`` in ``log_dir``, appended to batch by batch."""

    def __init__(self, log_dir: Path, partition: int = 0, base_offset: int = 0) -> None:
        self.dir = log_dir / f"__consumer_offsets-{partition}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.offset = base_offset
        self.segment = self.dir / f"{base_offset:020d}.log"
        self.segment.touch()
        self.positions: list[int] = []  # byte position of each batch written

    def roll(self) -> None:
        """Start a new segment at the next offset."""
        self.segment = self.dir / f"{self.offset:020d}.log"
        self.segment.touch()

    def batch(self, records: Iterable[tuple[bytes | None, bytes | None]], *,
              producer_id: int | None = None, codec: Codec = Codec.NONE) -> int:
        """One batch of ``(key, value)`` records; returns its base offset."""
        builder = RecordBatchBuilder(base_offset=self.offset, codec=codec,
                                     producer_id=-1 if producer_id is None else producer_id,
                                     producer_epoch=-1 if producer_id is None else 0,
                                     is_transactional=producer_id is not None,
                                     partition_leader_epoch=0)
        for key, value in records:
            builder.append(TS, key, value)
        return self.raw(builder.build(), builder.next_offset())

    def raw(self, data: bytes, next_offset: int) -> int:
        base = self.offset
        self.positions.append(self.segment.stat().st_size)
        with open(self.segment, "ab") as f:
            f.write(data)
        self.offset = next_offset
        return base

    def commit(self, group: str, offsets: dict[tuple[str, int], int], *,
               producer_id: int | None = None, **value: Any) -> int:
        return self.batch([(commit_key(group, t, p), commit_value(o, **value))
                           for (t, p), o in offsets.items()], producer_id=producer_id)

    def delete_offsets(self, group: str, partitions: Iterable[tuple[str, int]]) -> int:
        return self.batch([(commit_key(group, t, p), None) for t, p in partitions])

    def group(self, group: str, members: list[dict[str, Any]], **options: Any) -> int:
        key = encode_group_record(2, {"group": group})[0]
        return self.batch([(key, group_value(members, **options))])

    def delete_group(self, group: str) -> int:
        return self.batch([(encode_group_record(2, {"group": group})[0], None)])

    def marker(self, producer_id: int, commit: bool) -> int:
        return self.raw(build_end_txn_marker(offset=self.offset, producer_id=producer_id,
                                             producer_epoch=0, commit=commit,
                                             coordinator_epoch=0, timestamp=TS,
                                             partition_leader_epoch=0), self.offset + 1)


def synthetic_log_dir(tmp_path: Path, *, hw: int, group: str = "g", committed: int = 3) -> Path:
    """A broker's log dir where ``group`` committed t-0 at ``committed``; the checkpointed high
    watermark of t-0 is ``hw`` (its data partition is written by :func:`data_partition`)."""
    log_dir = tmp_path / "broker"
    log_dir.mkdir()
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=7\n")
    from pylogctl.groups.partitioner import partition_for

    OffsetsLog(log_dir, partition_for(group, 1)).commit(group, {("t", 0): committed})
    (log_dir / "replication-offset-checkpoint").write_text(f"0\n1\nt 0 {hw}\n")
    return log_dir


def data_partition(log_dir: Path, topic: str, partition: int, *, end: int) -> Path:
    """``{topic}-{partition}`` holding one record, the last before ``end``."""
    path = log_dir / f"{topic}-{partition}"
    path.mkdir()
    builder = RecordBatchBuilder(base_offset=end - 1)
    builder.append(TS, b"k", b"v")
    (path / "00000000000000000000.log").write_bytes(builder.build())
    return path
