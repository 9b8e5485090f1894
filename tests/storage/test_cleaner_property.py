"""Property: on random sequences of keys, values, tombstones and keyless records, split into
random batches and segments, two cleanings (the second after more data, before or after the
delete horizon) leave exactly what a simple model says."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleaner_support import (BASE_TS, DAY, Rec, Workload, append_segment, cleaner_checkpoint,
                             compact, data_records, keyed_batch, write_log)

NOW = BASE_TS + DAY
RETENTION = DAY

# a record: key number (None: keyless) and whether it is a tombstone
records_st = st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 7)), st.booleans()),
                      min_size=1, max_size=60)


def _batches(ops, first_offset: int, sizes) -> tuple[list[bytes], list[Rec]]:
    batches, recs, offset, i = [], [], first_offset, 0
    while i < len(ops):
        n = sizes[len(batches) % len(sizes)]
        items = []
        for key, tombstone in ops[i:i + n]:
            k = None if key is None else b"k%d" % key
            v = None if (tombstone and k is not None) else b"v%d" % (offset + len(items))
            items.append((k, v))
        batches.append(keyed_batch(offset, items))
        recs += [Rec(offset + j, k, v, BASE_TS + j) for j, (k, v) in enumerate(items)]
        offset += len(items)
        i += n
    return batches, recs


def _model(recs: list[Rec], end1: int, end2: int, horizon_passed: bool) -> list[tuple]:
    """Per key, its latest record below ``end2``; a tombstone below ``end1`` (cleaned once
    already) goes once its horizon has passed; no keyless record below ``end2``."""
    latest = {r.key: r.offset for r in recs if r.offset < end2 and r.key is not None}
    keep = set(latest.values())
    out = []
    for r in recs:
        if r.offset >= end2:
            out.append(r.view())
        elif r.offset in keep and not (horizon_passed and r.value is None and r.offset < end1):
            out.append(r.view())
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=records_st, second=records_st, sizes=st.lists(st.integers(1, 6), min_size=1,
                                                           max_size=4),
       segment_batches=st.integers(1, 6), horizon_passed=st.booleans())
def test_two_cleanings_match_the_model(first, second, sizes, segment_batches, horizon_passed):
    with tempfile.TemporaryDirectory() as tmp:
        log_dir = Path(tmp)
        w = Workload()
        w.batches, w.records = _batches(first, 0, sizes)
        w.rolls = list(range(segment_batches, len(w.batches), segment_batches))
        w.rolls.append(len(w.batches))
        w.next_offset = len(first)
        part = write_log(log_dir, w)
        compact(log_dir, NOW, partitions=("t-0",))
        end1 = cleaner_checkpoint(log_dir)
        assert end1 == len(first)  # everything below the empty active segment
        assert data_records(part) == _model(w.records, end1, end1, False)
        more, recs = _batches(second, w.next_offset, sizes)
        append_segment(log_dir, part, more)
        compact(log_dir, NOW + (RETENTION if horizon_passed else RETENTION - 1),
                partitions=("t-0",))
        end2 = cleaner_checkpoint(log_dir)
        assert end2 == len(first) + len(second)
        assert data_records(part) == _model(w.records + recs, end1, end2, horizon_passed)
