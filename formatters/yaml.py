"""YAML: the same document shapes as JSON, streamed item by item."""

from __future__ import annotations

from typing import Any, Iterable, TextIO

import yaml

from . import Content, Listing



class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The safe dumper, writing subclasses of the plain types as their base type: a
    ``JavaDouble`` (a float64 metadata field) as a float, a decoded record that also carries
    Kafka's text (``KafkaText``) as a mapping."""


_Dumper.add_multi_representer(float, yaml.representer.SafeRepresenter.represent_float)
_Dumper.add_multi_representer(dict, yaml.representer.SafeRepresenter.represent_dict)
_Dumper.add_multi_representer(str, yaml.representer.SafeRepresenter.represent_str)


def dump(obj: Any) -> str:
    """One YAML document: block style, keys in order, long strings never folded."""
    return yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                     allow_unicode=True, width=2**31 - 1)


def _indent(text: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(True))


def _sequence(items: Iterable[Any], w: Any, prefix: str) -> bool:
    """Each item as a ``- `` entry indented by ``prefix``; whether there were none."""
    empty = True
    for item in items:
        if empty:
            w("\n")
            empty = False
        w(_indent(dump([item]), prefix))
    return empty


class YamlFormatter:
    def write(self, content: Content, out: TextIO) -> None:
        w = out.write
        if isinstance(content, Listing):
            self._listing(content, w)
            return
        any_section = False
        for section in content:
            any_section = True
            lines = dump(section.header).splitlines(True) if section.header else []
            if lines:
                w("- " + lines[0])
                w(_indent("".join(lines[1:]), "  "))
                w(f"  {section.items_key}:")
            else:
                w(f"- {section.items_key}:")
            if _sequence(section.items, w, "  "):
                w(" []\n")
            if section.footer:
                w(_indent(dump(section.footer), "  "))
        if not any_section:
            w("[]\n")

    @staticmethod
    def _listing(listing: Listing, w: Any) -> None:
        if not listing.keyed:
            empty = True
            for section in listing.sections:
                for item in section.items:
                    empty = False
                    w(dump([item]))
            if empty:
                w("[]\n")
            return
        for section in listing.sections:
            w(f"{section.items_key}:")
            if _sequence(section.items, w, ""):
                w(" []\n")
