"""``pylogctl delete-records``: Kafka's ``kafka-delete-records`` (DeleteRecordsCommand) on a
stopped cluster's log dirs.

The partitions come from Kafka's JSON file, ``{"partitions": [{"topic": "t", "partition": 0,
"offset": 10}], "version": 1}`` (DeleteRecordsCommand's parse: ``version`` 1 when absent, any
other refused; a partition named twice refused), or from ``--topic/--partition/--offset``.
Topic configs (compact-only topics refuse) come from the same sources as ``pylogctl config``.
The rules and the work are :mod:`pylogctl.groups.delete_records`'; this module reads the
request and shapes the rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import FileUnreadableError, UsageError
from ..groups.delete_records import PartitionDeletion, execute, plan_deletions
from ..format.varint import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from ..groups.replicas import LogDirs
from ..storage.lock import ensure_unlocked
from .config import ConfigOptions, TopicConfigs

Request = tuple[str, int, int]


def parse_offset_json(text: str, source: str) -> list[Request]:
    """DeleteRecordsCommand's ``parseOffsetJsonStringWithoutDedup``, then its duplicate check;
    errors name ``source`` and, for bad JSON, the position."""
    try:
        js = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}: The input string is not a valid JSON: {exc.msg} (line "
                         f"{exc.lineno} column {exc.colno}, byte position {exc.pos})",
                         path=source) from None
    if not isinstance(js, dict):
        raise UsageError(f"{source}: the JSON is not an object", path=source)
    version = js.get("version", 1)
    if version != 1 or isinstance(version, bool):
        raise UsageError(f"{source}: Not supported version field value {version}", path=source)
    partitions = js.get("partitions")
    if partitions is None:
        raise UsageError(f"{source}: Missing partitions field", path=source)
    if not isinstance(partitions, list):
        raise UsageError(f"{source}: partitions is not an array", path=source)
    out: list[Request] = []
    for i, p in enumerate(partitions):
        where = f"{source}: partitions[{i}]"
        if not isinstance(p, dict):
            raise UsageError(f"{where} is not an object", path=source)
        for name, kind in (("topic", str), ("partition", int), ("offset", int)):
            if name not in p:
                raise UsageError(f"{where}: No such field exists: '{name}'", path=source)
            value = p[name]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise UsageError(f"{where}: {name} {json.dumps(value)} is not "
                                 f"{'a string' if kind is str else 'an integer'}", path=source)
        if not (INT32_MIN <= p["partition"] <= INT32_MAX
                and INT64_MIN <= p["offset"] <= INT64_MAX):
            raise UsageError(f"{where}: a number out of range", path=source)
        out.append((p["topic"], p["partition"], p["offset"]))
    seen: dict[tuple[str, int], int] = {}
    for t, p, _ in out:
        seen[(t, p)] = seen.get((t, p), 0) + 1
    duplicates = [f"{t}-{p}" for (t, p), n in seen.items() if n > 1]
    if duplicates:
        raise UsageError(f"{source}: Offset json file contains duplicate topic partitions: "
                         f"{','.join(duplicates)}", path=source)
    return out


def read_offset_json(path: str) -> list[Request]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise FileUnreadableError(f"Cannot read {path}: {getattr(exc, 'strerror', exc)}",
                                  path=path) from None
    return parse_offset_json(text, path)


@dataclass(frozen=True)
class DeleteRecordsOptions:
    requests: tuple[Request, ...]
    execute: bool = False
    backup_dir: str | None = None
    config: ConfigOptions = field(default_factory=ConfigOptions)


class DeleteRecords:
    """The plan, made (and every log dir checked unlocked) on construction; :meth:`run`
    executes it when asked."""

    def __init__(self, paths: list[str], options: DeleteRecordsOptions) -> None:
        self.options = options
        self.log_dirs = LogDirs(paths)
        configs = TopicConfigs([d.path for d in self.log_dirs.log_dirs], options.config)
        self.deletions = plan_deletions(
            self.log_dirs, list(options.requests),
            lambda log_dir, topic: configs.sources(log_dir).topic(topic).log_config)
        for path in dict.fromkeys(r.log_dir for d in self.deletions for r in d.replicas):
            ensure_unlocked(path)

    def run(self) -> list[PartitionDeletion]:
        if self.options.execute:
            execute(self.log_dirs, self.deletions, self.options.backup_dir)
        return self.deletions


def mismatches(deletions: list[PartitionDeletion]) -> list[str]:
    """Replicas where the deletion did not do what the plan said (a bug if any): the plan is
    made on the replica read, and the in-step replicas hold the same log."""
    return [f"{w.partition_dir}: {field} differs from the plan"
            for d in deletions for w in d.written
            for field in ("low_watermark", "deleted", "segments")
            if getattr(w.deletion, field) != getattr(d.plan, field)]


def deletion_rows(deletions: list[PartitionDeletion], executed: bool) -> list[dict[str, Any]]:
    rows = []
    for d in deletions:
        done = d.written[0].deletion if d.written else d.plan
        rows.append({"topic": d.topic, "partition": d.partition, "offset": d.offset,
                     "lowWatermark": done.low_watermark,
                     "lowWatermarkBefore": done.log_start_offset_before,
                     "highWatermark": done.high_watermark,
                     "deletedSegments": [s.base_offset for s in done.deleted],
                     "bytesDeleted": sum(s.size for s in done.deleted),
                     "replicas": [r.path for r in d.replicas], "executed": executed})
    return rows


def details(d: PartitionDeletion, executed: bool) -> list[str]:
    """What happened (or would) to each replica, for stderr."""
    lines = []
    done = [(w.partition_dir, w.deletion) for w in d.written] if executed else [
        (r.path, d.plan) for r in d.replicas]
    for path, p in done:
        segments = ", ".join(str(s.base_offset) for s in p.deleted) or "none"
        lines.append(f"{path}: log start {p.log_start_offset_before} -> {p.low_watermark} "
                     f"(high watermark {p.high_watermark}); "
                     f"{'deleted' if executed else 'would delete'} segments: {segments}")
    lines += d.skipped
    for w in d.written:
        lines += [f"{w.partition_dir}: {u.checkpoint}: {_entry(u.old)} -> {_entry(u.new)}"
                  for u in w.checkpoint_updates]
        lines += list(w.notes)
    return lines


def _entry(offset: int | None) -> str:
    return "(no entry)" if offset is None else str(offset)
