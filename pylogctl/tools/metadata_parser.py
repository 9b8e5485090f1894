"""``--cluster-metadata-decoder``: kafka-dump-log's ``ClusterMetadataLogMessageParser``.

Metadata records have no key worth printing; the payload is
``{"type":"TOPIC_RECORD","version":0,"data":{...}}`` (version a JSON number), or, when the
record does not decode, ``Error at {offset}, skipping. {message}`` with the message Kafka's
exception would carry. Kafka hides the cause of a body decoding failure behind
``Failed to deserialize record with type {apiKey}``, so the same is printed here; the library
error keeps the detail.
"""

from __future__ import annotations

from ..errors import CorruptRecordError
from ..format.metadata_records import (MetadataRecordBodyError, UnknownMetadataTypeError,
                                       decode_metadata_record)
from ..format.record import Record
from .record_parsers import ParsedRecord

_UNSUPPORTED_VERSION = "org.apache.kafka.common.errors.UnsupportedVersionException"


def kafka_error_message(exc: CorruptRecordError) -> str:
    """The ``getMessage()`` of the exception Kafka's ``MetadataRecordSerde`` throws instead."""
    if isinstance(exc, UnknownMetadataTypeError):
        # MetadataParseException(cause) carries the cause's toString()
        return f"{_UNSUPPORTED_VERSION}: {exc.message}"
    if isinstance(exc, MetadataRecordBodyError):
        return f"Failed to deserialize record with type {exc.api_key}"
    return exc.message


class ClusterMetadataMessageParser:
    """Turn a ``__cluster_metadata`` record into what kafka-dump-log prints for it."""

    def parse(self, record: Record) -> ParsedRecord:
        if record.value is None:
            # Kafka dereferences the null buffer; the NullPointerException has no message
            return ParsedRecord(None, f"Error at {record.offset}, skipping. null")
        try:
            decoded = decode_metadata_record(record.value)
        except CorruptRecordError as exc:
            return ParsedRecord(None, f"Error at {record.offset}, skipping. "
                                      f"{kafka_error_message(exc)}")
        return ParsedRecord(None, decoded.to_json())
