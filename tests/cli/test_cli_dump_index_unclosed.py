"""Kafka's DumpLogSegmentsTest item 3 (§1.10): verifying the indexes of a flushed but not
closed segment. With ``index.interval.bytes`` 128 the segment gets many entries, and since it
is still active its ``.index`` and ``.timeindex`` keep their preallocated zero padding; the
verification must stop at the padding and report no mismatch and no time-index error."""

from __future__ import annotations

from pylogctl.format.builder import build_batch
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.segment import LogSegment


def test_unclosed_segment_indexes_verify_cleanly(cli, tmp_path):
    config = LogConfig(index_interval_bytes=128, segment_index_bytes=1024 * 1024)
    seg = LogSegment.create(tmp_path, 0, config)
    offset = 0
    for i in range(40):
        n = 1 + i % 3
        ts = 1_700_000_000_000 + i * 10
        batch = build_batch([(ts, b"k%d" % j, b"value %d" % (offset + j)) for j in range(n)],
                            base_offset=offset)
        seg.append(offset + n - 1, batch)
        offset += n
    seg.flush()  # flushed, not closed: the indexes stay preallocated
    index = tmp_path / "00000000000000000000.index"
    time_index = tmp_path / "00000000000000000000.timeindex"
    assert index.stat().st_size == 1024 * 1024 and time_index.stat().st_size > 12 * 10

    res = cli("dump-segment", "--verify-index-only", index, time_index)
    assert res.code == 0, res.err
    assert "Mismatches" not in res.err and "mismatch" not in res.err.lower()
    assert "out of order" not in res.err and "not found" not in res.err
    res = cli("dump-segment", index)
    entries = [l for l in res.lines if l.startswith("offset: ")]
    assert len(entries) > 10  # many entries at a 128-byte interval, none from the padding
    assert all(not l.startswith("offset: 0 position: 0") for l in entries[1:])
    seg.close()
