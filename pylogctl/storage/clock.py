"""The wall clock in Kafka's unit, milliseconds since the epoch (``Time.SYSTEM.milliseconds()``):
one function, so every ``now_ms`` that defaults to "now" reads the same clock."""

from __future__ import annotations

import time


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000
