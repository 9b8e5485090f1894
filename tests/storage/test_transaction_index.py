"""TransactionIndex: lazy file creation, append order, truncation, aborted-txn collection."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pylogctl.errors import CorruptRecordError
from pylogctl.storage.index import CorruptIndexError
from pylogctl.storage.transaction_index import (ENTRY, AbortedTxn, TransactionIndex,
                                                read_transaction_index)


@dataclass(frozen=True)
class Completed:
    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


def _txns() -> list[AbortedTxn]:
    return [AbortedTxn.of(1, 0, 10, 11), AbortedTxn.of(2, 5, 20, 21), AbortedTxn.of(3, 25, 30, 40)]


def test_file_is_created_on_first_append_only(tmp_path):
    path = tmp_path / f"{0:020d}.txnindex"
    with TransactionIndex(0, path) as index:
        assert index.all_aborted_txns() == [] and not path.exists()
        index.reset()
        index.flush()
        assert not path.exists()
        index.append(AbortedTxn.from_completed(Completed(7, 1, 4, True), 5))
        assert path.read_bytes() == ENTRY.pack(0, 7, 1, 4, 5)
    assert read_transaction_index(path) == [AbortedTxn(0, 7, 1, 4, 5)]


def test_appends_must_increase_and_survive_reopen(tmp_path):
    path = tmp_path / f"{0:020d}.txnindex"
    with TransactionIndex(0, path) as index:
        for txn in _txns():
            index.append(txn)
        with pytest.raises(ValueError, match="The last offset of appended transactions must "
                                             "increase sequentially, but 30 is not greater than "
                                             "current last offset 30"):
            index.append(AbortedTxn.of(4, 28, 30, 31))
    with TransactionIndex(0, path) as again:
        assert again.all_aborted_txns() == _txns()
        # as in Kafka, the order check only knows entries appended since opening
        again.append(AbortedTxn.of(5, 1, 2, 3))
        assert len(again.all_aborted_txns()) == 4


def test_truncate_to_drops_entries_ending_at_or_after_the_offset(tmp_path):
    with TransactionIndex(0, tmp_path / "t.txnindex") as index:
        for txn in _txns():
            index.append(txn)
        index.truncate_to(31)
        assert len(index.all_aborted_txns()) == 3
        index.truncate_to(20)
        assert index.all_aborted_txns() == _txns()[:1]
        index.append(AbortedTxn.of(9, 12, 15, 16))  # the order check restarts at the cut
        index.reset()
        assert index.all_aborted_txns() == []


def test_collect_aborted_txns_overlapping_a_fetch_range(tmp_path):
    with TransactionIndex(0, tmp_path / "t.txnindex") as index:
        for txn in _txns():
            index.append(txn)
        result = index.collect_aborted_txns(11, 22)
        assert result.aborted_transactions == (_txns()[1],) and result.is_complete
        result = index.collect_aborted_txns(0, 100)
        assert result.aborted_transactions == tuple(_txns()) and not result.is_complete
        assert index.collect_aborted_txns(31, 35).aborted_transactions == ()


def test_sanity_check_and_unknown_version(tmp_path):
    path = tmp_path / f"{100:020d}.txnindex"
    path.write_bytes(ENTRY.pack(0, 1, 90, 95, 96))
    with TransactionIndex(100, path) as index, pytest.raises(CorruptIndexError) as err:
        index.sanity_check()
    assert err.value.message == (f"Last offset of aborted transaction {AbortedTxn(0, 1, 90, 95, 96)}"
                                 f" in index {path.resolve()} is less than start offset 100")
    path.write_bytes(ENTRY.pack(1, 1, 100, 105, 106) + b"\0" * 5)
    with TransactionIndex(100, path) as index, pytest.raises(CorruptRecordError,
                                                             match="Unexpected aborted transaction "
                                                                   "version 1"):
        index.all_aborted_txns()


def test_partial_trailing_entry_is_ignored(tmp_path):
    path = tmp_path / "t.txnindex"
    path.write_bytes(ENTRY.pack(0, 1, 0, 1, 2) + b"\0" * 33)
    with TransactionIndex(0, path) as index:
        assert index.all_aborted_txns() == [AbortedTxn(0, 1, 0, 1, 2)]


def test_rename_and_delete(tmp_path):
    path = tmp_path / "t.txnindex"
    index = TransactionIndex(0, path)
    index.rename_to(tmp_path / "t.txnindex.deleted")  # no file yet: only the name changes
    index.append(AbortedTxn.of(1, 0, 1, 2))
    assert (tmp_path / "t.txnindex.deleted").exists()
    index.rename_to(path)
    assert path.exists() and index.all_aborted_txns() == [AbortedTxn.of(1, 0, 1, 2)]
    assert index.delete_if_exists() and not path.exists() and not index.delete_if_exists()
