"""Index dump and verification, on the corpus and on files the tests write by hand."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from support import CORPUS, corpus_params
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.storage.index import CorruptIndexError
from pylogctl.storage.offset_index import OffsetIndex
from pylogctl.storage.time_index import TimeIndex
from pylogctl.tools.dump_index import IndexDumpOptions, dump_index

TS = 1_700_000_000_000


def _segment(tmp_path: Path, base: int = 0, batches: int = 6, per_batch: int = 3) -> tuple[Path, list]:
    """A segment plus the (last offset, position, max timestamp) of each batch."""
    data, meta, offset = b"", [], base
    for i in range(batches):
        b = RecordBatchBuilder(base_offset=offset)
        for j in range(per_batch):
            b.append(TS + 10 * offset + j, b"k", b"v" * 50)
        raw = b.build()
        meta.append((b.next_offset() - 1, len(data), TS + 10 * offset + per_batch - 1))
        data += raw
        offset = b.next_offset()
    path = tmp_path / f"{base:020d}.log"
    path.write_bytes(data)
    return path, meta


def _write_index(path: Path, base: int, entries: list[tuple[int, int]], pad: int = 0) -> Path:
    path.write_bytes(b"".join(struct.pack(">ii", o - base, p) for o, p in entries) + b"\0" * pad)
    return path


def _write_time_index(path: Path, base: int, entries: list[tuple[int, int]], pad: int = 0) -> Path:
    path.write_bytes(b"".join(struct.pack(">qi", t, o - base) for t, o in entries) + b"\0" * pad)
    return path


def _consume(dump):
    items = list(dump.items)
    return items, dump.footer


def test_offset_index_verifies_and_stops_at_zero_filled_tail(tmp_path):
    log, meta = _segment(tmp_path, base=100)
    idx = _write_index(tmp_path / f"{100:020d}.index", 100,
                       [(m[0], m[1]) for m in meta[::2]], pad=8 * 5)
    items, footer = _consume(dump_index(idx))
    assert [(e["offset"], e["position"]) for e in items] == [(m[0], m[1]) for m in meta[::2]]
    assert footer["mismatches"] == []


def test_offset_index_mismatch_verdicts(tmp_path, cli):
    log, meta = _segment(tmp_path)
    # entry 1: a multi-batch append (offset of batch 2, position of batch 1) -> benign;
    # entry 2: position of batch 4 but offset inside batch 3 -> lookups would skip records
    entries = [(meta[0][0], meta[0][1]), (meta[2][0], meta[1][1]), (meta[3][0] - 1, meta[4][1])]
    idx = _write_index(tmp_path / f"{0:020d}.index", 0, entries)
    items, footer = _consume(dump_index(idx))
    verdicts = {m["indexOffset"]: (m["logOffset"], m["verdict"]) for m in footer["mismatches"]}
    assert verdicts == {meta[2][0]: (meta[1][0], "benign"), meta[3][0] - 1: (meta[4][0], "corrupt")}
    res = cli("dump-segment", "--verify-index-only", idx)
    assert res.code == 1
    assert res.out.splitlines() == [f"Dumping {idx}"]
    err = res.err.splitlines()
    assert err[0] == f"Mismatches in :{idx.resolve()}"
    assert err[1:3] == [f"  Index offset: {meta[3][0] - 1}, log offset: {meta[4][0]}",
                        f"  Index offset: {meta[2][0]}, log offset: {meta[1][0]}"]
    assert "1 of 2 are benign" in err[3]


def test_empty_index_and_sanity_check(tmp_path, cli):
    _segment(tmp_path)
    empty = _write_index(tmp_path / f"{0:020d}.index", 0, [])
    assert cli("dump-segment", empty).out == f"Dumping {empty}\n{empty} is empty.\n"
    (tmp_path / "b").mkdir()
    log, meta = _segment(tmp_path / "b")
    good = _write_index(log.with_suffix(".index"), 0, [(meta[1][0], meta[1][1])])
    res = cli("dump-segment", "--index-sanity-check", good)
    assert res.out.splitlines()[-1] == f"{good} passed sanity check." and res.code == 0
    good.write_bytes(good.read_bytes() + b"\0\0\0")
    res = cli("dump-segment", "--index-sanity-check", good)
    assert res.code == 1
    assert (f"Index file {good.resolve()} is corrupt, found 11 bytes which is neither positive "
            f"nor a multiple of 8") in res.err
    with pytest.raises(CorruptIndexError, match="last offset is 5 which is less than the base "
                                                "offset 10"):
        bad = _write_index(tmp_path / f"{10:020d}.index", 10, [(5, 0)])
        with OffsetIndex(bad) as index:
            index.sanity_check()


def test_time_index_verification(tmp_path, cli):
    log, meta = _segment(tmp_path)
    _write_index(tmp_path / f"{0:020d}.index", 0, [(meta[2][0], meta[2][1])])
    good = [(meta[i][2], meta[i][0]) for i in (0, 2, 4)]
    tidx = _write_time_index(tmp_path / f"{0:020d}.timeindex", 0, good, pad=24)
    items, footer = _consume(dump_index(tidx))
    assert [(e["timestamp"], e["offset"]) for e in items] == good
    assert footer["timestampMismatches"] == footer["outOfOrder"] == footer["notFound"] == []
    bad = [(meta[0][2], meta[0][0]), (meta[2][2] + 1, meta[2][0]), (meta[1][2], meta[3][0] - 1),
           (meta[5][2], meta[5][0] + 50)]
    tidx = _write_time_index(tidx, 0, bad)
    res = cli("dump-segment", tidx)
    assert res.code == 1
    assert res.out.splitlines()[1:] == [f"timestamp: {t} offset: {o}" for t, o in bad]
    assert res.err.splitlines() == [
        f"Found timestamp mismatch in :{tidx.resolve()}",
        f"  Index timestamp: {meta[2][2] + 1}, log timestamp: {meta[2][2]}",
        "The following indexed offsets are not found in the log.",
        f"Indexed offset: {meta[3][0] - 1}, found log offset: {meta[3][0]}",
        f"Indexed offset: {meta[5][0] + 50}, found log offset: -1",
    ]
    assert cli("dump-segment", "--index-sanity-check", tidx).code == 0
    _write_time_index(tidx, 0, [(TS + 1000, 2), (TS, 5)])
    res = cli("dump-segment", "--index-sanity-check", tidx)
    assert res.code == 1
    assert (f"Corrupt time index found, time index file ({tidx.resolve()}) has non-zero size but "
            f"the last timestamp is {TS} which is less than the first timestamp {TS + 1000}"
            in res.err)


def test_lookup_uses_largest_lower_bound(tmp_path):
    entries = [(o, o * 10) for o in range(0, 5000, 3)]
    idx = _write_index(tmp_path / f"{0:020d}.index", 0, entries)
    with OffsetIndex(idx) as index:
        for target in (0, 1, 2, 3, 4, 2998, 2999, 3000, 4999, 10_000):
            expect = max(o for o, _ in entries if o <= target)
            assert index.lookup(target) == (expect, expect * 10)
    with OffsetIndex(_write_index(tmp_path / f"{50:020d}.index", 50, [(60, 7)])) as index:
        assert index.lookup(55) == (50, 0)
    with TimeIndex(_write_time_index(tmp_path / f"{0:020d}.timeindex", 0,
                                     [(100, 1), (200, 5), (300, 9)])) as tindex:
        assert tindex.lookup(250) == (200, 5) and tindex.lookup(50) == (-1, 0)


@pytest.mark.corpus
@pytest.mark.parametrize("data_dir", corpus_params())
def test_corpus_indexes_verify(data_dir: Path):
    """Every index in the corpus verifies; the only mismatches are benign multi-batch appends."""
    indexes = sorted(data_dir.rglob("*.index")) + sorted(data_dir.rglob("*.timeindex"))
    for path in indexes:
        dump = dump_index(path, IndexDumpOptions(verify_only=True))
        list(dump.items)
        assert dump.error is None, dump.error
        for m in dump.footer.get("mismatches", []):
            assert m["verdict"] == "benign", (path, m)
        for key in ("timestampMismatches", "outOfOrder"):
            assert dump.footer.get(key, []) == [], (path, key, dump.footer[key])
        for row in dump.footer.get("notFound", []):
            assert row["verdict"] == "benign", (path, row)
        if path.stat().st_size:
            sanity = dump_index(path, IndexDumpOptions(sanity_check_only=True))
            list(sanity.items)
            assert sanity.error is None and sanity.footer["sanityCheck"] == "passed", path


@pytest.mark.corpus
def test_corpus_benign_mismatches_are_the_known_follower_entries(corpus):
    """invoice-multiseg holds real entries that index a batch before the offset's batch."""
    total = 0
    for path in sorted((corpus / "invoice-multiseg").rglob("*.index")):
        dump = dump_index(path, IndexDumpOptions(verify_only=True))
        list(dump.items)
        for m in dump.footer["mismatches"]:
            assert m["logOffset"] < m["indexOffset"]
            total += 1
    assert 50 <= total <= 100  # the catalogue speaks of about 75 such entries


def test_json_output_for_indexes(tmp_path, cli):
    log, meta = _segment(tmp_path)
    idx = _write_index(tmp_path / f"{0:020d}.index", 0, [(meta[2][0], meta[1][1])])
    doc = json.loads(cli("dump-segment", "-o", "json", idx).out)
    assert doc[0]["type"] == "offset-index" and doc[0]["entries"] == [
        {"offset": meta[2][0], "position": meta[1][1]}]
    assert doc[0]["mismatches"][0]["verdict"] == "benign"
    assert "multi-batch append" in doc[0]["mismatches"][0]["explanation"]


# -- regressions found by tests/fuzz/fuzz_dump.py ------------------------------------------------

def test_negative_entry_position_is_a_corrupt_mismatch(tmp_path, cli):
    """A negative position used to be read from the end of the mapped segment (or crash with a
    struct.error); it names no batch, so the entry is a corrupt mismatch."""
    log, meta = _segment(tmp_path)
    idx = _write_index(tmp_path / f"{0:020d}.index", 0, [(meta[0][0], 0), (meta[1][0], -5),
                                                         (meta[2][0], -32760)])
    items, footer = _consume(dump_index(idx))
    assert [e["position"] for e in items] == [0, -5, -32760]
    assert [(m["indexOffset"], m["logOffset"], m["verdict"]) for m in footer["mismatches"]] == [
        (meta[2][0], -1, "corrupt"), (meta[1][0], -1, "corrupt")]
    assert "negative" in footer["mismatches"][0]["explanation"]
    res = cli("dump-segment", "--verify-index-only", idx)
    assert res.code == 1 and "Traceback" not in res.err
    assert res.err.splitlines()[:3] == [f"Mismatches in :{idx.resolve()}",
                                        f"  Index offset: {meta[2][0]}, log offset: -1",
                                        f"  Index offset: {meta[1][0]}, log offset: -1"]


def test_time_index_survives_a_negative_offset_index_position(tmp_path):
    log, meta = _segment(tmp_path)
    _write_index(tmp_path / f"{0:020d}.index", 0, [(meta[0][0], -100)])
    tidx = _write_time_index(tmp_path / f"{0:020d}.timeindex", 0,
                             [(meta[i][2], meta[i][0]) for i in (0, 3)])
    items, footer = _consume(dump_index(tidx))
    assert len(items) == 2
    assert footer["timestampMismatches"] == footer["notFound"] == footer["outOfOrder"] == []


def test_log_errors_during_time_index_verification_name_the_segment(tmp_path, cli):
    """A corrupt batch met while verifying a time index is the segment's fault: the error names
    the .log and the batch's position there (it used to name the .timeindex)."""
    log, meta = _segment(tmp_path)
    data = bytearray(log.read_bytes())
    second = meta[1][1]
    struct.pack_into(">i", data, second + 57, -2**31)  # the second batch's record count
    log.write_bytes(bytes(data))
    tidx = _write_time_index(tmp_path / f"{0:020d}.timeindex", 0, [(meta[1][2], meta[1][0])])
    dump = dump_index(tidx)
    _consume(dump)
    assert dump.error is not None
    # the position is in the segment: the second batch's records (its 61-byte header on)
    assert dump.error.path == str(log.resolve()) and dump.error.position == second + 61
    assert dump.footer["error"]["position"] == second + 61
    res = cli("dump-segment", tidx)
    assert res.code == 1 and "Traceback" not in res.err
    assert res.err.splitlines() == [f"pylogctl: {dump.error}"]
    assert f"{log.resolve()}, byte position {second + 61})" in res.err


def test_index_names_without_an_offset_are_one_line_errors(tmp_path, cli):
    from pylogctl.errors import PylogctlError

    log, meta = _segment(tmp_path)
    for name in ("abc.index", "abc.timeindex", "0x10.index"):
        path = _write_index(tmp_path / name, 0, [(meta[0][0], 0)])
        with pytest.raises(PylogctlError, match="Cannot parse a base offset from the file name"):
            dump_index(path)
        res = cli("dump-segment", path)
        assert res.code == 1 and len(res.err.splitlines()) == 1 and "Traceback" not in res.err


def test_json_footer_carries_the_error_that_stopped_an_index_dump(tmp_path, cli):
    log, meta = _segment(tmp_path)
    idx = _write_index(tmp_path / f"{0:020d}.index", 0, [(meta[1][0], meta[1][1])], pad=3)
    res = cli("dump-segment", "--index-sanity-check", "-o", "json", idx)
    assert res.code == 1
    doc = json.loads(res.out)
    assert "neither positive nor a multiple of 8" in doc[0]["error"]["message"]
    missing = _write_index(tmp_path / f"{500:020d}.index", 500, [(500, 0)])
    doc = json.loads(cli("dump-segment", "-o", "json", missing).out)
    assert "No such file" in doc[0]["error"]["message"]
