"""Loading an offsets partition as the group coordinator does (GroupMetadataManager /
CoordinatorLoaderImpl): last record wins, tombstones, transactions, every value version,
KIP-848 records, and where reading stops on invalid data."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from groups_support import (OffsetsLog, commit_key, commit_value, encode_group_record,
                            group_value, member)
from pylogctl.format.compression import Codec
from pylogctl.errors import CorruptRecordError
from pylogctl.groups import replay as replay_module
from pylogctl.groups.group_loader import LoadedPartition, _Decoder, load_offsets_partition
from pylogctl.groups.offset_commits import decode_offset_commit_key
from pylogctl.groups.group_metadata import GroupState, GroupType


@pytest.fixture(autouse=True, params=["c", "python"])
def replay_path(request, monkeypatch):
    """Every test here runs with the C replay of plain batches (when built) and without it."""
    if request.param == "python":
        monkeypatch.setattr(replay_module, "LastRecords", None)
    elif replay_module.LastRecords is None:
        pytest.skip("the C accelerator pylogctl.groups._offsets_scan is not built")


def load(log: OffsetsLog, **options):
    return load_offsets_partition(log.dir, 0, **options)


def committed(loaded, group: str) -> dict[tuple[str, int], int]:
    return {tuple(tp): om.offset for tp, om in loaded.groups[group].offsets.items()}


@pytest.fixture
def log(tmp_path: Path) -> OffsetsLog:
    return OffsetsLog(tmp_path)


# -- offsets: last write wins, tombstones ----------------------------------------------------

def test_last_commit_of_a_partition_wins(log):
    log.commit("g", {("t", 0): 5, ("t", 1): 7})
    log.commit("g", {("t", 0): 9})
    loaded = load(log)
    assert committed(loaded, "g") == {("t", 0): 9, ("t", 1): 7}
    assert loaded.groups["g"].offsets[("t", 0)].record_offset == 2
    assert loaded.notes == []
    assert (loaded.batches, loaded.records, loaded.next_offset) == (2, 3, 3)


def test_offset_tombstone_removes_the_commit_and_a_later_commit_restores_it(log):
    log.commit("g", {("t", 0): 5, ("t", 1): 7})
    log.delete_offsets("g", [("t", 0)])
    assert committed(load(log), "g") == {("t", 1): 7}
    log.commit("g", {("t", 0): 11})
    assert committed(load(log), "g") == {("t", 0): 11, ("t", 1): 7}


def test_group_with_only_offsets_is_a_simple_empty_group(log):
    log.commit("flink", {("t", 0): 3})
    group = load(log).groups["flink"]
    assert (group.state, group.protocol_type, group.group_type) == ("Empty", "", "Classic")
    assert group.is_consumer_group and group.members == ()


def test_group_whose_offsets_and_registration_are_all_deleted_is_gone(log):
    log.group("g", [member("m1", {"t": [0]})])
    log.commit("g", {("t", 0): 3})
    log.delete_offsets("g", [("t", 0)])
    log.delete_group("g")
    assert load(log).groups == {}


def test_group_tombstone_keeps_a_group_that_still_has_offsets(log):
    log.group("g", [member("m1", {"t": [0]})])
    log.commit("g", {("t", 0): 3})
    log.delete_group("g")
    group = load(log).groups["g"]
    assert (group.state, group.protocol_type, group.members) == ("Empty", "", ())
    assert committed(load(log), "g") == {("t", 0): 3}


def test_offset_keys_of_type_0_and_1_name_the_same_partition(log):
    log.batch([(commit_key("g", "t", 0, key_type=0), commit_value(4, version=1))])
    log.batch([(commit_key("g", "t", 0, key_type=1), commit_value(6))])
    assert committed(load(log), "g") == {("t", 0): 6}
    log.batch([(commit_key("g", "t", 0, key_type=0), None)])  # a tombstone of the old key
    assert "g" not in load(log).groups


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_every_offset_commit_value_version(log, version):
    extra = {"epoch": 7} if version >= 3 else {}
    extra.update({"expire": 99} if version == 1 else {})
    log.batch([(commit_key("g", "t", 2), commit_value(42, version=version, metadata="m",
                                                      ts=123, **extra))])
    om = load(log).groups["g"].offsets[("t", 2)]
    assert (om.offset, om.metadata, om.commit_timestamp) == (42, "m", 123)
    assert om.leader_epoch == (7 if version >= 3 else None)
    assert om.expire_timestamp == (99 if version == 1 else None)


# -- transactions ------------------------------------------------------------------------------

def test_transactional_commit_counts_once_committed(log):
    log.commit("g", {("t", 0): 1})
    log.commit("g", {("t", 0): 5}, producer_id=77)
    pending = load(log)
    assert committed(pending, "g") == {("t", 0): 1}
    assert {pid: {tuple(tp): om.offset for tp, om in offsets.items()}
            for pid, offsets in pending.groups["g"].pending_offsets.items()} == {77: {("t", 0): 5}}
    log.marker(77, commit=True)
    done = load(log)
    assert committed(done, "g") == {("t", 0): 5}
    assert done.groups["g"].pending_offsets == {}


def test_aborted_transactional_commit_never_counts(log):
    log.commit("g", {("t", 0): 1})
    log.commit("g", {("t", 0): 5, ("t", 1): 6}, producer_id=77)
    log.marker(77, commit=False)
    assert committed(load(log), "g") == {("t", 0): 1}


def test_a_commit_written_after_the_transactional_one_wins_at_commit(log):
    log.commit("g", {("t", 0): 5, ("t", 1): 5}, producer_id=77)
    log.commit("g", {("t", 0): 9})  # a plain commit after the transaction's, before its marker
    log.marker(77, commit=True)
    assert committed(load(log), "g") == {("t", 0): 9, ("t", 1): 5}


def test_markers_apply_to_their_own_producer_only(log):
    log.commit("g", {("t", 0): 5}, producer_id=1)
    log.commit("g", {("t", 1): 6}, producer_id=2)
    log.marker(2, commit=True)
    loaded = load(log)
    assert committed(loaded, "g") == {("t", 1): 6}
    assert list(loaded.groups["g"].pending_offsets) == [1]


def test_tombstone_drops_the_key_from_open_transactions(log):
    log.commit("g", {("t", 0): 5, ("t", 1): 5}, producer_id=77)
    log.delete_offsets("g", [("t", 0)])
    log.marker(77, commit=True)
    assert committed(load(log), "g") == {("t", 1): 5}


def test_group_with_only_pending_offsets_exists(log):
    log.commit("eos", {("t", 0): 5}, producer_id=9)
    group = load(log).groups["eos"]
    assert group.offsets == {} and list(group.pending_offsets) == [9]


# -- classic group metadata ------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_every_group_metadata_value_version(log, version):
    members = [member("m1", {"t": [0, 2], "u": [1]}, host="/10.0.0.7"),
               member("m2", {"t": [1]}, client_id="c2")]
    if version >= 3:
        members[1]["groupInstanceId"] = "static-2"
    log.group("g", members, version=version, generation=4)
    group = load(log).groups["g"]
    assert (group.state, group.generation, group.protocol, group.leader) == \
        ("Stable", 4, "range", "m1")
    assert [m.member_id for m in group.members] == ["m1", "m2"]
    m1, m2 = group.members
    assert [tuple(tp) for tp in m1.assignment] == [("t", 0), ("t", 2), ("u", 1)]
    assert (m1.client_host, m2.client_id, m1.subscribed_topics) == ("/10.0.0.7", "c2", ("t", "u"))
    assert m2.group_instance_id == ("static-2" if version >= 3 else None)
    assert m1.rebalance_timeout_ms == (45000 if version == 0 else 300000)  # v0: the session's
    assert group.current_state_timestamp == (None if version < 2 else 1_700_000_000_000)


def test_registration_without_members_is_empty(log):
    log.group("g", [member("m1", {"t": [0]})], generation=1)
    log.group("g", [], generation=2)
    group = load(log).groups["g"]
    assert (group.state, group.generation, group.members) == ("Empty", 2, ())


def test_connect_group_keeps_its_protocol_type_and_raw_members(log):
    log.group("connect-cluster", [{**member("w1", {}), "subscription": b"\x00\x01",
                                   "assignment": b"\x00\x01"}], protocol_type="connect",
              protocol="sessioned")
    group = load(log).groups["connect-cluster"]
    assert (group.protocol_type, group.is_consumer_group) == ("connect", False)
    assert group.members[0].assignment == ()


def test_undecodable_assignment_is_a_group_note_not_a_failure(log):
    log.group("g", [{**member("m1", {"t": [0]}), "assignment": b"\x00\x00\xff"}])
    group = load(log).groups["g"]
    assert group.members[0].assignment == ()
    assert "undecodable assignment" in group.notes[0]


# -- KIP-848 consumer groups ---------------------------------------------------------------------

TOPIC_ID = bytes(range(16))


def kip848(log: OffsetsLog, group: str, *, epoch: int, target: int, members: dict[str, tuple]):
    """``members``: id -> (member epoch, state, assigned partitions of topic ``t``)."""
    records = [encode_group_record(3, {"groupId": group}, 0, {"epoch": epoch}),
               encode_group_record(4, {"groupId": group}, 0, {"topics": [{
                   "topicId": TOPIC_ID, "topicName": "t", "numPartitions": 4,
                   "partitionMetadata": []}]}),
               encode_group_record(6, {"groupId": group}, 0, {"assignmentEpoch": target})]
    for member_id, (member_epoch, state, partitions) in members.items():
        key = {"groupId": group, "memberId": member_id}
        records += [
            encode_group_record(5, key, 0, {"clientId": "c-" + member_id, "clientHost": "/h",
                                            "subscribedTopicNames": ["t"],
                                            "serverAssignor": "range", "rebalanceTimeoutMs": 1}),
            encode_group_record(7, key, 0, {"topicPartitions": [{"topicId": TOPIC_ID,
                                                                 "partitions": partitions}]}),
            encode_group_record(8, key, 0, {"memberEpoch": member_epoch,
                                            "previousMemberEpoch": member_epoch - 1,
                                            "state": state, "assignedPartitions": [
                                                {"topicId": TOPIC_ID, "partitions": partitions}],
                                            "partitionsPendingRevocation": []})]
    log.batch(records)


@pytest.mark.parametrize("epoch, target, members, state", [
    (5, 5, {"a": (5, 0, [0, 1]), "b": (5, 0, [2, 3])}, GroupState.STABLE),
    (6, 5, {"a": (5, 0, [0, 1])}, GroupState.ASSIGNING),
    (5, 5, {"a": (5, 0, [0]), "b": (4, 0, [1])}, GroupState.RECONCILING),
    (5, 5, {"a": (5, 1, [0])}, GroupState.RECONCILING),  # revoking partitions
])
def test_kip848_group_state_is_derived_as_kafka_does(log, epoch, target, members, state):
    kip848(log, "g", epoch=epoch, target=target, members=members)
    group = load(log).groups["g"]
    assert (group.group_type, group.state, group.generation, group.target_assignment_epoch,
            group.protocol) == (GroupType.CONSUMER, state, epoch, target, "range")
    first = next(m for m in group.members if m.member_id == "a")
    assert [tuple(tp) for tp in first.assignment] == [("t", p) for p in members["a"][2]]
    assert (first.client_id, first.member_epoch, first.upgraded) == ("c-a", members["a"][0], True)


def test_kip848_member_and_group_tombstones(log):
    kip848(log, "g", epoch=5, target=5, members={"a": (5, 0, [0]), "b": (5, 0, [1])})
    key = {"groupId": "g", "memberId": "b"}
    log.batch([encode_group_record(8, key), encode_group_record(7, key),
               encode_group_record(5, key)])
    group = load(log).groups["g"]
    assert [m.member_id for m in group.members] == ["a"]
    log.batch([encode_group_record(t, {"groupId": "g", "memberId": "a"}) for t in (8, 7, 5)]
              + [encode_group_record(t, {"groupId": "g"}) for t in (6, 4, 3)])
    assert load(log).groups == {}


def test_kip848_group_tombstones_delete_every_record_of_the_group(log):
    """What ``consumer-groups --delete`` writes (ConsumerGroup.createGroupTombstoneRecords),
    regular expressions included, leaves nothing of the group."""
    from pylogctl.groups.record_helpers import group_tombstones

    kip848(log, "g", epoch=5, target=5, members={"a": (5, 0, [0]), "b": (5, 0, [1])})
    log.batch([encode_group_record(16, {"groupId": "g", "regularExpression": "t.*"}, 0,
                                   {"topics": ["t"], "version": 3, "timestamp": 1})])
    log.commit("g", {("t", 0): 4})
    group = load(log).groups["g"]
    assert group.regular_expressions == ("t.*",)
    log.batch(group_tombstones(group))
    assert "g" not in load(log).groups


def test_group_record_keys_are_checked_when_encoded():
    with pytest.raises(ValueError, match="groupId"):
        encode_group_record(3, {"GroupId": "g"})


def test_kip848_topic_ids_named_by_the_log_dirs_when_the_group_does_not(log):
    key = {"groupId": "g", "memberId": "a"}
    other = bytes(16 * [7])
    log.batch([encode_group_record(3, {"groupId": "g"}, 0, {"epoch": 1}),
               encode_group_record(8, key, 0, {"memberEpoch": 1, "previousMemberEpoch": 0,
                                               "state": 0, "assignedPartitions": [
                                                   {"topicId": other, "partitions": [3]}],
                                               "partitionsPendingRevocation": []})])
    names = {"BwcHBwcHBwcHBwcHBwcHBw": "orders"}
    group = load(log, topic_name=names.get).groups["g"]
    assert [tuple(tp) for tp in group.members[0].assignment] == [("orders", 3)]
    unnamed = load(log).groups["g"]  # an unknown id is shown as the id
    assert [tuple(tp) for tp in unnamed.members[0].assignment] == [("BwcHBwcHBwcHBwcHBwcHBw", 3)]


# -- what is read ----------------------------------------------------------------------------------

def test_group_filter_gives_the_full_load_of_those_groups(log):
    log.group("a", [member("m1", {"t": [0]})])
    log.commit("a", {("t", 0): 1})
    log.commit("b", {("t", 0): 2})
    log.commit("ab", {("t", 0): 3})
    full = load(log)
    only = load(log, group_ids={"a"})
    assert list(only.groups) == ["a"]
    assert only.groups["a"] == full.groups["a"]
    assert only.records < full.records  # batches without the group id were not decoded


def test_compressed_batches_replay_the_same(tmp_path):
    plain, packed = OffsetsLog(tmp_path / "a"), OffsetsLog(tmp_path / "b")
    for log, codec in ((plain, Codec.NONE), (packed, Codec.GZIP)):
        log.batch([(commit_key("g", "t", p), commit_value(p * 10)) for p in range(3)],
                  codec=codec)
        log.batch([(commit_key("g", "t", 1), None)], codec=codec)
    assert committed(load(packed), "g") == committed(load(plain), "g") == {("t", 0): 0,
                                                                           ("t", 2): 20}


def test_batches_below_the_log_start_offset_are_skipped(log):
    log.commit("g", {("t", 0): 1})
    log.commit("old", {("t", 0): 1})
    log.commit("g", {("t", 1): 2})
    loaded = load(log, log_start_offset=2)
    assert list(loaded.groups) == ["g"] and committed(loaded, "g") == {("t", 1): 2}


def test_segments_are_read_in_offset_order(log):
    log.commit("g", {("t", 0): 1})
    log.roll()
    log.commit("g", {("t", 0): 2})
    assert committed(load(log), "g") == {("t", 0): 2}


# -- invalid data: stop where recovery would, say where ----------------------------------------

def test_truncated_last_batch_stops_reading_with_its_position(log):
    log.commit("g", {("t", 0): 1})
    log.commit("g", {("t", 0): 2})
    data = log.segment.read_bytes()
    log.segment.write_bytes(data[:-5])
    loaded = load(log)
    assert committed(loaded, "g") == {("t", 0): 1}
    (note,) = loaded.notes
    assert note.problem and note.path == str(log.segment)
    assert note.position == log.positions[1]
    assert f"byte position {log.positions[1]}" in str(note)


def test_crc_mismatch_stops_reading_there_and_later_segments_are_not_read(log):
    log.commit("g", {("t", 0): 1})
    log.commit("g", {("t", 0): 2})
    first_segment = log.segment
    log.roll()
    log.commit("g", {("t", 0): 3})
    data = bytearray(first_segment.read_bytes())
    data[log.positions[1] + 70] ^= 0xFF
    first_segment.write_bytes(bytes(data))
    loaded = load(log)
    assert committed(loaded, "g") == {("t", 0): 1}
    (note,) = loaded.notes
    assert "CRC" in note.message and note.position == log.positions[1]


def test_corrupt_size_field_is_a_note_not_an_exception(log):
    log.commit("g", {("t", 0): 1})
    log.commit("g", {("t", 0): 2})
    data = bytearray(log.segment.read_bytes())
    struct.pack_into(">i", data, log.positions[1] + 8, 3)
    log.segment.write_bytes(bytes(data))
    loaded = load(log)
    assert committed(loaded, "g") == {("t", 0): 1}
    assert "smaller than minimum record overhead" in loaded.notes[0].message
    assert loaded.notes[0].position == log.positions[1]


def test_undecodable_value_is_skipped_with_its_batch_position(log):
    log.commit("g", {("t", 0): 1})
    log.batch([(commit_key("g", "t", 1), b"\x00\x03\x00")])
    loaded = load(log)
    assert committed(loaded, "g") == {("t", 0): 1}
    (note,) = loaded.notes
    assert "undecodable" in note.message and note.position == log.positions[1]


def test_record_without_key_and_unknown_types_are_notes(log):
    log.batch([(None, b"x")])
    log.batch([(b"\x00\x63\x00\x00", b"\x00\x00")])  # record type 99
    log.commit("g", {("t", 0): 1})
    loaded = load(log)
    assert committed(loaded, "g") == {("t", 0): 1}
    keyless, unknown = loaded.notes
    assert keyless.problem and "without a key" in keyless.message
    assert not unknown.problem and "unknown type 99" in unknown.message


def test_empty_and_missing_segments(tmp_path):
    empty = OffsetsLog(tmp_path)
    loaded = load(empty)
    assert (loaded.groups, loaded.notes, loaded.next_offset) == ({}, [], 0)
    (tmp_path / "__consumer_offsets-1").mkdir()
    assert load_offsets_partition(tmp_path / "__consumer_offsets-1", 1).groups == {}


def test_group_value_helper_roundtrips(log):
    value = group_value([member("m", {"t": [0]})])
    key = encode_group_record(2, {"group": "x"})[0]
    log.batch([(key, value)])
    assert load(log).groups["x"].members[0].member_id == "m"


# -- the decoder's cache of offset-commit key prefixes ------------------------------------------

names = st.one_of(st.text(max_size=4).map(lambda s: s.encode("utf-8", "surrogatepass")),
                  st.binary(max_size=4))
fixes = st.sampled_from([0, 0, 0, 1, -1, -1000])
commit_keys = st.builds(
    lambda kind, group, topic, partition, tail, gfix, tfix: (
        struct.pack(">hh", kind, len(group) + gfix) + group
        + struct.pack(">h", len(topic) + tfix) + topic + struct.pack(">i", partition) + tail),
    st.sampled_from([0, 1]), names, names, st.sampled_from([0, 1, 7, -1, 1 << 30]),
    st.sampled_from([b"", b"", b"\x00", b"\x00\x00\x00\x07"]), fixes, fixes)


@settings(max_examples=200, deadline=None)
@given(st.lists(commit_keys, max_size=12))
def test_commit_keys_decode_as_the_decoder_does_with_prefixes_cached(keys):
    decoder = _Decoder(LoadedPartition(0, "p", 0), [], None, lambda _: None)
    for key in keys + keys[::-1]:
        try:
            expected = tuple(decode_offset_commit_key(key))
        except CorruptRecordError:
            with pytest.raises(CorruptRecordError):
                decoder._commit_key(key)
            continue
        group, tp = decoder._commit_key(key)
        assert (group, tp.topic, tp.partition) == expected
