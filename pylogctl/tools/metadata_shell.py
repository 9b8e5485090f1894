"""``kafka-metadata-shell``'s commands over the node tree of :mod:`.metadata_nodes`: ``ls``,
``cat``, ``tree`` and ``find`` (what the shell runs non-interactively), and ``cd``/``pwd`` for the
interactive shell, each returning the lines Kafka's handler prints (``org.apache.kafka.shell``:
``LsCommandHandler``, ``CatCommandHandler``, ``TreeCommandHandler``, ``FindCommandHandler``,
paths resolved by ``GlobVisitor``, wildcards by ``GlobComponent``).

Quirks kept: ``find`` prints paths from the argument as typed (``find /image/t*`` prints
``/image/t*/byId``); ``ls`` prints files before directories and skips an empty directory's
heading; a path matching nothing prints an error line among the output, not on stderr.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence

from .metadata_nodes import Node, ShellPrinter, java_sorted

_REGEX_SPECIAL = set("$()+.[]^{|")
_GLOB_SPECIAL = set("*?\\{}")


def glob_regex(glob: str) -> Optional[str]:
    """``GlobComponent.toRegularExpression``: None for a literal component; raises
    ValueError for a nested or unterminated ``{...}`` group."""
    out, literal, group, i = ["^"], True, False, 0
    while i < len(glob):
        c = glob[i]
        i += 1
        if c == "?":
            literal = False
            out.append(".")
        elif c == "*":
            literal = False
            out.append(".*")
        elif c == "\\":
            if i == len(glob):
                raise ValueError("a trailing backslash")  # Java's regex refuses it too
            nxt = glob[i]
            i += 1
            out.append(("\\" + nxt) if nxt in _GLOB_SPECIAL or nxt in _REGEX_SPECIAL
                       else re.escape(nxt))
        elif c == "{":
            if group:
                raise ValueError("Can't nest glob groups.")
            literal, group = False, True
            out.append("(?:(?:")
        elif c == "," and group:
            out.append(")|(?:")
        elif c == "}" and group:
            group = False
            out.append("))")
        else:
            out.append(re.escape(c))
    if group:
        raise ValueError("Unterminated glob group.")
    return None if literal else "".join(out) + "$"


class GlobComponent:
    """One path component: a literal name, or a pattern (a bad pattern is taken literally)."""

    def __init__(self, component: str) -> None:
        self.component = component
        try:
            regex = glob_regex(component)
        except ValueError:
            regex = None
        self.pattern = None if regex is None else re.compile(regex, re.S)

    def matches(self, name: str) -> bool:
        if self.pattern is None:
            return self.component == name
        return self.pattern.fullmatch(name) is not None


def split_path(path: str) -> list[str]:
    """``CommandUtils.splitPath`` then ``stripDotPathComponents``."""
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    return out


@dataclass
class Match:
    path: tuple[str, ...]
    node: Node

    @property
    def last(self) -> str:
        return self.path[-1] if self.path else "/"

    @property
    def absolute(self) -> str:
        return "/" + "/".join(self.path)


def glob(root: Node, working_dir: str, pattern: str) -> list[Match]:
    """Every node ``pattern`` names, in ``GlobVisitor``'s order (children sorted)."""
    full = pattern if pattern.startswith("/") else f"{working_dir}/{pattern}"
    components = split_path(full)
    found: list[Match] = []

    def visit(index: int, node: Node, path: tuple[str, ...]) -> None:
        if index >= len(components):
            found.append(Match(path, node))
            return
        component = GlobComponent(components[index])
        if not node.is_directory:
            return
        if component.pattern is None:
            child = node.child(component.component)
            if child is not None:
                visit(index + 1, child, path + (component.component,))
            return
        for name in java_sorted(node.child_names()):
            if component.matches(name):
                child = node.child(name)
                if child is not None:
                    visit(index + 1, child, path + (name,))
    visit(0, root, ())
    return found


def effective_paths(paths: Sequence[str]) -> list[str]:
    """``CommandUtils.getEffectivePaths``: empty ones dropped, ``.`` when none is left."""
    return [p for p in paths if p] or ["."]


@dataclass
class Shell:
    """The shell's state (``MetadataShellState``): the tree and the working directory."""

    root: Node
    working_dir: str = "/"
    width: Optional[int] = None  # a terminal's width: ls lays names out in columns
    history: list[str] = field(default_factory=list)

    def ls(self, targets: Sequence[str]) -> list[str]:
        out: list[str] = []
        files: list[str] = []
        dirs: list[tuple[str, list[str]]] = []
        for target in effective_paths(targets):
            matches = glob(self.root, self.working_dir, target)
            if not matches:
                out.append(f"ls: {target}: no such file or directory.")
            for m in matches:
                if m.node.is_directory:
                    dirs.append((m.last, java_sorted(m.node.child_names())))
                else:
                    files.append(m.last)
        out += self._entries("", files)
        need_intro, first = bool(files) or len(dirs) > 1, not files
        for name, children in dirs:
            intro = ""
            if need_intro:
                intro = ("" if first else "\n") + name + ":"
                first = False
            out += self._entries(intro, children)
        return out

    def _entries(self, intro: str, entries: list[str]) -> list[str]:
        if not entries:
            return []
        out = intro.split("\n") if intro else []
        widths, per_column = column_schema(self.width, entries)
        for line in range((len(entries) + len(widths) - 1) // len(widths)):
            text = []
            for column, width in enumerate(widths):
                index = line + column * per_column
                if index < len(entries):
                    entry = entries[index]
                    last = column >= len(widths) - 1
                    text.append(entry if last else entry.ljust(width))
            out.append("".join(text))
        return out

    def cat(self, targets: Sequence[str]) -> list[str]:
        return self._print("cat", targets, leaves_only=True)

    def tree(self, targets: Sequence[str]) -> list[str]:
        return self._print("tree", targets, leaves_only=False)

    def _print(self, command: str, targets: Sequence[str], leaves_only: bool) -> list[str]:
        """What ``cat`` and ``tree`` print of every node each target names."""
        out: list[str] = []
        for target in targets:
            matches = glob(self.root, self.working_dir, target)
            if not matches:
                out.append(f"{command}: {target}: No such file or directory.")
            for m in matches:
                if leaves_only and m.node.is_directory:
                    out.append(f"{command}: {target}: Is a directory")
                else:
                    m.node.print(ShellPrinter(out))
        return out

    def find(self, paths: Sequence[str]) -> list[str]:
        out: list[str] = []
        for path in effective_paths(paths):
            matches = glob(self.root, self.working_dir, path)
            if not matches:
                out.append(f"find: {path}: no such file or directory.")
            for m in matches:
                out.extend(_find(path, m.node))
        return out

    def cd(self, target: Optional[str]) -> list[str]:
        target = "/" if target is None else target
        matches = glob(self.root, self.working_dir, target)
        if not matches:
            return [f"cd: {target}: no such directory."]
        out = []
        for m in matches:  # as Kafka: every match is visited, the last one wins
            if not m.node.is_directory:
                out.append(f"cd: {target}: not a directory.")
            else:
                self.working_dir = m.absolute
        return out

    def pwd(self) -> list[str]:
        return [self.working_dir]


def _find(path: str, node: Node) -> Iterator[str]:
    yield path
    if node.is_directory:
        for name in java_sorted(node.child_names()):
            child = node.child(name)
            if child is not None:
                yield from _find(path + name if path == "/" else f"{path}/{name}", child)


def column_schema(width: Optional[int], entries: list[str]) -> tuple[list[int], int]:
    """``LsCommandHandler.calculateColumnSchema``: ``(column widths, entries per column)``,
    the most columns whose names (plus two spaces) fit the screen; one column without one."""
    if width is None or width // 4 <= 1:
        return [0], len(entries)
    best: tuple[list[int], int] = ([0], len(entries))
    for columns in range(1, width // 4 + 1):
        per = (len(entries) + columns - 1) // columns
        widths = [0] * columns
        for i, entry in enumerate(entries):
            widths[i // per] = max(widths[i // per], len(entry) + 2)
        if columns == 1:
            best = (widths, per)
        elif widths[-1] != 0 and sum(widths) <= width:
            best = (widths, per)
    return best
