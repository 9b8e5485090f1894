"""Only the optional C accelerators live here; all other metadata is in pyproject.toml.

Each sits beside the Python module it speeds up. ``optional=True``: if one cannot be compiled
(no compiler, no Python headers), the install still succeeds and pylogctl runs its pure-Python
path (``PYLOGCTL_NO_SPEEDUPS=1`` chooses that path too: pylogctl/speedups.py).
"""

from setuptools import Extension, setup


def accelerator(module: str, *included: str) -> Extension:
    """The extension ``module``, from the C file of the same name beside the Python module it
    speeds up, with the shared CRC-32C; ``included``: files it #includes (listed so a change
    rebuilds it)."""
    return Extension(module, [module.replace(".", "/") + ".c", "pylogctl/format/_crc32c.c"],
                     depends=[*included, "pylogctl/format/_kafka_wire.h"], optional=True)


setup(ext_modules=[accelerator("pylogctl.format._speedups", "pylogctl/format/_record_summary.c"),
                   accelerator("pylogctl.storage._recover_scan"),
                   accelerator("pylogctl.storage.cleaner._cleaner_scan"),
                   accelerator("pylogctl.groups._offsets_scan"),
                   accelerator("pylogctl.tools._batch_lines")])
