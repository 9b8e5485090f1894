"""A fork server for the crash harness: each pylogctl command in its own child process, forked
from one that imported the CLI once.

    python tests/crash/fork_server.py    (JSON requests on stdin, one JSON answer a line)

The crash tests run a thousand commands (a run to count the kill points, a killed run, then
``recover`` and its checks for every kill point), and a fresh interpreter importing the CLI costs
more CPU than most of those commands. A request is ``{"args", "tmpdir", "kill_at", "count",
"roots"}``: the child sets ``$TMPDIR``, then, with ``kill_at`` or ``count``, adds
:class:`crashpoint.KillPoints` as its audit hook, exactly as ``crashpoint.py`` does after
importing the CLI (so the same kill points, the same N, and ``crashpoint.py --kill-at N``
replays a kill), and runs ``pylogctl.cli.app.main``. The answer is ``{"code", "out", "err",
"count", "trace"}``: ``code`` is ``-9`` for a child killed by SIGKILL, as ``subprocess`` reports
it. No state carries over: every command runs in a fresh fork of the server, which runs none.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile

from crashpoint import KillPoints

TIMEOUT = 300  # seconds a command may run


def run_forked(main, request: dict) -> dict:
    """One command in a forked child, its stdout and stderr captured."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryFile() as trace:
        pid = os.fork()
        if pid == 0:
            _child(main, request, out, err, trace)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        trace.seek(0)
        lines = trace.read().decode().splitlines()
        return {"code": os.waitstatus_to_exitcode(status),
                "out": out.read().decode(errors="replace"),
                "err": err.read().decode(errors="replace"),
                "count": int(lines[0]) if lines else None, "trace": lines[1:]}


def _child(main, request: dict, out, err, trace) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the server's stdin carries the requests
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    os.environ["TMPDIR"] = request["tmpdir"]
    tempfile.tempdir = None  # read $TMPDIR again
    signal.alarm(TIMEOUT)  # a hung command dies of SIGALRM (exit -14) instead of the suite
    code = 70
    points = None
    if request.get("kill_at") is not None or request.get("count"):
        points = KillPoints(request.get("roots", []), request.get("kill_at"))
        sys.addaudithook(points)
    try:
        main(request["args"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        if points is not None:
            points.active = False
            if request.get("count"):
                trace.write("".join(f"{line}\n" for line in [str(points.count), *points.trace])
                            .encode())
                trace.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> int:
    import typer.main

    from pylogctl.cli.app import main as pylogctl_main
    from pylogctl.cli.root import app

    group = typer.main.get_command(app)
    for line in sys.stdin:
        request = json.loads(line)
        args = request["args"]
        if args and not args[0].startswith("-"):
            # the CLI loads a subcommand's module when it runs: load it here, once
            group.get_command(None, args[0])  # type: ignore[attr-defined]
        answer = run_forked(pylogctl_main, request)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
