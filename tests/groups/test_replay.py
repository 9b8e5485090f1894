"""RecordReplay: the coordinator's rules on raw records (last key wins, transactions)."""

from __future__ import annotations

from pylogctl.format.record import Record
from pylogctl.groups.replay import RecordReplay


def rec(offset: int, key: bytes, value: bytes | None) -> Record:
    return Record(offset, 0, key, value)


def test_last_record_of_a_key_survives_and_a_tombstone_is_kept_as_such():
    replay = RecordReplay(None)
    replay.add_plain([rec(0, b"\x00\x01a", b"1"), rec(1, b"\x00\x01b", b"2")])
    replay.add_plain([rec(2, b"\x00\x01a", None), rec(3, b"\x00\x01b", b"3")])
    survivors = replay.survivors()
    assert {k: (r.offset, r.value) for k, r in survivors.items()} == {
        b"\x00\x01a": (2, None), b"\x00\x01b": (3, b"3")}
    assert replay.records == 4


def test_legacy_commit_keys_merge_into_their_type_1_twin_by_offset():
    replay = RecordReplay(None)
    replay.add_plain([rec(0, b"\x00\x01k", b"old"), rec(1, b"\x00\x00k", b"newer"),
                      rec(2, b"\x00\x00j", b"only-legacy")])
    survivors = replay.survivors()
    assert {k: r.value for k, r in survivors.items()} == {b"\x00\x01k": b"newer",
                                                          b"\x00\x01j": b"only-legacy"}


def test_tombstone_in_a_plain_batch_drops_the_key_from_open_transactions():
    replay = RecordReplay(None)
    replay.pending[7] = {b"k": rec(0, b"k", b"txn"), b"j": rec(0, b"j", b"txn")}
    replay.add_plain([rec(1, b"k", None)])
    assert list(replay.pending[7]) == [b"j"]
