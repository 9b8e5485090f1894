"""A partition's segments as loading it would leave them, opened without writing anything.

Reads that search the segments (ListOffsets by time) must see the log a broker would serve,
but loading writes: it recovers segments, rebuilding their indexes. So the load is planned
(:func:`~pylogctl.storage.loader.log_loader.plan_load`, read-only) and each segment is opened
read-only: as it is when the load leaves it alone, and when the load recovers it, over its valid
bytes with empty indexes (lookups then scan from the start, which finds what rebuilt indexes lead
to) and the largest timestamp and its batch's last offset that recovery records, found by a
scan. A segment a split would create (an offset overflow) cannot be opened in place.
"""

from __future__ import annotations

import os

from ...errors import PylogctlError
from ..cleaner.cleaner_log import open_segment_read_only
from ..file_records import FileRecords
from .plan import LoadPlan, RecoverSegment
from ..log_config import LogConfig
from ..segment import LogSegment
from ..time_index import TimestampOffset
from ..truncation_plan import segment_bytes_after_load


def open_loaded_segments(plan: LoadPlan, config: LogConfig = LogConfig()) -> list[LogSegment]:
    """The segments of the log ``plan`` loads, read-only, oldest first (an empty segment the
    load would create is left out: it holds nothing). Close each with ``close_handlers``."""
    recovered = {s.base_offset for s in plan.steps if isinstance(s, RecoverSegment)}
    out: list[LogSegment] = []
    try:
        for base in plan.segments:
            path, start, size = segment_bytes_after_load(plan, base)
            if not os.path.exists(path):
                continue
            if start or path != os.path.join(plan.partition_dir, os.path.basename(path)):
                raise PylogctlError(f"segment {base} of {plan.partition_dir} is split off "
                                    f"another when loaded (an offset overflow): run `pylogctl "
                                    f"recover` first", path=path)
            if base not in recovered:
                out.append(open_segment_read_only(plan.partition_dir, base, config))
                continue
            segment = open_segment_read_only(plan.partition_dir, base, config, indexed=False,
                                             end=size)
            with FileRecords(path, end=size) as records:
                found = records.largest_timestamp_after(0)
            segment._max_timestamp_and_offset = (
                TimestampOffset(found.timestamp, found.offset) if found.offset >= 0
                else TimestampOffset(-1, base))
            out.append(segment)
    except BaseException:
        for segment in out:
            segment.close_handlers()
        raise
    return out
