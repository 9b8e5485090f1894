"""``LogSegment.recover`` with the C batch loop (``_recover_scan.scan_recovery``) against its
pure-Python loop, which is the reference.

For the same ``.log``, settings and hooks, both must return the same truncation or raise the
same error, log the same warning, leave the same files byte for byte (``.log``, ``.index``,
``.timeindex``, ``.txnindex``), the same max timestamp, the same producer state and epoch
cache, and call the hooks the same way, with two differences the hook contract allows: the
C path moves ``update_map_end_offset`` once past a run of batches that need no replay (so
consecutive calls are compared by their last one), and a hook with ``open_txn_producers`` is
only handed the batches it declares it needs.

Checked on every segment of the real corpus, on damaged copies of them (cut mid-batch, a CRC
broken, garbage appended, a size field broken) and on hypothesis-generated batch sequences
(legacy batches, offsets going back or overflowing the segment, timestamps going back,
transactions, leader epochs, indexes filling up).
"""

from __future__ import annotations

import mmap
import os
import random
import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.format.crc import crc32c
from pylogctl.storage import segment as segment_module
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.naming import offset_from_file
from recover_support import HOOKS, python_loop_only, recover_outcome
from support import corpus_dirs
from wire import legacy_message

pytestmark = pytest.mark.skipif(
    segment_module._scan_recovery is None,
    reason="the C accelerator pylogctl.storage._recover_scan is not built or is off (it is "
           "optional; build it with `python setup.py build_ext --inplace`)")

TS = 1_700_000_000_000


@pytest.fixture
def scratch(tmp_path: Path):
    """A dir for the segments: in memory when /dev/shm is there (each comparison writes,
    fsyncs and deletes a segment's files twice, thousands of times)."""
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    directory = tempfile.mkdtemp(prefix="pylogctl-test-recover-", dir="/dev/shm")
    try:
        yield Path(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def assert_same_recovery(tmp: Path, log: bytes, base: int = 0, hooks: str = "none",
                         config: LogConfig = LogConfig()) -> dict:
    """recover() with and without the C loop give the same outcome; returns it."""
    with python_loop_only():
        reference = recover_outcome(tmp / "segment", log, base, hooks, config)
    fast = recover_outcome(tmp / "segment", log, base, hooks, config)
    assert fast == reference
    return reference


def batch_spans(log: bytes) -> list[tuple[int, int]]:
    """(position, size) of each whole batch, by the size fields alone."""
    spans = []
    pos = 0
    while pos + 12 <= len(log):
        (size,) = struct.unpack_from(">i", log, pos + 8)
        if size < 14 or pos + 12 + size > len(log):
            break
        spans.append((pos, 12 + size))
        pos += 12 + size
    return spans


# -- the corpus --------------------------------------------------------------------------------
def corpus_logs() -> list[Path]:
    return sorted(p for d in corpus_dirs() for p in d.rglob("*.log") if p.stat().st_size)


def _corpus_id(path: Path) -> str:
    return "/".join(path.parts[-3:])


@pytest.mark.corpus
@pytest.mark.parametrize("hooks", HOOKS)
def test_corpus_segments_recover_the_same(corpus, scratch: Path, hooks: str):
    logs = corpus_logs()
    assert logs
    differences = []
    for log in logs:
        try:
            assert_same_recovery(scratch, log.read_bytes(), offset_from_file(log), hooks)
        except AssertionError as exc:
            differences.append(f"{_corpus_id(log)}: {exc}")
    assert not differences, "\n".join(differences[:3])


@pytest.mark.corpus
def test_corpus_recovery_takes_the_c_loop(corpus, scratch: Path, monkeypatch):
    """The comparison above is not vacuous: the C loop scans every byte of every corpus
    segment of v2 batches (only the 2016 dir's legacy segments are left to Python)."""
    scanned = [0]

    def counting(*args):
        out = real(*args)
        if out is not NotImplemented:
            scanned[0] += out[0] - args[1]
        return out

    real = segment_module._scan_recovery
    monkeypatch.setattr(segment_module, "_scan_recovery", counting)
    legacy = 0
    for log in corpus_logs():
        data = log.read_bytes()
        before = scanned[0]
        outcome = assert_same_recovery(scratch, data, offset_from_file(log))
        if data[16] < 2:
            legacy += 1
        else:
            assert scanned[0] - before == len(data) - outcome["result"][1], log
    assert legacy < 5


def _damaged(log: bytes, rng: random.Random) -> dict[str, bytes]:
    spans = batch_spans(log)
    pos, size = spans[len(spans) // 2]
    last_pos, last_size = spans[-1]
    end = last_pos + last_size
    flipped = bytearray(log)
    flipped[pos + size - 1] ^= 0x01  # the last byte of a batch: covered by every format's CRC
    bad_size = bytearray(log)
    bad_size[pos + 8:pos + 12] = struct.pack(">i", rng.choice([0, 13, 1 << 30, -5]))
    header = bytearray(log[pos:pos + 17])
    header[8:12] = struct.pack(">i", 5)
    magic3 = bytearray(log[last_pos:end])
    magic3[16] = 3
    return {
        "cut-mid-batch": log[:last_pos + last_size // 2],
        "cut-in-header": log[:pos + 20],
        "crc-broken": bytes(flipped),
        "size-broken": bytes(bad_size),
        "garbage-random": log + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200))),
        "garbage-zeros": log + bytes(100),
        "garbage-short": log + bytes(17),
        "garbage-size-below-14": log + bytes(header) + bytes(40),
        "garbage-magic-3": log + bytes(magic3),
    }


@pytest.mark.corpus
def test_damaged_corpus_segments_recover_the_same(corpus, scratch: Path):
    rng = random.Random(20240611)
    differences = []
    damaged = cuts = 0
    for log in corpus_logs():
        spans = batch_spans(log.read_bytes())
        if len(spans) < 2:
            continue
        # the first 500 batches of the few big segments are enough: the rest is more of it
        pos, size = spans[min(len(spans), 500) - 1]
        data = log.read_bytes()[:pos + size]
        variants = list(_damaged(data, rng).items())
        # three kinds of damage per segment, in turn: each kind meets every third segment
        for name, variant in (variants * 2)[damaged % len(variants):][:3]:
            damaged += 1
            for hooks in ("none", "full"):
                try:
                    outcome = assert_same_recovery(scratch, variant, offset_from_file(log), hooks)
                except AssertionError as exc:
                    differences.append(f"{_corpus_id(log)} {name} {hooks}: {exc}")
                    continue
                cuts += outcome["result"][0] == "truncated" and outcome["result"][1] > 0
    assert not differences, "\n".join(differences[:3])
    assert damaged > 100 and cuts > damaged  # (two hook settings each)


# -- by hand -----------------------------------------------------------------------------------
def v2(offset: int, count: int = 2, timestamp: int = TS, value_size: int = 300, **options) -> bytes:
    builder = RecordBatchBuilder(base_offset=offset, **options)
    for i in range(count):
        builder.append(timestamp + i if timestamp >= 0 else -1, b"k", b"v" * value_size)
    return builder.build()


def test_a_transaction_aborted_and_committed_across_plain_batches(scratch: Path):
    log = (v2(0, producer_id=1, producer_epoch=0, base_sequence=0)
           + v2(2, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
           + v2(4, producer_id=1, producer_epoch=0, base_sequence=2)
           + v2(6, producer_id=-1)
           + build_end_txn_marker(offset=8, producer_id=7, producer_epoch=0, commit=False,
                                  coordinator_epoch=0, timestamp=TS)
           + v2(9, producer_id=7, producer_epoch=0, base_sequence=2, is_transactional=True)
           + v2(11, producer_id=1, producer_epoch=0, base_sequence=4, partition_leader_epoch=3)
           + build_end_txn_marker(offset=13, producer_id=7, producer_epoch=0, commit=True,
                                  coordinator_epoch=0, timestamp=TS))
    config = LogConfig(index_interval_bytes=100)
    for hooks in HOOKS:
        outcome = assert_same_recovery(scratch, log, 0, hooks, config)
        assert outcome["result"] == ("truncated", 0)
        assert len(outcome["files"]["00000000000000000000.index"]) == 6 * 8
        if hooks != "none":
            assert len(outcome["files"]["00000000000000000000.txnindex"]) == 34  # one abort


def test_a_plain_batch_inside_a_transaction_is_replayed(scratch: Path):
    """rebuild-index's hook still gets a plain batch of a producer with a transaction open
    (and producer state refuses it, both ways)."""
    log = (v2(0, producer_id=1, producer_epoch=0, base_sequence=0, is_transactional=True)
           + v2(2, producer_id=2, producer_epoch=0, base_sequence=0)
           + v2(4, producer_id=1, producer_epoch=0, base_sequence=2))
    for hooks in ("full", "txn"):
        outcome = assert_same_recovery(scratch, log, 0, hooks)
        assert outcome["result"][:2] == ("error", "InvalidTxnStateError")


@pytest.mark.parametrize("problem", ["offset-index-full", "time-index-full", "offset-goes-back",
                                     "offset-repeats", "offset-overflow", "offset-below-base",
                                     "time-offset-goes-back", "short-v2-batch"])
def test_what_recovery_refuses_is_refused_the_same(scratch: Path, problem: str):
    config = LogConfig(index_interval_bytes=0)
    base = 100
    batches = [v2(base + 2 * i, timestamp=TS + 10 * i) for i in range(6)]
    if problem == "offset-index-full":  # 3 entries; no timestamps, so no time entries
        config = LogConfig(index_interval_bytes=0, segment_index_bytes=24)
        batches = [v2(base + 2 * i, timestamp=-1) for i in range(6)]
    elif problem == "time-index-full":  # 3 slots, the last kept for the final entry
        config = LogConfig(index_interval_bytes=0, segment_index_bytes=36)
    elif problem == "offset-goes-back":
        batches[4] = v2(base + 1, timestamp=TS + 100)
    elif problem == "offset-repeats":
        batches[4] = batches[3]
    elif problem == "offset-overflow":
        batches[3] = v2(base + (1 << 31) - 1)
    elif problem == "offset-below-base":
        batches[3] = v2(base - 5)
    elif problem == "time-offset-goes-back":
        # the time index gets (TS + 101, 201), then a new max at offset 161: refused
        batches[:3] = [v2(200, timestamp=TS + 100), v2(150, timestamp=TS), v2(160, timestamp=TS + 500)]
    else:  # a magic-2 batch shorter than the v2 header, with a CRC that matches its bytes
        short = bytearray(struct.pack(">qiib", base + 6, 30, 0, 2) + bytes(4) + b"\x00" * 21)
        short[17:21] = struct.pack(">I", crc32c(bytes(short[21:])))
        batches[3] = bytes(short)
    outcome = assert_same_recovery(scratch, b"".join(batches), base, "full", config)
    assert outcome["result"][0] == "error" or outcome["result"][1] > 0


def test_no_index_entry_at_a_position_beyond_int32(tmp_path: Path):
    """The offset index refuses a position past 2 GiB: the C loop leaves that batch to Python
    (a sparse file: no recovery test writes 2 GiB)."""
    from pylogctl.storage._recover_scan import scan_recovery

    position = (1 << 31) + 100
    batch = v2(0)
    path = tmp_path / "sparse.log"
    with open(path, "wb") as f:
        f.seek(position)
        f.write(batch + batch)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        # (buf, position, limit, end, base, interval, last_index_entry, ...): see the docstring
        args = [m, position, len(m), len(m), 0, 500, position - 5000, -1, 0, None, 10, -1, None,
                10, 0x7FFFFFFF, 0, None]
        assert scan_recovery(*args)[0] == position
        args[6] = position  # no entry due at the first batch: it is done, the second is not
        assert scan_recovery(*args)[0] == position + len(batch)
        args[5] = 1 << 40  # no entry due at all
        assert scan_recovery(*args)[0] == position + 2 * len(batch)


def test_legacy_and_v2_batches_interleaved(scratch: Path):
    log = (legacy_message(0, 0, b"k", b"v" * 200) + legacy_message(1, 1, b"k", b"v" * 200, TS)
           + v2(2) + v2(4, partition_leader_epoch=1) + legacy_message(6, 1, None, b"x", TS + 9)
           + v2(7, partition_leader_epoch=2) + v2(9, partition_leader_epoch=2))
    for hooks in HOOKS:
        outcome = assert_same_recovery(scratch, log, 0, hooks, LogConfig(index_interval_bytes=0))
        assert outcome["result"] == ("truncated", 0)


def test_offsets_beyond_int64_are_left_to_python(scratch: Path):
    """A segment base beyond int64 (a hand-made name): the C loop declines, Python decides."""
    outcome = assert_same_recovery(scratch, v2(0) + v2(2), 1 << 63)
    assert outcome["result"][0] == "error"


def test_the_scan_crosses_its_chunks_and_reports_progress(scratch: Path, monkeypatch):
    monkeypatch.setattr(segment_module, "RECOVERY_SCAN_BYTES", 1000)
    log = b"".join(v2(2 * i, timestamp=TS + i, producer_id=i % 3 - 1, producer_epoch=0,
                      base_sequence=0 if i < 3 else (i // 3) * 2, partition_leader_epoch=i // 7)
                   for i in range(40))
    for hooks in HOOKS:
        assert_same_recovery(scratch, log, 0, hooks, LogConfig(index_interval_bytes=700))


def test_scan_recovery_rejects_a_position_outside_the_buffer():
    from pylogctl.storage._recover_scan import scan_recovery

    args = [b"x" * 10, 0, 10, 11, 0, 4096, 0, -1, 0, None, 10, -1, None, 10, 0x7FFFFFFF, 0, None]
    with pytest.raises(ValueError):
        scan_recovery(*args)
    args[3] = 10
    assert scan_recovery(*args)[:6] == (0, 0, -1, 0, None, None)
    args[15], args[16] = 2, [1]
    with pytest.raises(TypeError):
        scan_recovery(*args)


# -- generated sequences -----------------------------------------------------------------------
@st.composite
def batch_sequences(draw):
    """A log of v2 and legacy batches, mostly well formed, with the irregularities a damaged or
    hand-made log has, and maybe some damage at one byte or at the end."""
    base = draw(st.sampled_from([0, 1000]))
    offset = base
    ts = TS
    parts = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["v2"] * 6 + ["marker", "legacy", "repeat"]))
        if kind == "repeat" and parts:  # the same batch again (its offsets too)
            parts.append(parts[-1])
            continue
        jump = draw(st.sampled_from([0] * 10 + [-3, -30, 40, 1 << 31, -(base + 5)]))
        offset = max(offset + jump, 0)
        ts_step = draw(st.sampled_from([1, 1, 50, 0, -200]))
        ts = ts + ts_step
        if kind == "legacy":
            magic = draw(st.integers(0, 1))
            parts.append(legacy_message(offset, magic, b"k", b"v" * draw(st.integers(0, 300)),
                                        ts if magic else -1))
            offset += 1
            continue
        pid = draw(st.sampled_from([-1, 1, 2]))
        epoch = draw(st.sampled_from([-1, 0, 1, 2]))
        if kind == "marker":
            if pid < 0:
                pid = 2
            parts.append(build_end_txn_marker(offset=offset, producer_id=pid, producer_epoch=0,
                                              commit=draw(st.booleans()), coordinator_epoch=0,
                                              timestamp=ts, partition_leader_epoch=epoch))
            offset += 1
            continue
        count = draw(st.integers(1, 3))
        with_ts = draw(st.sampled_from([True, True, True, False]))
        parts.append(v2(offset, count, ts if with_ts else -1, draw(st.integers(0, 400)),
                        producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                        base_sequence=draw(st.integers(0, 20)) if pid >= 0 else -1,
                        is_transactional=pid >= 0 and draw(st.booleans()),
                        partition_leader_epoch=epoch))
        offset += count
    log = bytearray(b"".join(parts))
    damage = draw(st.sampled_from(["none"] * 4 + ["flip", "cut", "append"]))
    if damage == "flip" and log:
        log[draw(st.integers(0, len(log) - 1))] ^= 1 << draw(st.integers(0, 7))
    elif damage == "cut" and log:
        del log[draw(st.integers(0, len(log) - 1)):]
    elif damage == "append":
        log += draw(st.binary(min_size=1, max_size=80))
    return base, bytes(log)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(sequence=batch_sequences(), hooks=st.sampled_from(HOOKS),
       interval=st.sampled_from([0, 1, 500, 4096]),
       index_bytes=st.sampled_from([24, 40, 10 * 1024 * 1024]),
       chunk=st.sampled_from([1, 700, segment_module.RECOVERY_SCAN_BYTES]))
def test_generated_sequences_recover_the_same(scratch: Path, sequence, hooks: str, interval: int,
                                              index_bytes: int, chunk: int):
    base, log = sequence
    saved = segment_module.RECOVERY_SCAN_BYTES
    segment_module.RECOVERY_SCAN_BYTES = chunk
    try:
        assert_same_recovery(scratch, log, base, hooks,
                             LogConfig(index_interval_bytes=interval,
                                       segment_index_bytes=index_bytes))
    finally:
        segment_module.RECOVERY_SCAN_BYTES = saved
