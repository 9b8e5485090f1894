"""Only the optional C accelerators live here; all other metadata is in pyproject.toml.

Each sits beside the Python module it speeds up. ``optional=True``: if one cannot be compiled
(no compiler, no Python headers), the install still succeeds and pylogctl runs its pure-Python
path (``PYLOGCTL_NO_SPEEDUPS=1`` chooses that path too: pylogctl/speedups.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("pylogctl.format._speedups", ["pylogctl/format/_speedups.c",
                              "pylogctl/format/_crc32c.c"],
                             # #included: listed so a change rebuilds it
                             depends=["pylogctl/format/_record_summary.c",
                                      "pylogctl/format/_kafka_wire.h"],
                             optional=True),
                   Extension("pylogctl.storage._recover_scan",
                             ["pylogctl/storage/_recover_scan.c", "pylogctl/format/_crc32c.c"],
                             depends=["pylogctl/format/_kafka_wire.h"],
                             optional=True),
                   Extension("pylogctl.tools._batch_lines",
                             ["pylogctl/tools/_batch_lines.c", "pylogctl/format/_crc32c.c"],
                             depends=["pylogctl/format/_kafka_wire.h"],
                             optional=True),
                   Extension("pylogctl.storage._cleaner_scan",
                             ["pylogctl/storage/_cleaner_scan.c", "pylogctl/format/_crc32c.c"],
                             depends=["pylogctl/format/_kafka_wire.h"],
                             optional=True),
                   Extension("pylogctl.groups._offsets_scan",
                             ["pylogctl/groups/_offsets_scan.c", "pylogctl/format/_crc32c.c"],
                             depends=["pylogctl/format/_kafka_wire.h"],
                             optional=True)])
