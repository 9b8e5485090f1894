"""``PYLOGCTL_NO_SPEEDUPS`` is one switch, read in one place (``pylogctl/speedups.py``): every
module with a C accelerator asks ``accelerator()`` for it."""

from __future__ import annotations

import os
import subprocess
import sys

from pylogctl import speedups
from support import REPO

# each accelerated module -> the attribute holding its C function (None on the Python path)
ACCELERATED = {"pylogctl.format.record_batch": "_c_decode",
               "pylogctl.format.crc": "_c",
               "pylogctl.storage.segment": "_scan_recovery",
               "pylogctl.storage.cleaner.offset_map": "_map_batch",
               "pylogctl.storage.cleaner.cleaner_filter": "_filter_batch",
               "pylogctl.groups.replay": "LastRecords",
               "pylogctl.tools.dump_segment": "_c_batch_lines"}


def test_the_switch_is_read_only_in_speedups_py():
    readers = [str(p.relative_to(REPO)) for p in (REPO / "pylogctl").rglob("*.py")
               if f'"{speedups.SWITCH}"' in p.read_text(encoding="utf-8")]
    assert readers == ["pylogctl/speedups.py"]


def test_the_switch_turns_every_accelerator_off(monkeypatch):
    code = ("import importlib, sys; print(*(getattr(importlib.import_module(m), a) is None "
            f"for m, a in {ACCELERATED!r}.items()))")
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**_env(), speedups.SWITCH: "1"}).stdout.split()
    assert off == ["True"] * len(ACCELERATED)
    monkeypatch.setenv(speedups.SWITCH, "1")
    assert speedups.accelerator("pylogctl.format._speedups") is None
    monkeypatch.setenv(speedups.SWITCH, "0")
    assert speedups.enabled()
    assert speedups.accelerator("pylogctl.no_such_extension") is None


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != speedups.SWITCH}
