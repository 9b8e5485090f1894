"""URLs on the command line: log dirs in object storage for every reading command.

Before a subcommand parses its arguments, every argument that is a remote URL (``s3://``,
``gs://``, ``abfs://``, ``hdfs://``; a comma-separated ``--files`` list too) is handled here,
in one place for all commands:

- a command that changes log dirs refuses it (exit 2): it needs the log dir's ``.lock``,
  which no object store has;
- ``scan`` and ``stats`` keep it: their engines plan from a sparse mirror and read segment
  byte ranges from the store, on this process or on Spark executors
  (:mod:`pylogctl.pipeline.plan`);
- every other command reads a lazy local mirror of it
  (:mod:`pylogctl.storage.remote_mirror`: one listing, the small files, and each segment or
  index when the command opens it), and its output and errors name the URL, not the mirror:
  paths print as the URL they came from, so a command's output on a bucket is its output on
  a local copy with the copy's path replaced by the URL.

``file://`` URLs are plain local paths, for every command.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

ENGINE_COMMANDS = ("scan", "stats")
WRITING_COMMANDS = ("recover", "truncate", "compact", "retention", "move", "delete-records",
                    "broker", "sample")
WRITING_OPTIONS = ("--execute", "--delete", "--delete-offsets")


def _subcommand(args: list[str]) -> tuple[str | None, list[str]]:
    """The subcommand and its arguments (the root's options take no values)."""
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            return arg, args[i + 1:]
    return None, []


def _writes(command: str, rest: list[str]) -> bool:
    if command in WRITING_COMMANDS:
        return True
    if command == "transactions" and "abort" in rest:
        return True
    return any(a.split("=", 1)[0] in WRITING_OPTIONS for a in rest)


def prepare(args: list[str]) -> tuple[list[str], Callable[[], None]]:
    """The arguments with remote URLs replaced as the command needs, and a function undoing
    the output mapping this installs (call it once the command is done)."""
    from ..storage import filesystems

    if not any("://" in a for a in args):
        return args, _nothing
    command, rest = _subcommand(args)
    out: list[str] = []
    remote = False
    for arg in args:
        head, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        pieces = value.split(",")
        if not any("://" in p for p in pieces):
            out.append(arg)
            continue
        new = []
        for piece in pieces:
            piece = filesystems.local_path(piece)
            if filesystems.is_url(piece):
                if command is None or _writes(command, rest):
                    from ..errors import UsageError

                    raise UsageError(f"{piece}: {command or 'this command'} changes log dirs "
                                     f"and needs their .lock, which an object store has not: "
                                     f"run it on a local copy")
                remote = True
                if command not in ENGINE_COMMANDS:
                    from ..storage.remote_mirror import mirror

                    piece = mirror(piece, "lazy").path
            new.append(piece)
        out.append(head + eq + ",".join(new))
    return out, (_map_output() if remote else _nothing)


def _nothing() -> None:
    pass


class _UrlWriter:
    """A text stream that writes mirror paths as the URLs they stand for (the mirrors made so
    far: ``scan`` and ``stats`` make theirs while they run)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        from ..storage.remote_mirror import mirrors

        # the longest root first: a mirror inside another's folder is replaced as itself
        for m in sorted(mirrors(), key=lambda m: -len(m.root)):
            if m.root in text:
                text = text.replace(m.root, m.url)
        return self._stream.write(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _map_output() -> Callable[[], None]:
    saved = sys.stdout, sys.stderr
    sys.stdout = _UrlWriter(sys.stdout)
    sys.stderr = _UrlWriter(sys.stderr)

    def restore() -> None:
        sys.stdout, sys.stderr = saved
    return restore
