"""The cleaner's C loops (``pylogctl.storage.cleaner._cleaner_scan``) against its Python path, one
buffer of batches at a time: hand-made v2 batches (odd varints, header keys, timestamp types,
horizons), mutations of them, and the outcome of each pass with and without the extension.
Shared by tests/storage/test_cleaner_accel.py and tests/fuzz/fuzz_cleaner.py."""

from __future__ import annotations

import dataclasses
import random
import struct
from contextlib import contextmanager
from types import SimpleNamespace

from pylogctl.errors import PylogctlError
from pylogctl.format.log_stream import iter_batches
from pylogctl.format.record_batch import encode_batch_header
from pylogctl.format.record_filter import filter_to
from pylogctl.storage.cleaner import cleaner_filter, offset_map
from pylogctl.storage.cleaner.cleaned_txn import CleanedTransactionMetadata
from pylogctl.storage.cleaner.cleaner_filter import CleanerFilter
from pylogctl.storage.cleaner.cleaner_log import LastRecord
from pylogctl.storage.cleaner.offset_map import SkimpyOffsetMap

NOW = 1_700_000_000_000
RETENTION = 86_400_000


@contextmanager
def python_path_only():
    """The cleaner without the extension (as with PYLOGCTL_NO_SPEEDUPS=1)."""
    saved = offset_map._map_batch, cleaner_filter._filter_batch
    offset_map._map_batch = cleaner_filter._filter_batch = None
    try:
        yield
    finally:
        offset_map._map_batch, cleaner_filter._filter_batch = saved


# -- hand-made batches ------------------------------------------------------------------------
def varint(value: int, pad: int = 0) -> bytes:
    """Zig-zag varint; ``pad`` extra continuation bytes make it non-canonical (overlong)."""
    raw = ((value << 1) ^ (value >> 63)) & ((1 << 64) - 1)
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    for _ in range(pad):
        out[-1] |= 0x80
        out.append(0)
    return bytes(out)


def blob(data: bytes | None, pad: int = 0) -> bytes:
    return varint(-1, pad) if data is None else varint(len(data), pad) + data


def raw_record(off_delta: int, ts_delta: int, key: bytes | None, value: bytes | None,
               headers: tuple = (), attributes: int = 0, pad: int = 0) -> bytes:
    """A record as bytes, any field encodable (header keys as raw bytes)."""
    body = (bytes((attributes,)) + varint(ts_delta, pad) + varint(off_delta, pad)
            + blob(key, pad) + blob(value, pad) + varint(len(headers), pad)
            + b"".join(blob(k, pad) + blob(v, pad) for k, v in headers))
    return varint(len(body), pad) + body


def raw_batch(base_offset: int, records: list[bytes], *, attributes: int = 0,
              base_timestamp: int = NOW - 10_000, max_timestamp: int | None = None,
              last_offset_delta: int | None = None, producer_id: int = -1,
              count: int | None = None) -> bytes:
    n = len(records)
    return encode_batch_header(
        base_offset=base_offset, records_area=b"".join(records),
        last_offset_delta=n - 1 if last_offset_delta is None else last_offset_delta,
        partition_leader_epoch=3, attributes=attributes, base_timestamp=base_timestamp,
        max_timestamp=base_timestamp + 50 if max_timestamp is None else max_timestamp,
        producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1, records_count=n if count is None else count)


KEYS = [b"k%d" % i for i in range(8)]


def random_batch(rng: random.Random, base_offset: int) -> bytes:
    """A plain v2 batch of keyed, keyless and tombstone records, some headers (a few keys not
    strict UTF-8: invalid, overlong, a surrogate), some overlong varints, create or
    log-append time, sometimes a delete horizon already stamped."""
    n = rng.randint(0, 8)
    records = []
    for i in range(n):
        key = None if rng.random() < 0.1 else rng.choice(KEYS)
        value = None if rng.random() < 0.2 else bytes(rng.randrange(256)
                                                      for _ in range(rng.randint(0, 30)))
        headers = tuple((rng.choice([b"h", b"trace", "\u00e9t\u00e9".encode()])
                         if rng.random() < 0.97 else rng.choice([b"\xff\xfe", b"\xc0\x80",
                                                                  b"\xed\xa0\x80"]),
                         None if rng.random() < 0.2 else b"v%d" % i)
                        for _ in range(rng.choice([0, 0, 1, 2])))
        records.append(raw_record(i, rng.choice([0, i, -5, 1 << 40, rng.randint(0, 500)]),
                                  key, value, headers, attributes=rng.choice([0, 0, 0, 5]),
                                  pad=1 if rng.random() < 0.05 else 0))
    attributes = rng.choice([0, 0, 0x08, 0x40, 0x10, 0x48])
    base_ts = rng.choice([NOW - 10_000, NOW + 5_000, -1, 0])
    return raw_batch(base_offset, records, attributes=attributes, base_timestamp=base_ts,
                     max_timestamp=rng.choice([None, -1, NOW]),
                     last_offset_delta=max(n - 1, 0) + rng.choice([0, 0, 3]),
                     producer_id=rng.choice([-1, -1, 7]))


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One hostile change in a batch, keeping its length field equal to its size (so that
    the batch is still read whole and reaches the cleaner's loops)."""
    buf = bytearray(data)
    kind = rng.randrange(6)
    if kind == 0 and len(buf) > 61:  # a byte of the record area
        buf[rng.randrange(61, len(buf))] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    elif kind == 1:  # records count
        struct.pack_into(">i", buf, 57, rng.choice([-1, 0, 1, 2, 9, 0x7FFFFFFF]))
    elif kind == 2:  # attributes: codec, timestamp type, control, horizon
        struct.pack_into(">h", buf, 21, rng.choice([1, 0x08, 0x20, 0x40, 0x7F, -1]))
    elif kind == 3:  # timestamps and offsets near the int64 edges
        field = rng.choice([0, 27, 35])
        struct.pack_into(">q", buf, field, rng.choice([-(1 << 63), (1 << 63) - 1, -1, 0]))
    elif kind == 4 and len(buf) > 62:  # cut or grow the record area
        at = rng.randrange(61, len(buf))
        if rng.random() < 0.5:
            del buf[at:at + rng.randint(1, 4)]
        else:
            buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    else:  # magic
        buf[16] = rng.choice([0, 1, 3])
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    return bytes(buf)


# -- the two paths ------------------------------------------------------------------------------
@dataclasses.dataclass
class Setting:
    """What a filter is built from: the map's entries and latest offset, the clock."""

    mapped: dict[bytes, int]
    latest: int
    now_ms: int = NOW
    retention_ms: int = RETENTION
    upper: int = -1
    last_records: dict = dataclasses.field(default_factory=dict)
    stop_above: int | None = None
    max_batch: int = 1 << 20


def random_setting(rng: random.Random, first: int, last: int) -> Setting:
    mapped = {k: rng.randint(first - 2, last + 2) for k in KEYS if rng.random() < 0.8}
    return Setting(mapped, rng.choice([last, last + 5, (first + last) // 2, first - 1]),
                   now_ms=rng.choice([NOW, NOW + 10 * RETENTION]),
                   retention_ms=rng.choice([RETENTION, 0]),
                   upper=rng.choice([-1, last + 1]),
                   last_records=rng.choice([{}, {7: LastRecord(last, 0)}]),
                   stop_above=rng.choice([None, 0, 100]), max_batch=rng.choice([1 << 20, 10]))


def _offset_map(setting: Setting) -> SkimpyOffsetMap:
    m = SkimpyOffsetMap(24 * 1000)
    for key, offset in setting.mapped.items():
        m.put(key, offset)
    m.latest_offset = setting.latest
    return m


def _error(exc: Exception) -> tuple:
    return (type(exc).__name__, str(exc), getattr(exc, "position", None))


def filter_outcome(data: bytes, setting: Setting, accelerated: bool):
    """``filter_into`` (the cleaner's call) on the batches of ``data``: the bytes written,
    the result, the invalid count; or the error."""
    stats = SimpleNamespace(invalid_messages_read=0)
    keep = CleanerFilter(_offset_map(setting), setting.now_ms, setting.retention_ms, True,
                         CleanedTransactionMetadata(), setting.last_records, setting.upper, stats)
    out = bytearray()
    view = memoryview(data)
    try:
        batches = list(iter_batches(view))
        if accelerated:
            result = keep.filter_into(view, batches, out, max_record_batch_size=setting.max_batch,
                                      stop_above=setting.stop_above)
        else:
            result = filter_to(batches, keep, out, max_record_batch_size=setting.max_batch,
                               stop_above=setting.stop_above)
    except (PylogctlError, struct.error) as exc:  # struct.error: a timestamp beyond int64
        return _error(exc)
    finally:
        view.release()
    return bytes(out), dataclasses.asdict(result), stats.invalid_messages_read


def map_outcome(data: bytes, setting: Setting, start: int, max_entries: int,
                accelerated: bool):
    """The cleaner's map loop (``put_batch``, else decode and ``put_records``) over the
    non-control batches of ``data``: the map's entries, owners and latest offset after each
    batch, and whether it filled up; or the error."""
    m = _offset_map(setting)
    states = []
    view = memoryview(data)
    try:
        for batch in iter_batches(view):
            if batch.attributes & 0x20:
                continue
            count = m.put_batch(view, batch.position, start, max_entries) if accelerated else None
            if count is None:
                records = batch.records()
                if m.put_records(records, start, max_entries):
                    states.append("full")
                    break
                count = len(records)
            states.append((count, list(m._offsets.items()), list(m._owners.items()),
                           m.latest_offset))
    except (PylogctlError, struct.error) as exc:
        states.append(_error(exc))
    finally:
        view.release()
    return states
