"""``--cluster-metadata-decoder`` and ``--remote-log-metadata-decoder``: kafka-dump-log's
``ClusterMetadataLogMessageParser`` and ``RemoteMetadataLogMessageParser``.

Metadata records have no key worth printing; the payload is
``{"type":"TOPIC_RECORD","version":0,"data":{...}}`` (version a JSON number), or, when the
record does not decode, ``Error at {offset}, skipping. {message}`` with the message Kafka's
exception would carry. Kafka hides the cause of a body decoding failure behind
``Failed to deserialize record with type {apiKey}``, so the same is printed here; the library
error keeps the detail.

``__remote_log_metadata`` records are framed the same way; Kafka prints the ``toString()`` of the
object each becomes (:func:`pylogctl.format.remote_log_metadata_records.java_text`), or
``Error at offset {offset}, skipping. {message}``. In JSON/YAML output the record is the
cluster-metadata decoder's ``{"type", "version", "data"}``.
"""

from __future__ import annotations

from ..errors import CorruptRecordError
from ..format.metadata_records import (MetadataRecordBodyError, UnknownMetadataTypeError,
                                       decode_metadata_record)
from ..format.record import Record
from ..format.remote_log_metadata_records import (RemoteLogMetadataError,
                                                  decode_remote_log_metadata, java_text)
from .record_parsers import KafkaText, ParsedRecord

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


# A null value: the tool reads ``record.value().remaining()``, and the JVM's helpful
# NullPointerException message (JDK 14+, JEP 358) names the call.
_NULL_VALUE_NPE = ('Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
                   '"org.apache.kafka.common.record.internal.Record.value()" is null')


class RemoteLogMetadataMessageParser:
    """Turn a ``__remote_log_metadata`` record into what kafka-dump-log prints for it."""

    def parse(self, record: Record) -> ParsedRecord:
        if record.value is None:
            return ParsedRecord(None, f"Error at offset {record.offset}, skipping. "
                                      f"{_NULL_VALUE_NPE}")
        try:
            decoded = decode_remote_log_metadata(record.value)
            text = java_text(decoded)
        except RemoteLogMetadataError as exc:
            return ParsedRecord(None, f"Error at offset {record.offset}, skipping. {exc.message}")
        except CorruptRecordError as exc:
            return ParsedRecord(None, f"Error at offset {record.offset}, skipping. "
                                      f"{kafka_error_message(exc)}")
        return ParsedRecord(None, KafkaText(decoded.to_json(), text))
