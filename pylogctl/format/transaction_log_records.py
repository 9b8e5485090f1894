"""The records of ``__transaction_state``: schemas, transaction states and a decoder.

The transaction coordinator keeps one record per transactional id: key type 0 holds the id, the
value the producer id/epoch, the state and the partitions of the ongoing transaction. The
schemas restate Kafka 4.4's ``TransactionLogKey.json`` / ``TransactionLogValue.json`` (value v1
is flexible and adds tagged fields: the producer ids and epoch of a KIP-890 epoch bump and the
client's ``transaction.version``).
"""

from __future__ import annotations

import enum
from typing import Any

from .coordinator_record import (CoordinatorRecord, CoordinatorRecordError, RecordType,
                                 UnknownRecordTypeError, decode_coordinator_record,
                                 encode_prefixed)
from .message import Field, Schema

TOPIC = "__transaction_state"

TRANSACTION_LOG_KEY = Schema("TransactionLogKey", (
    Field("TransactionalId", "string", versions="0"),
), valid="0")

TRANSACTION_LOG_VALUE = Schema("TransactionLogValue", (
    Field("ProducerId", "int64"),
    Field("PreviousProducerId", "int64", versions="1+", tag=0, default=-1),
    Field("NextProducerId", "int64", versions="1+", tag=1, default=-1),
    Field("ProducerEpoch", "int16"),
    Field("NextProducerEpoch", "int16", versions="1+", tag=3, default=-1),
    Field("TransactionTimeoutMs", "int32"),
    Field("TransactionStatus", "int8"),
    Field("TransactionPartitions", "[]PartitionsSchema", nullable="0+", fields=(
        Field("Topic", "string"), Field("PartitionIds", "[]int32"))),
    Field("TransactionLastUpdateTimestampMs", "int64"),
    Field("TransactionStartTimestampMs", "int64"),
    Field("ClientTransactionVersion", "int16", versions="1+", tag=2),
), flexible="1+", valid="0-1")

TRANSACTION_LOG = 0
RECORD_TYPES: dict[int, RecordType] = {
    TRANSACTION_LOG: RecordType(TRANSACTION_LOG, "TRANSACTION_LOG", TRANSACTION_LOG_KEY,
                                TRANSACTION_LOG_VALUE),
}


class TransactionState(enum.IntEnum):
    """``TransactionStatus`` ids; ``str()`` gives the name Kafka prints (its
    ``TransactionState.stateName()``, the admin client's state names)."""

    Empty = 0
    Ongoing = 1
    PrepareCommit = 2
    PrepareAbort = 3
    CompleteCommit = 4
    CompleteAbort = 5
    Dead = 6
    PrepareEpochFence = 7

    def __str__(self) -> str:
        return self.name


class TransactionLogRecord(CoordinatorRecord):
    """A decoded ``__transaction_state`` record (see :class:`CoordinatorRecord`)."""

    @property
    def transactional_id(self) -> str:
        return self.key["transactionalId"]

    @property
    def state(self) -> TransactionState | None:
        """The transaction state, or None for a tombstone or an id Kafka does not define."""
        if self.value is None:
            return None
        try:
            return TransactionState(self.value["transactionStatus"])
        except ValueError:
            return None


def decode_transaction_record(key: bytes, value: bytes | None) -> TransactionLogRecord:
    """Decode one ``__transaction_state`` record.

    Raises :class:`UnknownRecordTypeError` for a key type other than 0 and
    :class:`CoordinatorRecordError` for malformed bytes.
    """
    return decode_coordinator_record(key, value, RECORD_TYPES, TOPIC, TransactionLogRecord)


def encode_transaction_record(transactional_id: str, value_version: int | None = None,
                              value: dict[str, Any] | None = None) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes of a record; ``value=None`` makes a tombstone."""
    key = encode_prefixed(TRANSACTION_LOG, {"transactionalId": transactional_id},
                          TRANSACTION_LOG_KEY)
    if value is None:
        return key, None
    if value_version is None:
        raise ValueError("a value needs its version")
    return key, encode_prefixed(value_version, value, TRANSACTION_LOG_VALUE)


__all__ = ["TOPIC", "TRANSACTION_LOG_KEY", "TRANSACTION_LOG_VALUE", "RECORD_TYPES",
           "TransactionState", "TransactionLogRecord", "decode_transaction_record",
           "encode_transaction_record", "UnknownRecordTypeError", "CoordinatorRecordError"]
