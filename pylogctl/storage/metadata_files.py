"""Small metadata files of a log dir: ``meta.properties``, ``partition.metadata``,
``quorum-state`` and ``.kafka_cleanshutdown``.

``meta.properties`` is a Java properties file (``version=0`` with ``broker.id`` in ZooKeeper
mode, ``version=1`` with ``node.id`` in KRaft, plus ``cluster.id`` / ``directory.id``);
``partition.metadata`` is ``version: 0`` and ``topic_id: {uuid}`` lines; ``quorum-state`` and
the clean-shutdown marker (3.7+; empty before) are JSON.

``quorum-state`` is where a KRaft voter keeps its raft election state (Kafka's
``FileQuorumStateStore``): the epoch, the leader and the vote. Version 0 (static voters, from
``controller.quorum.voters``) also lists the voters; version 1 (KIP-853's dynamic quorum) names
the voted-for directory instead. A node that leads an epoch writes it before appending in that
epoch, so an epoch in the file is never below the last epoch of the log.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import CorruptRecordError
from .files import read_bytes


def _read_text(path: str) -> str:
    return read_bytes(path).decode("utf-8", "replace")


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Java-style ``key=value`` (or ``key: value``) lines; ``#``/``!`` comments skipped."""
    path = os.fspath(path)
    props: dict[str, str] = {}
    for line in _read_text(path).splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        for sep_pos, ch in enumerate(line):
            if ch in "=:":
                props[line[:sep_pos].strip()] = line[sep_pos + 1:].strip()
                break
        else:
            props[line] = ""
    return props


def read_partition_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"version": 0, "topicId": "..."}``; malformed files raise with the line at fault."""
    path = os.fspath(path)
    text = _read_text(path)
    props = {}
    position = 0
    for line in text.splitlines(True):
        if line.strip():
            key, sep, value = line.partition(":")
            if not sep:
                raise CorruptRecordError(f"Malformed line in partition metadata file ({path}): "
                                         f"'{line.strip()}'", path=path, position=position)
            props[key.strip()] = value.strip()
        position += len(line.encode())
    if "version" not in props or "topic_id" not in props:
        raise CorruptRecordError(f"Partition metadata file {path} lacks version or topic_id",
                                 path=path, position=0)
    try:
        version = int(props["version"])
    except ValueError:
        raise CorruptRecordError(f"Malformed version in partition metadata file ({path}): "
                                 f"'{props['version']}'", path=path, position=0) from None
    return {"version": version, "topicId": props["topic_id"]}


def read_json_file(path: str | os.PathLike[str], allow_empty: bool = False) -> dict[str, Any] | None:
    """A JSON document; ``None`` for an empty file when that is legal (old clean-shutdown files)."""
    path = os.fspath(path)
    text = _read_text(path)
    if not text.strip():
        if allow_empty:
            return None
        raise CorruptRecordError(f"Empty file {path}", path=path, position=0)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptRecordError(f"Invalid JSON in {path}: {exc.msg}", path=path,
                                 position=exc.pos) from None
    if not isinstance(doc, dict):
        raise CorruptRecordError(f"Expected a JSON object in {path}", path=path, position=0)
    return doc


QUORUM_STATE = "quorum-state"
_NO_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID


def quorum_state_epoch(metadata_dir: str | os.PathLike[str]) -> int:
    """The epoch of a metadata log dir's ``quorum-state`` (-1 when there is none)."""
    path = os.path.join(os.fspath(metadata_dir), QUORUM_STATE)
    if not os.path.exists(path):
        return -1
    doc = read_json_file(path)
    return int(doc.get("leaderEpoch", -1)) if doc else -1


def leader_quorum_state(metadata_dir: str | os.PathLike[str], leader_id: int,
                        epoch: int) -> dict[str, Any]:
    """The ``quorum-state`` of a sole voter leading ``epoch``, in the version the file
    already has (0 when there is none), as ``QuorumStateData``'s JSON converter writes it."""
    path = os.path.join(os.fspath(metadata_dir), QUORUM_STATE)
    old = read_json_file(path) if os.path.exists(path) else None
    if old is not None and old.get("data_version") == 1:
        return {"leaderId": leader_id, "leaderEpoch": epoch, "votedId": -1,
                "votedDirectoryId": _NO_DIRECTORY, "data_version": 1}
    return {"clusterId": "", "leaderId": leader_id, "leaderEpoch": epoch, "votedId": -1,
            "appliedOffset": 0, "currentVoters": [{"voterId": leader_id}], "data_version": 0}


def format_quorum_state(doc: dict[str, Any]) -> bytes:
    """Jackson's compact JSON, as the file holds it."""
    return json.dumps(doc, separators=(",", ":")).encode()
