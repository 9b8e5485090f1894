"""A small, realistic log dir written with pylogctl's own batch writer.

It gives a fresh install something real to inspect (``pylogctl sample``) and exercises every
codec, headers, tombstones, an idempotent producer and a committed transaction. Timestamps are
fixed so the output is reproducible.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from ..format.builder import RecordBatchBuilder, build_end_txn_marker
from ..format.compression import Codec
from ..storage.checkpoint import (HIGH_WATERMARK_CHECKPOINT, LEADER_EPOCH_CHECKPOINT,
                                  LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT,
                                  format_checkpoint)
from ..storage.log_dir_layout import META_PROPERTIES, PARTITION_METADATA
from ..storage.naming import log_filename

BASE_TS = 1_700_000_000_000
TOPIC = "orders"


def _orders_segment() -> tuple[bytes, int]:
    """Batches for ``orders-0``; returns the segment bytes and the next offset."""
    batches: list[bytes] = []
    offset = 0
    ts = BASE_TS

    def add(builder: RecordBatchBuilder, rows) -> None:
        nonlocal offset, ts
        for key, value, headers in rows:
            builder.append(ts, key, value, headers)
            ts += 7
        batches.append(builder.build())
        offset = builder.next_offset()

    for codec in Codec:
        rows = [(f"order-{offset + i}".encode(),
                 f'{{"id":{offset + i},"item":"widget","qty":{i + 1},"codec":"{codec}"}}'.encode(),
                 [("source", b"web"), ("trace-id", f"{offset + i:08x}".encode())] if i % 2 == 0 else [])
                for i in range(3)]
        add(RecordBatchBuilder(base_offset=offset, codec=codec, partition_leader_epoch=0), rows)
    # an idempotent producer's batch and a tombstone
    add(RecordBatchBuilder(base_offset=offset, producer_id=1000, producer_epoch=0, base_sequence=0,
                           partition_leader_epoch=0),
        [(b"order-3", None, []), (b"order-4", b'{"id":4,"status":"shipped"}', [])])
    # a committed transaction: data, then the COMMIT marker
    add(RecordBatchBuilder(base_offset=offset, producer_id=2000, producer_epoch=3, base_sequence=0,
                           is_transactional=True, partition_leader_epoch=1),
        [(b"order-20", b'{"id":20,"item":"gadget","qty":1}', [("txn", b"yes")])])
    batches.append(build_end_txn_marker(offset=offset, producer_id=2000, producer_epoch=3,
                                        commit=True, coordinator_epoch=5, timestamp=ts,
                                        partition_leader_epoch=1))
    offset += 1
    return b"".join(batches), offset


def write_sample_log_dir(path: str | os.PathLike[str]) -> list[Path]:
    """Write the sample into ``path`` (created if needed); return the files written."""
    root = Path(path)
    part = root / f"{TOPIC}-0"
    part.mkdir(parents=True, exist_ok=True)
    segment, next_offset = _orders_segment()
    written = []

    def put(p: Path, data: bytes | str) -> None:
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        written.append(p)

    put(part / log_filename(0), segment)
    put(part / LEADER_EPOCH_CHECKPOINT, "0\n2\n0 0\n1 %d\n" % (next_offset - 2))
    put(part / PARTITION_METADATA,
        f"version: 0\ntopic_id: {uuid.UUID(int=0x5A3C1F).hex[:22]}\n")
    put(root / META_PROPERTIES, "#Written by pylogctl sample\nversion=1\nnode.id=1\n"
        "cluster.id=pylogctl-sample-clu\n")
    for name, value in ((RECOVERY_POINT_CHECKPOINT, 0), (HIGH_WATERMARK_CHECKPOINT, next_offset),
                        (LOG_START_OFFSET_CHECKPOINT, None)):
        put(root / name, format_checkpoint([] if value is None else [f"{TOPIC} 0 {value}"]))
    return written
