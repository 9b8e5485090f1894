"""A log position (Kafka's ``LogOffsetMetadata``): an offset plus, when known, where it is.

High watermark, log end offset and fetch positions carry the base offset of the segment
holding the offset and its byte position there, so a read can bound itself in bytes. When only
the offset is known (``message_offset_only``) segment comparisons answer False and byte
distances are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN_OFFSET = -1
UNKNOWN_FILE_POSITION = -1


@dataclass(frozen=True)
class LogOffsetMetadata:
    message_offset: int
    segment_base_offset: int = UNKNOWN_OFFSET
    relative_position_in_segment: int = UNKNOWN_FILE_POSITION

    @property
    def message_offset_only(self) -> bool:
        return (self.segment_base_offset == UNKNOWN_OFFSET
                and self.relative_position_in_segment == UNKNOWN_FILE_POSITION)

    def __str__(self) -> str:
        return (f"(offset={self.message_offset}, segment=[{self.segment_base_offset}:"
                f"{self.relative_position_in_segment}])")


UNKNOWN_OFFSET_METADATA = LogOffsetMetadata(-1)
