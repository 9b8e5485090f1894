"""Dumping ``.txnindex`` (aborted transactions) and producer-state ``.snapshot`` files."""

from __future__ import annotations

import os
from typing import Any, Iterator

from ..errors import FileUnreadableError, PylogctlError
from ..format.producer_snapshot import read_producer_snapshot
from ..storage.files import read_bytes
from ..storage.transaction_index import read_transaction_index
from .file_dump import FileDump


class StateDump(FileDump):
    """A ``.txnindex`` (kind ``txn-index``) or producer ``.snapshot`` (``producer-snapshot``)."""

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        try:
            yield from (_txn_items(self.path) if self.kind == "txn-index"
                        else _snapshot_items(self.path))
        except FileUnreadableError as exc:
            self.error = exc
        except PylogctlError as exc:
            # a corrupt snapshot is reported, not fatal, as kafka-dump-log does; Kafka's message
            # first, then the file and byte position (Kafka's own line names neither)
            exc.at(self.path)
            self.footer["corrupt"] = {"message": str(exc), "position": exc.position}


def dump_state(path: str | os.PathLike[str]) -> StateDump:
    path = os.fspath(path)
    kind = "txn-index" if path.endswith(".txnindex") else "producer-snapshot"
    return StateDump(path=path, kind=kind, header={"file": path, "type": kind})


def _txn_items(path: str) -> Iterator[dict[str, Any]]:
    for t in read_transaction_index(path):
        yield {"version": t.version, "producerId": t.producer_id, "firstOffset": t.first_offset,
               "lastOffset": t.last_offset, "lastStableOffset": t.last_stable_offset}


def _snapshot_items(path: str) -> Iterator[dict[str, Any]]:
    for e in read_producer_snapshot(read_bytes(path)):
        item: dict[str, Any] = {
            "producerId": e.producer_id, "producerEpoch": e.producer_epoch,
            "coordinatorEpoch": e.coordinator_epoch,
            "currentTxnFirstOffset": e.current_txn_first_offset, "lastTimestamp": e.last_timestamp,
        }
        if e.has_batch_metadata:
            item.update(firstSequence=e.first_sequence, lastSequence=e.last_sequence,
                        lastOffset=e.last_offset, offsetDelta=e.offset_delta,
                        timestamp=e.last_timestamp)
        yield item
