"""The packages depend one way, read from the imports of every module (``ast``, no import run):

    errors, pylogctl  <-  format  <-  storage  <-  groups  <-  {tools, broker, pipeline}  <-  cli

A package may import any package of a lower layer, never one of its own layer or above, except
the edges listed in :data:`SAME_LAYER` (each with its reason; none today). Every import counts:
at module level, inside a function (the CLI's lazy loading), or under ``TYPE_CHECKING``, since a
type named from a higher layer is a dependency on it all the same. The engine (everything but
``cli`` and ``formatters``) is a library: it never prints. ``formatters`` (installed as
``pylogctl.formatters``) render plain data: only ``cli`` imports them, and they import from the
engine only *plain-data* modules, those that import nothing from pylogctl themselves.

:data:`KNOWN_VIOLATIONS` lists the violations the tree has, exactly (none today): a new one
fails, and so does one that was fixed but is still listed (remove it then).
"""

from __future__ import annotations

import ast
import sys
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

LAYERS = {"errors": 0, "pylogctl": 0, "speedups": 0, "format": 1, "storage": 2, "groups": 3,
          "tools": 4, "broker": 4, "pipeline": 4, "cli": 5, "__main__": 6}
ENGINE = ("format", "storage", "groups", "tools", "broker", "pipeline")
FORMATTERS = "formatters"

# (importing package, imported module): imports between packages of one layer, and why
SAME_LAYER: set[tuple[str, str]] = set()

# "file:imported module": what the tree breaks, each with its reason (see the module docs)
KNOWN_VIOLATIONS: set[str] = set()


# -- reading the tree ---------------------------------------------------------------------------
def source_files(root: Path) -> dict[str, Path]:
    """Module name -> file, for ``pylogctl/`` and ``formatters/`` (as ``pylogctl.formatters``;
    a ``pylogctl/formatters`` link to it is skipped)."""
    modules = {}
    for top, prefix in (("pylogctl", ()), (FORMATTERS, ("pylogctl", FORMATTERS))):
        base = root / top
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if top == "pylogctl" and rel.parts[0] == FORMATTERS:
                continue
            parts = (*prefix, *rel.with_suffix("").parts) if prefix else \
                ("pylogctl", *rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def imports(module: str, path: Path, known: set[str]) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import of ``module`` (relative ones resolved;
    ``from P import m`` names module ``P.m`` when that is a module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((node.lineno, sub if sub in known else target))
    return sorted(set(found))


def package_of(module: str) -> str | None:
    """The layer's name of a pylogctl module (None outside pylogctl)."""
    parts = module.split(".")
    if parts[0] != "pylogctl":
        return None
    return parts[1] if len(parts) > 1 else "pylogctl"


def prints(path: Path) -> list[int]:
    """Lines calling ``print`` or writing to ``sys.stdout``/``sys.stderr``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print":
            lines.append(node.lineno)
        elif (isinstance(f, ast.Attribute) and f.attr in ("write", "writelines")
              and isinstance(f.value, ast.Attribute) and f.value.attr in ("stdout", "stderr")
              and isinstance(f.value.value, ast.Name) and f.value.value.id == "sys"):
            lines.append(node.lineno)
    return lines


# -- the rules ----------------------------------------------------------------------------------
def violations(root: Path) -> list[str]:
    """Every break of the rules of the module docs, one ``file:line: what`` line each."""
    files = source_files(root)
    known = set(files)
    graph = {m: imports(m, p, known) for m, p in files.items()}
    out = []
    for module, path in files.items():
        rel = path.relative_to(root)
        here = package_of(module)
        for line, target in graph[module]:
            there = package_of(target)
            if there is None or there == here:
                continue
            where = f"{rel}:{line}: {module} imports {target}"
            if here == FORMATTERS:
                if there in ENGINE and not plain_data(target, graph):
                    out.append(f"{where} (formatters import only plain-data modules)")
                elif there not in ENGINE and there not in ("errors", "pylogctl"):
                    out.append(f"{where} (formatters import no {there})")
            elif there == FORMATTERS:
                if here != "cli":
                    out.append(f"{where} (only cli renders output)")
            elif here not in LAYERS or there not in LAYERS:
                out.append(f"{where} (a package with no layer: add it to LAYERS)")
            elif LAYERS[there] >= LAYERS[here] and (here, target) not in SAME_LAYER:
                out.append(f"{where} ({here} is layer {LAYERS[here]}, {there} "
                           f"layer {LAYERS[there]})")
        if here in ENGINE:
            out += [f"{rel}:{line}: {module} prints (the engine is a library)"
                    for line in prints(path)]
    return out


def plain_data(module: str, graph: dict[str, list[tuple[int, str]]]) -> bool:
    """A module (and the packages it sits in) importing nothing from pylogctl: plain data,
    and the functions over it, that a renderer may share with the engine."""
    parts = module.split(".")
    for owner in (".".join(parts[:n]) for n in range(2, len(parts) + 1)):
        if owner not in graph:
            return False
        if any(package_of(t) is not None and t != "pylogctl" for _, t in graph[owner]):
            return False
    return True


def _known_key(line: str) -> str:
    """``file: imported module`` of a violation line, the form :data:`KNOWN_VIOLATIONS` uses."""
    where, _, rest = line.partition(": ")
    return f"{where.rsplit(':', 1)[0]}: {rest.split(' imports ')[-1].split(' (')[0]}"


# -- the tests ----------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def repo_violations() -> tuple[str, ...]:
    """The real tree's violations, read once for the tests below."""
    return tuple(violations(REPO))


def test_the_packages_depend_one_way():
    found = repo_violations()
    new = [v for v in found if _known_key(v) not in KNOWN_VIOLATIONS]
    assert new == []


def test_every_known_violation_is_still_there():
    """A fixed violation leaves this list, so the list stays the tree's real debt."""
    fixed = KNOWN_VIOLATIONS - {_known_key(v) for v in repo_violations()}
    assert fixed == set()


def test_the_checker_reads_the_real_tree():
    """Not vacuous: the real modules and the edges that hold the layers up are seen."""
    files = source_files(REPO)
    assert {"pylogctl.storage.log_dir", "pylogctl.cli.app",
            "pylogctl.formatters.group_sections"} <= set(files)
    graph = {m: imports(m, p, set(files)) for m, p in files.items()}
    edges = {(package_of(m), package_of(t)) for m, found in graph.items() for _, t in found}
    assert {("storage", "format"), ("groups", "storage"), ("cli", "formatters"),
            ("formatters", "format")} <= edges
    assert plain_data("pylogctl.format.jackson", graph)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in {"pylogctl/__init__.py": "", "pylogctl/errors.py": "import os\n",
                       "formatters/__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            if parent.parts and parent.parts[0] == "pylogctl":
                (root / parent / "__init__.py").touch()
        path.write_text(text)
    return root


CLEAN = {
    "pylogctl/format/codec.py": "from .. import errors\nVALUE = 1\n",
    "pylogctl/format/plain.py": "import json\nCOLUMNS = ('a',)\n",
    "pylogctl/storage/log.py": "from ..format import codec\n",
    "pylogctl/groups/offsets.py": "from pylogctl.storage.log import x\n",
    "pylogctl/tools/consumer_groups.py": "from ..groups import offsets\n",
    "pylogctl/pipeline/stats.py": "def f():\n    from ..groups.offsets import g\n",
    "pylogctl/cli/app.py": "from pylogctl.formatters import text\nfrom ..tools import x\n",
    "formatters/text.py": "from pylogctl.format import plain\nfrom . import table\n",
    "formatters/table.py": "",
}


def test_the_checker_passes_a_tree_that_keeps_the_rules(tmp_path):
    assert violations(_tree(tmp_path, CLEAN)) == []


def test_a_listed_same_layer_edge_passes(tmp_path, monkeypatch):
    tree = _tree(tmp_path, {**CLEAN, "pylogctl/pipeline/stats.py":
                            "def f():\n    from ..tools.consumer_groups import g\n"})
    assert len(violations(tree)) == 1
    monkeypatch.setattr(sys.modules[__name__], "SAME_LAYER",
                        {("pipeline", "pylogctl.tools.consumer_groups")})
    assert violations(tree) == []


@pytest.mark.parametrize("file, text, expected", [
    ("pylogctl/storage/log.py", "from ..groups.offsets import read\n",
     "pylogctl.storage.log imports pylogctl.groups.offsets (storage is layer 2, groups layer 3)"),
    ("pylogctl/format/codec.py", "def f():\n    from pylogctl.storage import log\n",
     "imports pylogctl.storage.log (format is layer 1, storage layer 2)"),
    ("pylogctl/groups/offsets.py",
     "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pylogctl.cli import app\n",
     "imports pylogctl.cli.app (groups is layer 3, cli layer 5)"),
    ("pylogctl/tools/consumer_groups.py", "from pylogctl.broker import server\n",
     "imports pylogctl.broker (tools is layer 4, broker layer 4)"),
    ("pylogctl/pipeline/stats.py", "from ..tools import compact\n",
     "imports pylogctl.tools (pipeline is layer 4, tools layer 4)"),
    ("pylogctl/storage/log.py", "def f():\n    print('done')\n",
     "pylogctl/storage/log.py:2: pylogctl.storage.log prints"),
    ("pylogctl/groups/offsets.py", "import sys\nsys.stderr.write('x')\n",
     "pylogctl.groups.offsets prints"),
    ("pylogctl/tools/consumer_groups.py", "from pylogctl.formatters import text\n",
     "imports pylogctl.formatters.text (only cli renders output)"),
    ("formatters/text.py", "from pylogctl.format import codec\n",
     "imports pylogctl.format.codec (formatters import only plain-data modules)"),
    ("formatters/text.py", "from pylogctl.cli import app\n", "(formatters import no cli)"),
    ("pylogctl/newpkg/thing.py", "from pylogctl.storage import log\n",
     "(a package with no layer: add it to LAYERS)"),
])
def test_the_checker_finds_a_violation(tmp_path, file, text, expected):
    found = violations(_tree(tmp_path, {**CLEAN, file: text}))
    assert len(found) == 1 and expected in found[0], found
