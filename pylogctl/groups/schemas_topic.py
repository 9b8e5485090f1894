"""The schemas of a Schema Registry, read from its ``_schemas`` topic in the log dirs.

Confluent's Schema Registry keeps its state in one compacted topic (``kafkastore.topic``,
``_schemas`` by default), written by its ``KafkaStore``: keys and values are JSON. A ``SCHEMA``
key (``{"keytype": "SCHEMA", "subject", "version", "magic"}``) holds a schema version
(``{"subject", "version", "id", "schema", "schemaType", "references", "deleted"}``; no
``schemaType`` means AVRO); a tombstone removes it (a hard delete); a ``DELETE_SUBJECT``
record marks the subject's versions up to its ``version`` deleted (a soft delete). The latest
record of a key wins, as the registry's reader thread applies them in offset order.

A soft-deleted version still answers for its id, as the registry serves it by id ("consumers
should be able to access the schemas by id", ``KafkaStoreMessageHandler``); a hard-deleted one
does not. Ids are per context (subjects named ``:.ctx:name``): the default context's is
preferred, as serializers without a context write its ids. Other key types (``CONFIG``,
``MODE``, ``NOOP``, ...) say nothing about schemas and are skipped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import PylogctlError, UsageError
from ..storage.file_records import FileRecords
from ..storage.log_dir_layout import child_log_dirs, is_log_dir, log_segments
from .replicas import LogDirs

TOPIC = "_schemas"  # Schema Registry's default kafkastore.topic
AVRO, PROTOBUF, JSON = "AVRO", "PROTOBUF", "JSON"  # schemaType values


@dataclass(frozen=True)
class SchemaReference:
    """A schema another one imports: its name there (a .proto file, an Avro type) and the
    subject version that holds it."""

    name: str
    subject: str
    version: int


@dataclass(frozen=True)
class RegisteredSchema:
    """One subject version as the registry stores it."""

    id: int
    subject: str
    version: int
    schema_type: str
    schema: str
    references: tuple[SchemaReference, ...] = ()
    deleted: bool = False

    @property
    def in_default_context(self) -> bool:
        return not self.subject.startswith(":.")


@dataclass
class SchemaStore:
    """The registry's schemas by subject version; ``get`` answers by id."""

    versions: dict[tuple[str, int], RegisteredSchema] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    found: bool = True  # False when the log dirs hold no partition of the topic
    topic: str = TOPIC
    hard_deleted: set[int] = field(default_factory=set)  # ids whose versions were tombstoned

    def get(self, schema_id: int) -> RegisteredSchema | None:
        """The schema with this id (None when no live or soft-deleted version has it)."""
        held = [s for s in self.versions.values() if s.id == schema_id]
        if not held:
            return None
        return min(held, key=lambda s: (not s.in_default_context, s.deleted, s.subject,
                                        s.version))

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        return self.versions.get((subject, version))

    def apply(self, key: bytes | None, value: bytes | None, where: str) -> None:
        """One record of the topic, in offset order."""
        try:
            k = json.loads(key) if key is not None else None
            v = json.loads(value) if value is not None else None
        except ValueError:
            self.notes.append(f"{where}: a record whose key or value is not JSON, skipped")
            return
        if not isinstance(k, dict):
            return
        keytype = k.get("keytype")
        try:
            if keytype == "SCHEMA":
                subject_version = (k["subject"], int(k["version"]))
                if v is None:
                    gone = self.versions.pop(subject_version, None)
                    if gone is not None:
                        self.hard_deleted.add(gone.id)
                else:
                    self.versions[subject_version] = _schema(v)
            elif keytype == "DELETE_SUBJECT" and isinstance(v, dict):
                subject, last = v["subject"], int(v["version"])
                for (s, ver), schema in list(self.versions.items()):
                    if s == subject and ver <= last:
                        self.versions[s, ver] = _replace_deleted(schema)
        except (KeyError, TypeError, ValueError) as exc:
            self.notes.append(f"{where}: a {keytype} record without its fields ({exc}), "
                              f"skipped")


def _schema(v: dict[str, Any]) -> RegisteredSchema:
    refs = tuple(SchemaReference(r["name"], r["subject"], int(r["version"]))
                 for r in v.get("references") or ())
    return RegisteredSchema(int(v["id"]), v["subject"], int(v["version"]),
                            v.get("schemaType") or AVRO, v["schema"], refs,
                            bool(v.get("deleted", False)))


def _replace_deleted(s: RegisteredSchema) -> RegisteredSchema:
    return RegisteredSchema(s.id, s.subject, s.version, s.schema_type, s.schema, s.references,
                            True)


def load_schemas(log_dirs: LogDirs, topic: str = TOPIC) -> SchemaStore:
    """The schemas in ``topic`` of ``log_dirs`` (each partition from its chosen replica; a
    corrupt batch ends that partition's reading, with a note)."""
    store = SchemaStore(topic=topic)
    partitions = log_dirs.partitions(topic)
    store.found = bool(partitions)
    for partition in partitions:
        choice = log_dirs.choose(topic, partition)
        if choice is None:
            continue
        replica = choice.chosen
        start, end = replica.log_start_offset, replica.log_end.offset
        for _, segment in log_segments(replica.path):
            try:
                with FileRecords(segment) as records:
                    for batch in records.batches():
                        if batch.is_control or batch.last_offset < start:
                            continue
                        if batch.base_offset >= end:
                            break
                        for record in batch.records():
                            if start <= record.offset < end:
                                store.apply(record.key, record.value,
                                            f"{segment} offset {record.offset}")
            except PylogctlError as exc:
                store.notes.append(f"{segment}: {exc}; {topic}-{partition} read up to there")
                break
    return store


def log_dirs_holding(paths: Iterable[str | os.PathLike[str]]) -> LogDirs:
    """The log dirs that hold ``paths``: log dirs and dirs of log dirs as they are, a partition
    dir's parent, a segment file's partition dir's parent (a dumped file's ``_schemas`` topic
    is its log dir's)."""
    found: list[str] = []
    for p in map(os.fspath, paths):
        if "://" in p:
            raise UsageError(f"The schema decoders read their schemas from local log dirs; "
                             f"{p} is not one")
        path = os.path.abspath(p)
        if os.path.isfile(path):
            path = os.path.dirname(os.path.dirname(path))
        elif os.path.isdir(path) and not is_log_dir(path) and not child_log_dirs(path):
            path = os.path.dirname(path)
        if os.path.isdir(path) and (is_log_dir(path) or child_log_dirs(path)):
            found.append(path)
    if not found:
        raise UsageError(f"The schema decoders need the log dirs that hold the schemas: none of "
                         f"{', '.join(map(os.fspath, paths))} is in one")
    return LogDirs(list(dict.fromkeys(found)))
