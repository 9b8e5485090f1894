"""A local mirror of a log dir tree in a remote store, for code that reads files by path.

Most of pylogctl reads log dirs through the local file API (listing partition dirs, mapping
indexes, parsing checkpoints). A remote tree is mirrored into a private temporary folder
with the same relative layout (so partition dir names parse as they do on a broker): one
recursive listing (:func:`~.filesystems.list_tree`), then the files fetched in parallel.

In ``lazy`` mode, for the commands that read files by path, the segments and indexes
(``.log``, ``.index``, ``.timeindex``) of a partition held by one log dir are placeholders too,
fetched whole by :func:`materialize` when something opens them (the storage layer's opening
functions call it): a command fetches the segments it reads, not the fleet's.

In ``sparse`` mode, for scans that read segments by byte ranges themselves and plan from the
listing, the files inside partition dirs are only sparse placeholders of the listed size (the
segments; the files beside them are not even that, :func:`is_placeholder` knows them): their
bytes stay in the store, and the planner reads an index through :func:`read_through`
only when a split needs it. Fetched whole are the log dirs' own files (``meta.properties``,
checkpoints), the partitions of the topics in ``full_topics``, and, for a partition found in
several log dirs, its files but the earlier segments (choosing among replicas reads their
leader epochs and log ends; with ``replica_files=False``, for a plan reading every replica,
those stay in the store too). So planning a fleet of thousands of partitions costs its
listings, not a request per file.

A URL naming one file mirrors that file and the other files of its segment (same base name:
``.index`` beside ``.log``), not its whole folder. Mirrors live until the process exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlparse

from . import filesystems
from .naming import LOG_SUFFIX, parse_partition_dir_name

MODES = ("all", "lazy", "sparse")
LAZY_SUFFIXES = (".log", ".index", ".timeindex")
_PARALLEL = 16
_mirrors: dict[tuple[str, str, frozenset[str], bool], "Mirror"] = {}
_scratch: list[str] = []


@dataclass
class Mirror:
    """The tree at ``url`` mirrored at ``root``; ``path`` is the local path of the URL asked
    for (``root`` itself, or a file in it); ``placeholders`` are the files left remote."""

    url: str
    root: str
    files: dict[str, int]
    path: str
    placeholders: set[str] = field(default_factory=set)

    def url_of(self, path: str) -> str | None:
        """The URL a path inside the mirror stands for (None: not inside it)."""
        path = os.path.abspath(path)
        if path == self.root:
            return self.url
        if path.startswith(self.root + os.sep):
            return filesystems.join(self.url, os.path.relpath(path, self.root).replace(os.sep,
                                                                                         "/"))
        return None


def _scratch_dir() -> str:
    if not _scratch:
        _scratch.append(tempfile.mkdtemp(prefix="pylogctl-remote-"))
        atexit.register(shutil.rmtree, _scratch[0], True)
    return _scratch[0]


def _left_remote(files: dict[str, int], full_topics: frozenset[str],
                 replica_files: bool = True) -> set[str]:
    """The files of a sparse mirror that stay in the store: those inside partition dirs,
    except for the topics asked for whole and, where several log dirs hold a partition and
    ``replica_files`` asks, all but the earlier segments (its checkpoints, indexes and last
    segment make its log end)."""
    # a partition dir holds no folders: a log dir named like one (kafka-logs-1) keeps its files
    holders = {"/".join(rel.split("/")[:i]) for rel in files
               for i in range(1, rel.count("/"))}
    by_folder: dict[str, list[str]] = {}
    for rel in files:
        parts = rel.split("/")
        if len(parts) >= 2 and parse_partition_dir_name(parts[-2]) is not None \
                and rel.rsplit("/", 1)[0] not in holders:
            by_folder.setdefault(rel.rsplit("/", 1)[0], []).append(rel)
    copies: dict[str, int] = {}  # partition dir name -> log dirs holding it
    for folder in by_folder:
        name = folder.rsplit("/", 1)[-1]
        copies[name] = copies.get(name, 0) + 1
    remote = set()
    for folder, rels in by_folder.items():
        name = folder.rsplit("/", 1)[-1]
        if parse_partition_dir_name(name).topic in full_topics:
            continue
        if copies[name] == 1 or not replica_files:
            remote.update(rels)
            continue
        logs = [r for r in rels if r.endswith(LOG_SUFFIX)]
        last = max(logs, default=None)  # zero-padded base offsets: the last sorts last
        remote.update(r for r in logs if r != last)
    return remote


def materialize(path: str | os.PathLike[str]) -> None:
    """Fetch a file a mirror left in the store into its place, before it is opened: a lazy
    mirror's segments, or a segment of a sparse one that is read as a file, not by ranges
    (``stats`` reads the log ends of partitions with committed offsets)."""
    if not _mirrors:
        return
    path = os.fspath(path)
    for m in _mirrors.values():
        if path in m.placeholders:
            url = m.url_of(path)
            if url is not None:
                data = filesystems.read_whole(url)
                with open(path, "wb") as f:
                    f.write(data)
            m.placeholders.discard(path)
            return


def read_through(path: str) -> bytes | None:
    """The bytes of a file a sparse mirror left in the store (one ranged read of the whole
    object), or None when ``path`` is not such a file."""
    for m in _mirrors.values():
        if path in m.placeholders:
            url = m.url_of(path)
            return filesystems.read_whole(url) if url is not None else None
    return None


def mirror(url: str, mode: str = "all", full_topics: frozenset[str] = frozenset(),
           replica_files: bool = True) -> Mirror:
    """The local mirror of ``url`` (made once per process and mode)."""
    key = (url.rstrip("/"), mode, full_topics, replica_files)
    if key in _mirrors:
        return _mirrors[key]
    url = key[0]
    parsed = urlparse(url)
    root = os.path.join(_scratch_dir(), str(len(_mirrors)), parsed.netloc,
                        *[p for p in parsed.path.split("/") if p])
    files = filesystems.list_tree(url)
    if "" in files:  # a single file: it and its segment's other files
        base, _, name = url.rpartition("/")
        stem = name.split(".", 1)[0]
        files = {r: n for r, n in filesystems.list_tree(base).items()
                 if "/" not in r and r.split(".", 1)[0] == stem}
        result = Mirror(base, os.path.dirname(root), files, root)
    else:
        base = url
        result = Mirror(url, root, files, root)
    if mode == "sparse":
        remote = _left_remote(files, full_topics, replica_files)
    elif mode == "lazy":
        remote = {r for r in _left_remote(files, frozenset())
                  if r.endswith(LAZY_SUFFIXES)}
    else:
        remote = set()
    # a sparse mirror writes no file for what stays remote beside a segment (indexes,
    # checkpoints): a fleet's mirror costs a file per partition dir, not per file
    with_logs = {r.rsplit("/", 1)[0] for r in remote if r.endswith(LOG_SUFFIX)} \
        if mode == "sparse" else set()
    fetch = []
    made: set[str] = set()
    for rel, size in files.items():
        local = os.path.join(result.root, *rel.split("/"))
        folder = os.path.dirname(local)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        if rel in remote:
            if rel.endswith(LOG_SUFFIX) or rel.rsplit("/", 1)[0] not in with_logs:
                with open(local, "wb") as f:
                    f.truncate(size)
            result.placeholders.add(local)
        elif size == 0:
            open(local, "wb").close()
        else:
            fetch.append((filesystems.join(base, rel), local, size))

    def get(item: tuple[str, str, int]) -> None:
        remote_url, local, size = item
        data = filesystems.read_whole(remote_url)
        with open(local, "wb") as f:
            f.write(data)

    with ThreadPoolExecutor(_PARALLEL) as pool:
        list(pool.map(get, fetch))
    _mirrors[key] = result
    return result


def url_of(path: str) -> str | None:
    """The URL a path inside any mirror of this process stands for."""
    for m in _mirrors.values():
        found = m.url_of(path)
        if found is not None:
            return found
    return None


def is_placeholder(path: str) -> bool:
    """Whether ``path`` is a file a sparse mirror left in the store."""
    return any(path in m.placeholders for m in _mirrors.values())


def mirrors() -> list[Mirror]:
    return list(_mirrors.values())
