"""Run the pylogctl CLI and SIGKILL it at its N-th file-system mutation (a crash harness).

    python tests/crash/crashpoint.py --kill-at N [--under DIR]... -- <pylogctl args>
    python tests/crash/crashpoint.py --count FILE [--trace FILE] [--under DIR]... -- <args>

A ``sys.addaudithook`` hook watches the audit events CPython raises *before* a call that can
change the file system (the events table of the ``sys`` docs): ``open`` with a flag that writes,
creates, truncates or appends (``open()``, ``io.open`` and ``os.open`` all raise it), ``os.rename``
(``os.rename`` and ``os.replace``), ``os.remove`` (``os.remove``, ``os.unlink``), ``os.truncate``
(``os.truncate``, ``os.ftruncate``), ``os.mkdir``, ``os.rmdir``, ``os.link``, ``os.symlink``,
``os.chmod``/``os.chown``/``os.utime`` (and their ``f*`` forms) and ``mmap.__new__`` of a
writable file map. ``shutil`` events are not counted: ``shutil.copyfile`` is followed at once by
the ``open`` of its destination, and the others are made of ``os`` calls that are counted.

Only events on paths below an ``--under`` dir count (all of them without ``--under``): files of
other dirs (``__pycache__``, a tool's scratch dir in ``$TMPDIR``) would add kill points that
change nothing the test looks at, and could vary from run to run.

``--kill-at N`` sends SIGKILL to this process at the N-th counted event (1-based), before the
call happens: a real kill, with no ``finally`` block, ``atexit`` hook or buffered write run.
``--count FILE`` runs to the end and writes the number of events to FILE (``--trace FILE``: one
``N event path`` line each), so a test knows how many kill points a command has. The exit
status is the CLI's (``-9`` as seen by the parent when killed). Writes that go through an
already open file or a memory map raise no event, so a kill never lands in the middle of one;
a kill before the next event leaves them done.
"""

from __future__ import annotations

import argparse
import mmap
import os
import signal
import sys

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
WRITABLE_MAPS = (mmap.ACCESS_DEFAULT, mmap.ACCESS_WRITE)
# event -> (index of the path argument, index of its dir_fd argument or None)
PATH_EVENTS = {
    "os.rename": (0, 2), "os.remove": (0, 1), "os.truncate": (0, None), "os.rmdir": (0, 1),
    "os.mkdir": (0, 2), "os.link": (0, 2), "os.symlink": (1, 2), "os.chmod": (0, 2),
    "os.chown": (0, 3), "os.utime": (0, 3),
}


def resolve(path, dir_fd=None) -> str:
    """An absolute path for an event's path argument (a file descriptor, bytes, or relative
    to ``dir_fd``)."""
    if isinstance(path, int):
        return _fd_path(path)
    path = os.fsdecode(path)
    if dir_fd is not None and dir_fd >= 0 and not os.path.isabs(path):
        path = os.path.join(_fd_path(dir_fd), path)
    return os.path.abspath(path)


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # never fail the audited call: an unknown fd is just not below a root
        return f"<fd {fd}>"


def mutated_paths(event: str, args: tuple) -> list[str] | None:
    """The paths a mutating event touches, or None if the event changes nothing on disk."""
    if event == "open":
        path, mode, flags = args
        writes = (flags or 0) & WRITE_FLAGS or (isinstance(mode, str) and set(mode) & set("wax+"))
        return [resolve(path)] if writes and path is not None else None
    if event == "mmap.__new__":
        fileno, _, access, _ = args
        return [resolve(fileno)] if fileno != -1 and access in WRITABLE_MAPS else None
    if event in PATH_EVENTS:
        at, dir_fd_at = PATH_EVENTS[event]
        dir_fd = args[dir_fd_at] if dir_fd_at is not None else None
        paths = [resolve(args[at], dir_fd)]
        if event in ("os.rename", "os.link"):
            paths.append(resolve(args[1], args[3]))
        return paths
    return None


class KillPoints:
    """The audit hook: counts mutations below ``roots``; kills at ``kill_at``."""

    def __init__(self, roots: list[str], kill_at: int | None) -> None:
        self.roots = [os.path.abspath(r) + os.sep for r in roots]
        self.kill_at = kill_at
        self.count = 0
        self.trace: list[str] = []
        self.active = True

    def wanted(self, paths: list[str]) -> bool:
        return not self.roots or any((p + os.sep).startswith(r) for p in paths
                                     for r in self.roots)

    def __call__(self, event: str, args: tuple) -> None:
        if not self.active or (event != "open" and event not in PATH_EVENTS
                               and event != "mmap.__new__"):
            return
        paths = mutated_paths(event, args)
        if paths is None or not self.wanted(paths):
            return
        self.count += 1
        self.trace.append(f"{self.count} {event} {' '.join(paths)}")
        if self.count == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise SystemExit("usage: crashpoint.py (--kill-at N | --count FILE) [--under DIR]... "
                         "-- <pylogctl args>")
    cut = argv.index("--")
    parser = argparse.ArgumentParser(prog="crashpoint.py")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--kill-at", type=int, metavar="N")
    mode.add_argument("--count", metavar="FILE")
    parser.add_argument("--trace", metavar="FILE")
    parser.add_argument("--under", action="append", default=[], metavar="DIR")
    return parser.parse_args(argv[:cut]), argv[cut + 1:]


def main(argv: list[str]) -> int:
    options, cli_args = parse(argv)
    from pylogctl.cli.app import main as pylogctl_main  # imported before the hook: no events

    points = KillPoints(options.under, options.kill_at)
    sys.addaudithook(points)
    code = 0
    try:
        pylogctl_main(cli_args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        points.active = False
        if options.count:
            with open(options.count, "w") as f:
                f.write(f"{points.count}\n")
        if options.trace:
            with open(options.trace, "w") as f:
                f.write("".join(line + "\n" for line in points.trace))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
