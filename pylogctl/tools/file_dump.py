"""The shape every dump shares: a section as :mod:`pylogctl.formatters` consume it.

``header`` is known up front, ``items`` streams, ``footer`` is complete once ``items`` is
consumed. ``error`` is fatal (the run stops, as kafka-dump-log's exceptions stop it);
``footer["corrupt"]`` is a problem reported for this file only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import PylogctlError


@dataclass
class FileDump:
    path: str
    kind: str
    header: dict[str, Any]
    items_key: str = "entries"
    footer: dict[str, Any] = field(default_factory=dict)
    error: PylogctlError | None = None

    @property
    def corrupt(self) -> str | None:
        """The one-line report for a corrupt (non-fatal) file, once ``items`` is consumed."""
        c = self.footer.get("corrupt")
        return None if c is None else c["message"]
