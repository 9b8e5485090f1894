"""Zero-byte, truncated and corrupt variants of every file type ``dump-segment`` handles.

One parametrized table: each row writes one damaged file (with an intact sibling segment where
the dump reads one), runs the CLI in-process and checks the documented exit code, stderr and the
last line of stdout. Every row: no traceback, never exit 70, ``-o json`` still parses with the
same exit code and (for a data problem) carries the same message. Where a row expects a
diagnostic (``err``), stderr is exactly one line naming the file (as given or absolute) and,
where the error has one, the byte position. Rows without ``err`` are the cases Kafka's tool
itself reports on stdout or not at all: an empty active segment, a CRC mismatch shown as
``isvalid: false``, a partial tail entry an index reader ignores, trailing invalid bytes
reported as ``Found N invalid bytes at the end of {file}``. Index verdicts keep Kafka's
multi-line summaries (``err_lines``: ``Mismatches in :{abs}`` ...).

The byte-level rules behind these rows are tested in depth elsewhere (``tests/format``,
``test_dump_robustness.py``, ``test_dump_metadata.py``, ``test_dump_state.py``,
``test_dump_index.py``); this table is the CLI contract across all file kinds at once.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import crc32c
import pytest

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.control import ControlRecordType, SNAPSHOT_FOOTER, SNAPSHOT_HEADER
from pylogctl.format.message import write_message
from pylogctl.format.metadata_records import encode_metadata_record
from pylogctl.tools.sample import _orders_segment

SEG, _ = _orders_segment()
SIZES = []
_p = 0
while _p < len(SEG):
    SIZES.append(struct.unpack_from(">i", SEG, _p + 8)[0] + 12)
    _p += SIZES[-1]
P2 = SIZES[0]  # position of the second batch
BASE = "00000000000000000000"
TS = 1_700_000_000_000


def _kraft_snapshot() -> bytes:
    header = RecordBatchBuilder(base_offset=0, is_control=True)
    header.append_control(ControlRecordType.SNAPSHOT_HEADER, write_message(
        SNAPSHOT_HEADER, {"version": 0, "lastContainedLogTimestamp": 10000}, 0), TS)
    data = RecordBatchBuilder(base_offset=1)
    data.append(TS, None, encode_metadata_record(2, 0, {"name": "t", "topicId": bytes(16)}))
    footer = RecordBatchBuilder(base_offset=2, is_control=True)
    footer.append_control(ControlRecordType.SNAPSHOT_FOOTER,
                          write_message(SNAPSHOT_FOOTER, {"version": 0}, 0), TS)
    return header.build() + data.build() + footer.build()


SNAP = _kraft_snapshot()
SNAP_SIZES = [struct.unpack_from(">i", SNAP, 8)[0] + 12]
SNAP_SIZES.append(struct.unpack_from(">i", SNAP, SNAP_SIZES[0] + 8)[0] + 12)


def _patched(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _flip(data: bytes, offset: int) -> bytes:
    out = bytearray(data)
    out[offset] ^= 0xFF
    return bytes(out)


def _producer_snapshot(entries) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(
        struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


PSNAP = _producer_snapshot([(7, 2, 10, 41, 3, 1700, 5, -1), (8, 0, -1, -1, 0, 1800, -1, 30)])
TXN = struct.pack(">hqqqq", 0, 5, 10, 20, 8) + struct.pack(">hqqqq", 0, 6, 30, 31, 30)
LAST_OFFSET_OF_FIRST_BATCH = 2  # the sample's first batch holds offsets 0-2


@dataclass
class Case:
    id: str
    name: str  # the dumped file's name
    content: bytes | str
    code: int
    err: str | None = None  # regex the single stderr line must match; None: stderr empty
    position: int | None = None  # the byte position the stderr line must name
    out_last: str | None = None  # regex for the last stdout line ({file} = the path as given)
    flags: tuple[str, ...] = ()
    siblings: dict[str, bytes] = field(default_factory=dict)
    err_lines: tuple[str, ...] | None = None  # Kafka's multi-line summaries, exact ({abs})
    out_contains: str | None = None  # a line stdout must hold besides
    dumped: bool = True  # False: the file name is refused before its "Dumping" line
    footer_key: str | None = None  # the JSON footer field that reports the problem instead


def _log_cases() -> list[Case]:
    name = f"{BASE}.log"
    return [
        Case("log-zero", name, b"", 0, out_last=r"Log starting offset: 0"),
        Case("log-truncated", name, SEG[:-10], 1,
             out_last=rf"Found {len(SEG) - 10 - sum(SIZES[:-1])} invalid bytes at the end of "
                      rf"{name}",
             err=rf"{len(SEG) - 10 - sum(SIZES[:-1])} invalid bytes at the end",
             position=sum(SIZES[:-1]), footer_key="invalidBytes"),
        Case("log-truncated-in-header", name, SEG[:10], 1,
             out_last=rf"Found 10 invalid bytes at the end of {name}",
             err=r"10 invalid bytes at the end", position=0, footer_key="invalidBytes"),
        Case("log-corrupt-length", name, _patched(SEG, P2 + 8, ">i", 5), 1,
             err=r"Found record size 5 smaller than minimum record overhead \(14\) in file "
                 r"{file}\.", position=P2),
        Case("log-corrupt-magic", name, _patched(SEG, P2 + 16, ">b", 7), 1,
             err=r"Unknown magic value 7", position=P2),
        Case("log-corrupt-codec", name, _patched(SEG, P2 + 21, ">h", 7), 1,
             err=r"Unknown compression type id: 7", position=P2),
        Case("log-bad-name", "abc.log", SEG, 1, dumped=False,
             err=r"Cannot parse a base offset from the file name abc\.log"),
        Case("log-corrupt-crc", name, _flip(SEG, 70), 1, out_last=r"baseOffset: .* isvalid: true",
             out_contains=" crc: {crc} isvalid: false", err=r"1 batch failed the CRC check",
             position=0, footer_key="invalidBatches"),
        Case("log-corrupt-record", name, _patched(SEG, 61, ">b", 0x7F), 1,  # length varint -64
             flags=("--deep-iteration",), err=r"Invalid record size: expected -64 bytes in record "
             r"payload", position=62),
    ]


def _index_cases() -> list[Case]:
    log = {f"{BASE}.log": SEG}
    entry = struct.pack(">ii", LAST_OFFSET_OF_FIRST_BATCH, 0)
    idx, tidx = f"{BASE}.index", f"{BASE}.timeindex"
    ts0 = TS + 2 * 7  # the first batch's max timestamp (records 7 ms apart)
    tentry = struct.pack(">qi", ts0, LAST_OFFSET_OF_FIRST_BATCH)
    return [
        Case("index-zero", idx, b"", 0, out_last=r"{file} is empty\.", siblings=log),
        Case("index-truncated", idx, entry + b"\0\0\0", 0,
             out_last=rf"offset: {LAST_OFFSET_OF_FIRST_BATCH} position: 0", siblings=log),
        Case("index-truncated-sanity", idx, entry + b"\0\0\0", 1, flags=("--index-sanity-check",),
             err=r"Index file {abs} is corrupt, found 11 bytes which is neither positive nor a "
                 r"multiple of 8", siblings=log),
        Case("index-corrupt-position", idx, entry + struct.pack(">ii", 5, 99999), 1,
             siblings=log, err_lines=("Mismatches in :{abs}", "  Index offset: 5, log offset: -1")),
        Case("index-corrupt-negative-position", idx, struct.pack(">ii", 2, -5), 1, siblings=log,
             err_lines=("Mismatches in :{abs}", "  Index offset: 2, log offset: -1")),
        Case("index-corrupt-below-base", f"{100:020d}.index", struct.pack(">ii", -5, 0), 1,
             flags=("--index-sanity-check",), siblings={f"{100:020d}.log": SEG},
             err=r"Corrupt index found, index file {abs} has non-zero size but the last offset "
                 r"is 95 which is less than the base offset 100"),
        Case("index-bad-name", "abc.index", entry, 1, siblings={"abc.log": SEG}, dumped=False,
             err=r"Cannot parse a base offset from the file name abc\.index"),
        Case("timeindex-bad-name", "abc.timeindex", tentry, 1, siblings={"abc.log": SEG},
             dumped=False, err=r"Cannot parse a base offset from the file name abc\.timeindex"),
        Case("index-missing-segment", idx, entry, 3,
             err=r"No such file: .*/" + BASE + r"\.log"),
        Case("timeindex-zero", tidx, b"", 0, out_last=r"Dumping {file}", siblings=log),
        Case("timeindex-truncated", tidx, tentry + b"\x01" * 5, 0,
             out_last=rf"timestamp: {ts0} offset: {LAST_OFFSET_OF_FIRST_BATCH}", siblings=log),
        Case("timeindex-truncated-sanity", tidx, tentry + b"\x01" * 5, 1,
             flags=("--index-sanity-check",), siblings=log,
             err=r"Time index file {abs} is corrupt, found 17 bytes which is neither positive "
                 r"nor a multiple of 12"),
        Case("timeindex-corrupt-timestamp", tidx, struct.pack(">qi", TS, 2), 1, siblings=log,
             err_lines=("Found timestamp mismatch in :{abs}",
                        f"  Index timestamp: {TS}, log timestamp: {ts0}")),
        Case("timeindex-corrupt-offset", tidx, struct.pack(">qi", 5, -7), 1, siblings=log,
             err_lines=("The following indexed offsets are not found in the log.",
                        "Indexed offset: -7, found log offset: 2")),
        Case("timeindex-corrupt-negative-index-position", tidx, tentry, 0,
             out_last=rf"timestamp: {ts0} offset: {LAST_OFFSET_OF_FIRST_BATCH}",
             siblings={**log, idx: struct.pack(">ii", 2, -50)}),
    ]


def _state_cases() -> list[Case]:
    snap, txn = f"{42:020d}.snapshot", f"{BASE}.txnindex"
    return [
        Case("txnindex-zero", txn, b"", 0, out_last=r"Dumping {file}"),
        Case("txnindex-truncated", txn, TXN[:50], 0,
             out_last=r"version: 0 producerId: 5 firstOffset: 10 lastOffset: 20 "
                      r"lastStableOffset: 8"),
        Case("txnindex-corrupt-version", txn, TXN[:34] + _patched(TXN[34:], 0, ">h", 3), 1,
             err=r"Unexpected aborted transaction version 3 in transaction index {abs}, current "
                 r"version is 0", position=34),
        Case("snapshot-zero", snap, b"", 1,
             err=r"Snapshot failed schema validation: Snapshot is shorter than its version field"),
        Case("snapshot-truncated", snap, PSNAP[:-3], 1,
             err=r"Snapshot failed schema validation: Error reading int64 of 8 byte\(s\): only 5 "
                 r"byte\(s\) available", position=len(PSNAP) - 8),
        Case("snapshot-corrupt-crc", snap, _flip(PSNAP, len(PSNAP) - 1), 1,
             err=r"Snapshot is corrupt \(CRC is no longer valid\)\. Stored crc: \d+\. Computed "
                 r"crc: \d+", position=2),
        Case("snapshot-corrupt-version", snap, _patched(PSNAP, 0, ">h", 2), 1,
             err=r"Snapshot failed schema validation: Snapshot contained an unknown file "
                 r"version 2"),
    ]


def _kraft_cases() -> list[Case]:
    out = []
    for kind, name, head in (("checkpoint", f"{BASE}-0000000000.checkpoint",
                              r"Snapshot end offset: 0, epoch: 0"),
                             ("bootstrap", "bootstrap.checkpoint", r"KRaft bootstrap snapshot")):
        out += [
            Case(f"{kind}-zero", name, b"", 0, out_last=head),
            Case(f"{kind}-truncated", name, SNAP[:-7], 1,
                 out_last=rf"Found {len(SNAP) - 7 - SNAP_SIZES[0] - SNAP_SIZES[1]} invalid bytes "
                          rf"at the end of {re.escape(name)}",
                 err=rf"{len(SNAP) - 7 - SNAP_SIZES[0] - SNAP_SIZES[1]} invalid bytes at the end",
                 position=SNAP_SIZES[0] + SNAP_SIZES[1], footer_key="invalidBytes"),
            Case(f"{kind}-corrupt-length", name, _patched(SNAP, SNAP_SIZES[0] + 8, ">i", 3), 1,
                 err=r"Found record size 3 smaller than minimum record overhead",
                 position=SNAP_SIZES[0]),
            Case(f"{kind}-corrupt-control-record", name,
                 # a SnapshotHeader value three bytes long (the batch CRC is right)
                 _kraft_snapshot_with_bad_header(), 1, flags=("--deep-iteration",),
                 err=r"Cannot read the SNAPSHOT_HEADER control record at offset 0: Error "
                     r"reading int64 of 8 byte\(s\): only 3 byte\(s\) available", position=0),
        ]
    out.append(Case("checkpoint-bad-name", "00000-x.checkpoint", SNAP, 1, dumped=False,
                    err=r"Cannot parse a KRaft snapshot id \(offset-epoch\) from the file name "
                        r"00000-x\.checkpoint"))
    return out


def _kraft_snapshot_with_bad_header() -> bytes:
    header = RecordBatchBuilder(base_offset=0, is_control=True)
    header.append_control(ControlRecordType.SNAPSHOT_HEADER, b"\x00\x00" + b"\x00" * 3, TS)
    return header.build() + SNAP[SNAP_SIZES[0]:]


def _text_cases() -> list[Case]:
    out = []
    checkpoints = [("recovery-point-offset-checkpoint", "t 0 5"),
                   ("replication-offset-checkpoint", "t 0 5"),
                   ("log-start-offset-checkpoint", "t 0 5"),
                   ("cleaner-offset-checkpoint", "t 0 5"),
                   ("leader-epoch-checkpoint", "0 5")]
    for name, entry in checkpoints:
        good = f"0\n2\n{entry}\n{entry}\n"
        out += [
            Case(f"{name}-zero", name, b"", 0, out_last=r"{file} is empty\."),
            Case(f"{name}-truncated", name, good[:-len(entry) - 1], 1,
                 err=r"Expected 2 entries in checkpoint file \({file}\), but found only 1",
                 position=len(good) - len(entry) - 1),
            Case(f"{name}-truncated-mid-line", name, good[:6], 1,
                 err=r"Malformed line in checkpoint file \({file}\): '" + good[4:6] + "'",
                 position=4),
            Case(f"{name}-corrupt", name, b"0\n1\n\xff\xfe x\x00\n", 1,
                 err=r"Malformed line in checkpoint file \({file}\): ", position=4),
            Case(f"{name}-corrupt-version", name, "3\n0\n", 1,
                 err=r"Unrecognized version of the checkpoint file \({file}\): 3", position=0),
        ]
    pm = "partition.metadata"
    out += [
        Case("partition.metadata-zero", pm, b"", 1,
             err=r"Partition metadata file {file} lacks version or topic_id", position=0),
        Case("partition.metadata-truncated", pm, "version: 0\ntopic_", 1,
             err=r"Malformed line in partition metadata file \({file}\): 'topic_'", position=11),
        Case("partition.metadata-corrupt", pm, "version: x\ntopic_id: abc\n", 1,
             err=r"Malformed version in partition metadata file \({file}\): 'x'", position=0),
    ]
    mp = "meta.properties"
    out += [  # Java properties: any text parses, so only an empty file is worth a note
        Case("meta.properties-zero", mp, b"", 0, out_last=r"{file} is empty\."),
        Case("meta.properties-truncated", mp, "version=1\nnode.i", 0, out_last=r"node\.i="),
        Case("meta.properties-corrupt", mp, b"\xff\xfe\x00=\x01\n", 0, out_last=r".*=\x01"),
    ]
    qs, cs = "quorum-state", ".kafka_cleanshutdown"
    quorum = '{"leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"data_version":0}'
    out += [
        Case("quorum-state-zero", qs, b"", 1, err=r"Empty file {file}", position=0),
        Case("quorum-state-truncated", qs, quorum[:30], 1,
             err=r"Invalid JSON in {file}: ", position=None),
        Case("quorum-state-corrupt", qs, b"\x00\xff{", 1,
             err=r"Invalid JSON in {file}: Expecting value", position=0),
        Case("quorum-state-not-an-object", qs, "[1, 2]", 1,
             err=r"Expected a JSON object in {file}", position=0),
        # pre-3.7 brokers wrote the clean-shutdown marker empty
        Case(".kafka_cleanshutdown-zero", cs, b"", 0, out_last=r"{file} is empty\."),
        Case(".kafka_cleanshutdown-truncated", cs, '{"version":0,"brokerEp', 1,
             err=r"Invalid JSON in {file}: Unterminated string", position=13),
        Case(".kafka_cleanshutdown-corrupt", cs, b"\x01\x02", 1,
             err=r"Invalid JSON in {file}: Expecting value", position=0),
    ]
    return out


CASES = _log_cases() + _index_cases() + _state_cases() + _kraft_cases() + _text_cases()


def _fill(pattern: str, path: Path) -> str:
    return (pattern.replace("{file}", re.escape(str(path)))
            .replace("{abs}", re.escape(str(path.resolve()))))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_damaged_file(cli, tmp_path: Path, case: Case):
    part = tmp_path / "t-0"
    part.mkdir()
    for name, data in case.siblings.items():
        (part / name).write_bytes(data)
    path = part / case.name
    content = case.content.encode() if isinstance(case.content, str) else case.content
    path.write_bytes(content)

    res = cli("dump-segment", *case.flags, path)
    assert "Traceback" not in res.err and res.code != 70, res.err
    assert res.code == case.code, (res.code, res.err, res.out[-300:])
    if case.dumped:
        assert res.lines[0] == f"Dumping {path}"
    else:
        assert res.out == ""
    if case.out_last is not None:
        assert re.fullmatch(_fill(case.out_last, path), res.lines[-1]), res.lines[-1]
    if case.out_contains is not None:
        stored = struct.unpack_from(">I", content, 17)[0]
        assert case.out_contains.format(crc=stored) in res.lines[2], res.lines[2]
    err = res.err.splitlines()
    if case.footer_key != "invalidBatches":  # a damaged batch also fails its CRC: said apart
        err = [l for l in err if "failed the CRC check" not in l]
    if case.err_lines is not None:
        assert err[:len(case.err_lines)] == [l.replace("{abs}", str(path.resolve()))
                                             for l in case.err_lines]
    elif case.err is None:
        assert err == [], res.err
    else:
        assert len(err) == 1, err
        line = err[0]
        assert re.search(_fill(case.err, path), line), line
        # the damaged file, or the sibling segment an index dump reads (given or absolute)
        named = {str(p) for f in (path, part / f"{BASE}.log", *(part / n for n in case.siblings))
                 for p in (f, f.resolve())}
        assert any(n in line for n in named), f"the message does not name the file: {line}"
        if case.position is not None:
            assert f"byte position {case.position})" in line, line

    res_json = cli("dump-segment", *case.flags, "-o", "json", path)
    assert res_json.code == case.code
    doc = json.loads(res_json.out)
    if not case.dumped:
        assert doc == []
        return
    assert doc[0]["file"] == str(path)
    if case.footer_key is not None:  # the problem is in the document's footer too
        assert doc[0][case.footer_key]
    elif case.code == 1 and case.err is not None:  # the problem is in the document too
        reported = doc[0].get("error") or doc[0].get("corrupt")
        assert reported and reported["message"] in res.err, (doc[0], res.err)
        if case.position is not None:
            assert reported["position"] == case.position


def test_table_covers_every_kind():
    """Each file kind dump-segment handles has a zero-byte, a truncated and a corrupt row."""
    kinds = {"log": f"{BASE}.log", "index": f"{BASE}.index", "timeindex": f"{BASE}.timeindex",
             "txnindex": f"{BASE}.txnindex", "snapshot": f"{42:020d}.snapshot",
             "checkpoint": f"{BASE}-0000000000.checkpoint",
             "bootstrap": "bootstrap.checkpoint", "leader-epoch-checkpoint":
             "leader-epoch-checkpoint", "recovery-point-offset-checkpoint":
             "recovery-point-offset-checkpoint", "replication-offset-checkpoint":
             "replication-offset-checkpoint", "log-start-offset-checkpoint":
             "log-start-offset-checkpoint", "cleaner-offset-checkpoint":
             "cleaner-offset-checkpoint", "partition.metadata": "partition.metadata",
             "meta.properties": "meta.properties", "quorum-state": "quorum-state",
             ".kafka_cleanshutdown": ".kafka_cleanshutdown"}
    for kind, name in kinds.items():
        ids = {c.id for c in CASES if c.name == name}
        for variant in ("zero", "truncated", "corrupt"):
            assert any(i.startswith(f"{kind}-{variant}") for i in ids), (kind, variant, ids)


def test_several_damaged_files_in_one_run(cli, tmp_path: Path):
    """Reported (non-fatal) problems do not stop the run: every file gets its Dumping line,
    each problem its own stderr line, and the exit code is 1."""
    files = []
    for c in CASES:
        if c.code == 1 and c.err and not c.siblings and c.id.split("-")[0] in (
                "quorum", "partition.metadata", "snapshot", "leader", "replication",
                "txnindex"):
            d = tmp_path / c.id
            d.mkdir()
            p = d / c.name
            p.write_bytes(c.content.encode() if isinstance(c.content, str) else c.content)
            files.append(p)
    assert len(files) >= 8
    res = cli("dump-segment", *files)
    assert res.code == 1 and "Traceback" not in res.err
    assert [l for l in res.lines if l.startswith("Dumping ")] == [f"Dumping {p}" for p in files]
    assert len(res.err.splitlines()) == len(files)


def test_corrupt_control_record_reports_the_batch_position(cli, tmp_path: Path):
    """A KRaft control record whose value does not decode stops the deep dump at its batch's
    position in the file (it used to report the offset inside the record's value)."""
    first = RecordBatchBuilder(base_offset=0)
    first.append(TS, b"k", b"v")
    bad = RecordBatchBuilder(base_offset=1, is_control=True)
    bad.append_control(ControlRecordType.KRAFT_VOTERS, b"\x00\x00\x05", TS)  # 4 voters, no bytes
    head = first.build()
    path = tmp_path / "m-0" / f"{BASE}.log"
    path.parent.mkdir()
    path.write_bytes(head + bad.build())
    res = cli("dump-segment", "--deep-iteration", path)
    assert res.code == 1 and "Traceback" not in res.err
    err = res.err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        "pylogctl: Cannot read the KRAFT_VOTERS control record at offset 1: ")
    assert err[0].endswith(f"({path}, byte position {len(head)})")
    doc = json.loads(cli("dump-segment", "--deep-iteration", "-o", "json", path).out)
    assert doc[0]["error"]["position"] == len(head) and len(doc[0]["batches"]) == 1
