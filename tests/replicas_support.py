"""Brokers' log dirs holding replicas of one partition that diverge, written batch by batch.

A replica is a list of batches ``(leader epoch, records, tag)``: each batch gets the next
offsets, its records are ``tag-offset`` values, and the leader-epoch checkpoint is the chain
the batches make (as the leader's appends leave it). Two replicas with the same batches up
to some point hold the same bytes there, as replication leaves them.
"""

from __future__ import annotations

from pathlib import Path

from pylogctl.format.builder import RecordBatchBuilder

TS = 1_700_000_000_000
CLUSTER = "Ck9qJ3c4QmWDwKbJdHy8Qg"
TOPIC_ID = "GnR8wmiIQKa1VoPcAvrx8w"


def broker_dir(root: Path, node_id: int, batches: list[tuple[int, int, str]], *,
               topic: str = "t", partition: int = 0, hw: int | None = None,
               cluster: str = CLUSTER, topic_id: str = TOPIC_ID,
               extra_epochs: tuple[tuple[int, int], ...] = ()) -> Path:
    """``root/broker{node_id}``, a cleanly shut down KRaft log dir with one partition."""
    log_dir = root / f"broker{node_id}"
    part = log_dir / f"{topic}-{partition}"
    part.mkdir(parents=True)
    (log_dir / "meta.properties").write_text(
        f"version=1\nnode.id={node_id}\ncluster.id={cluster}\n"
        f"directory.id=AAAAAAAAAAAAAAAAAAAAA{node_id}\n")
    offset, data, chain = 0, b"", []
    for epoch, count, tag in batches:
        b = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=epoch)
        for i in range(count):
            b.append(TS + offset + i, f"k{offset + i}".encode(), f"{tag}-{offset + i}".encode())
        data += b.build()
        if not chain or chain[-1][0] < epoch:
            chain.append((epoch, offset))
        offset += count
    chain += extra_epochs
    (part / "00000000000000000000.log").write_bytes(data)
    (part / "leader-epoch-checkpoint").write_text(
        f"0\n{len(chain)}\n" + "".join(f"{e} {s}\n" for e, s in chain))
    (part / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
    hw = offset if hw is None else hw
    for name, value in (("replication-offset-checkpoint", hw),
                        ("recovery-point-offset-checkpoint", offset),
                        ("log-start-offset-checkpoint", None)):
        lines = "" if value is None else f"{topic} {partition} {value}\n"
        (log_dir / name).write_text(f"0\n{1 if lines else 0}\n{lines}")
    (log_dir / ".kafka_cleanshutdown").write_text("")
    return log_dir


def unclean_election(root: Path) -> tuple[Path, Path]:
    """Broker 1 led epoch 0 (offsets 0-9, replicated), then alone (10-14, epoch 0) until it
    died; broker 2, elected uncleanly at epoch 1, wrote 10-16 of its own."""
    common = [(0, 5, "a"), (0, 5, "a")]
    one = broker_dir(root, 1, common + [(0, 3, "lost"), (0, 2, "lost")], hw=10)
    two = broker_dir(root, 2, common + [(1, 4, "new"), (1, 3, "new")])
    return one, two
