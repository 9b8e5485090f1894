"""Text for the offset tools' sections: the lines Kafka's tools print.

- ``get-offsets``: ``kafka-get-offsets``' ``topic:partition:offset`` per row.
"""

from __future__ import annotations

from typing import TextIO

from . import Section


def render_get_offsets(section: Section, out: TextIO) -> None:
    for row in section.items:
        out.write(f"{row['topic']}:{row['partition']}:{row['offset']}\n")
