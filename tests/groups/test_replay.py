"""RecordReplay: the coordinator's rules on raw records (last key wins, transactions), with
the map of last records a dict and, when the accelerator is built, the C table."""

from __future__ import annotations

import pytest

from pylogctl.format.record import Record
from pylogctl.groups.replay import RecordReplay, new_latest


def rec(offset: int, key: bytes, value: bytes | None) -> Record:
    return Record(offset, 0, key, value)


@pytest.fixture(params=["dict", "c"])
def replay(request) -> RecordReplay:
    latest = new_latest(accelerated=request.param == "c")
    if request.param == "c" and isinstance(latest, dict):
        pytest.skip("the C accelerator pylogctl.groups._offsets_scan is not built")
    return RecordReplay(None, latest)


def test_last_record_of_a_key_survives_and_a_tombstone_is_kept_as_such(replay):
    replay.add_plain([rec(0, b"\x00\x01a", b"1"), rec(1, b"\x00\x01b", b"2")])
    replay.add_plain([rec(2, b"\x00\x01a", None), rec(3, b"\x00\x01b", b"3")])
    survivors = replay.survivors()
    assert survivors == {b"\x00\x01a": (2, None), b"\x00\x01b": (3, b"3")}
    assert list(survivors) == [b"\x00\x01a", b"\x00\x01b"]
    assert replay.records == 4


def test_legacy_commit_keys_merge_into_their_type_1_twin_by_offset(replay):
    replay.add_plain([rec(0, b"\x00\x01k", b"old"), rec(1, b"\x00\x00k", b"newer"),
                      rec(2, b"\x00\x00j", b"only-legacy")])
    survivors = replay.survivors()
    assert survivors == {b"\x00\x01k": (1, b"newer"), b"\x00\x01j": (2, b"only-legacy")}


def test_tombstone_in_a_plain_batch_drops_the_key_from_open_transactions(replay):
    replay.pending[7] = {b"k": (0, b"txn"), b"j": (0, b"txn")}
    replay.add_plain([rec(1, b"k", None)])
    assert list(replay.pending[7]) == [b"j"]


def test_a_value_after_a_tombstone_in_the_same_batch_wins_with_transactions_open(replay):
    replay.pending[7] = {b"k": (0, b"txn")}
    replay.add_plain([rec(1, b"k", None), rec(2, b"k", b"back")])
    assert replay.survivors() == {b"k": (2, b"back")} and replay.pending == {7: {}}
