"""The built wheel installs formatters/ as pylogctl.formatters and nothing at top level."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import REPO


@pytest.mark.slow
def test_wheel_maps_formatters_under_the_package(tmp_path: Path):
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    wheel = next(tmp_path.glob("pylogctl-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "pylogctl/formatters/__init__.py" in names
    assert "pylogctl/formatters/text.py" in names
    assert not any(n.startswith("formatters/") for n in names)
    assert "pylogctl/cli/app.py" in names and "pylogctl/format/record_batch.py" in names
    if _compiler():  # each accelerator beside the module it speeds up
        for module in ACCELERATORS:
            stem = module.replace(".", "/") + "."
            assert any(n.startswith(stem) and n.endswith((".so", ".pyd")) for n in names), module


def test_sdist_carries_the_docs_the_man_pages_name(tmp_path: Path):
    """Each man page points to its page under docs/ 'in the source distribution'
    (MANIFEST.in grafts docs/, man/ and completions/)."""
    import tarfile

    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta; "
         "print(build_meta.build_sdist(sys.argv[1]))", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    sdist = tmp_path / proc.stdout.split()[-1]
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    docs = {p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert docs and docs <= names, sorted(docs - names)
    assert {"README.md", "man/pylogctl-recover.1", "completions/pylogctl.bash"} <= names


def test_installed_package_exposes_formatters_and_console_script():
    import pylogctl.formatters as f

    assert Path(f.__file__).parent.name == "formatters"
    assert set(f.FORMATS) == {"text", "table", "json", "ndjson", "yaml"}
    proc = subprocess.run([sys.executable, "-m", "pylogctl", "--version"], capture_output=True,
                          text=True, timeout=60)
    import pylogctl
    assert proc.stdout.strip() == f"pylogctl {pylogctl.__version__}"


def test_sample_writes_a_log_dir_that_dumps_cleanly(tmp_path: Path):
    from pylogctl.tools.dump_segment import DumpOptions, dump_log
    from pylogctl.tools.sample import write_sample_log_dir

    files = write_sample_log_dir(tmp_path)
    seg = tmp_path / "orders-0" / "00000000000000000000.log"
    assert seg in files
    dump = dump_log(seg, DumpOptions(print_data=True))
    batches = list(dump.items)
    assert dump.error is None and dump.footer["invalidBytes"] == 0
    assert {b["compressCodec"] for b in batches} == {"none", "gzip", "snappy", "lz4", "zstd"}
    assert all(b["isValid"] for b in batches)
    assert batches[-1]["isControl"] and batches[-1]["records"][0]["control"]["type"] == "COMMIT"


def _compiler() -> bool:
    """Whether a C compiler and the Python headers are there (setup.py then builds them)."""
    import shutil
    import sysconfig

    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return bool(shutil.which("cc") or shutil.which("gcc")) and headers.exists()


# each optional C extension and the sources compiled into it
ACCELERATORS = {
    "pylogctl.format._speedups": ["pylogctl/format/_*.c", "pylogctl/format/_kafka_wire.h"],
    "pylogctl.storage._recover_scan": ["pylogctl/storage/_recover_scan.c",
                                       "pylogctl/format/_crc32c.c",
                                       "pylogctl/format/_kafka_wire.h"],
    "pylogctl.tools._batch_lines": ["pylogctl/tools/_batch_lines.c", "pylogctl/format/_crc32c.c",
                                    "pylogctl/format/_kafka_wire.h"],
    "pylogctl.storage.cleaner._cleaner_scan": ["pylogctl/storage/cleaner/_cleaner_scan.c",
                                       "pylogctl/format/_crc32c.c",
                                       "pylogctl/format/_kafka_wire.h"],
    "pylogctl.groups._offsets_scan": ["pylogctl/groups/_offsets_scan.c",
                                      "pylogctl/format/_crc32c.c",
                                      "pylogctl/format/_kafka_wire.h"],
}


@pytest.mark.parametrize("module", ACCELERATORS)
def test_the_accelerators_are_built_where_they_can_be(module):
    """The extensions are optional (``optional=True`` in setup.py), so a C file that no longer
    compiles would only make its tests skip (its Python path taking over). Where a compiler
    and the Python headers exist, as in CI, each must have been built, and its sources must
    match the built copy."""
    import importlib

    if not _compiler():
        pytest.skip("no C compiler or Python headers: the pure-Python path is the one in use")
    built = Path(importlib.import_module(module).__file__).stat().st_mtime
    sources = [p for pattern in ACCELERATORS[module] for p in REPO.glob(pattern)]
    assert sources
    stale = [p.name for p in sources if p.stat().st_mtime > built + 1]
    assert not stale, ("edited after the extension was built (rebuild it with "
                       f"`pip install -e .`): {stale}")


def test_every_package_of_the_tree_is_listed_for_the_wheel():
    """pyproject lists the packages explicitly (formatters/ is mapped under pylogctl): a new
    subpackage missing from the list would be left out of the wheel while every test that runs
    from the checkout still passes."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(init.parent.relative_to(root).parts)
             for init in (root / "pylogctl").rglob("__init__.py")
             if not init.parent.is_symlink() and "formatters" not in init.parent.parts}
    assert found - listed == set()
