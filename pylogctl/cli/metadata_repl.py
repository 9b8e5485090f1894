"""``pylogctl metadata DIR shell``: kafka-metadata-shell's interactive loop (``InteractiveShell``:
the ``[ Kafka Metadata Shell ]`` banner, the ``>> `` prompt, ``cd``, ``pwd``, ``ls``, ``cat``,
``tree``, ``find``, ``history``, ``help``, ``exit``), with readline's line editing, history and
path completion on a terminal. Without one, commands come from stdin a line at a time, and only
their output is printed, so a script can pipe several in.
"""

from __future__ import annotations

import cmd
import shlex
import shutil
import sys
from typing import Any

COMMANDS = {
    "cat": "Show the contents of metadata files.",
    "cd": "Set the current working directory.",
    "exit": "Exit the metadata shell.",
    "find": "Search for nodes in the directory hierarchy.",
    "help": "Display this help message.",
    "history": "Print command history.",
    "ls": "List metadata nodes.",
    "pwd": "Print the current working directory.",
    "tree": "Show the contents of metadata nodes in a tree structure.",
}


def words(line: str) -> list[str]:
    """A command line split as the shell's parser splits it (quotes honoured)."""
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


class MetadataRepl(cmd.Cmd):
    prompt = ">> "

    def __init__(self, shell: Any, interactive: bool) -> None:
        super().__init__()
        self.shell = shell
        self.interactive = interactive
        if not interactive:
            self.prompt = ""

    def _print(self, lines: list[str]) -> None:
        for line in lines:
            print(line)
        sys.stdout.flush()

    def emptyline(self) -> bool:
        return False

    def precmd(self, line: str) -> str:
        if line.strip() and line != "EOF":
            self.shell.history.append(line)
        return line

    def default(self, line: str) -> bool:
        name = words(line)[0] if words(line) else line
        print(f"invalid choice: '{name}' (choose from {', '.join(repr(c) for c in COMMANDS)})")
        return False

    def do_ls(self, arg: str) -> None:
        self.shell.width = shutil.get_terminal_size().columns if self.interactive else None
        self._print(self.shell.ls(words(arg)))

    def do_cat(self, arg: str) -> None:
        self._print(self.shell.cat(words(arg)) if words(arg) else
                    ["usage: cat [-h] targets [targets ...]"])

    def do_tree(self, arg: str) -> None:
        self._print(self.shell.tree(words(arg)) if words(arg) else
                    ["usage: tree [-h] targets [targets ...]"])

    def do_find(self, arg: str) -> None:
        self._print(self.shell.find(words(arg)))

    def do_cd(self, arg: str) -> None:
        target = words(arg)
        self._print(self.shell.cd(target[0] if target else None))

    def do_pwd(self, arg: str) -> None:
        self._print(self.shell.pwd())

    def do_history(self, arg: str) -> None:
        count = int(arg) if arg.strip().isdigit() else len(self.shell.history)
        history = self.shell.history
        first = max(0, len(history) - count)
        self._print([f"{i:5d}  {entry}" for i, entry in enumerate(history) if i >= first])

    def do_help(self, arg: str) -> None:
        self._print(["Welcome to the Apache Kafka metadata shell.", "", "Commands:"] +
                    [f"  {name:<10}{text}" for name, text in COMMANDS.items()])

    def do_exit(self, arg: str) -> bool:
        return True

    def do_EOF(self, arg: str) -> bool:
        if self.interactive:
            print()
        return True

    def completenames(self, text: str, *ignored: Any) -> list[str]:
        return [name + " " for name in COMMANDS if name.startswith(text)]

    def completedefault(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        """The children of the directory typed so far that start with ``text`` (the word
        after the last ``/``: readline splits there), directories with a ``/``."""
        from ..tools.metadata_nodes import java_sorted
        from ..tools.metadata_shell import glob

        prefix = line[:endidx].split(" ")[-1]
        head = prefix.rpartition("/")[0] or ("/" if prefix.startswith("/") else ".")
        matches = glob(self.shell.root, self.shell.working_dir, head)
        if len(matches) != 1 or not matches[0].node.is_directory:
            return []
        node = matches[0].node
        out = []
        for name in java_sorted(node.child_names()):
            if name.startswith(text):
                child = node.child(name)
                out.append(name + ("/" if child is not None and child.is_directory else ""))
        return out


def run_shell(src: Any) -> None:
    """Run the loop on stdin until ``exit`` or end of input."""
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    repl = MetadataRepl(src.shell(), interactive)
    if interactive:
        try:
            import readline

            readline.set_completer_delims(" \t\n/")
        except ImportError:  # no line editing: the loop works without it
            pass
        print("[ Kafka Metadata Shell ]")
    try:
        repl.cmdloop()
    except KeyboardInterrupt:
        print("^C")
