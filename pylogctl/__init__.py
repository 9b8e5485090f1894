"""pylogctl: an operations toolkit over Apache Kafka's on-disk log directories.

The packages depend one way: :mod:`pylogctl.format` (bytes <-> objects) is used by
:mod:`pylogctl.storage` (files and directories), which the tools, the CLI, the broker and the
Spark pipeline build on. Output rendering lives in :mod:`pylogctl.formatters`. Every package
shares :mod:`pylogctl.errors` and :mod:`pylogctl.speedups` (the optional C accelerators, each
beside the module it speeds up, behind the one switch ``PYLOGCTL_NO_SPEEDUPS``).
"""

__version__ = "0.1.0"
