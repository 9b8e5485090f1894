"""Text for the offset tools' sections: the lines Kafka's tools print.

- ``get-offsets``: ``kafka-get-offsets``' ``topic:partition:offset`` per row.
- ``delete-records``: ``kafka-delete-records``' report, ``partition: t-0\tlow_watermark: N``
  per partition.
"""

from __future__ import annotations

from typing import TextIO

from . import Section


def render_get_offsets(section: Section, out: TextIO) -> None:
    for row in section.items:
        out.write(f"{row['topic']}:{row['partition']}:{row['offset']}\n")


def render_delete_records(section: Section, out: TextIO) -> None:
    """Kafka's report after executing; the same lines under a plan's heading otherwise."""
    executed = section.text.get("executed", False)  # type: ignore[attr-defined]
    if executed:
        out.write("Executing records delete operation\nRecords delete operation completed:\n")
    else:
        out.write("Records delete plan (nothing changed; --execute deletes):\n")
    for row in section.items:
        out.write(f"partition: {row['topic']}-{row['partition']}\t"
                  f"low_watermark: {row['lowWatermark']}\n")
