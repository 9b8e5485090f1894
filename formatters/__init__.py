"""Output formatters, installed as ``pylogctl.formatters``.

Every subcommand hands its results to one of these as *sections*: objects with a ``kind``, a
``header`` dict, an ``items_key`` naming the list they stream (``"batches"``, ...), a lazy
``items`` iterator of dicts, and a ``footer`` dict that is complete once ``items`` is consumed.
Formatters know nothing but this plain data; they stream, so a multi-GB segment is rendered in
bounded memory. Whether anything may be styled (rich tables on a terminal) is decided in one
place, :mod:`.color`.

What a command gives scripts is one of two documents. Most commands report on files, so their
JSON and YAML is the list of sections, each an object with its items inside. Commands whose
result *is* rows (``scan``, ``stats``, ``consumer-groups``) hand the formatters a
:class:`Listing` instead, and scripts get the rows themselves: a bare list, or for several
kinds of row (``stats``) an object holding a list per kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Protocol, Sequence, TextIO, Union


class Section(Protocol):
    kind: str
    header: dict[str, Any]
    items_key: str
    footer: dict[str, Any]

    @property
    def items(self) -> Iterator[dict[str, Any]]: ...


@dataclass
class Listing:
    """Sections that are plain rows (their header and footer are not data).

    JSON and YAML: the rows of every section in one list, or, when ``keyed``, an object
    mapping each section's ``items_key`` to its rows. NDJSON: a row per line, tagged
    ``"type": kind`` when keyed. Text and table show the sections as they show any.
    """

    sections: Sequence[Section]
    keyed: bool = False


Content = Union[Iterable[Section], Listing]


def sections_of(content: Content) -> Iterable[Section]:
    """The sections of either document, for formatters that lay both out alike."""
    return content.sections if isinstance(content, Listing) else content


class Formatter(Protocol):
    def write(self, content: Content, out: TextIO) -> None: ...


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
