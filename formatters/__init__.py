"""Output formatters, installed as ``pylogctl.formatters``.

Every subcommand hands its results to one of these as *sections*: objects with a ``kind``, a
``header`` dict, an ``items_key`` naming the list they stream (``"batches"``, ...), a lazy
``items`` iterator of dicts, and a ``footer`` dict that is complete once ``items`` is consumed.
Formatters know nothing but this plain data; they stream, so a multi-GB segment is rendered in
bounded memory. Whether anything may be styled (rich tables on a terminal) is decided in one
place, :mod:`.color`.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Protocol, TextIO


class Section(Protocol):
    kind: str
    header: dict[str, Any]
    items_key: str
    footer: dict[str, Any]

    @property
    def items(self) -> Iterator[dict[str, Any]]: ...


class Formatter(Protocol):
    def write(self, sections: Iterable[Section], out: TextIO) -> None: ...


FORMATS = ("text", "table", "json", "ndjson", "yaml")


def get_formatter(name: str) -> Formatter:
    """The formatter for an ``--output`` value."""
    if name == "text":
        from . import text
        return text.TextFormatter()
    if name == "table":
        from . import table
        return table.TableFormatter()
    if name == "json":
        from . import json
        return json.JsonFormatter()
    if name == "ndjson":
        from . import ndjson
        return ndjson.NdjsonFormatter()
    if name == "yaml":
        from . import yaml
        return yaml.YamlFormatter()
    raise ValueError(f"unknown output format {name!r}; choose from {', '.join(FORMATS)}")
