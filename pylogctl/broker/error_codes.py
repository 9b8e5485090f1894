"""Kafka's protocol error codes (``Errors.java``) the broker answers with, and the mapping from
the storage engine's exceptions to them, kept in one place."""

from __future__ import annotations

import enum

from ..errors import CorruptRecordError
from ..storage.log import OffsetOutOfRangeError
from ..storage.log_validator import (InvalidRecordError, RecordBatchTooLargeError,
                                     RecordTooLargeError, RecordValidationError,
                                     UnsupportedForMessageFormatError)
from ..storage.producer_append import (InvalidProducerEpochError, InvalidTxnStateError,
                                       OutOfOrderSequenceError,
                                       TransactionCoordinatorFencedError)


class Errors(enum.IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    OFFSET_METADATA_TOO_LARGE = 12
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    INVALID_RECORD = 87
    UNSTABLE_OFFSET_COMMIT = 88
    TRANSACTION_COORDINATOR_FENCED = 52
    GROUP_ID_NOT_FOUND = 69
    NON_EMPTY_GROUP = 68
    PRODUCER_FENCED = 90
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    UNKNOWN_TOPIC_ID = 100
    TRANSACTIONAL_ID_NOT_FOUND = 105
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    INVALID_REGULAR_EXPRESSION = 128


_BY_EXCEPTION: tuple[tuple[type[BaseException], Errors], ...] = (
    (RecordValidationError, Errors.INVALID_RECORD),  # refined below for timestamps
    (InvalidRecordError, Errors.INVALID_RECORD),
    (RecordTooLargeError, Errors.MESSAGE_TOO_LARGE),
    (RecordBatchTooLargeError, Errors.RECORD_LIST_TOO_LARGE),
    (UnsupportedForMessageFormatError, Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT),
    (CorruptRecordError, Errors.CORRUPT_MESSAGE),
    (OutOfOrderSequenceError, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER),
    (InvalidProducerEpochError, Errors.INVALID_PRODUCER_EPOCH),
    (InvalidTxnStateError, Errors.INVALID_TXN_STATE),
    (TransactionCoordinatorFencedError, Errors.TRANSACTION_COORDINATOR_FENCED),
    (OffsetOutOfRangeError, Errors.OFFSET_OUT_OF_RANGE),
    (OSError, Errors.KAFKA_STORAGE_ERROR),
)


def error_for(exc: BaseException) -> Errors:
    """The error code Kafka answers an append or read failure with."""
    if isinstance(exc, RecordValidationError) and exc.invalid_timestamp:
        return Errors.INVALID_TIMESTAMP
    for kind, code in _BY_EXCEPTION:
        if isinstance(exc, kind):
            return code
    return Errors.UNKNOWN_SERVER_ERROR
