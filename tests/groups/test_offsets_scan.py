"""The C replay of uncompressed v2 batches (``pylogctl.groups._offsets_scan``: plain and
transactional batches, markers) against the Python one.

A load with the accelerator must equal the load without it (``PYLOGCTL_NO_SPEEDUPS=1``): the
same groups, offsets in the same order, the same notes at the same positions, the same counters,
and underneath the same survivors (key, offset, value, in first-insertion order) and pending
transactions. Checked on every ``__consumer_offsets`` partition of the real corpus, on damaged
copies of them, on hypothesis-generated partitions (transactions, markers, tombstones, legacy
keys, compressed batches, keyless records, log start offsets) and on hand-made record areas
with a valid CRC that the record decoder must refuse or accept exactly as Python does. The
scan's stop reasons and the table's mapping behaviour are pinned one by one.
"""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings, strategies as st

from groups_support import OffsetsLog, commit_key, commit_value, encode_group_record, \
    group_value, member
from support import corpus_params
from pylogctl.format.compression import Codec
from pylogctl.format.varint import encode_varint
from pylogctl.groups import replay as replay_module
from pylogctl.groups.group_loader import LoadedPartition, _read_segment, load_offsets_partition
from pylogctl.groups.replay import RecordReplay, new_latest
from pylogctl.storage.log_dir_layout import log_segments

if replay_module.LastRecords is None:  # optional extension, not built (or turned off)
    pytest.skip("the C accelerator pylogctl.groups._offsets_scan is not built (it is optional; "
                "build it with `python setup.py build_ext --inplace` or `pip install -e .`) "
                "or PYLOGCTL_NO_SPEEDUPS is set", allow_module_level=True)
from pylogctl.groups import _offsets_scan  # noqa: E402 - only once known to be there

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
S = _offsets_scan


@contextlib.contextmanager
def python_replay_only():
    """Loads without the C table (as with PYLOGCTL_NO_SPEEDUPS=1)."""
    saved = replay_module.LastRecords
    replay_module.LastRecords = None
    try:
        yield
    finally:
        replay_module.LastRecords = saved


def replay_of(partition_dir: Path, accelerated: bool, log_start: int = 0) -> tuple:
    """What the replay keeps: survivors in order, pending transactions, counters, notes."""
    path = str(partition_dir)
    segments = log_segments(path)
    first = segments[0][0] if segments else 0
    loaded = LoadedPartition(0, path, max(log_start, first), next_offset=first)
    replay = RecordReplay(None, new_latest(accelerated))
    assert hasattr(replay.latest, "scan") == accelerated
    for _, segment in segments:
        if not _read_segment(segment, loaded, replay):
            break
    return (list(replay.survivors().items()),
            {pid: list(p.items()) for pid, p in replay.pending.items()}, replay.records,
            loaded.next_offset, loaded.bytes_read, loaded.batches, loaded.notes)


def load_outcome(partition_dir: Path, **options) -> tuple:
    loaded = load_offsets_partition(partition_dir, 0, **options)
    order = [(g, list(group.offsets), list(group.pending_offsets))
             for g, group in loaded.groups.items()]
    return loaded, order


def assert_same(partition_dir: Path, log_start: int = 0) -> None:
    assert replay_of(partition_dir, True, log_start) == replay_of(partition_dir, False, log_start)
    fast = load_outcome(partition_dir, log_start_offset=log_start)
    with python_replay_only():
        slow = load_outcome(partition_dir, log_start_offset=log_start)
    assert fast == slow


# -- the real corpus, whole and damaged -------------------------------------------------------

@pytest.mark.corpus
@pytest.mark.parametrize("corpus_dir", corpus_params())
def test_corpus_partitions_replay_the_same_in_c_and_python(corpus_dir):
    partitions = sorted(corpus_dir.rglob("__consumer_offsets-*"))
    if not partitions:
        pytest.skip(f"{corpus_dir.name} has no __consumer_offsets")
    for partition_dir in partitions:
        assert_same(partition_dir)


@pytest.mark.corpus
@pytest.mark.parametrize("corpus_dir", corpus_params())
def test_damaged_corpus_partitions_replay_the_same(corpus_dir, tmp_path):
    segments = [p for p in sorted(corpus_dir.rglob("__consumer_offsets-*/*.log"))
                if p.stat().st_size > 0]
    if not segments:
        pytest.skip(f"{corpus_dir.name} has no __consumer_offsets data")
    for n, segment in enumerate(segments):
        data = segment.read_bytes()
        for cut in (len(data) - 1, len(data) // 2, 70):
            for flip in (None, 30, 64, len(data) // 3):
                damaged = bytearray(data[:cut])
                if flip is not None and flip < len(damaged):
                    damaged[flip] ^= 0x5A
                target = tmp_path / f"{n}-{cut}-{flip}" / "__consumer_offsets-0"
                target.mkdir(parents=True)
                (target / segment.name).write_bytes(bytes(damaged))
                assert_same(target)


# -- generated partitions -----------------------------------------------------------------------

GROUPS = ["a", "b", "ü"]
PRODUCERS = [5, 6]

ops = st.one_of(
    st.tuples(st.just("commit"), st.sampled_from(GROUPS),
              st.dictionaries(st.tuples(st.sampled_from("tu"), st.integers(0, 2)),
                              st.integers(0, 1000), min_size=1, max_size=4),
              st.sampled_from([None, *PRODUCERS])),
    st.tuples(st.just("marker"), st.sampled_from(PRODUCERS), st.booleans()),
    st.tuples(st.just("txn"), st.sampled_from(GROUPS), st.sampled_from("tu"),
              st.sampled_from(PRODUCERS), st.sampled_from([None, True, False])),
    st.tuples(st.just("txn-mixed"), st.sampled_from(GROUPS), st.sampled_from(PRODUCERS),
              st.lists(st.one_of(st.none(), st.integers(0, 99)), min_size=1, max_size=3)),
    st.tuples(st.just("delete"), st.sampled_from(GROUPS),
              st.lists(st.tuples(st.sampled_from("tu"), st.integers(0, 2)), min_size=1,
                       max_size=3)),
    st.tuples(st.just("group"), st.sampled_from(GROUPS), st.booleans()),
    st.tuples(st.just("mixed"), st.sampled_from(GROUPS), st.integers(0, 2),
              st.lists(st.one_of(st.none(), st.integers(0, 99)), min_size=1, max_size=4)),
    st.tuples(st.just("legacy"), st.sampled_from(GROUPS), st.integers(0, 99)),
    st.tuples(st.just("gzip"), st.sampled_from(GROUPS), st.integers(0, 99)),
    st.tuples(st.just("odd"), st.sampled_from([None, b"\x00\x63\x00\x00", b"", b"\x00"])),
    st.tuples(st.just("roll")),
)


def write(log: OffsetsLog, op: tuple) -> None:
    kind = op[0]
    if kind == "commit":
        log.commit(op[1], op[2], producer_id=op[3])
    elif kind == "marker":
        log.marker(op[1], op[2])
    elif kind == "txn":  # a transactional commit, ended at once or left open
        log.commit(op[1], {(op[2], 0): 5, (op[2], 1): 6}, producer_id=op[3])
        if op[4] is not None:
            log.marker(op[3], op[4])
    elif kind == "txn-mixed":  # values and tombstones of one key in a transactional batch
        key = commit_key(op[1], "t", 0)
        log.batch([(key, None if v is None else commit_value(v)) for v in op[3]],
                  producer_id=op[2])
    elif kind == "delete":
        log.delete_offsets(op[1], op[2])
    elif kind == "group":
        if op[2]:
            log.group(op[1], [member("m1", {"t": [0, 1]})])
        else:
            log.delete_group(op[1])
    elif kind == "mixed":  # one key written several times in a batch, tombstones between
        key = commit_key(op[1], "t", op[2])
        log.batch([(key, None if v is None else commit_value(v)) for v in op[3]])
    elif kind == "legacy":
        log.batch([(commit_key(op[1], "t", 0, key_type=0), commit_value(op[2]))])
    elif kind == "gzip":
        log.batch([(commit_key(op[1], "u", 1), commit_value(op[2]))], codec=Codec.GZIP)
    elif kind == "odd":
        log.batch([(op[1], b"\x00\x00")])
    elif kind == "roll":
        log.roll()


@SETTINGS
@given(st.lists(ops, max_size=30), st.integers(0, 12), st.integers(0, 3))
def test_generated_partitions_replay_the_same(tmp_path_factory, script, log_start, cut):
    log = OffsetsLog(tmp_path_factory.mktemp("gen"))
    for op in script:
        write(log, op)
    if cut:  # a torn last batch
        data = log.segment.read_bytes()
        log.segment.write_bytes(data[:max(0, len(data) - cut * 7)])
    assert_same(log.dir, log_start)


# -- record areas with a valid CRC --------------------------------------------------------------

def v2_batch(base_offset: int, count: int, area: bytes, attributes: int = 0,
             last_delta: int | None = None) -> bytes:
    """A magic-2 batch around any record area, with a correct CRC."""
    delta = count - 1 if last_delta is None else last_delta
    body = struct.pack(">hiqqqhii", attributes, delta, 1000, 1000, -1, -1, -1, count) + area
    head = struct.pack(">qiib", base_offset, len(body) + 9, 0, 2)
    return head + struct.pack(">I", crc32c(body)) + body


def varint(n: int, pad: int = 0) -> bytes:
    """A zig-zag varint, with ``pad`` redundant continuation bytes (still decodable)."""
    raw = bytearray(encode_varint(n))
    for _ in range(pad):
        raw[-1] |= 0x80
        raw.append(0)
    return bytes(raw)


def record(key: bytes | None, value: bytes | None, delta: int, *, headers: bytes = b"\x00",
           pad: int = 0, size_fix: int = 0, ts: bytes | None = None) -> bytes:
    body = b"\x00" + (varint(0, pad) if ts is None else ts) + varint(delta, pad)
    for blob in (key, value):
        body += varint(-1, pad) if blob is None else varint(len(blob), pad) + blob
    body += headers
    return varint(len(body) + size_fix, pad) + body


blobs = st.one_of(st.none(), st.binary(max_size=6),
                  st.sampled_from([commit_key("a", "t", 0), commit_key("b", "t", 1)]))
records = st.builds(
    record, blobs, st.one_of(st.none(), st.binary(max_size=6),
                             st.just(commit_value(7))), st.integers(-2, 3),
    headers=st.sampled_from([b"\x00", b"\x02\x02k\x01", b"\x02\x02k\x04vv", b"\x01",
                             b"\x04\x00\x00", b"\x02\x03", b"\x7f", b"\x02\x02k\x03"]),
    pad=st.integers(0, 4), size_fix=st.sampled_from([0, 0, 0, -1, 1]),
    ts=st.sampled_from([None, b"\x80" * 9 + b"\x01", b"\x80" * 10 + b"\x01", b"\xff\xff\x7f"]))


@SETTINGS
@given(st.lists(st.tuples(st.lists(records, max_size=4), st.integers(-1, 1),
                          st.binary(max_size=3)), min_size=1, max_size=5),
       st.booleans())
def test_hand_made_record_areas_decode_or_stop_as_in_python(tmp_path_factory, batches,
                                                            pending):
    log = OffsetsLog(tmp_path_factory.mktemp("areas"))
    if pending:  # an open transaction: a tombstone must then leave the batch to Python
        log.commit("a", {("t", 0): 1}, producer_id=5)
    for recs, count_fix, tail in batches:
        area = b"".join(recs) + tail
        log.raw(v2_batch(log.offset, len(recs) + count_fix, area), log.offset + len(recs) + 1)
    assert_same(log.dir)


# -- the scan's contract, case by case --------------------------------------------------------

def scan(data: bytes, *, position=0, limit=None, log_start=0, table=None, replay=None):
    replay = RecordReplay(None, S.LastRecords() if table is None else table) \
        if replay is None else replay
    result = replay.latest.scan(data, position, len(data),
                                len(data) if limit is None else limit, log_start,
                                replay.pending, replay.end_transaction)
    return result, replay.latest


def marker(base: int, producer_id: int, control_type: int, version: int = 0) -> bytes:
    area = record(struct.pack(">hh", version, control_type), b"\x00\x00\x00\x00\x00\x00", 0)
    body = struct.pack(">hiqqqhii", 0x30, 0, 1000, 1000, producer_id, 0, -1, 1) + area
    head = struct.pack(">qiib", base, len(body) + 9, 0, 2)
    return head + struct.pack(">I", crc32c(body)) + body


def txn(base: int, producer_id: int, *kv: tuple[bytes | None, bytes | None]) -> bytes:
    area = b"".join(record(k, v, i) for i, (k, v) in enumerate(kv))
    body = struct.pack(">hiqqqhii", 0x10, len(kv) - 1, 1000, 1000, producer_id, 0, 0,
                       len(kv)) + area
    head = struct.pack(">qiib", base, len(body) + 9, 0, 2)
    return head + struct.pack(">I", crc32c(body)) + body


def plain(base: int, *kv: tuple[bytes | None, bytes | None], **kw) -> bytes:
    area = b"".join(record(k, v, i) for i, (k, v) in enumerate(kv))
    return v2_batch(base, len(kv), area, **kw)


def test_scan_replays_plain_batches_and_keeps_the_last_record_of_each_key():
    data = plain(0, (b"k", b"1"), (b"j", b"2")) + plain(2, (b"k", b"3"), (None, b"4"))
    (pos, batches, n, next_offset, reason), table = scan(data)
    assert (pos, batches, n, next_offset, reason) == (len(data), 2, 4, 4, S.STOP_END)
    assert table.to_dict() == {b"k": (2, b"3"), b"j": (1, b"2"), None: (3, b"4")}
    assert list(table.to_dict()) == [b"k", b"j", None] and len(table) == 3


@pytest.mark.parametrize("attributes", [1, 4, 0x14, 0x21])
def test_scan_leaves_compressed_batches_to_python(attributes):
    first = plain(0, (b"k", b"1"))
    data = first + plain(1, (b"k", b"2"), attributes=attributes)
    (pos, batches, _, next_offset, reason), table = scan(data)
    assert (pos, batches, next_offset, reason) == (len(first), 1, 1, S.STOP_BATCH)
    assert table.to_dict() == {b"k": (0, b"1")}


def test_scan_stops_before_a_crc_mismatch_and_undecodable_records():
    good = plain(0, (b"k", b"1"))
    bad_crc = bytearray(plain(1, (b"k", b"2")))
    bad_crc[-1] ^= 1
    assert scan(good + bytes(bad_crc))[0] == (len(good), 1, 1, 1, S.STOP_CRC)
    bad_area = v2_batch(1, 1, record(b"k", b"2", 0, size_fix=1))
    assert scan(good + bad_area)[0] == (len(good), 1, 1, 1, S.STOP_RECORDS)
    extra = v2_batch(1, 1, record(b"k", b"2", 0) + b"\x00")
    assert scan(good + extra)[0][4] == S.STOP_RECORDS
    huge_offset = plain((1 << 63) - 1, (b"k", b"2"))
    assert scan(huge_offset)[0] == (0, 0, 0, None, S.STOP_RECORDS)


def test_scan_replays_transactions_as_the_python_replay_does():
    data = (txn(0, 7, (b"k", b"t1"), (b"j", b"t2")) + txn(2, 8, (b"j", b"u"))
            + plain(3, (b"j", None), (b"j", b"p")) + txn(5, 9)
            + marker(6, 7, 1) + marker(7, 8, 0) + marker(8, 5, 3))
    replay = RecordReplay(None, S.LastRecords())
    result, table = scan(data, replay=replay)
    assert result == (len(data), 7, 5, 9, S.STOP_END)
    # j's tombstone dropped it from both transactions; 7 committed k, 8 aborted; the empty
    # transactional batch of 9 opened its (empty) transaction; type 3 is no end marker
    assert table.to_dict() == {b"j": (4, b"p"), b"k": (0, b"t1")}
    assert replay.pending == {9: {}}


def test_scan_leaves_a_control_key_python_refuses_to_python():
    for bad in (marker(0, 7, 1, version=-1), v2_batch(0, 1, record(b"\x00", b"", 0),
                                                      attributes=0x30)):
        assert scan(bad)[0] == (0, 0, 0, None, S.STOP_RECORDS)
    empty = v2_batch(0, 0, b"", attributes=0x30, last_delta=0)
    assert scan(empty)[0] == (len(empty), 1, 0, 1, S.STOP_END)


def test_scan_skips_batches_below_the_log_start_unchecked_and_stops_at_the_limit():
    bad_crc = bytearray(plain(0, (b"k", b"1")))
    bad_crc[-1] ^= 1
    second = plain(1, (b"k", b"2"))
    data = bytes(bad_crc) + second
    (pos, batches, n, next_offset, reason), table = scan(data, log_start=1)
    assert (pos, batches, n, next_offset, reason) == (len(data), 2, 1, 2, S.STOP_END)
    assert scan(data, log_start=1, limit=1)[0] == (len(bad_crc), 1, 0, None, S.STOP_LIMIT)
    assert scan(data, position=len(bad_crc), limit=len(bad_crc))[0][4] == S.STOP_LIMIT


def test_scan_leaves_short_tails_and_torn_batches_to_python():
    data = plain(0, (b"k", b"1"))
    assert scan(data[:17])[0] == (0, 0, 0, None, S.STOP_END)
    assert scan(data[:40])[0] == (0, 0, 0, None, S.STOP_BATCH)
    assert scan(data[:-1])[0] == (0, 0, 0, None, S.STOP_BATCH)


def test_scan_checks_its_arguments():
    table = S.LastRecords()
    with pytest.raises(ValueError):
        table.scan(b"x" * 100, 50, 200, 200, 0, {}, print)
    with pytest.raises(ValueError):
        table.scan(b"x" * 100, -1, 100, 100, 0, {}, print)
    with pytest.raises(TypeError):
        table.scan(b"x" * 100, 0, 100)
    with pytest.raises(TypeError):
        table.scan(b"x" * 100, 0, 100, 100, 0, [], print)
    with pytest.raises(OverflowError):
        table.scan(b"x" * 100, 0, 100, 100, 1 << 64, {}, print)
    with pytest.raises(TypeError):  # an open transaction that is not a dict
        data = txn(0, 7, (b"k", b"v"))
        table.scan(data, 0, len(data), len(data), 0, {7: []}, print)


def test_the_table_is_a_write_only_mapping_in_first_insertion_order():
    table = S.LastRecords()
    table[b"b"] = "anything"
    table.update([(None, (1, None)), (b"a", (2, b"v"))])
    table[b"b"] = (3, b"w")
    assert table.to_dict() == {b"b": (3, b"w"), None: (1, None), b"a": (2, b"v")}
    assert list(table.to_dict()) == [b"b", None, b"a"]
    assert table.get(b"a") == (2, b"v") and table.get(b"zz") is None
    assert table.get(b"zz", 5) == 5 and len(table) == 3
    with pytest.raises(TypeError):
        table["str"] = (1, b"")
    with pytest.raises(TypeError):
        del table[b"a"]
    with pytest.raises(TypeError):
        table.update([(b"a", 1, 2)])


def test_the_table_grows_past_many_keys():
    table = S.LastRecords()
    table.update((str(i).encode(), (i, None)) for i in range(5000))
    data = plain(0, *[(str(i).encode(), b"v") for i in range(0, 5000, 7)])
    scan(data, table=table)
    survivors = table.to_dict()
    assert len(survivors) == 5000
    assert survivors[b"7"] == (1, b"v") and survivors[b"8"] == (8, None)


def test_the_pure_python_map_is_a_dict_when_the_accelerator_is_off():
    with python_replay_only():
        assert new_latest() == {} and type(new_latest()) is dict
    assert isinstance(new_latest(), S.LastRecords)
    assert type(new_latest(accelerated=False)) is dict


def test_loads_of_all_groups_and_of_some_agree_with_and_without_the_table(tmp_path):
    log = OffsetsLog(tmp_path)
    log.commit("a", {("t", 0): 1})
    log.group("a", [member("m", {"t": [0]})])
    log.batch([(encode_group_record(2, {"group": "b"})[0], group_value([]))])
    assert_same(log.dir)
    fast = load_offsets_partition(log.dir, 0, group_ids={"a"})
    with python_replay_only():
        assert load_offsets_partition(log.dir, 0, group_ids={"a"}) == fast


def test_pylogctl_no_speedups_turns_the_table_off():
    code = ("from pylogctl.groups.replay import new_latest; "
            "print(type(new_latest()).__name__)")
    env = {k: v for k, v in os.environ.items() if k != "PYLOGCTL_NO_SPEEDUPS"}
    on = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    off = subprocess.run([sys.executable, "-c", code], env={**env, "PYLOGCTL_NO_SPEEDUPS": "1"},
                         capture_output=True, text=True)
    assert (on.stdout.strip(), off.stdout.strip()) == ("LastRecords", "dict")
