"""The coordinator's replay rules, on raw records: the last record of each key, and the offset
commits of open transactions.

Kafka's loader (``GroupMetadataManager.doLoadGroupsAndOffsets``, the 4.x
``OffsetMetadataManager.replay`` and ``replayEndTransactionMarker``) applies records in offset
order: the last record of a key wins and a tombstone removes it; offset commits in a
transactional batch wait, per producer id, for the transaction's marker: a COMMIT moves them in
unless a commit written after them is already there, an ABORT drops them; a tombstone also
drops its key from the open transactions. Since the last record of a key is all that can
survive, nothing is decoded here: records are kept whole, keyed by their raw key bytes, and
:mod:`pylogctl.groups.group_loader` decodes the survivors.

With ``needles`` (the group ids asked for, as written in keys), an uncompressed batch whose
bytes contain none of them is skipped unparsed: it cannot hold a record of those groups.
"""

from __future__ import annotations

import re
from operator import attrgetter

from ..format.control import ControlRecordType, parse_control_key
from ..format.record import Record
from ..format.record_batch import (CODEC_MASK, CONTROL_FLAG, LOG_OVERHEAD,
                                   RECORD_BATCH_OVERHEAD, TRANSACTIONAL_FLAG)

_KEY = attrgetter("key")
_LEGACY_COMMIT, _COMMIT = b"\x00\x00", b"\x00\x01"


class RecordReplay:
    """The coordinator's replay, on raw records: last record per key, pending transactions."""

    def __init__(self, needles: re.Pattern[bytes] | None) -> None:
        self.latest: dict[bytes | None, Record] = {}
        self.pending: dict[int, dict[bytes | None, Record]] = {}
        self.needles = needles
        self.records = 0

    def add(self, batch, view) -> None:
        """Any batch (``view``: the buffer it lies in, searched for the group ids)."""
        if batch.magic < 2:  # message sets: no transactions, no control records
            records = batch.records()
            self.records += len(records)
            self.latest.update(zip(map(_KEY, records), records))
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
                self._tombstone(r)
            else:
                pending[r.key] = r

    def add_plain(self, records: list[Record]) -> None:
        """The records of a plain batch (not transactional, not control), in order."""
        self.records += len(records)
        self.latest.update(zip(map(_KEY, records), records))
        if self.pending:
            for r in records:
                if r.value is None:
                    self._tombstone(r)

    def survivors(self) -> dict[bytes | None, Record]:
        """The last record of each key, offset-commit keys of type 0 merged into type 1 (the
        same fields: they name the same partition)."""
        latest = self.latest
        for key in [k for k in latest if k is not None and k[:2] == _LEGACY_COMMIT]:
            twin = _COMMIT + key[2:]
            old = latest.pop(key)
            if twin not in latest or latest[twin].offset < old.offset:
                latest[twin] = old
        return latest

    def _tombstone(self, record: Record) -> None:
        self.latest[record.key] = record
        for pending in self.pending.values():
            pending.pop(record.key, None)

    def _marker(self, batch) -> None:
        records = batch.records()
        if not records:
            return
        control = ControlRecordType.from_id(parse_control_key(records[0].key)[1])
        if control not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            return
        pending = self.pending.pop(batch.producer_id, {})
        if control == ControlRecordType.COMMIT:
            latest = self.latest
            for key, record in pending.items():
                current = latest.get(key)
                if current is None or current.value is None or current.offset < record.offset:
                    latest[key] = record
