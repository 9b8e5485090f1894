"""Run several pylogctl commands one after the other, each in its own process, paying Python's
and the CLI's start-up once (a fork server: the crash tests run three commands after every kill,
and start-up is most of their cost).

    python tests/crash/cli_batch.py '[["recover", "D", "--execute"], ["recover", "D", "--check"]]'

The CLI is imported, then each command runs ``pylogctl.cli.app.main`` (the console script's
entry point) in a forked child with its own stdout and stderr, so no state carries over from one
command to the next. Prints one JSON object per command (``{"code", "out", "err"}``), whatever
its exit code; the runner's own exit status is 0 unless it fails itself.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def run_forked(main, args: list[str]) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: the command, with its own stdout and stderr
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            code = 70
            try:
                main(args)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        return {"code": os.waitstatus_to_exitcode(status),
                "out": out.read().decode(errors="replace"),
                "err": err.read().decode(errors="replace")}


def main(argv: list[str]) -> int:
    import typer.main

    from pylogctl.cli.app import main as pylogctl_main
    from pylogctl.cli.root import app

    batch = json.loads(argv[0])
    # the CLI loads a subcommand's module when it runs: load the batch's here, once
    group = typer.main.get_command(app)
    for args in batch:
        if args and not args[0].startswith("-"):
            group.get_command(None, args[0])  # type: ignore[attr-defined]
    for args in batch:
        result = run_forked(pylogctl_main, args)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
