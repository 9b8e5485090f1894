"""What ``kafka-dump-log.sh`` reads from a segment, as plain data (Kafka's DumpLogSegments).

:func:`dump_log` turns a ``.log`` or KRaft ``.checkpoint`` file into a :class:`LogDump`: a
header, a lazy stream of batch dicts (camelCase keys, the fields of the tool's batch line) and a
footer filled in once the stream is consumed (valid bytes, trailing invalid bytes, the
non-consecutive offsets seen, and the error that stopped the dump, if any). Formatters render
it as Kafka's text lines or as JSON/YAML. Behaviour follows the newest Kafka tool (the Java
rewrite) where versions differ; the choices are listed in docs/commands/dump-segment.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..errors import CorruptRecordError, PylogctlError
from ..format.control import (ControlRecordType, decode_control_value, parse_control_key,
                              parse_end_txn_marker)
from ..format.legacy import LegacyBatch
from ..format.log_stream import AnyBatch
from ..format.message import to_json_value
from ..format.record import LegacyRecord, Record
from ..format.readable_bytes import readable
from ..format.record_batch import RecordBatch
from ..format.varint import INT64_MAX, INT64_MIN
from ..storage.file_records import FileRecords
from ..storage.naming import (BOOTSTRAP_CHECKPOINT, CHECKPOINT_SUFFIX, LOG_SUFFIX,
                              offset_from_file, snapshot_id_from_file)
from ..speedups import accelerator
from .decoders import ShortDataError, ValueDecodeError, decode_or_show, get_decoder
from .dump_options import DEFAULT_MAX_BYTES, DumpOptions
from .record_parsers import DecoderAbortError, RecordParser, get_parser

# The batch-line renderer in C (pylogctl/tools/_batch_lines.c, optional: see
# pylogctl/speedups.py). Its deep counterparts render batch and record lines as UTF-8 bytes: a
# run of uncompressed batches (format_v2_record_lines), or one compressed batch from its
# decompressed records.
_c = accelerator("pylogctl.tools._batch_lines")
_c_batch_lines, _c_record_lines, _c_area_lines = (
    (None, None, None) if _c is None else
    (_c.format_v2_batch_lines, _c.format_v2_record_lines, _c.format_v2_batch_area_lines))
_LINES_PER_CHUNK = 4096
PROGRESS_STEP = 4 * 1024 * 1024  # bytes between progress reports: a call per batch costs

@dataclass
class LogDump:
    """One dumped file: ``header``, lazy ``items`` (batch dicts), then ``footer``."""

    path: str
    header: dict[str, Any]
    options: DumpOptions
    kind: str = "log"
    items_key: str = "batches"
    footer: dict[str, Any] = field(default_factory=dict)
    error: PylogctlError | None = None
    # called with the bytes dumped so far, every PROGRESS_STEP or so and at the end
    progress: Callable[[int], None] | None = None

    @property
    def items(self) -> Iterator[dict[str, Any]]:
        return _dump_batches(self)  # type: ignore[return-value]

    def items_or_lines(self) -> Iterator[dict[str, Any] | str | bytes]:
        """``items``, except that runs of plain v2 batches may come pre-rendered by the C
        accelerator when it is built: a shallow dump's as a ``str`` of kafka-dump-log's batch
        lines (62,000 lines per GiB cost ~6 us each in Python), a deep one's (string decoders
        or none, record metadata shown) as the UTF-8 ``bytes`` of its batch and record lines
        (a million records per GiB: dicts, lines and the encode cost 2x Kafka's tool). The
        text formatter's fast path; footer and errors are the same as with ``items``."""
        return _dump_batches(self, lines=True)


def _base_offset_from_name(path: str) -> int:
    """A segment's or index's base offset from its name (the text before the first ``.``); a
    name that holds none is a one-line error, not a crash (Kafka throws NumberFormatException)."""
    try:
        return offset_from_file(path)
    except ValueError:
        raise PylogctlError(f"Cannot parse a base offset from the file name "
                            f"{os.path.basename(path)}: Kafka names segment files by their "
                            f"base offset", path=path) from None


def dump_log(path: str | os.PathLike[str], options: DumpOptions = DumpOptions(),
             progress: Callable[[int], None] | None = None) -> LogDump:
    """Prepare the dump of a ``.log`` segment or a KRaft ``.checkpoint`` snapshot;
    ``progress`` gets the bytes dumped as the batches are consumed."""
    path = os.fspath(path)
    name = os.path.basename(path)
    header: dict[str, Any] = {"file": path}
    if name.endswith(LOG_SUFFIX):
        header["type"] = "log"
        header["logStartOffset"] = _base_offset_from_name(path)
    elif name == BOOTSTRAP_CHECKPOINT:
        header["type"] = "bootstrap-snapshot"
    elif name.endswith(CHECKPOINT_SUFFIX):
        snap = snapshot_id_from_file(path)
        if snap is None:
            raise PylogctlError(f"Cannot parse a KRaft snapshot id (offset-epoch) from the file "
                                f"name {name}", path=path)
        header["type"] = "snapshot"
        header["snapshotEndOffset"], header["snapshotEpoch"] = snap
    else:
        raise PylogctlError(f"Not a log segment or KRaft snapshot: {path}", path=path)
    return LogDump(path=path, header=header, options=options, progress=progress)


def _dump_batches(dump: LogDump, lines: bool = False) -> Iterator[dict[str, Any] | str]:
    opts = dump.options
    deep = opts.deep
    printing = opts.printing
    topic = opts.schemas_topic
    key_dec = get_decoder(opts.key_decoder, [dump.path], topic) if printing else None
    value_dec = get_decoder(opts.value_decoder, [dump.path], topic) if printing else None
    report = None if opts.report is None else _reporter(opts.report, dump.path)
    parser = get_parser(opts.parser, opts.legacy_format) if opts.parser else None
    skip = opts.skip_record_metadata
    fast = lines and not deep and _c_batch_lines is not None
    # the deep C path prints what record_to_dict + record_line print for these options only
    deep_fast = (lines and deep and _c_record_lines is not None and parser is None
                 and not skip and (not printing or (opts.key_decoder in _C_DECODERS
                                                    and opts.value_decoder in _C_DECODERS)))
    flags = ((1 if printing and opts.key_decoder == "string" else 0)  # print keys
             | (2 if printing and opts.value_decoder == "string" else 0))  # print payloads
    non_consecutive: dict[int, int] = {}
    last_offset = -1
    valid_bytes = 0
    invalid_batches = 0
    first_invalid: int | None = None
    size = 0
    position = None
    progress = dump.progress
    reported = 0
    try:
        with FileRecords(dump.path, end=opts.max_bytes) as fr:
            size = fr.size_in_bytes
            pos = 0
            while True:
                if fast:
                    # a run of plain v2 batches, rendered in C; the rest go through Python below
                    text, pos, count, invalid, first_bad = _c_batch_lines(
                        fr.view, pos, fr.end, _LINES_PER_CHUNK)
                    if count:
                        valid_bytes = pos
                        if invalid and first_invalid is None:
                            first_invalid = first_bad
                        invalid_batches += invalid
                        fr.release(pos)
                        yield text
                        if progress is not None and valid_bytes - reported >= PROGRESS_STEP:
                            progress(valid_bytes - reported)
                            reported = valid_bytes
                        continue
                elif deep_fast and INT64_MIN <= last_offset <= INT64_MAX:
                    # likewise with the record lines, as UTF-8 bytes
                    text, pos, count, last_offset, gaps = _c_record_lines(
                        fr.view, pos, fr.end, _LINES_PER_CHUNK, last_offset, flags)
                    if count:
                        valid_bytes = pos
                        if gaps:
                            for prev, off in gaps:
                                non_consecutive[prev] = off
                        fr.release(pos)
                        yield text
                        if progress is not None and valid_bytes - reported >= PROGRESS_STEP:
                            progress(valid_bytes - reported)
                            reported = valid_bytes
                        continue
                batch = None
                for batch in fr.batches(pos):
                    position = batch.position
                    if (deep_fast and type(batch) is RecordBatch and batch.attributes & 0x07
                            and INT64_MIN <= last_offset <= INT64_MAX):
                        done = _area_lines(batch, fr.view, last_offset, flags)
                        if done is not None:  # a compressed batch, rendered in C
                            text, last_offset, gaps = done
                            if gaps:
                                for prev, off in gaps:
                                    non_consecutive[prev] = off
                            valid_bytes += batch.size_in_bytes
                            yield text
                            if progress is not None and valid_bytes - reported >= PROGRESS_STEP:
                                progress(valid_bytes - reported)
                                reported = valid_bytes
                            break
                    item = batch_to_dict(batch, valid_bytes)
                    if not item["isValid"]:
                        if first_invalid is None:
                            first_invalid = batch.position
                        invalid_batches += 1
                    if deep:
                        recs = []
                        for rec in batch.records():
                            off = rec.offset
                            if off != last_offset + 1:
                                non_consecutive[last_offset] = off
                            last_offset = off
                            recs.append(record_to_dict(batch, rec, printing, key_dec, value_dec,
                                                       skip, parser, report))
                        item["records"] = recs
                    valid_bytes += batch.size_in_bytes
                    yield item
                    if progress is not None and valid_bytes - reported >= PROGRESS_STEP:
                        progress(valid_bytes - reported)
                        reported = valid_bytes
                    if fast or deep_fast:
                        break
                if batch is None:
                    break
                pos = valid_bytes
    except PylogctlError as exc:
        dump.error = exc.at(dump.path, position)
    if progress is not None and valid_bytes > reported:
        progress(valid_bytes - reported)
    trailing = size - valid_bytes
    dump.footer = {
        "validBytes": valid_bytes,
        "invalidBytes": trailing if opts.max_bytes == DEFAULT_MAX_BYTES and dump.error is None else 0,
        "invalidBatches": invalid_batches,
        "firstInvalidBatchPosition": first_invalid,
        "nonConsecutiveOffsets": [[k, non_consecutive[k]] for k in sorted(non_consecutive)],
        "error": None if dump.error is None else {"message": str(dump.error),
                                                   "position": dump.error.position},
    }


def _area_lines(batch: RecordBatch, view, last_offset: int, flags: int):
    """A compressed batch's lines by format_v2_batch_area_lines, or None for the Python path
    (which raises any decompression error itself, with its position)."""
    try:
        area = batch.record_area()
    except PylogctlError:
        return None
    return _c_area_lines(view, batch.position, area, last_offset, flags)


_CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
_C_DECODERS = ("string", "none")  # the decoders format_v2_record_lines reproduces


def batch_to_dict(batch: AnyBatch, position: int) -> dict[str, Any]:
    """The fields of kafka-dump-log's batch line. ``position`` is the running byte count."""
    if type(batch) is RecordBatch and (batch.attributes & 0x07) < 5:
        # the common case, read straight from the header fields: a shallow dump of a large
        # segment spends most of its time here
        attrs = batch.attributes
        base_seq = batch.base_sequence
        return {
            "baseOffset": batch.base_offset,
            "lastOffset": batch.last_offset,
            "count": batch.records_count,
            "baseSequence": base_seq,
            "lastSequence": -1 if base_seq == -1 else batch.last_sequence,
            "producerId": batch.producer_id,
            "producerEpoch": batch.producer_epoch,
            "partitionLeaderEpoch": batch.partition_leader_epoch,
            "isTransactional": bool(attrs & 0x10),
            "isControl": bool(attrs & 0x20),
            "deleteHorizonMs": batch.base_timestamp if attrs & 0x40 else None,
            "position": position,
            "timestampType": "LogAppendTime" if attrs & 0x08 else "CreateTime",
            "maxTimestamp": batch.max_timestamp,
            "size": batch.length + 12,
            "magic": 2,
            "compressCodec": _CODEC_NAMES[attrs & 0x07],
            "crc": batch.crc,
            "isValid": batch.is_valid,
        }
    if isinstance(batch, LegacyBatch):
        try:
            base = batch.base_offset
        except PylogctlError:
            base = None
    else:
        base = batch.base_offset
    return {
        "baseOffset": base,
        "lastOffset": batch.last_offset,
        "count": batch.records_count,
        "baseSequence": batch.base_sequence,
        "lastSequence": batch.last_sequence,
        "producerId": batch.producer_id,
        "producerEpoch": batch.producer_epoch,
        "partitionLeaderEpoch": batch.partition_leader_epoch,
        "isTransactional": batch.is_transactional,
        "isControl": batch.is_control,
        "deleteHorizonMs": batch.delete_horizon_ms,
        "position": position,
        "timestampType": str(batch.timestamp_type),
        "maxTimestamp": batch.max_timestamp,
        "size": batch.size_in_bytes,
        "magic": batch.magic,
        "compressCodec": str(batch.codec),
        "crc": batch.crc,
        "isValid": batch.is_valid,
    }


def _reporter(report: Callable[[str], None], path: str) -> Callable[[str], None]:
    return lambda message: report(f"{path}: {message}")


def record_to_dict(batch: AnyBatch, rec: Record, printing: bool, key_dec, value_dec,
                   skip_metadata: bool = False, parser: RecordParser | None = None,
                   report: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Per-record metadata (unless skipped), plus decoded key/value/headers when printing.

    ``--skip-record-metadata`` drops the metadata from every output format, and control
    records entirely (they carry nothing else), as Kafka's tool does. An internal-topic
    ``parser`` replaces the key and value decoders.
    """
    d: dict[str, Any] = {}
    if not skip_metadata:
        d["offset"] = rec.offset
        d["timestamp"] = rec.timestamp
        d["keySize"] = -1 if rec.key is None else len(rec.key)
        d["valueSize"] = -1 if rec.value is None else len(rec.value)
        if batch.magic >= 2:
            d["sequence"] = rec.sequence
            d["headerKeys"] = [h.key for h in rec.headers]
        if isinstance(rec, LegacyRecord):
            d["isValid"] = rec.is_valid
            d["crc"] = rec.crc
        if batch.is_control:
            d["control"] = control_to_dict(rec)
    if printing and not batch.is_control:
        if parser is not None:
            parsed = parser.parse(rec)
            if parsed.key is not None:
                d["key"] = parsed.key
            if parsed.payload is not None:
                d["value"] = parsed.payload
            return d
        if key_dec is not None and rec.key is not None:
            d["key"] = _decode(key_dec, rec.key, "key", rec.offset, report)
        if value_dec is not None and rec.value is not None:
            d["value"] = _decode(value_dec, rec.value, "value", rec.offset, report)
        if rec.headers and value_dec is not None:
            d["headers"] = [{"key": h.key, "value": None if h.value is None
                             else _header_value(value_dec, h.value)} for h in rec.headers]
    return d


def _decode(decoder, raw: bytes, part: str, offset: int,
            report: Callable[[str], None] | None = None) -> Any:
    """``decoder(raw)``; data too short for a fixed-size decoder stops the dump at this record,
    as it kills Kafka's tool (which has printed the record's metadata, not its key or value)."""
    def told(message: str) -> None:
        if report is not None:
            report(f"the {part} of the record at offset {offset}: {message}")
    try:
        return decode_or_show(decoder, raw, told)
    except ShortDataError as exc:
        raise DecoderAbortError(f"Failed to decode the {part} of the record at offset {offset}: "
                                f"{exc} (kafka-dump-log dies here with "
                                f"java.nio.BufferUnderflowException)") from None


def _header_value(value_dec, raw: bytes) -> Any:
    """A header value, with the value decoder. Kafka's tool never prints headers, so one too
    short for a fixed-size decoder does not stop the dump: it is shown in hex instead."""
    try:
        return value_dec(raw)
    except ShortDataError:
        return raw.hex()
    except ValueDecodeError:  # a schema decoder: headers are not in the wire format
        return readable(raw)


def control_to_dict(rec: Record) -> dict[str, Any]:
    """Decode a control record: marker type and coordinator epoch, or the KRaft payload."""
    _, type_id = parse_control_key(rec.key)
    ctype = ControlRecordType.from_id(type_id)
    if ctype in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        marker = parse_end_txn_marker(ctype, rec.value)
        return {"type": ctype.name, "typeId": type_id, "coordinatorEpoch": marker.coordinator_epoch}
    if ctype == ControlRecordType.UNKNOWN:
        return {"type": ctype.name, "typeId": type_id}
    try:
        data = decode_control_value(ctype, rec.value)
    except PylogctlError as exc:
        # a position inside the record's value means nothing in the file: the dump reports
        # the batch's position instead
        raise CorruptRecordError(f"Cannot read the {ctype.name} control record at offset "
                                 f"{rec.offset}: {exc.message}") from None
    return {"type": ctype.name, "typeId": type_id, "data": to_json_value(data)}
