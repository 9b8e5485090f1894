"""``pylogctl dump-segment`` and Kafka's ``kafka-dump-log`` on the same files, stdout compared.

Both tools run once per case over every file of the case (``--files A,B,...``, as runbooks call
them), Kafka in a JVM while pylogctl runs beside it; the outputs are split at each file's
``Dumping <path>`` line so a difference names its file, and is shown as a unified diff.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from kafka_jvm import KAFKA_VERSION, java_command, main_class

Selector = Callable[[Path], bool]


@dataclass(frozen=True)
class DumpCase:
    """Which files, with which options, against which Kafka release."""

    name: str
    select: Selector
    options: tuple[str, ...] = ()
    version: str = KAFKA_VERSION
    pylogctl_options: tuple[str, ...] | None = None  # when pylogctl spells it differently
    # Kafka's output as pylogctl follows it, where an older release had a known quirk that a
    # newer one fixed (listed in docs/commands/dump-segment.md's version table)
    normalize: Callable[[str], str] | None = None

    @property
    def ours(self) -> tuple[str, ...]:
        return self.options if self.pylogctl_options is None else self.pylogctl_options


@dataclass
class Comparison:
    files: list[Path]
    kafka: dict[str, str]
    ours: dict[str, str]
    kafka_stderr: str
    ours_stderr: str
    differing: list[str] = field(default_factory=list)

    @property
    def identical(self) -> int:
        return len(self.files) - len(self.differing)

    def report(self, limit: int = 60) -> str:
        out = [f"{len(self.differing)} of {len(self.files)} files differ from kafka-dump-log"]
        for path in self.differing[:5]:
            diff = difflib.unified_diff(self.kafka.get(path, "").splitlines(),
                                        self.ours.get(path, "").splitlines(),
                                        "kafka-dump-log", "pylogctl", lineterm="", n=1)
            out.extend(list(diff)[:limit])
        if self.kafka_stderr.strip():
            out.append("kafka-dump-log stderr (tail):\n" + self.kafka_stderr[-1500:])
        return "\n".join(out)


def scala_record_brace(text: str) -> str:
    """Kafka <= 4.0's Scala tool closed a magic 0/1 record line with a stray ``}`` after its crc;
    the Java rewrite (KAFKA-14579) dropped it, and pylogctl prints the newest line."""
    return re.sub(r"(isValid: (?:true|false) crc: \d+)\}", r"\1", text)


def suffix(*suffixes: str) -> Selector:
    return lambda p: p.name.endswith(suffixes)


def in_topic(topic: str, *suffixes: str) -> Selector:
    return lambda p: p.parent.name.rsplit("-", 1)[0] == topic and p.name.endswith(suffixes)


def files_for(roots: Iterable[Path], select: Selector) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file() and select(p))


def split_by_file(text: str) -> dict[str, str]:
    """``{path: its lines}`` at each ``Dumping <path>`` line (a file's header included)."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines(keepends=True):
        if line.startswith("Dumping "):
            current = line[len("Dumping "):].rstrip("\n")
        out.setdefault(current, []).append(line)
    return {k: "".join(v) for k, v in out.items()}


def compare(case: DumpCase, files: Sequence[Path]) -> Comparison:
    listed = ",".join(map(str, files))
    kafka = subprocess.Popen(java_command(main_class("kafka-dump-log", case.version),
                                          [*case.options, "--files", listed], case.version),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
    ours = subprocess.run([sys.executable, "-m", "pylogctl", "dump-segment", *case.ours,
                           "--files", listed], capture_output=True,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    k_out, k_err = kafka.communicate(timeout=600)
    kafka_text = k_out.decode("utf-8", "surrogateescape")
    if case.normalize is not None:
        kafka_text = case.normalize(kafka_text)
    ours_text = ours.stdout.decode("utf-8", "surrogateescape")
    result = Comparison(list(files), split_by_file(kafka_text), split_by_file(ours_text),
                        k_err.decode("utf-8", "replace"), ours.stderr.decode("utf-8", "replace"))
    for path in map(str, files):
        if result.kafka.get(path) != result.ours.get(path):
            result.differing.append(path)
    if result.kafka.get("", "") != result.ours.get("", ""):  # text before any file
        result.differing.append("")
    return result
