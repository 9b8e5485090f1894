#!/usr/bin/env python3
"""Fuzz ``dump-segment``'s library path with mutated real Kafka files. Not part of the CI suite.

    python tests/fuzz/fuzz_dump.py --seconds 60 [--seed N] [--no-speedups]
    python tests/fuzz/fuzz_dump.py --replay tests/fuzz/crashes/<dir>

Seeds are real files from the corpus (``../shared/corpus`` or ``$PYLOGCTL_CORPUS``): ``.log``
segments of ordinary topics, ``__consumer_offsets``, ``__transaction_state`` and
``__cluster_metadata``, KRaft ``.checkpoint`` snapshots and ``bootstrap.checkpoint``, ``.index``
and ``.timeindex`` (with their segment), producer ``.snapshot`` files, the four offset
checkpoints, ``leader-epoch-checkpoint``, ``partition.metadata``, ``meta.properties``,
``quorum-state`` and ``.kafka_cleanshutdown``; plus what the corpus lacks (a ``.txnindex``, the
sample log dir's snappy/zstd batches). Each input is a seed with one to four mutations: bit
flips, bytes and ints overwritten with boundary values, truncation, splicing, deleted or
repeated chunks, and format-aware tweaks of batch length/count/attribute fields, record
varints, index entries and checkpoint lines.

Each input goes through ``pylogctl.tools.dump_dispatch.dump_file`` with deep iteration and data
printing, once per record parser (none with random decoders, ``offsets``, ``transaction-log``
and ``cluster-metadata``, the first two also in the legacy format), and is rendered with the
``text`` and ``json`` formatters. Allowed failures are :class:`pylogctl.errors.PylogctlError`
subclasses, raised or reported in the dump (``dump.error``, ``footer["corrupt"]``); they are
counted per class and per raise site. Anything else is a crash, and so is a broken invariant
(JSON output that does not parse, an error message of more than one line, an error without a
file or with a negative byte position, an input taking longer than ``--timeout`` seconds): the
input is saved under ``tests/fuzz/crashes/`` (gitignored) and the traceback printed. Exit
status 1 if anything crashed.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import io
import json
import os
import random
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CRASH_DIR = HERE / "crashes"
DEFAULT_CORPUS = Path(os.environ.get("PYLOGCTL_CORPUS", REPO.parent / "shared" / "corpus"))

MAX_LOG_SEED = 48 * 1024  # seed segments are cut at a batch boundary below this
MAX_INDEX_LOG = 512 * 1024  # the segment beside an index seed
PER_KIND = 60  # seeds kept per kind (deterministic sample)

OFFSET_CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                      "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
TEXT_KINDS = {"offset-checkpoint", "leader-epoch-checkpoint", "partition-metadata",
              "meta-properties", "quorum-state", "clean-shutdown"}
LOG_KINDS = {"log", "offsets-log", "txn-log", "metadata-log", "snapshot-checkpoint",
             "bootstrap-checkpoint"}


# -- seeds -----------------------------------------------------------------------------------------

@dataclass
class Seed:
    kind: str
    name: str  # the file name the dump dispatches on
    data: bytes
    source: str
    siblings: dict[str, bytes] = field(default_factory=dict)  # name -> bytes, written alongside


def _cut_at_batch_boundary(data: bytes, limit: int) -> bytes:
    """The longest prefix of whole batches no longer than ``limit`` (at least the first batch)."""
    pos = 0
    while pos + 12 <= len(data):
        (size,) = struct.unpack_from(">i", data, pos + 8)
        if size < 14 or pos + 12 + size > len(data):
            break
        if pos + 12 + size > limit and pos > 0:
            break
        pos += 12 + size
    return data[:pos] if pos else data[:limit]


def _kind_of(path: Path) -> str | None:
    name = path.name
    parent = path.parent.name
    if name in OFFSET_CHECKPOINTS:
        return "offset-checkpoint"
    fixed = {"leader-epoch-checkpoint": "leader-epoch-checkpoint",
             "partition.metadata": "partition-metadata", "meta.properties": "meta-properties",
             "quorum-state": "quorum-state", ".kafka_cleanshutdown": "clean-shutdown",
             "bootstrap.checkpoint": "bootstrap-checkpoint"}
    if name in fixed:
        return fixed[name]
    if name.endswith(".checkpoint"):
        return "snapshot-checkpoint"
    if name.endswith(".log"):
        if parent.startswith("__consumer_offsets-"):
            return "offsets-log"
        if parent.startswith("__transaction_state-"):
            return "txn-log"
        if parent.startswith("__cluster_metadata-"):
            return "metadata-log"
        return "log"
    for suffix, kind in ((".index", "index"), (".timeindex", "timeindex"),
                         (".snapshot", "producer-snapshot"), (".txnindex", "txnindex")):
        if name.endswith(suffix):
            return kind
    return None


def collect_seeds(corpus: Path, rng: random.Random) -> dict[str, list[Seed]]:
    by_kind: dict[str, list[Seed]] = collections.defaultdict(list)
    seen: set[tuple[str, bytes]] = set()
    files = sorted(p for p in corpus.rglob("*") if p.is_file()) if corpus.is_dir() else []
    for path in files:
        kind = _kind_of(path)
        if kind is None:
            continue
        data = path.read_bytes()
        if kind in LOG_KINDS:
            if not data:
                continue
            data = _cut_at_batch_boundary(data, MAX_LOG_SEED)
        siblings = {}
        if kind in ("index", "timeindex"):
            log = path.with_name(path.name.split(".")[0] + ".log")
            if not data or not log.is_file() or log.stat().st_size > MAX_INDEX_LOG:
                continue
            siblings[log.name] = log.read_bytes()
            idx = path.with_name(path.name.split(".")[0] + ".index")
            if kind == "timeindex" and idx.is_file():
                siblings[idx.name] = idx.read_bytes()
        digest = hashlib.sha1(data).digest()
        if (kind, digest) in seen:
            continue
        seen.add((kind, digest))
        by_kind[kind].append(Seed(kind, path.name, data, str(path.relative_to(corpus)), siblings))
    for kind, seeds in by_kind.items():
        if len(seeds) > PER_KIND:
            # keep the largest few (most structure) and a deterministic sample of the rest
            seeds.sort(key=lambda s: -len(s.data))
            rest = seeds[8:]
            rng.shuffle(rest)
            by_kind[kind] = seeds[:8] + rest[:PER_KIND - 8]
    _add_synthetic_seeds(by_kind)
    return dict(by_kind)


def _add_synthetic_seeds(by_kind: dict[str, list[Seed]]) -> None:
    """What the corpus lacks: a .txnindex, every codec, control records, a producer snapshot."""
    from pylogctl.tools.sample import _orders_segment

    segment, _ = _orders_segment()
    by_kind["log"].append(Seed("log", "00000000000000000000.log", segment, "synthetic:sample"))
    rows = [(0, 5, 10, 20, 8), (0, 6, 30, 31, 30), (0, 7, 40, 45, 41)]
    by_kind["txnindex"].append(Seed("txnindex", "00000000000000000000.txnindex",
                                    b"".join(struct.pack(">hqqqq", *r) for r in rows),
                                    "synthetic:txnindex"))
    for kind, name, content in (
            ("clean-shutdown", ".kafka_cleanshutdown", b'{"version":0,"brokerEpoch":42}'),
            ("quorum-state", "quorum-state", b'{"leaderId":1,"leaderEpoch":5,"votedId":-1,'
             b'"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}')):
        by_kind.setdefault(kind, []).append(Seed(kind, name, content, f"synthetic:{name}"))
    if not by_kind.get("producer-snapshot"):
        import crc32c
        body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", 7, 2, 10, 41, 3, 1700, 5, -1)
        by_kind["producer-snapshot"] = [Seed(
            "producer-snapshot", "00000000000000000042.snapshot",
            struct.pack(">hI", 1, crc32c.crc32c(body)) + body, "synthetic:snapshot")]


# -- mutations -------------------------------------------------------------------------------------

INTERESTING_8 = [0x00, 0x01, 0x02, 0x0D, 0x0E, 0x10, 0x20, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xFE,
                 0xFF]
INTERESTING_INTS = [0, 1, -1, 2, 13, 14, 17, 48, 60, 61, 62, 127, 128, 255, 256, 0x7FFF, -0x8000,
                    0xFFFF, 0x7FFFFFFF, -0x80000000, 0x7FFFFFF0, 0x10000, 0x1000000,
                    0x7FFFFFFFFFFFFFFF, -0x8000000000000000]
INTERESTING_TEXT = [b"-1", b"0", b"2147483648", b"99999999999999999999", b"-9223372036854775809",
                    b"", b" ", b"\t", b"\x00", b"\xff\xfe", b"NaN", b"1e400", b"[]", b"{}",
                    b"null", b'"', b"\\u0000", b"\n", b"\r\n", b"=", b":"]


def _pack_int(value: int, width: int) -> bytes:
    mask = (1 << (8 * width)) - 1
    return (value & mask).to_bytes(width, "big")


def _batch_positions(data: bytes) -> list[int]:
    """Starts of the batches a reader would walk, without validating them."""
    out, pos = [], 0
    while pos + 17 <= len(data) and len(out) < 10_000:
        out.append(pos)
        (size,) = struct.unpack_from(">i", data, pos + 8)
        if size < 14:
            break
        pos += 12 + size
    return out


def m_bitflip(rng, data: bytearray, seeds) -> str:
    if not data:
        return "noop"
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    return "bitflip"


def m_byte(rng, data: bytearray, seeds) -> str:
    if not data:
        return "noop"
    for _ in range(rng.randint(1, 4)):
        data[rng.randrange(len(data))] = rng.choice(INTERESTING_8)
    return "byte"


def m_int(rng, data: bytearray, seeds) -> str:
    width = rng.choice((2, 4, 8))
    if len(data) < width:
        return "noop"
    i = rng.randrange(len(data) - width + 1)
    data[i:i + width] = _pack_int(rng.choice(INTERESTING_INTS), width)
    return f"int{8 * width}"


def m_truncate(rng, data: bytearray, seeds) -> str:
    if not data:
        return "noop"
    if rng.random() < 0.5:
        cut = rng.randrange(len(data))
    else:  # a few bytes off the end, or just past a batch header
        cut = max(0, len(data) - rng.randint(1, 80))
    del data[cut:]
    return "truncate"


def m_splice(rng, data: bytearray, seeds) -> str:
    donor = rng.choice(seeds).data
    if not donor:
        return "noop"
    a = rng.randrange(len(donor))
    chunk = donor[a:a + rng.randint(1, 512)]
    at = rng.randint(0, len(data))
    if rng.random() < 0.5:
        data[at:at + len(chunk)] = chunk  # overwrite
    else:
        data[at:at] = chunk  # insert
    return "splice"


def m_chunk(rng, data: bytearray, seeds) -> str:
    if len(data) < 2:
        return "noop"
    a = rng.randrange(len(data))
    b = min(len(data), a + rng.randint(1, 256))
    if rng.random() < 0.5:
        del data[a:b]
        return "delete-chunk"
    data[b:b] = data[a:b]
    return "repeat-chunk"


def m_batch_field(rng, data: bytearray, seeds) -> str:
    """Tweak a batch header field: length, magic, attributes, counts, offsets deltas."""
    positions = _batch_positions(bytes(data))
    if not positions:
        return "noop"
    pos = rng.choice(positions)
    # (offset in the batch, width, name); v2 layout, and v0/v1's attribute byte at 17
    fields = [(8, 4, "length"), (8, 4, "length"), (16, 1, "magic"), (21, 2, "attributes"),
              (23, 4, "lastOffsetDelta"), (57, 4, "recordsCount"), (53, 4, "baseSequence"),
              (0, 8, "baseOffset"), (17, 1, "v1-attributes"), (27, 8, "baseTimestamp")]
    off, width, name = rng.choice(fields)
    if pos + off + width > len(data):
        return "noop"
    old = int.from_bytes(data[pos + off:pos + off + width], "big", signed=True)
    if name == "length" and rng.random() < 0.6:
        new = old + rng.randint(-4, 4)
    elif name == "magic":
        new = rng.choice((0, 1, 2, 3, -1))
    elif name in ("attributes", "v1-attributes"):
        new = old ^ (1 << rng.randrange(8 * width)) if rng.random() < 0.7 else rng.randint(0, 7)
    else:
        new = rng.choice(INTERESTING_INTS + [old + 1, old - 1])
    data[pos + off:pos + off + width] = _pack_int(new, width)
    return f"batch-{name}"


def m_record_varint(rng, data: bytearray, seeds) -> str:
    """Overwrite a byte inside a v2 record area with a varint-significant value."""
    positions = [p for p in _batch_positions(bytes(data)) if p + 61 < len(data)
                 and data[p + 16] == 2]
    if not positions:
        return "noop"
    pos = rng.choice(positions)
    (size,) = struct.unpack_from(">i", data, pos + 8)
    end = min(len(data), pos + 12 + max(size, 0))
    if end <= pos + 61:
        return "noop"
    i = rng.randrange(pos + 61, end)
    data[i] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x81, 0x02, 0x03))
    return "record-varint"


def m_index_entry(rng, data: bytearray, seeds, width: int) -> str:
    n = len(data) // width
    if not n:
        return "noop"
    i = rng.randrange(n) * width
    part = rng.randrange(2)
    if width == 8:
        off, w = (0, 4) if part == 0 else (4, 4)
    else:
        off, w = (0, 8) if part == 0 else (8, 4)
    data[i + off:i + off + w] = _pack_int(rng.choice(INTERESTING_INTS), w)
    return "index-entry"


def m_text(rng, data: bytearray, seeds) -> str:
    lines = bytes(data).split(b"\n")
    op = rng.randrange(5)
    i = rng.randrange(len(lines))
    if op == 0 and len(lines) > 1:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])
    elif op == 2:  # replace a token
        tokens = lines[i].split(b" ")
        tokens[rng.randrange(len(tokens))] = rng.choice(INTERESTING_TEXT)
        lines[i] = b" ".join(tokens)
    elif op == 3:  # replace a number anywhere
        import re
        nums = list(re.finditer(rb"-?\d+", bytes(data)))
        if nums:
            m = rng.choice(nums)
            data[m.start():m.end()] = rng.choice(INTERESTING_TEXT)
            return "text-number"
    else:
        lines[i] = lines[i] + rng.choice(INTERESTING_TEXT)
    data[:] = b"\n".join(lines)
    return "text-line"


def _mutate_blob(rng, blob: bytes | None) -> bytes | None:
    """A record key or value, damaged in a way its parser (not the framing) has to cope with."""
    if blob is None or rng.random() < 0.1:
        return rng.choice((None, b"", bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))))
    b = bytearray(blob)
    op = rng.randrange(5)
    if op == 0 and b:
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif op == 1 and len(b) >= 2:
        width = rng.choice((2, 4)) if len(b) >= 4 else 2
        i = rng.randrange(len(b) - width + 1)
        b[i:i + width] = _pack_int(rng.choice(INTERESTING_INTS), width)
    elif op == 2 and b:
        del b[rng.randrange(len(b)):]
    elif op == 3:
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
    elif b:
        b[rng.randrange(len(b))] = rng.choice(INTERESTING_8)
    return bytes(b)


def m_record_payload(rng, data: bytearray, seeds) -> str:
    """Re-encode one v2 batch with a damaged key or value (valid framing and CRC), so the record
    parsers (offsets, transaction log, cluster metadata, control records) see the damage."""
    from pylogctl.errors import PylogctlError
    from pylogctl.format.builder import RecordBatchBuilder
    from pylogctl.format.log_stream import iter_batches
    from pylogctl.format.record import TimestampType

    try:
        batches = [b for b in iter_batches(bytes(data)) if b.magic == 2]
        if not batches:
            return "noop"
        batch = rng.choice(batches)
        records = batch.records()
        if not records:
            return "noop"
        victim = rng.randrange(len(records))
        log_append = batch.timestamp_type == TimestampType.LOG_APPEND_TIME
        builder = RecordBatchBuilder(
            base_offset=batch.base_offset, codec=batch.codec,
            timestamp_type=batch.timestamp_type,
            log_append_time=batch.max_timestamp if log_append else None,
            producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
            base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
            is_control=batch.is_control, partition_leader_epoch=batch.partition_leader_epoch)
        for i, rec in enumerate(records):
            key, value = rec.key, rec.value
            key = None if key is None else bytes(key)
            value = None if value is None else bytes(value)
            if i == victim:
                if rng.random() < 0.5:
                    key = _mutate_blob(rng, key)
                else:
                    value = _mutate_blob(rng, value)
            builder.append_with_offset(rec.offset, max(rec.timestamp, -1), key, value,
                                       [(h.key, h.value) for h in rec.headers])
        raw = builder.build()
    except (PylogctlError, ValueError, OverflowError, struct.error):
        return "noop"
    data[batch.position:batch.position + batch.size_in_bytes] = raw
    return "record-payload"


GENERIC = [m_bitflip, m_byte, m_int, m_truncate, m_splice, m_chunk]


def mutate(rng: random.Random, seed: Seed, seeds_of_kind: list[Seed]) -> tuple[bytes, list[str]]:
    data = bytearray(seed.data)
    done = []
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
        choices = list(GENERIC)
        if seed.kind in LOG_KINDS:
            choices += [m_batch_field] * 4 + [m_record_varint] * 3 + [m_record_payload] * 6
        if seed.kind == "index":
            choices += [lambda r, d, s: m_index_entry(r, d, s, 8)] * 4
        if seed.kind == "timeindex":
            choices += [lambda r, d, s: m_index_entry(r, d, s, 12)] * 4
        if seed.kind in TEXT_KINDS:
            choices += [m_text] * 6
        donors = seeds_of_kind if rng.random() < 0.8 else ALL_SEEDS
        done.append(rng.choice(choices)(rng, data, donors))
    return bytes(data), done


ALL_SEEDS: list[Seed] = []
# stems a file named by an offset might carry instead (Kafka parses them with toLong)
ODD_STEMS = ["abc", "-1", "12.34", "99999999999999999999999", "", " 7", "0x10", "+5", "1e3",
             "00000000000000000000-0000000000", "-0000000000", "٣"]
OFFSET_NAMED = {"log", "offsets-log", "txn-log", "metadata-log", "index", "timeindex",
                "producer-snapshot", "txnindex", "snapshot-checkpoint"}


def odd_name(rng: random.Random, seed: Seed) -> tuple[str, dict[str, bytes]]:
    """The seed's file (and its siblings) under a name whose offset part is not an offset."""
    stem = rng.choice(ODD_STEMS)
    if seed.kind == "snapshot-checkpoint":
        stem = rng.choice(ODD_STEMS + ["00000000000000000001-000000000x", "1-2"])
    suffix = "." + seed.name.rsplit(".", 1)[1]
    siblings = {stem + "." + n.rsplit(".", 1)[1]: d for n, d in seed.siblings.items()}
    return stem + suffix, siblings


# -- running one input -----------------------------------------------------------------------------

class FuzzTimeout(Exception):
    pass


class InvariantError(AssertionError):
    """A dump that did not crash but broke a promise (``category`` groups the reports)."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(f"{category}: {message}")
        self.category = category


def _on_alarm(signum, frame):
    raise FuzzTimeout("input took too long")


@dataclass
class Stats:
    inputs: int = 0
    dumps: int = 0
    clean: int = 0
    errors: collections.Counter = field(default_factory=collections.Counter)
    sites: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    mutations: collections.Counter = field(default_factory=collections.Counter)
    kinds: collections.Counter = field(default_factory=collections.Counter)
    crashes: collections.Counter = field(default_factory=collections.Counter)
    crash_saved: collections.Counter = field(default_factory=collections.Counter)


def _raise_site(exc: BaseException) -> str:
    """The deepest pylogctl frame of the traceback: where the error was raised."""
    site = "?"
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if "pylogctl" in filename or "formatters" in filename:
            rel = filename.split("pylogctl/", 1)[-1] if "pylogctl/" in filename else filename
            site = f"{rel}:{lineno} ({frame.f_code.co_name})"
    return site


def _check_error(err, path: str) -> None:
    text = str(err)
    if "\n" in text or "\r" in text:
        raise InvariantError("multi-line error message", repr(text))
    if err.path is None:
        raise InvariantError("error without a file", repr(text))
    if err.position is not None and err.position < 0:
        raise InvariantError("negative byte position", repr(text))
    if err.position is not None and err.path and os.path.isfile(err.path) \
            and err.position > os.path.getsize(err.path):
        raise InvariantError("byte position beyond the end of the file", repr(text))


def option_sets(kind: str, rng: random.Random, imports):
    DumpOptions, IndexDumpOptions = imports
    idx = IndexDumpOptions()
    if kind in ("index", "timeindex"):
        yield DumpOptions(), IndexDumpOptions(verify_only=rng.random() < 0.3,
                                              max_message_size=rng.choice((5 << 20, 64, 1)))
        yield DumpOptions(), IndexDumpOptions(sanity_check_only=True)
        return
    if kind not in LOG_KINDS:
        yield DumpOptions(), idx
        return
    decoders = ("string", "hex", "base64", "json", "none")
    skip = rng.random() < 0.2
    yield DumpOptions(), idx  # shallow: the text formatter's C batch-line fast path
    max_bytes = rng.choice([2**31 - 1] * 6 + [0, 100, 1000])
    yield DumpOptions(deep_iteration=True, print_data=True, skip_record_metadata=skip,
                      max_bytes=max_bytes, key_decoder=rng.choice(decoders),
                      value_decoder=rng.choice(decoders)), idx
    for parser in ("offsets", "transaction-log", "cluster-metadata"):
        yield DumpOptions(deep_iteration=True, print_data=True, parser=parser,
                          skip_record_metadata=skip, max_bytes=max_bytes), idx
    yield DumpOptions(deep_iteration=True, print_data=True, parser=rng.choice(
        ("offsets", "transaction-log")), legacy_format=True), idx


def run_one(path: str, kind: str, rng: random.Random, stats: Stats, imports, dump_file,
            get_formatter, PylogctlError) -> None:
    """Every option set, text and json: raises on a crash or a broken invariant."""
    for options, index_options in option_sets(kind, rng, imports):
        for fmt in ("text", "json"):
            stats.dumps += 1
            try:
                dump = dump_file(path, options, index_options)
                out = io.StringIO()
                get_formatter(fmt).write([dump], out)
            except PylogctlError as exc:
                _check_error(exc, path)
                stats.errors[f"raised {type(exc).__name__}"] += 1
                stats.sites[f"raised {type(exc).__name__}"][_raise_site(exc)] += 1
                continue
            if fmt == "text":
                skipped = out.getvalue().count(", skipping.")
                if skipped:  # a record parser's own error line (Kafka's "Error at ..., skipping.")
                    stats.errors["parser line ..., skipping."] += skipped
            if fmt == "json":
                try:
                    json.loads(out.getvalue())
                except ValueError as exc:
                    raise InvariantError("json output does not parse", str(exc)) from None
            err = getattr(dump, "error", None)
            corrupt = getattr(dump, "footer", {}).get("corrupt")
            if err is not None:
                _check_error(err, path)
                stats.errors[f"reported {type(err).__name__}"] += 1
                stats.sites[f"reported {type(err).__name__}"][_raise_site(err)] += 1
            elif corrupt is not None:
                msg = corrupt["message"]
                if "\n" in msg:
                    raise InvariantError("multi-line corrupt message", repr(msg))
                if corrupt.get("position") is not None and corrupt["position"] < 0:
                    raise InvariantError("negative byte position", repr(msg))
                stats.errors[f"corrupt {dump.kind}"] += 1
            else:
                stats.clean += 1


def _signature(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    where = f"{Path(last.filename).name}:{last.lineno}" if last else "?"
    if isinstance(exc, InvariantError):
        return f"InvariantError: {exc.category}"
    return f"{type(exc).__name__}@{where}"


def save_crash(work: Path, main_name: str, seed: Seed, mutations: list[str],
               exc: BaseException, tb: str) -> Path:
    digest = hashlib.sha1(b"".join(p.read_bytes() for p in sorted(work.iterdir()))).hexdigest()
    sig = hashlib.sha1(_signature(exc).encode()).hexdigest()[:8]
    dest = CRASH_DIR / f"{sig}-{digest[:10]}"
    dest.mkdir(parents=True, exist_ok=True)
    for p in work.iterdir():
        shutil.copy2(p, dest / p.name)
    (dest / "CRASH.txt").write_text(
        f"input: {main_name}\nkind: {seed.kind}, seed {seed.source}\n"
        f"mutations: {', '.join(mutations)}\nsignature: {_signature(exc)}\n\n{tb}")
    return dest


# -- main ------------------------------------------------------------------------------------------

def _imports():
    try:
        from pylogctl.tools.dump_options import DumpOptions, IndexDumpOptions
    except ImportError:  # before the options got their own module
        from pylogctl.tools.dump_index import IndexDumpOptions
        from pylogctl.tools.dump_segment import DumpOptions
    from pylogctl.errors import PylogctlError
    from pylogctl.formatters import get_formatter
    from pylogctl.tools.dump_dispatch import dump_file
    return (DumpOptions, IndexDumpOptions), dump_file, get_formatter, PylogctlError


def replay(target: Path, timeout: float) -> int:
    """Rerun a saved crash dir (or one file); print what happens."""
    imports, dump_file, get_formatter, PylogctlError = _imports()
    files = [target] if target.is_file() else sorted(
        p for p in target.iterdir() if p.name != "CRASH.txt")
    # the dumped file is the one the crash names; siblings (.log beside an index) ride along
    crash = (target / "CRASH.txt") if target.is_dir() else None
    main_name = None
    if crash is not None and crash.exists():
        main_name = crash.read_text().split("\n", 1)[0][len("input: "):]
    path = next((p for p in files if p.name == main_name), files[0])
    kind = _kind_of(path) or "log"
    stats = Stats()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        run_one(str(path), kind, random.Random(0), stats, imports, dump_file, get_formatter,
                PylogctlError)
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"{path}: no crash; {dict(stats.errors)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    ap.add_argument("--max-inputs", type=int, default=0, help="stop after N inputs (0: no limit)")
    ap.add_argument("--seed", type=int, default=None, help="RNG seed (default: time-based)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per input before it "
                    "counts as a hang")
    ap.add_argument("--no-speedups", action="store_true", help="force the pure-Python codec "
                    "(PYLOGCTL_NO_SPEEDUPS=1)")
    ap.add_argument("--replay", type=Path, help="rerun a saved crash dir or a single file")
    args = ap.parse_args(argv)
    if args.no_speedups:
        os.environ["PYLOGCTL_NO_SPEEDUPS"] = "1"
    sys.path.insert(0, str(REPO))
    if args.replay:
        return replay(args.replay, args.timeout)

    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    imports, dump_file, get_formatter, PylogctlError = _imports()
    seeds = collect_seeds(args.corpus, random.Random(seed))
    if not args.corpus.is_dir():
        print(f"warning: no corpus at {args.corpus}; only synthetic seeds", file=sys.stderr)
    ALL_SEEDS.extend(s for group in seeds.values() for s in group)
    kinds = sorted(seeds)
    print(f"fuzz_dump: seed {seed}, {len(ALL_SEEDS)} seeds over {len(kinds)} kinds "
          f"({', '.join(f'{k} {len(seeds[k])}' for k in kinds)}), "
          f"speedups {'off' if args.no_speedups else 'on'}", flush=True)

    stats = Stats()
    signal.signal(signal.SIGALRM, _on_alarm)
    start = time.monotonic()
    deadline = start + args.seconds
    with tempfile.TemporaryDirectory(prefix="pylogctl-fuzz-") as tmp:
        root = Path(tmp)
        n = 0
        while time.monotonic() < deadline and (not args.max_inputs or n < args.max_inputs):
            n += 1
            kind = kinds[n % len(kinds)] if rng.random() < 0.5 else rng.choice(kinds)
            seed_file = rng.choice(seeds[kind])
            data, mutations = mutate(rng, seed_file, seeds[kind])
            work = root / f"in{n % 2}" / "t-0"
            shutil.rmtree(work.parent, ignore_errors=True)
            work.mkdir(parents=True)
            name_of_input, siblings = seed_file.name, seed_file.siblings
            if seed_file.kind in OFFSET_NAMED and rng.random() < 0.05:
                name_of_input, siblings = odd_name(rng, seed_file)
                mutations.append(f"name:{name_of_input}")
            for name, sib in siblings.items():
                if rng.random() < 0.15:  # now and then the sibling segment is damaged too
                    sib, more = mutate(rng, Seed("log", name, sib, seed_file.source), seeds[kind])
                    mutations += [f"sibling:{m}" for m in more]
                (work / name).write_bytes(sib)
            path = work / name_of_input
            path.write_bytes(data)
            stats.inputs += 1
            stats.kinds[kind] += 1
            stats.mutations.update("odd-name" if m.startswith("name:") else m.split(":")[-1]
                                   for m in mutations)
            signal.setitimer(signal.ITIMER_REAL, args.timeout)
            try:
                run_one(str(path), kind, rng, stats, imports, dump_file, get_formatter,
                        PylogctlError)
            except (Exception, FuzzTimeout) as exc:  # a crash: not a PylogctlError
                signal.setitimer(signal.ITIMER_REAL, 0)
                sig = _signature(exc)
                stats.crashes[sig] += 1
                if stats.crash_saved[sig] < 3:
                    stats.crash_saved[sig] += 1
                    tb = traceback.format_exc()
                    dest = save_crash(work, name_of_input, seed_file, mutations, exc, tb)
                    if stats.crashes[sig] == 1:
                        print(f"\nCRASH {sig}\n  input saved in {dest}\n  mutations: "
                              f"{', '.join(mutations)}\n{tb}", flush=True)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)

    elapsed = time.monotonic() - start
    print(f"\ninputs tried: {stats.inputs} in {elapsed:.1f} s ({stats.inputs / elapsed:.1f} "
          f"inputs/s; {stats.dumps} dumps, {stats.clean} without any error)")
    print("inputs per kind: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.kinds.items())))
    print("mutations: " + ", ".join(f"{k} {v}" for k, v in stats.mutations.most_common()))
    print("errors per class (allowed):")
    for cls, count in stats.errors.most_common():
        print(f"  {count:8d}  {cls}")
        for site, c in stats.sites.get(cls, collections.Counter()).most_common(4):
            print(f"            {c:8d}  at {site}")
    if stats.crashes:
        print(f"CRASHES: {sum(stats.crashes.values())} inputs, {len(stats.crashes)} signatures "
              f"(saved under {CRASH_DIR}):")
        for sig, count in stats.crashes.most_common():
            print(f"  {count:8d}  {sig}")
        return 1
    print("crashes: 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
