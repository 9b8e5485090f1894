"""Files and directories of a Kafka log dir, on top of :mod:`pylogctl.format`."""
