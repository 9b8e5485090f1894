"""The coordinator's replay rules, on raw records: the last record of each key, and the offset
commits of open transactions.

Kafka's loader (``GroupMetadataManager.doLoadGroupsAndOffsets``, the 4.x
``OffsetMetadataManager.replay`` and ``replayEndTransactionMarker``) applies records in offset
order: the last record of a key wins and a tombstone removes it; offset commits in a
transactional batch wait, per producer id, for the transaction's marker: a COMMIT moves them in
unless a commit written after them is already there, an ABORT drops them; a tombstone also
drops its key from the open transactions. Since the last record of a key is all that can
survive, nothing is decoded here: each key's raw bytes map to its last ``(offset, value)``
(value None for a tombstone), and :mod:`pylogctl.groups.group_loader` decodes the survivors.

The map of last records (``latest``) is a dict, or with the optional C accelerator
(``_offsets_scan.c``) a :class:`LastRecords` table that also replays runs of plain batches
straight from a segment's bytes, without making objects for records that get overwritten
(see :func:`new_latest`). Both take the same writes here and give the same survivors.

With ``needles`` (the group ids asked for, as written in keys), an uncompressed batch whose
bytes contain none of them is skipped unparsed: it cannot hold a record of those groups.
"""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Iterable, Protocol

from ..format.control import ControlRecordType, parse_control_key
from ..format.record import Record
from ..format.record_batch import (CODEC_MASK, CONTROL_FLAG, LOG_OVERHEAD,
                                   RECORD_BATCH_OVERHEAD, TRANSACTIONAL_FLAG)
from ..speedups import accelerator

# The C table (pylogctl/groups/_offsets_scan.c, optional: see pylogctl/speedups.py); switched
# off, or no extension, dicts and the Python batch loop.
_c = accelerator("pylogctl.groups._offsets_scan")
LastRecords = None if _c is None else _c.LastRecords
# LastRecords.scan stopped without a batch for Python
SCAN_DONE = () if _c is None else (_c.STOP_END, _c.STOP_LIMIT)

Kept = tuple[int, "bytes | None"]  # a key's last record: (offset, value)


class LatestRecords(Protocol):
    """What the replay needs of its map of last records (a dict, or the C table)."""

    def __setitem__(self, key: bytes | None, value: Kept) -> None: ...

    def get(self, key: bytes | None, default: Kept | None = None) -> Kept | None: ...

    def update(self, pairs: Iterable[tuple[bytes | None, Kept]]) -> None: ...


_KEY, _OFFSET, _VALUE = attrgetter("key"), attrgetter("offset"), attrgetter("value")
_LEGACY_COMMIT, _COMMIT = b"\x00\x00", b"\x00\x01"


def new_latest(accelerated: bool = True) -> LatestRecords:
    """An empty map of last records: the C table when built (and wanted), else a dict."""
    return LastRecords() if accelerated and LastRecords is not None else {}


def _kept(records: list[Record]):
    """``(key, (offset, value))`` for each record, in order."""
    return zip(map(_KEY, records), zip(map(_OFFSET, records), map(_VALUE, records)))


class RecordReplay:
    """The coordinator's replay, on raw records: last record per key, pending transactions."""

    def __init__(self, needles: re.Pattern[bytes] | None,
                 latest: LatestRecords | None = None) -> None:
        self.latest: LatestRecords = {} if latest is None else latest
        self.pending: dict[int, dict[bytes | None, Kept]] = {}
        self.needles = needles
        self.records = 0

    def add(self, batch, view) -> None:
        """Any batch (``view``: the buffer it lies in, searched for the group ids)."""
        if batch.magic < 2:  # message sets: no transactions, no control records
            records = batch.records()
            self.records += len(records)
            self.latest.update(_kept(records))
            return
        attributes = batch.attributes
        if attributes & CONTROL_FLAG:
            self._marker(batch)
            return
        if self.needles is not None and not attributes & CODEC_MASK:
            start = batch.position + RECORD_BATCH_OVERHEAD
            end = batch.position + LOG_OVERHEAD + batch.length
            if self.needles.search(view, start, end) is None:
                return
        records = batch.records()
        if not attributes & TRANSACTIONAL_FLAG:
            self.add_plain(records)
            return
        self.records += len(records)
        pending = self.pending.setdefault(batch.producer_id, {})
        for r in records:
            if r.value is None:
                self.latest[r.key] = (r.offset, None)
                self._drop_pending(r.key)
            else:
                pending[r.key] = (r.offset, r.value)

    def add_plain(self, records: list[Record]) -> None:
        """The records of a plain batch (not transactional, not control), in order."""
        self.records += len(records)
        self.latest.update(_kept(records))
        if self.pending:
            for r in records:
                if r.value is None:
                    self._drop_pending(r.key)

    def survivors(self) -> dict[bytes | None, Kept]:
        """The last record of each key, offset-commit keys of type 0 merged into type 1 (the
        same fields: they name the same partition)."""
        latest = self.latest if isinstance(self.latest, dict) else self.latest.to_dict()
        self.latest = latest  # the table is done: a dict from here on
        for key in [k for k in latest if k is not None and k[:2] == _LEGACY_COMMIT]:
            twin = _COMMIT + key[2:]
            old = latest.pop(key)
            if twin not in latest or latest[twin][0] < old[0]:
                latest[twin] = old
        return latest

    def _drop_pending(self, key: bytes | None) -> None:
        for pending in self.pending.values():
            pending.pop(key, None)

    def _marker(self, batch) -> None:
        records = batch.records()
        if not records:
            return
        control = ControlRecordType.from_id(parse_control_key(records[0].key)[1])
        if control not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            return
        self.end_transaction(batch.producer_id, control == ControlRecordType.COMMIT)

    def end_transaction(self, producer_id: int, commit: bool) -> None:
        """A COMMIT or ABORT marker of ``producer_id`` (also called by the C scan)."""
        pending = self.pending.pop(producer_id, {})
        if commit:
            latest = self.latest
            for key, kept in pending.items():
                current = latest.get(key)
                if current is None or current[1] is None or current[0] < kept[0]:
                    latest[key] = kept
