"""What a read from the log returns (Kafka's ``FetchDataInfo``).

The bytes start at a batch boundary, so they may hold records below the requested offset (the
rest of the batch containing it); ``first_entry_incomplete`` says the first batch was cut by
the size limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from .log_offset_metadata import LogOffsetMetadata
from .transaction_index import AbortedTxn


@dataclass(frozen=True)
class FetchDataInfo:
    fetch_offset_metadata: LogOffsetMetadata
    records: bytes = b""
    first_entry_incomplete: bool = False
    aborted_transactions: tuple[AbortedTxn, ...] | None = None

    @classmethod
    def empty(cls, fetch_offset: int) -> "FetchDataInfo":
        return cls(LogOffsetMetadata(fetch_offset))
