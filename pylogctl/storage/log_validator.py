"""Validating a leader's append and assigning its offsets (Kafka's ``LogValidator`` and the
record checks of ``UnifiedLog.analyzeAndValidateRecords``), for magic v2 batches.

A leader receives batches whose offsets start at 0 and gives them the log's next offsets. The
rules kept here, in Kafka's order:

- Each batch: at most ``max.message.bytes`` (``RecordTooLargeError``), its CRC-32C must match
  (``CorruptRecordError``). From a client the base offset must be 0, and the offset range, the
  record count and the sequence must agree; control batches are refused (clients write no
  markers). An append from a leader holds exactly one v2 batch.
- Each record: a compacted topic needs keys; with ``CreateTime`` a timestamp must lie within
  ``message.timestamp.before.max.ms`` / ``after.max.ms`` of now; a producer may not set
  ``LogAppendTime`` itself. Record errors are gathered and reported together
  (:class:`RecordValidationError`, naming each record's index).
- Offsets are assigned **in place** when the batch keeps its codec (the topic's
  ``compression.type`` is ``producer`` or the batch's own codec): the base offset and the
  partition leader epoch are patched, and neither is covered by the CRC, so the bytes the
  producer compressed are written as they came. The max timestamp (and the timestamp-type bit)
  is rewritten only when it changes -- ``LogAppendTime`` topics, or a producer's wrong max
  timestamp -- and only then is the CRC computed again.
- Otherwise (another target codec, or a compressed batch whose inner offsets are not 0, 1,
  2, ...) the batch is rebuilt from its records with the target codec, as Kafka's
  ``buildRecordsAndAssignOffsets`` does, and its size checked again.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import CorruptRecordError, PylogctlError
from ..format.builder import RecordBatchBuilder
from ..format.compression import Codec
from ..format.crc import crc32c
from ..format.log_stream import iter_batches
from ..format.record import NO_TIMESTAMP, Record, TimestampType
from ..format.record_batch import (ATTRIBUTES_OFFSET, CODEC_MASK, CRC_OFFSET,
                                   TIMESTAMP_TYPE_FLAG, RecordBatch)
from .log_config import LogConfig
from .producer_append import AppendOrigin

_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")
_LEADER_EPOCH_OFFSET = 12
_MAX_TIMESTAMP = struct.Struct(">q")
_MAX_TIMESTAMP_OFFSET = 35
_ATTRIBUTES = struct.Struct(">h")
_CRC = struct.Struct(">I")


# -- errors (the broker answers each with the Kafka error of the same name) -------------------
class InvalidRecordError(PylogctlError):
    """Kafka's ``InvalidRecordException`` (INVALID_RECORD)."""


class RecordTooLargeError(PylogctlError):
    """Kafka's ``RecordTooLargeException`` (MESSAGE_TOO_LARGE): a batch above
    ``max.message.bytes``."""


class RecordBatchTooLargeError(PylogctlError):
    """Kafka's ``RecordBatchTooLargeException`` (RECORD_LIST_TOO_LARGE): an append larger than
    a whole segment."""


class UnsupportedForMessageFormatError(PylogctlError):
    """Kafka's ``UnsupportedForMessageFormatException``: not a v2 batch."""


@dataclass(frozen=True)
class RecordError:
    """One rejected record: its index in the batch and why."""

    batch_index: int
    message: str


class RecordValidationError(PylogctlError):
    """Records that failed validation; ``invalid_timestamp`` picks the Kafka error
    (INVALID_TIMESTAMP, else INVALID_RECORD)."""

    def __init__(self, message: str, record_errors: list[RecordError],
                 invalid_timestamp: bool) -> None:
        super().__init__(message)
        self.record_errors = record_errors
        self.invalid_timestamp = invalid_timestamp


@dataclass(frozen=True)
class ValidationResult:
    """The batch to write, with its offsets assigned, and what the append reports."""

    records: bytes | bytearray
    batch: RecordBatch
    log_append_time: int  # NO_TIMESTAMP unless the topic uses LogAppendTime
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    size_maybe_changed: bool


def target_codec(config: LogConfig, source: Codec) -> Codec:
    """``BrokerCompressionType.targetCompression``: ``producer`` keeps the batch's codec."""
    if config.compression_type == "producer":
        return source
    if config.compression_type == "uncompressed":
        return Codec.NONE
    return Codec.from_name(config.compression_type)


def single_batch(records: bytes | bytearray | memoryview, topic_partition: str,
                 max_message_bytes: int | None) -> RecordBatch:
    """The one complete v2 batch of a leader's append (invalid trailing bytes are ignored, as
    Kafka trims them), size- and CRC-checked."""
    batches = list(iter_batches(records))
    if not batches:
        raise InvalidRecordError(f"Record batch in the append to {topic_partition} has no "
                                 f"batches at all")
    first = batches[0]
    if first.magic != 2:
        raise UnsupportedForMessageFormatError(
            f"Produce requests are only allowed to contain record batches with magic version 2 "
            f"(found magic {first.magic} in the append to {topic_partition})")
    if len(batches) > 1:
        raise InvalidRecordError("Compressed outer record has more than one batch")
    assert isinstance(first, RecordBatch)
    if max_message_bytes is not None and first.size_in_bytes > max_message_bytes:
        raise RecordTooLargeError(
            f"The record batch size in the append to {topic_partition} is "
            f"{first.size_in_bytes} bytes which exceeds the maximum configured value of "
            f"{max_message_bytes}.")
    if not first.is_valid:
        raise CorruptRecordError(f"Record is corrupt (stored crc = {first.crc}) in topic "
                                 f"partition {topic_partition}.")
    return first


def _validate_batch(batch: RecordBatch, origin: AppendOrigin, topic_partition: str) -> None:
    if origin is not AppendOrigin.CLIENT:
        return
    if batch.base_offset != 0:
        raise InvalidRecordError(f"The baseOffset of the record batch in the append to "
                                 f"{topic_partition} should be 0, but it is {batch.base_offset}")
    count_from_offsets = batch.last_offset - batch.base_offset + 1
    if count_from_offsets <= 0:
        raise InvalidRecordError(f"Batch has an invalid offset range: [{batch.base_offset}, "
                                 f"{batch.last_offset}] in topic partition {topic_partition}")
    if batch.records_count <= 0:
        raise InvalidRecordError(f"Invalid reported count for record batch: "
                                 f"{batch.records_count} in topic partition {topic_partition}")
    if count_from_offsets != batch.records_count:
        raise InvalidRecordError(f"Inconsistent batch offset range [{batch.base_offset}, "
                                 f"{batch.last_offset}] and count of records "
                                 f"{batch.records_count} in topic partition {topic_partition}")
    if batch.is_control:
        raise InvalidRecordError(f"Clients are not allowed to write control records in topic "
                                 f"partition {topic_partition}")
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise InvalidRecordError(f"Invalid sequence number {batch.base_sequence} in record batch "
                                 f"with producerId {batch.producer_id} in topic partition "
                                 f"{topic_partition}")


def _record_error(batch: RecordBatch, record: Record, index: int, now: int,
                  config: LogConfig, topic_partition: str) -> tuple[RecordError, bool] | None:
    """Kafka's ``validateKey`` then ``validateTimestamp``: (error, is a timestamp error)."""
    if config.compact and record.key is None:
        return RecordError(index, f"Compacted topic cannot accept message without key in topic "
                                  f"partition {topic_partition}"), False
    create_time = config.message_timestamp_type == "CreateTime"
    if create_time and record.timestamp != NO_TIMESTAMP:
        diff = now - record.timestamp
        if diff > config.message_timestamp_before_max_ms or \
                -diff > config.message_timestamp_after_max_ms:
            return RecordError(index, (
                f"Timestamp {record.timestamp} of message with offset {record.offset} is out of "
                f"range. The timestamp should be within "
                f"[{now - config.message_timestamp_before_max_ms}, "
                f"{now + config.message_timestamp_after_max_ms}]")), True
    elif batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
        return RecordError(index, f"Invalid timestamp type in message {record!r}. Producer "
                                  f"should not set timestamp type to LogAppendTime."), True
    return None


def _raise_record_errors(errors: list[tuple[RecordError, bool]]) -> None:
    if not errors:
        return
    record_errors = [e for e, _ in errors]
    if any(is_ts for _, is_ts in errors):
        raise RecordValidationError("One or more records have been rejected due to invalid "
                                    "timestamp", record_errors, True)
    shown = ", ".join(f"RecordError(batchIndex={e.batch_index}, message='{e.message}')"
                      for e in record_errors[:3])
    raise RecordValidationError(
        f"One or more records have been rejected due to {len(record_errors)} record errors in "
        f"total, and only showing the first three errors at most: [{shown}]", record_errors, False)


def validate_and_assign_offsets(records: bytes | bytearray | memoryview, first_offset: int,
                                leader_epoch: int, config: LogConfig, origin: AppendOrigin,
                                now: int, topic_partition: str) -> ValidationResult:
    """Validate a leader's append and give it the offsets from ``first_offset`` on and the
    partition leader epoch ``leader_epoch`` (Kafka's ``validateMessagesAndAssignOffsets``)."""
    batch = single_batch(records, topic_partition, config.max_message_bytes)
    _validate_batch(batch, origin, topic_partition)
    source = Codec.from_id(batch.attributes & CODEC_MASK)
    target = target_codec(config, source)
    log_append_time = config.message_timestamp_type == "LogAppendTime"
    in_place = source == target or (source is Codec.NONE and batch.is_control)
    clean = _clean_summary(batch, source, config, now)
    if clean is not None:  # no record can fail: the records need not be built
        max_timestamp, sequential = clean
        if in_place and (source is Codec.NONE or sequential):
            return _assign_in_place(records, batch, first_offset, leader_epoch,
                                    log_append_time, now, max_timestamp)
    decoded = batch.records()
    errors = []
    max_timestamp = NO_TIMESTAMP
    for index, record in enumerate(decoded):
        if source is not Codec.NONE and record.attributes & CODEC_MASK:
            errors.append((RecordError(index, f"Compressed outer record should not have an inner "
                                              f"record with a compression attribute set: "
                                              f"{record!r}"), False))
            continue
        error = _record_error(batch, record, index, now, config, topic_partition)
        if error is not None:
            errors.append(error)
            continue
        max_timestamp = max(max_timestamp, record.timestamp)
        if source is not Codec.NONE and record.offset != batch.base_offset + index:
            in_place = False  # old clients' inner offsets: rebuilt, as Kafka does
    _raise_record_errors(errors)
    last_offset = first_offset + len(decoded) - 1
    if log_append_time:
        max_timestamp = now
    if not in_place:
        rebuilt = _rebuild(batch, decoded, first_offset, leader_epoch, target,
                           now if log_append_time else None)
        built = RecordBatch(rebuilt)
        if built.size_in_bytes > config.max_message_bytes:
            raise RecordTooLargeError(
                f"Message batch size is {built.size_in_bytes} bytes in append to partition "
                f"{topic_partition} which exceeds the maximum configured size of "
                f"{config.max_message_bytes}.")
        return ValidationResult(rebuilt, built, now if log_append_time else NO_TIMESTAMP,
                                built.max_timestamp, last_offset, True)
    return _assign_in_place(records, batch, first_offset, leader_epoch, log_append_time, now,
                            max_timestamp)


def _clean_summary(batch: RecordBatch, source: Codec, config: LogConfig,
                   now: int) -> tuple[int, bool] | None:
    """``(max_timestamp, offsets sequential)`` when the batch's summary shows that no record
    breaks a rule below; None when the records must be looked at one by one (to name the
    failing ones, or because there is no summary)."""
    summary = batch.summary()
    if summary is None or batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
        return None
    if (source is not Codec.NONE and summary.inner_attributes & CODEC_MASK) or \
            (config.compact and summary.keyless):
        return None
    if config.message_timestamp_type == "CreateTime" and batch.records_count:
        if summary.min_timestamp <= NO_TIMESTAMP <= summary.max_timestamp:
            return None  # records without a timestamp skip the bounds: check each
        if now - summary.min_timestamp > config.message_timestamp_before_max_ms or \
                summary.max_timestamp - now > config.message_timestamp_after_max_ms:
            return None
    max_timestamp = max(NO_TIMESTAMP, summary.max_timestamp) if batch.records_count \
        else NO_TIMESTAMP
    return max_timestamp, summary.sequential


def _assign_in_place(records: bytes | bytearray | memoryview, batch: RecordBatch,
                     first_offset: int, leader_epoch: int, log_append_time: bool, now: int,
                     max_timestamp: int) -> ValidationResult:
    """Kafka's in-place offset assignment: patch the base offset and leader epoch (outside
    the CRC), and the max timestamp only when it changes."""
    last_offset = first_offset + batch.records_count - 1
    if log_append_time:
        max_timestamp = now
    out = bytearray(records[batch.position:batch.position + batch.size_in_bytes])
    _BASE_OFFSET.pack_into(out, 0, last_offset - batch.last_offset_delta)
    _LEADER_EPOCH.pack_into(out, _LEADER_EPOCH_OFFSET, leader_epoch)
    wanted_attributes = (batch.attributes | TIMESTAMP_TYPE_FLAG if log_append_time
                         else batch.attributes & ~TIMESTAMP_TYPE_FLAG)
    if wanted_attributes != batch.attributes or max_timestamp != batch.max_timestamp:
        # Kafka's setMaxTimestamp: the only in-place change the CRC covers
        _ATTRIBUTES.pack_into(out, ATTRIBUTES_OFFSET, wanted_attributes)
        _MAX_TIMESTAMP.pack_into(out, _MAX_TIMESTAMP_OFFSET, max_timestamp)
        with memoryview(out) as view:
            _CRC.pack_into(out, CRC_OFFSET, crc32c(view[ATTRIBUTES_OFFSET:]))
    return ValidationResult(out, RecordBatch(bytes(out)),
                            now if log_append_time else NO_TIMESTAMP, max_timestamp,
                            last_offset, False)


def _rebuild(batch: RecordBatch, records: list[Record], first_offset: int, leader_epoch: int,
             codec: Codec, log_append_time: int | None) -> bytes:
    builder = RecordBatchBuilder(
        base_offset=first_offset, codec=codec,
        timestamp_type=(TimestampType.LOG_APPEND_TIME if log_append_time is not None
                        else TimestampType.CREATE_TIME),
        log_append_time=log_append_time, producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
        is_transactional=batch.is_transactional, is_control=batch.is_control,
        partition_leader_epoch=leader_epoch)
    for offset, record in enumerate(records, first_offset):
        builder.append_with_offset(offset, record.timestamp, record.key, record.value,
                                   record.headers)
    return builder.build()


__all__ = ["validate_and_assign_offsets", "single_batch", "target_codec", "ValidationResult",
           "InvalidRecordError", "RecordTooLargeError", "RecordBatchTooLargeError",
           "RecordValidationError", "RecordError", "UnsupportedForMessageFormatError"]
