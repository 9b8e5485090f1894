"""The transaction index (``.txnindex``): aborted transactions whose data is in the segment.

A flat array of 34-byte entries ``version int16 | producerId int64 | firstOffset int64 |
lastOffset int64 | lastStableOffset int64``, not preallocated, created only when the first
entry is written. Entries are appended when an ABORT marker completes a transaction, in
increasing last offset. Read-committed fetches collect the entries overlapping their range
to drop aborted records. A partial entry at the end is ignored, as Kafka's reader does.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import BinaryIO, Iterator, Protocol

from ..errors import CorruptRecordError
from .files import delete_if_exists, read_bytes
from .index import CorruptIndexError

ENTRY = struct.Struct(">hqqqq")
CURRENT_VERSION = 0


class CompletedTxnLike(Protocol):
    """What producer state reports when a marker ends a transaction (Kafka's CompletedTxn)."""

    @property
    def producer_id(self) -> int: ...
    @property
    def first_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def is_aborted(self) -> bool: ...


@dataclass(frozen=True)
class AbortedTxn:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    @classmethod
    def of(cls, producer_id: int, first_offset: int, last_offset: int,
           last_stable_offset: int) -> "AbortedTxn":
        return cls(CURRENT_VERSION, producer_id, first_offset, last_offset, last_stable_offset)

    @classmethod
    def from_completed(cls, txn: CompletedTxnLike, last_stable_offset: int) -> "AbortedTxn":
        return cls.of(txn.producer_id, txn.first_offset, txn.last_offset, last_stable_offset)

    def to_bytes(self) -> bytes:
        return ENTRY.pack(self.version, self.producer_id, self.first_offset, self.last_offset,
                          self.last_stable_offset)


@dataclass(frozen=True)
class TxnIndexSearchResult:
    """The aborted transactions overlapping a fetch range, and whether the search is done
    (False: later segments may hold more)."""

    aborted_transactions: tuple[AbortedTxn, ...]
    is_complete: bool


def _entries(data: bytes, path: str) -> Iterator[tuple[int, AbortedTxn]]:
    """``(position, entry)`` for every whole entry, refusing unknown versions as Kafka does."""
    for pos in range(0, len(data) - ENTRY.size + 1, ENTRY.size):
        entry = AbortedTxn(*ENTRY.unpack_from(data, pos))
        if entry.version > CURRENT_VERSION:
            raise CorruptRecordError(f"Unexpected aborted transaction version {entry.version} in "
                                     f"transaction index {os.path.abspath(path)}, current version "
                                     f"is {CURRENT_VERSION}", path=path, position=pos)
        yield pos, entry


def read_transaction_index(path: str | os.PathLike[str]) -> list[AbortedTxn]:
    path = os.fspath(path)
    return [entry for _, entry in _entries(read_bytes(path), path)]


class TransactionIndex:
    """A segment's ``.txnindex``, read and written through a file handle opened on demand.

    As in Kafka, the last offset used to check that appends increase is only known for
    entries appended (or kept by ``truncate_to``) since opening. Not thread-safe.
    """

    def __init__(self, start_offset: int, path: str | os.PathLike[str]) -> None:
        self.start_offset = start_offset
        self.path = os.fspath(path)
        self._file: BinaryIO | None = None
        self._last_offset: int | None = None
        if os.path.exists(self.path):
            self._open()

    def _open(self) -> BinaryIO:
        if self._file is None:
            self._file = open(self.path, "a+b")
        return self._file

    def _read_all(self) -> bytes:
        if self._file is None:
            return b""
        self._file.flush()
        return os.pread(self._file.fileno(), os.fstat(self._file.fileno()).st_size, 0)

    def _iter(self) -> Iterator[tuple[int, AbortedTxn]]:
        return _entries(self._read_all(), self.path)

    def append(self, txn: AbortedTxn) -> None:
        if self._last_offset is not None and self._last_offset >= txn.last_offset:
            raise ValueError(f"The last offset of appended transactions must increase "
                             f"sequentially, but {txn.last_offset} is not greater than current "
                             f"last offset {self._last_offset} of index "
                             f"{os.path.abspath(self.path)}")
        self._last_offset = txn.last_offset
        f = self._open()
        f.write(txn.to_bytes())
        f.flush()

    def all_aborted_txns(self) -> list[AbortedTxn]:
        return [entry for _, entry in self._iter()]

    def collect_aborted_txns(self, fetch_offset: int,
                             upper_bound_offset: int) -> TxnIndexSearchResult:
        """Aborted transactions overlapping ``[fetch_offset, upper_bound_offset)``.

        Complete once an entry's last stable offset reaches the upper bound: no transaction
        aborted in a later segment can overlap the range then.
        """
        found = []
        for _, txn in self._iter():
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(tuple(found), True)
        return TxnIndexSearchResult(tuple(found), False)

    def truncate_to(self, offset: int) -> None:
        """Drop the first entry whose last offset is >= ``offset`` and every entry after it."""
        new_last: int | None = None
        for pos, txn in self._iter():
            if txn.last_offset >= offset:
                assert self._file is not None
                self._file.truncate(pos)
                self._last_offset = new_last
                return
            new_last = txn.last_offset

    def reset(self) -> None:
        """Remove every entry (the file stays, empty)."""
        if self._file is not None:
            self._file.truncate(0)
        self._last_offset = None

    def sanity_check(self) -> None:
        for _, txn in self._iter():
            if txn.last_offset < self.start_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {txn} in index "
                    f"{os.path.abspath(self.path)} is less than start offset {self.start_offset}",
                    path=self.path)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file = None

    def delete_if_exists(self) -> bool:
        self.close()
        return delete_if_exists(self.path)

    def rename_to(self, path: str | os.PathLike[str]) -> None:
        try:
            if os.path.exists(self.path):
                os.replace(self.path, path)
        finally:
            self.path = os.fspath(path)

    def update_parent_dir(self, directory: str | os.PathLike[str]) -> None:
        self.path = os.path.join(os.fspath(directory), os.path.basename(self.path))

    def __enter__(self) -> "TransactionIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
