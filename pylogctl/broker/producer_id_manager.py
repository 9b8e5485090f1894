"""Producer ids for InitProducerId (Kafka's ``ProducerIdManager``).

Kafka's controller hands brokers blocks of ids and records each block in the metadata log, so
an id is never given twice. This single-node broker keeps no such record; instead the first
id of a run is above every producer id found in the loaded logs' producer state and above
``wall-clock ms * 1024``, so ids keep growing across restarts (unless the clock goes back or a
run hands out more than 1024 ids per millisecond of its lifetime) and never collide with a
producer whose state a log still holds.
"""

from __future__ import annotations

from typing import Iterable

from ..storage.clock import wall_clock_ms


class ProducerIdManager:
    def __init__(self, ids_in_use: Iterable[int] = ()) -> None:
        floor = wall_clock_ms() << 10
        self._next = max([floor, *(i + 1 for i in ids_in_use)])

    def skip_past(self, ids_in_use: Iterable[int]) -> None:
        """Never hand out ``ids_in_use`` (those the transaction coordinator loaded)."""
        self._next = max([self._next, *(i + 1 for i in ids_in_use)])

    def next_id(self) -> int:
        producer_id = self._next
        self._next += 1
        return producer_id
