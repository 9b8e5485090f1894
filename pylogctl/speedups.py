"""The optional C accelerators, behind one switch.

Each C extension sits beside the Python module it speeds up (``format/_speedups``,
``storage/_recover_scan``, ``storage/_cleaner_scan``, ``groups/_offsets_scan``,
``tools/_batch_lines``) and does the same work with the same results; the Python path stays
the reference the tests compare it with. An extension is used when it is built (``pip install``
compiles them where a compiler exists) and ``PYLOGCTL_NO_SPEEDUPS`` is unset or ``0``: setting
it keeps every module on its Python path, to compare the two or to rule the C code out.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

SWITCH = "PYLOGCTL_NO_SPEEDUPS"


def enabled() -> bool:
    """Whether the switch leaves the accelerators on (read when each module is imported)."""
    return os.environ.get(SWITCH, "") in ("", "0")


def accelerator(module: str) -> ModuleType | None:
    """The C extension ``module`` (e.g. ``"pylogctl.storage._recover_scan"``), or None when the
    switch is set or it is not built: the caller then takes its Python path."""
    if not enabled():
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
