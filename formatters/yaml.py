"""YAML: the same document shape as JSON, streamed item by item."""

from __future__ import annotations

from typing import Any, Iterable, TextIO

import yaml

from . import Section

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump(obj: Any) -> str:
    """One YAML document: block style, keys in order, long strings never folded."""
    return yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                     allow_unicode=True, width=2**31 - 1)


def _indent(text: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(True))


class YamlFormatter:
    def write(self, sections: Iterable[Section], out: TextIO) -> None:
        w = out.write
        any_section = False
        for section in sections:
            any_section = True
            lines = dump(section.header).splitlines(True) if section.header else []
            if lines:
                w("- " + lines[0])
                w(_indent("".join(lines[1:]), "  "))
                w(f"  {section.items_key}:")
            else:
                w(f"- {section.items_key}:")
            empty = True
            for item in section.items:
                if empty:
                    w("\n")
                    empty = False
                w(_indent(dump([item]), "  "))
            if empty:
                w(" []\n")
            if section.footer:
                w(_indent(dump(section.footer), "  "))
        if not any_section:
            w("[]\n")
